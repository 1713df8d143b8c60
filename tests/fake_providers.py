"""Fake Google Gemini, Groq and Mistral APIs on 127.0.0.1, for Inspect's own providers.

Each fake is reached through Inspect's real provider and the real SDK (``google/<model>`` with
``google-genai``, ``groq/<model>`` with ``groq``, ``mistral/<model>`` with ``mistralai``) and
applies that service's documented limits, refusals and token shapes, with the source of each
one beside it. The healthy judge is the one of ``benchmarks/fake_openai.py``: it answers the
rubric prompt with a score (4, or what a ``[judge-says:N]`` marker asks for; each candidate
draws a score around it at a temperature above 0), or a line of reasoning and ``Score: N`` when
the prompt asks for reasoning.

Scripting (the same on the three fakes)::

    server.script("2")                                  # every request: the judge says 2
    server.script(["3", "4", "5"], when="Dialog 7")     # one text per candidate / choice
    server.script(lambda body: {...}, times=1)          # the whole JSON answer, hand-made
    server.script(Refusal(429, "quota"), when="x")      # an API-style HTTP error

Texts go through the service's own rules (output bound, thinking tokens, logprobs); a function's
answer and a `Refusal` are sent as they are (a refusal in the service's error shape). Every
request to a known endpoint is recorded (`ProviderRequest`: path, parsed body, prompt, status
and error it got); anything else is answered 404 and kept in ``unknown``
(``assert_no_unknown()``). Streamed requests (Inspect streams only when the caller passes
``on_stream``) are not supported and count as unknown.

Pytest fixtures ``google_server``, ``groq_server`` and ``mistral_server`` (registered by
``pytest_plugins = ["fake_providers"]`` in ``tests/conftest.py``) clear a session-wide fake and
point the provider's environment variables at it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal

import fake_servers  # noqa: F401  (puts benchmarks/ on the import path)
import pytest
from fake_openai import (
    DEFAULT_SCORE,
    RUBRIC_FORM,
    SCORE_MARKER,
    SCORE_ONLY,
    PromptRule,
    ScriptedFake,
    _HTTPServer,
    count_tokens,
    score_top_logprobs,
    tokens_of,
)

__all__ = [
    "DEFAULT_SCORE",
    "FakeGemini",
    "FakeGroq",
    "FakeMistral",
    "ProviderRequest",
    "ProviderRule",
    "Refusal",
    "Respond",
    "gemini_model_rules",
    "google_server",
    "groq_server",
    "mistral_server",
]

Respond = Callable[[dict[str, Any]], dict[str, Any]]
"""Builds the whole JSON answer (status 200) from the parsed request body."""

_DRAWS = (-1, 0, 0, 1, 0, -1, 1, 0)
"""Offsets from the judge's score a candidate at temperature > 0 draws from (as fake_openai)."""


class ApiError(Exception):
    """A refusal the fake applies: HTTP status, message, and (Gemini) the gRPC status name."""

    def __init__(self, status: int, message: str, grpc: str = "INVALID_ARGUMENT") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.grpc = grpc


@dataclass(frozen=True)
class Refusal:
    """A scripted HTTP error, sent in the service's own error shape.

    ``grpc`` is Gemini's ``error.status`` (``RESOURCE_EXHAUSTED`` for 429, ...); None picks the
    usual one for the HTTP status.
    """

    status: int
    message: str
    grpc: str | None = None


_GRPC = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


@dataclass
class ProviderRule(PromptRule):
    """A scripted answer for requests whose prompt contains ``when`` (any, if None)."""

    answer: str | list[str] | Respond | Refusal


@dataclass(frozen=True)
class ProviderRequest:
    """One request to a known endpoint, as the fake received and answered it."""

    path: str
    body: dict[str, Any]
    prompt: str
    model: str
    status: int
    """HTTP status of the answer (200, or the refusal's)."""
    error: str | None
    """The refusal's message, if the request was refused."""
    rule: ProviderRule | None
    """The scripted rule that answered it (None: the healthy judge)."""


class _FakeProvider(ScriptedFake):
    """What the three fakes share: the server thread, scripting, recording, the judge."""

    name = "provider"

    def __init__(self, port: int = 0) -> None:
        self.label = f"{self.name} fake"
        self._start_records()
        self._httpd = _HTTPServer(("127.0.0.1", port), handler_for(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    # -- test-facing API -------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The base URL the provider's ``*_BASE_URL`` variable gets."""
        return self.root

    def script(
        self,
        answer: str | list[str] | Respond | Refusal,
        when: str | None = None,
        times: int | None = None,
    ) -> ProviderRule:
        """Answer matching requests with ``answer`` (first matching rule wins).

        A text (or a list: one per candidate / choice, cycled) goes through the service's
        rules like the healthy judge's; a function builds the whole JSON answer from the
        request body; a `Refusal` is sent as an HTTP error.
        """
        return self._add_rule(ProviderRule(answer=answer, when=when, times=times))

    def bodies(self) -> list[dict[str, Any]]:
        """The parsed bodies of every recorded request, in order."""
        with self._lock:
            return [r.body for r in self.requests]

    def last(self) -> ProviderRequest:
        with self._lock:
            assert self.requests, f"{self.name} fake got no request"
            return self.requests[-1]

    def refused(self) -> list[ProviderRequest]:
        """The recorded requests answered with an error."""
        with self._lock:
            return [r for r in self.requests if r.status != 200]

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # -- the healthy judge -------------------------------------------------------------

    def judge_text(self, prompt: str, index: int, temperature: Any) -> str:
        """The healthy judge's answer for one candidate / choice."""
        marker = SCORE_MARKER.search(prompt)
        score = int(marker.group(1)) if marker else self.default_score
        if isinstance(temperature, int | float) and temperature > 0:
            digest = hashlib.sha256(f"{prompt}\x00{index}".encode()).digest()
            score = min(5, max(1, score + _DRAWS[digest[0] % len(_DRAWS)]))
        if RUBRIC_FORM in prompt and not prompt.rstrip().endswith(SCORE_ONLY):
            return f"The reply names the user's feeling and responds to it.\nScore: {score}"
        return str(score)

    def texts_for(
        self, rule: ProviderRule | None, prompt: str, n: int, temperature: Any
    ) -> list[str]:
        """The answer texts for ``n`` candidates / choices (a rule's, or the judge's)."""
        if rule is not None and isinstance(rule.answer, str):
            return [rule.answer] * n
        if rule is not None and isinstance(rule.answer, list):
            return [rule.answer[i % len(rule.answer)] for i in range(n)]
        return [self.judge_text(prompt, i, temperature) for i in range(n)]

    # -- per service -------------------------------------------------------------------

    def route(self, method: str, path: str) -> str | None:
        """The endpoint a request is for (None: unknown)."""
        raise NotImplementedError

    def prompt_of(self, endpoint: str, body: dict[str, Any]) -> str:
        raise NotImplementedError

    def model_of(self, endpoint: str, path: str, body: dict[str, Any]) -> str:
        return str(body.get("model", ""))

    def check_auth(self, headers: Any) -> None:
        """Raise `ApiError` if the request carries no API key."""

    def answer(
        self, endpoint: str, path: str, body: dict[str, Any], rule: ProviderRule | None
    ) -> dict[str, Any]:
        """The JSON answer, or `ApiError` for a refusal."""
        raise NotImplementedError

    def error_body(self, status: int, message: str, grpc: str | None) -> dict[str, Any]:
        raise NotImplementedError

    def streamed(self, endpoint: str, path: str, body: dict[str, Any]) -> bool:
        return bool(body.get("stream"))

    # -- called from handler threads ---------------------------------------------------

    def _handle(
        self, method: str, path: str, headers: Any, raw: bytes
    ) -> tuple[int, dict[str, Any]] | None:
        """Status and JSON answer for a request; None for an unknown one (answered 404)."""
        endpoint = self.route(method, path)
        if endpoint is None:
            self._unknown(f"{method} {path} (unknown path)")
            return None
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._unknown(f"{method} {path} (body is not JSON)")
            return None
        if self.streamed(endpoint, path, body):
            self._unknown(f"{method} {path} (streaming is not supported by the fake)")
            return None
        prompt = self.prompt_of(endpoint, body)
        with self._lock:
            rule = next((r for r in self.rules if r.applies(prompt)), None)
            if rule is not None:
                rule.used += 1
        status, error = 200, None
        try:
            self.check_auth(headers)
            if rule is not None and isinstance(rule.answer, Refusal):
                refusal = rule.answer
                raise ApiError(refusal.status, refusal.message, refusal.grpc or "")
            if rule is not None and callable(rule.answer):
                payload = rule.answer(body)
            else:
                payload = self.answer(endpoint, path, body, rule)
        except ApiError as ex:
            status, error = ex.status, ex.message
            payload = self.error_body(ex.status, ex.message, ex.grpc or None)
        model = self.model_of(endpoint, path, body)
        with self._lock:
            self.requests.append(ProviderRequest(path, body, prompt, model, status, error, rule))
        return status, payload

    def _unknown(self, what: str) -> None:
        with self._lock:
            self.unknown.append(what)


def json_body(raw: bytes, status: int, payload: Any) -> tuple[str, bytes]:
    """A reply's content type and bytes: the payload as JSON."""
    return "application/json", json.dumps(payload).encode()


def handler_for(
    server: _FakeProvider,
    body: Callable[[bytes, int, Any], tuple[str, bytes]] = json_body,
) -> type[BaseHTTPRequestHandler]:
    """The HTTP handler of a fake service: ``server._handle`` answers each request, ``body``
    turns its answer into a content type and bytes (a streamed reply's events, say)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def do_GET(self) -> None:  # noqa: N802
            self._serve(b"")

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            self._serve(self.rfile.read(length) if length else b"")

        def _serve(self, raw: bytes) -> None:
            answered = server._handle(self.command, self.path, self.headers, raw)
            if answered is None:
                status, payload = 404, server.error_body(404, f"Not found: {self.path}", None)
            else:
                status, payload = answered
            content_type, data = body(raw, status, payload)
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except OSError:
                self.close_connection = True

        def finish(self) -> None:
            try:
                super().finish()
            except OSError:
                pass

    return Handler


def _usage_id(prefix: str) -> str:
    return f"{prefix}{next(_IDS):06d}"


_IDS = itertools.count(1)


# =====================================================================================
# Google Gemini (Gemini Developer API, REST, camelCase JSON)
# =====================================================================================

GeminiFamily = Literal["1.5", "2.0", "2.5", "3"]


@dataclass(frozen=True)
class GeminiModelRules:
    """The documented limits the fake applies to one Gemini model."""

    family: GeminiFamily
    logprobs: bool
    """Accepts ``responseLogprobs``."""
    max_candidates: int
    """Largest ``candidateCount`` accepted."""
    thinks: bool
    """A thinking model (thinking tokens count against ``maxOutputTokens``)."""
    budget_range: tuple[int, int] | None
    """Accepted positive ``thinkingBudget`` values (-1, dynamic, is always accepted)."""
    budget_zero: bool
    """``thinkingBudget: 0`` turns thinking off (else refused)."""
    levels: tuple[str, ...]
    """Accepted ``thinkingLevel`` values (Gemini 3); empty: the field is refused."""
    max_output: int
    """Output bound when the request sets no ``maxOutputTokens``."""


def gemini_model_rules(model: str) -> GeminiModelRules:
    """The limits the fake applies to a Gemini model, by name."""
    name = model.removeprefix("models/").lower()
    if name.startswith("gemini-3"):
        # Gemini 3: thinking is always on, set by thinkingLevel (Pro: low/high; Flash also
        # minimal/medium): https://ai.google.dev/gemini-api/docs/gemini-3 and
        # https://ai.google.dev/gemini-api/docs/thinking ("thinking_level ... Gemini 3").
        # candidateCount > 1 is refused: googleapis/python-genai#1723, googleapis/js-genai#1609.
        # No logprobs: GoogleCloudPlatform/generative-ai#2947 (Gemini 3.5 Flash, 400).
        # A thinkingBudget is still accepted for compatibility; the fake gives it 2.5 Pro's
        # range and refuses 0 (thinking cannot be turned off), which is not verified for 3.
        levels = ("low", "high") if "pro" in name else ("minimal", "low", "medium", "high")
        return GeminiModelRules("3", False, 1, True, (128, 32768), False, levels, 65536)
    if name.startswith("gemini-2.5"):
        # Thinking budgets, https://ai.google.dev/gemini-api/docs/thinking#set-budget
        # (quoted in juspay/neurolink#1707): 2.5 Pro 128-32768 and thinking can't be turned
        # off; 2.5 Flash 0-24576 (0 turns it off); 2.5 Flash-Lite 512-24576 (0 turns it off).
        # Logprobs refused: "Logprobs is not enabled for models/gemini-2.5-pro"
        # (googleapis/python-genai#1921, mscraftsman/generative-ai#135,
        # Vela-Research/think-reason-learn#34 for 2.5 Flash(-Lite)).
        if "pro" in name:
            return GeminiModelRules("2.5", False, 8, True, (128, 32768), False, (), 65536)
        if "lite" in name:
            return GeminiModelRules("2.5", False, 8, True, (512, 24576), True, (), 65536)
        return GeminiModelRules("2.5", False, 8, True, (1, 24576), True, (), 65536)
    if name.startswith("gemini-1.5"):
        # Logprobs on 1.5 were refused or not generally available
        # (GoogleCloudPlatform/generative-ai#1536); no thinking.
        return GeminiModelRules("1.5", False, 8, False, None, False, (), 8192)
    # Gemini 2.0 (and anything else called gemini-*): logprobs work
    # (googleapis/python-genai#1921: "Only works when I change model name to
    # gemini-2.0-flash"); no thinking; 8192 output tokens at most.
    return GeminiModelRules("2.0", True, 8, False, None, False, (), 8192)


_GEMINI_PATH = re.compile(
    r"^/(v1|v1beta|v1alpha)/models/([^/:]+):(generateContent|countTokens|streamGenerateContent)$"
)

THOUGHT_SUMMARY = "**Weighing the reply**\nI check how well the reply meets the user's feelings."
"""The thought summary a thinking Gemini model returns when asked to include thoughts."""


class FakeGemini(_FakeProvider):
    """The Gemini Developer API (``POST /v1beta/models/<model>:generateContent``).

    ``thinking_tokens``: how many thinking tokens a thinking model spends before answering
    (capped by the request's ``thinkingBudget``; a quarter of it at ``thinkingLevel`` low,
    16 at minimal). ``certain``: the score token is certain (p = 1), so the API leaves out its
    ``logProbability`` (and Inspect drops the token).
    """

    name = "google"

    def __init__(self, port: int = 0, thinking_tokens: int = 200) -> None:
        super().__init__(port)
        self.thinking_tokens = thinking_tokens
        self.default_thinking_tokens = thinking_tokens
        self.certain = False

    def clear(self) -> None:
        super().clear()
        self.thinking_tokens = self.default_thinking_tokens
        self.certain = False

    def route(self, method: str, path: str) -> str | None:
        match = _GEMINI_PATH.match(path.split("?")[0])
        if method != "POST" or match is None:
            return None
        return match.group(3)

    def streamed(self, endpoint: str, path: str, body: dict[str, Any]) -> bool:
        return endpoint == "streamGenerateContent"

    def model_of(self, endpoint: str, path: str, body: dict[str, Any]) -> str:
        match = _GEMINI_PATH.match(path.split("?")[0])
        return match.group(2) if match else ""

    def prompt_of(self, endpoint: str, body: dict[str, Any]) -> str:
        parts: list[str] = []
        system = _field(body, "systemInstruction") or {}
        parts.extend(str(p.get("text", "")) for p in system.get("parts") or [])
        for content in body.get("contents") or []:
            parts.extend(str(p.get("text", "")) for p in content.get("parts") or [] if "text" in p)
        return "\n".join(parts)

    def check_auth(self, headers: Any) -> None:
        # The SDK sends the API key in x-goog-api-key. The refusal of a keyless request is
        # the API's usual 403 as users quote it; the fake's wording is not verified.
        if not headers.get("x-goog-api-key"):
            raise ApiError(
                403,
                "Method doesn't allow unregistered callers (callers without established "
                "identity). Please use API Key or other form of API consumer identity to call "
                "this API.",
                "PERMISSION_DENIED",
            )

    def error_body(self, status: int, message: str, grpc: str | None) -> dict[str, Any]:
        # {"error": {"code", "message", "status"}}, as quoted in googleapis/python-genai#1921.
        return {
            "error": {
                "code": status,
                "message": message,
                "status": grpc or _GRPC.get(status, "UNKNOWN"),
            }
        }

    def answer(
        self, endpoint: str, path: str, body: dict[str, Any], rule: ProviderRule | None
    ) -> dict[str, Any]:
        model = self.model_of(endpoint, path, body)
        if not model.startswith("gemini-"):
            # An unknown model: 404 NOT_FOUND (https://ai.google.dev/gemini-api/docs/
            # troubleshooting); the wording is the one users commonly quote, not verified.
            version = path.split("/")[1]
            raise ApiError(
                404,
                f"models/{model} is not found for API version {version}, or is not supported "
                "for generateContent. Call ListModels to see the list of available models and "
                "their supported methods.",
                "NOT_FOUND",
            )
        prompt = self.prompt_of(endpoint, body)
        if endpoint == "countTokens":
            return {"totalTokens": count_tokens(prompt)}
        rules = gemini_model_rules(model)
        config = _field(body, "generationConfig") or {}
        n = int(_field(config, "candidateCount") or 1)
        self._check_candidates(model, rules, n)
        want_logprobs = bool(_field(config, "responseLogprobs"))
        top = _field(config, "logprobs")
        self._check_logprobs(model, rules, want_logprobs, top)
        thinking, include_thoughts = self._thinking(model, rules, _field(config, "thinkingConfig"))
        bound = int(_field(config, "maxOutputTokens") or rules.max_output)
        texts = self.texts_for(rule, prompt, n, _field(config, "temperature"))
        candidates = []
        answer_tokens = thought_tokens = 0
        for index, text in enumerate(texts):
            # Thinking tokens count against maxOutputTokens; when they use it all the answer
            # is empty and finishReason MAX_TOKENS (https://ai.google.dev/gemini-api/docs/
            # thinking, "thinking budget"; dev.to/multigrid "a badly chosen pair of numbers
            # returns a response with no text in it").
            spent = min(thinking, bound)
            room = bound - spent
            tokens = tokens_of(text)
            cut = len(tokens) > room
            kept = tokens[:room]
            thought_tokens += spent
            answer_tokens += len(kept)
            candidates.append(
                self._candidate(
                    index,
                    kept,
                    cut,
                    include_thoughts and spent > 0,
                    want_logprobs,
                    int(top or 0),
                )
            )
        prompt_tokens = count_tokens(prompt)
        # usageMetadata; thoughtsTokenCount only for thinking (proto3 leaves out zeros).
        usage: dict[str, Any] = {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": answer_tokens,
            "totalTokenCount": prompt_tokens + answer_tokens + thought_tokens,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt_tokens}],
        }
        if thought_tokens:
            usage["thoughtsTokenCount"] = thought_tokens
        return {
            "candidates": candidates,
            "usageMetadata": usage,
            "modelVersion": model,
            "responseId": _usage_id("fake-gemini-"),
        }

    def _check_candidates(self, model: str, rules: GeminiModelRules, n: int) -> None:
        if rules.family == "3" and n > 1:
            # Exact text: googleapis/python-genai#1723, googleapis/js-genai#1609.
            raise ApiError(400, "Multiple candidates is not enabled for this model")
        if not 1 <= n <= rules.max_candidates:
            # Range 1-8 for 2.x (router-for-me/CLIProxyAPI#879: "Gemini 2.5 series supports
            # up to 8"); the wording follows Vertex's range error quoted in
            # googleapis/python-aiplatform#3603 (the Gemini API's own text is not verified).
            raise ApiError(
                400,
                f"Unable to submit request because it has a candidateCount value of {n} but "
                f"the supported range is from 1 (inclusive) to {rules.max_candidates + 1} "
                "(exclusive). Update the value and try again.",
            )

    def _check_logprobs(self, model: str, rules: GeminiModelRules, want: bool, top: Any) -> None:
        if want and not rules.logprobs:
            # Exact text and shape: googleapis/python-genai#1921 (gemini-2.5-pro). For
            # Gemini 3 the same text is assumed (not verified).
            raise ApiError(400, f"Logprobs is not enabled for models/{model}")
        if top is not None and not 0 <= int(top) <= 20:
            # logprobs is 1-20 (GoogleCloudPlatform/generative-ai gemini/logprobs notebook,
            # "logprobs=3,  # [1-20]"); the refusal's wording is not verified.
            raise ApiError(400, f"logprobs must be in the range [0, 20], but got {int(top)}.")

    def _thinking(
        self, model: str, rules: GeminiModelRules, config: dict[str, Any] | None
    ) -> tuple[int, bool]:
        """Thinking tokens to spend, and whether to include thought summaries."""
        config = config or {}
        include = bool(_field(config, "includeThoughts"))
        budget = _field(config, "thinkingBudget")
        level = _field(config, "thinkingLevel")
        if level is not None and not rules.levels:
            # "If you use the thinking_level parameter with a model earlier than Gemini 3,
            # the model returns an error." (https://ai.google.dev/gemini-api/docs/thinking,
            # quoted in juspay/neurolink#1707); wording not verified.
            raise ApiError(400, "Thinking level is not supported for this model.")
        if level is not None and budget is not None:
            # "You cannot use both thinking_level and thinking_budget in the same request.
            # Doing so will return a 400 error" (https://ai.google.dev/gemini-api/docs/
            # gemini-3, quoted in hexdocs gemini_ex ThinkingConfig); wording not verified.
            raise ApiError(400, "You cannot set both thinking_level and thinking_budget.")
        if not rules.thinks:
            return 0, False
        spend = self.thinking_tokens
        if level is not None:
            # The SDK sends the enum name (LOW, HIGH); a level the model lacks (Pro: no
            # minimal / medium) is refused, wording not verified.
            level = str(level).lower()
            if level not in rules.levels:
                raise ApiError(
                    400, f"Thinking level {level.upper()} is not supported by this model."
                )
            spend = {"minimal": min(16, spend), "low": spend // 4, "medium": spend // 2}.get(
                level, spend
            )
        if budget is not None:
            budget = int(budget)
            if budget == 0:
                if not rules.budget_zero:
                    # Exact text: snailyp/gemini-balance#206 (gemini-2.5-pro); "Thinking
                    # can't be turned off for Gemini 2.5 Pro" (thinking docs).
                    raise ApiError(
                        400, "Budget 0 is invalid. This model only works in thinking mode."
                    )
                return 0, include
            if budget != -1:
                low, high = rules.budget_range or (0, 0)
                if not low <= budget <= high:
                    # Exact text: RooCodeInc/Roo-Code#4399 ("The thinking budget (52428) is
                    # invalid.").
                    raise ApiError(400, f"The thinking budget ({budget}) is invalid.")
                spend = min(spend, budget)
        return spend, include

    def _candidate(
        self,
        index: int,
        tokens: list[str],
        cut: bool,
        thoughts: bool,
        want_logprobs: bool,
        top: int,
    ) -> dict[str, Any]:
        text = "".join(tokens)
        parts: list[dict[str, Any]] = []
        if thoughts:
            parts.append({"text": THOUGHT_SUMMARY, "thought": True})
        if text:
            parts.append({"text": text})
        # With no room left the API sends content without parts (role only).
        content: dict[str, Any] = {"role": "model"}
        if parts:
            content["parts"] = parts
        candidate: dict[str, Any] = {
            "content": content,
            "finishReason": "MAX_TOKENS" if cut else "STOP",
        }
        if index:
            # proto3 JSON leaves out default values, so index 0 is not sent (unverified for
            # candidates; Inspect sorts by ``index or 0``).
            candidate["index"] = index
        if want_logprobs and tokens and text:
            chosen, top_steps, total = [], [], 0.0
            for token in tokens:
                alternatives = self._alternatives(token, top)
                logprob = next((lp for tok, lp in alternatives if tok == token), 0.0)
                total += logprob
                chosen.append(_gemini_token(token, logprob))
                top_steps.append(
                    {"candidates": [_gemini_token(t, lp) for t, lp in alternatives[:top]]}
                )
            candidate["logprobsResult"] = {"topCandidates": top_steps, "chosenCandidates": chosen}
            candidate["avgLogprobs"] = total / len(tokens)
        return candidate

    def _alternatives(self, token: str, top: int) -> list[tuple[str, float]]:
        """Top candidates at a token: the fake_openai spread over 1-5 at a score token;
        any other token is certain (logprob 0, left out on the wire)."""
        if token.strip() in {"1", "2", "3", "4", "5"} and not self.certain:
            return [(a["token"], a["logprob"]) for a in score_top_logprobs(token, max(top, 1))]
        return [(token, 0.0)]


def _field(obj: dict[str, Any], camel: str) -> Any:
    """A Gemini REST field by its lowerCamel name or its proto (snake_case) name.

    Proto3 JSON parsing accepts both (https://protobuf.dev/programming-guides/json/: "Parsers
    accept both the lowerCamelCase name ... and the original proto field name"), and the SDK
    uses both: google-genai 3.6 sends ``generationConfig.thinkingConfig`` as
    ``{"include_thoughts": true, "thinking_budget": ...}``.
    """
    if camel in obj:
        return obj[camel]
    return obj.get(re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), camel))


def _gemini_token(token: str, logprob: float) -> dict[str, Any]:
    """A ``logprobsResult`` candidate; the API leaves out ``logProbability`` when it is 0
    (proto3 default; see Inspect's google.py, which drops such tokens)."""
    entry: dict[str, Any] = {"token": token}
    if logprob != 0.0:
        entry["logProbability"] = logprob
    return entry


# =====================================================================================
# Groq (OpenAI-compatible chat completions)
# =====================================================================================


class FakeGroq(_FakeProvider):
    """Groq's chat completions (``POST /openai/v1/chat/completions``).

    Refusals from https://console.groq.com/docs/openai ("Currently Unsupported OpenAI
    Features"): ``logprobs``, ``logit_bias``, ``top_logprobs`` and ``messages[].name`` "will
    result in a 400 error", and "If N is supplied, it must be equal to 1".
    """

    name = "groq"

    def route(self, method: str, path: str) -> str | None:
        ok = method == "POST" and path.split("?")[0] == "/openai/v1/chat/completions"
        return "chat" if ok else None

    def prompt_of(self, endpoint: str, body: dict[str, Any]) -> str:
        return _chat_prompt(body.get("messages"))

    def check_auth(self, headers: Any) -> None:
        # Bearer key; Groq's 401 says "Invalid API Key" (code invalid_api_key), from memory of
        # the API, not verified.
        if not str(headers.get("Authorization", "")).startswith("Bearer "):
            raise ApiError(401, "Invalid API Key")

    def error_body(self, status: int, message: str, grpc: str | None) -> dict[str, Any]:
        kinds = {401: "invalid_api_key", 429: "rate_limit_exceeded"}
        return {
            "error": {
                "message": message,
                "type": "invalid_request_error" if status < 500 else "internal_server_error",
                "code": kinds.get(status),
            }
        }

    def answer(
        self, endpoint: str, path: str, body: dict[str, Any], rule: ProviderRule | None
    ) -> dict[str, Any]:
        for key in ("logprobs", "top_logprobs", "logit_bias"):
            if body.get(key) not in (None, False):
                # Text as groq/groq-python#25 quotes it for logprobs ("`logprobs` is not
                # supported with this model"); the same form is assumed for the others.
                raise ApiError(400, f"`{key}` is not supported with this model")
        if any(isinstance(m, dict) and "name" in m for m in body.get("messages") or []):
            # messages[].name is refused (console.groq.com/docs/openai); wording not verified.
            raise ApiError(400, "'messages.name' : property 'name' is unsupported")
        n = body.get("n")
        if n is not None and n != 1:
            # "If N is supplied, it must be equal to 1" (console.groq.com/docs/openai); the
            # error's wording is not verified.
            raise ApiError(400, "'n' : number must be at most 1")
        prompt = self.prompt_of(endpoint, body)
        texts = self.texts_for(rule, prompt, 1, body.get("temperature"))
        return _chat_completion(
            str(body.get("model", "")),
            texts,
            body.get("max_completion_tokens", body.get("max_tokens")),
            count_tokens(prompt),
            groq=True,
        )


# =====================================================================================
# Mistral (Conversations API, Inspect's default, and chat completions)
# =====================================================================================


class FakeMistral(_FakeProvider):
    """Mistral's Conversations API (``POST /v1/conversations``, what Inspect's ``mistral/``
    provider uses unless ``conversation_api=False``) and chat completions
    (``POST /v1/chat/completions``).

    Both cut the answer at the request's ``max_tokens``. Chat completions then report
    ``finish_reason: "length"`` (verified live in symfony/ai#2344); a conversation response has
    no finish reason at all (its ``MessageOutputEntry`` has none in the API schema / SDK
    model ``mistralai.client.models.MessageOutputEntry``), so Inspect reports ``stop`` for a
    cut answer. ``n`` is honoured by chat completions ("Number of completions to return for
    each request, input tokens are only billed once", the API schema as the SDK's
    ``ChatCompletionRequest.n`` carries it); a conversation has no ``n`` (``CompletionArgs``
    has none) and always answers once. No logprobs: Inspect never asks, and the fake sends
    ``logprobs: null``.
    """

    name = "mistral"

    def route(self, method: str, path: str) -> str | None:
        if method != "POST":
            return None
        return {"/v1/conversations": "conversations", "/v1/chat/completions": "chat"}.get(
            path.split("?")[0]
        )

    def prompt_of(self, endpoint: str, body: dict[str, Any]) -> str:
        if endpoint == "chat":
            return _chat_prompt(body.get("messages"))
        parts = [str(body["instructions"])] if body.get("instructions") else []
        inputs = body.get("inputs")
        if isinstance(inputs, str):
            parts.append(inputs)
        else:
            parts.append(_chat_prompt(inputs))
        return "\n".join(p for p in parts if p)

    def check_auth(self, headers: Any) -> None:
        # The SDK sends ``Authorization: Bearer <key>``; the 401 text is not verified.
        if not str(headers.get("Authorization", "")).startswith("Bearer "):
            raise ApiError(401, "Unauthorized")

    def error_body(self, status: int, message: str, grpc: str | None) -> dict[str, Any]:
        # {"object": "error", "message", "type", "param", "code"}: Mistral's error shape as
        # Inspect's mistral.py handle_bad_request reads it (body["message"]); the ``type`` and
        # ``code`` values are not verified.
        return {
            "object": "error",
            "message": message,
            "type": "invalid_request_error" if status < 500 else "internal_error",
            "param": None,
            "code": str(status),
        }

    def answer(
        self, endpoint: str, path: str, body: dict[str, Any], rule: ProviderRule | None
    ) -> dict[str, Any]:
        prompt = self.prompt_of(endpoint, body)
        model = str(body.get("model", ""))
        if endpoint == "chat":
            n = int(body.get("n") or 1)
            texts = self.texts_for(rule, prompt, n, body.get("temperature"))
            return _chat_completion(model, texts, body.get("max_tokens"), count_tokens(prompt))
        args = body.get("completion_args") or {}
        text = self.texts_for(rule, prompt, 1, args.get("temperature"))[0]
        tokens = tokens_of(text)
        bound = args.get("max_tokens")
        if bound is not None:
            tokens = tokens[: int(bound)]
        now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        prompt_tokens = count_tokens(prompt)
        return {
            "object": "conversation.response",
            "conversation_id": _usage_id("conv_fake"),
            "outputs": [
                {
                    "object": "entry",
                    "type": "message.output",
                    "created_at": now,
                    "completed_at": now,
                    "id": _usage_id("msg_fake"),
                    "agent_id": None,
                    "model": model,
                    "role": "assistant",
                    "content": "".join(tokens),
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(tokens),
                "total_tokens": prompt_tokens + len(tokens),
            },
        }


# -- shared by Groq and Mistral chat completions --------------------------------------------


def _chat_prompt(messages: Any) -> str:
    parts: list[str] = []
    for message in messages or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "\n".join(parts)


def _chat_completion(
    model: str, texts: list[str], bound: Any, prompt_tokens: int, groq: bool = False
) -> dict[str, Any]:
    """A chat.completion with one choice per text, each cut at ``bound`` tokens
    (``finish_reason: length``)."""
    choices, completion_tokens = [], 0
    for index, text in enumerate(texts):
        tokens = tokens_of(text)
        cut = bound is not None and len(tokens) > int(bound)
        kept = tokens[: int(bound)] if cut else tokens
        completion_tokens += len(kept)
        choices.append(
            {
                "index": index,
                "message": {"role": "assistant", "content": "".join(kept), "tool_calls": None},
                "finish_reason": "length" if cut else "stop",
                "logprobs": None,
            }
        )
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    payload: dict[str, Any] = {
        "id": _usage_id("chatcmpl-fake"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        "usage": usage,
    }
    if groq:
        # Groq adds timings to usage and an x_groq block (https://console.groq.com/docs/
        # api-reference, chat completion object).
        usage.update(queue_time=0.001, prompt_time=0.001, completion_time=0.001, total_time=0.003)
        payload["system_fingerprint"] = "fp_fake"
        payload["x_groq"] = {"id": _usage_id("req_fake")}
    return payload


# =====================================================================================
# pytest fixtures (registered by ``pytest_plugins = ["fake_providers"]`` in conftest.py)
# =====================================================================================


@pytest.fixture(scope="session")
def _fake_provider_servers() -> Iterator[dict[str, _FakeProvider]]:
    """One fake per service for the whole session (fixed URLs: Inspect may reuse a provider)."""
    servers: dict[str, _FakeProvider] = {
        "google": FakeGemini(),
        "groq": FakeGroq(),
        "mistral": FakeMistral(),
    }
    yield servers
    for server in servers.values():
        server.stop()


@pytest.fixture
def google_server(
    _fake_provider_servers: dict[str, _FakeProvider], monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeGemini]:
    """The fake Gemini API, reset, with Inspect's ``google/`` provider pointed at it."""
    server = _fake_provider_servers["google"]
    assert isinstance(server, FakeGemini)
    server.clear()
    for var in (
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_API_VERSION",
        "GOOGLE_USE_ADC",
        "GEMINI_API_KEY",
        "VERTEX_API_KEY",
        "GOOGLE_VERTEX_BASE_URL",
        "VERTEX_BASE_URL",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GOOGLE_BASE_URL", server.url)
    monkeypatch.setenv("GOOGLE_API_KEY", "test")
    yield server
    server.assert_no_unknown()


@pytest.fixture
def groq_server(
    _fake_provider_servers: dict[str, _FakeProvider], monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeGroq]:
    """The fake Groq API, reset, with Inspect's ``groq/`` provider pointed at it."""
    server = _fake_provider_servers["groq"]
    assert isinstance(server, FakeGroq)
    server.clear()
    monkeypatch.setenv("GROQ_BASE_URL", server.url)
    monkeypatch.setenv("GROQ_API_KEY", "test")
    yield server
    server.assert_no_unknown()


@pytest.fixture
def mistral_server(
    _fake_provider_servers: dict[str, _FakeProvider], monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeMistral]:
    """The fake Mistral API, reset, with Inspect's ``mistral/`` provider pointed at it."""
    server = _fake_provider_servers["mistral"]
    assert isinstance(server, FakeMistral)
    server.clear()
    monkeypatch.setenv("MISTRAL_BASE_URL", server.url)
    monkeypatch.setenv("MISTRAL_API_KEY", "test")
    yield server
    server.assert_no_unknown()
