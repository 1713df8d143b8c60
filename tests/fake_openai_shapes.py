"""Fake OpenAI-shaped services that `benchmarks/fake_openai.py` does not cover, with fixtures.

Each fake is a standard-library HTTP server on 127.0.0.1 in a thread, reached through
Inspect's own provider and the real SDK, and applies the service's documented limits,
refusals and token shapes (each with its source beside the code that applies it):

- ``ShapeServer("openai")``: the OpenAI Responses API (``POST /v1/responses``, which
  Inspect's ``openai/`` provider uses for gpt-5*, o-series and ``-M responses_api=true``)
  and chat completions (``POST /v1/chat/completions``, ``-M responses_api=false``) with the
  reasoning-model rules: ``max_output_tokens`` >= 16, reasoning effort values per model,
  reasoning tokens spent before the answer and counted against the output bound
  (``status: incomplete``), no logprobs, no temperature, no ``max_tokens``.
- ``ShapeServer("together")``: Together's chat completions with its native logprobs
  (``tokens`` / ``token_logprobs`` / ``token_ids`` / ``top_logprobs`` as dicts).
- ``ShapeServer("vllm" | "ollama" | "llamacpp")``: their OpenAI-compatible chat
  completions (and ``GET /v1/models``), with each one's logprobs ``bytes``.

Scripting is the same as ``benchmarks/fake_openai.py`` (its `Reply`, `Rule` and
`Request` are reused): the healthy judge answers the rubric prompt with 4 (or the score of a
``[judge-says:N]`` marker; a prompt that asks for reasoning gets a reason and ``Score: N``);
``script(reply, when=..., times=...)`` answers prompts containing ``when`` with a text, a
list of texts (one per choice), a function building the whole JSON answer from the request
body, or a `Reply`. Scripted texts go through the same limits (a reasoning model still
spends its reasoning tokens first). Every request is recorded (``requests``, ``bodies()``);
an unknown path is answered 404 and recorded in ``unknown`` (``assert_no_unknown()``).

Not modelled: streaming (recorded as unknown), temperature draws, the Batch API, and the
`Reply` fields ``reset`` and ``stream_error`` (ignored).
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import pytest
from fake_servers import Reply, Request, Rule

Service = Literal["openai", "together", "vllm", "ollama", "llamacpp"]

# benchmarks/fake_openai.py, on the import path once fake_servers is imported
from fake_openai import (  # noqa: E402
    RUBRIC_FORM,
    SCORE_MARKER,
    SCORE_ONLY,
    ScriptedFake,
    count_tokens,
    error_body,
    score_top_logprobs,
)

RESPONSES_PATH = "/v1/responses"
CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"

MIN_OUTPUT_TOKENS = 16
"""The Responses API refuses a smaller ``max_output_tokens`` (HTTP 400,
``integer_below_min_value``). Seen from OpenAI itself through proxies, same text each time:
https://github.com/vectorize-io/hindsight/issues/58 (Azure, gpt-5 family),
https://github.com/QuantumNous/new-api/issues/2438 (Poe, gpt-5 / 5.1),
https://github.com/wm94i/Work-Review/issues/41 (gpt-5.4). Applied to every model on
``/v1/responses`` (the reports are all gpt-5*; that gpt-4o is refused too is unverified)."""

REASONING_TOKENS: dict[str, int] = {
    "none": 0,
    "minimal": 8,
    "low": 64,
    "medium": 256,
    "high": 1024,
    "xhigh": 2048,
}
"""Reasoning tokens the fake spends before its visible answer, by effort. Our choice, not
measured: real counts vary per prompt; what is documented is that they are spent first and
count against the output bound (see `ShapeServer._responses`). Change per server with
``server.reasoning_tokens[effort] = n``."""

EFFORT_ORDER = ("none", "minimal", "low", "medium", "high", "xhigh")


# -- model families (server side: what the real API accepts for a model name) -----------


def reasoning_family(model: str) -> tuple[frozenset[str], str] | None:
    """Accepted reasoning efforts and the default effort of an OpenAI model; None when the
    model does not reason (gpt-4o, gpt-4.1, gpt-5-chat-latest, ...).

    Sources: the API reference's ``reasoning.effort`` (mirrored at
    https://learn.microsoft.com/en-us/javascript/api/@azure/ai-projects/reasoningeffort):
    "gpt-5.1 defaults to none ... supported values for gpt-5.1 are none, low, medium, and
    high"; "All models before gpt-5.1 default to medium reasoning effort, and do not support
    none"; "xhigh is supported for all models after gpt-5.1-codex-max". ``minimal`` is gpt-5
    only (https://platform.openai.com/docs/guides/latest-model#minimal-reasoning-effort;
    gpt-5.1 refuses it: https://github.com/openai/openai-agents-python/issues/2089).
    o-series: low / medium / high (https://platform.openai.com/docs/guides/reasoning).
    gpt-5.5 and later reason by default (Inspect's ``reasons_by_default_model``, which
    cites the API's behaviour).
    """
    name = model.lower().split("/")[-1]
    if re.match(r"o\d", name):
        return frozenset({"low", "medium", "high"}), "medium"
    version = re.match(r"gpt-(\d+)(?:\.(\d+))?", name)
    if version is None or int(version.group(1)) < 5 or "-chat" in name:
        return None
    major, minor = int(version.group(1)), int(version.group(2) or 0)
    if (major, minor) == (5, 0):
        return frozenset({"minimal", "low", "medium", "high"}), "medium"
    efforts = {"none", "low", "medium", "high"}
    if (major, minor) >= (5, 2):
        efforts.add("xhigh")
    return frozenset(efforts), "medium" if (major, minor) >= (5, 5) else "none"


# -- tokens -------------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*[^\W\d_]+|\s*\d|\s*[^\w\s]+[^\W\d_]*|\s+")


def split_tokens(text: str) -> list[str]:
    """Split text into tokens that concatenate back to it, closer to a BPE tokenizer than
    whitespace words: letters with their leading space, single digits (so the score in
    ``a 4.`` is the token `` 4``), punctuation with the letters it prefixes (``’d``)."""
    return _TOKEN.findall(text) or [""]


def utf8_bytes(token: str) -> list[int]:
    return list(token.encode("utf-8", errors="replace"))


def _alternatives(token: str, top: int, bytes_of: Callable[[str], Any]) -> list[dict[str, Any]]:
    """Top logprobs at a token (the shared fake's spread over 1-5 at a score token)."""
    return [
        {"token": a["token"], "logprob": a["logprob"], "bytes": bytes_of(a["token"])}
        for a in score_top_logprobs(token, max(top, 1))
    ][:top]


def _chosen_logprob(token: str) -> float:
    alternatives = score_top_logprobs(token, 1)
    return alternatives[0]["logprob"] if alternatives else -0.5


def prompt_of(body: dict[str, Any]) -> str:
    """All text of a chat (``messages``) or Responses (``input``, ``instructions``) request."""
    parts: list[str] = []
    if isinstance(body.get("instructions"), str):
        parts.append(body["instructions"])
    items = body.get("messages") if "messages" in body else body.get("input")
    if isinstance(items, str):
        items = [{"content": items}]
    for item in items or []:
        content = item.get("content") if isinstance(item, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return "\n".join(parts)


class _Refusal(Exception):
    """An API error answer: HTTP status and OpenAI-style error body."""

    def __init__(
        self, message: str, param: str | None, code: str | None, status: int = 400
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": param,
                "code": code,
            }
        }


def _effort_list(efforts: frozenset[str]) -> str:
    names = [f"'{e}'" for e in EFFORT_ORDER if e in efforts]
    return ", ".join(names[:-1]) + f", and {names[-1]}"


class ShapeServer(ScriptedFake):
    """A fake OpenAI-shaped service on 127.0.0.1, in a thread (see the module docstring).

    Attributes a test may set: ``default_score`` (healthy judge's answer),
    ``reasoning_tokens`` (per effort, see `REASONING_TOKENS`), ``logprobs_supported``
    (False: an Ollama before 0.12.11, which ignores ``logprobs``), ``max_model_len``
    (vLLM's ``/v1/models``).
    """

    def __init__(self, service: Service, port: int = 0) -> None:
        self.service: Service = service
        self.label = f"{service} fake"
        self._start_records()
        self.reasoning_tokens = dict(REASONING_TOKENS)
        self.logprobs_supported = True
        self.max_model_len = 8192
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", port), _handler_for(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    # -- for tests --------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """Base URL for the provider (every SDK here appends its path to ``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def script(
        self,
        reply: Reply | str | Sequence[str] | Callable[[dict[str, Any]], dict[str, Any]],
        when: str | None = None,
        times: int | None = None,
    ) -> Rule:
        """Answer requests whose prompt contains ``when`` (any, if None) with ``reply``: a
        text, texts (one per choice, cycled), a function building the whole JSON answer from
        the request body, or a `Reply`. First matching rule wins; ``times`` expires it."""
        if isinstance(reply, str):
            reply = Reply(text=reply)
        elif callable(reply) and not isinstance(reply, Reply):
            reply = Reply(respond=reply)
        elif not isinstance(reply, Reply):
            reply = Reply(texts=list(reply))
        return self._add_rule(Rule(reply=reply, when=when, times=times))

    def clear(self) -> None:
        """Forget rules and recorded requests; restore the defaults."""
        super().clear()
        self.reasoning_tokens = dict(REASONING_TOKENS)
        self.logprobs_supported = True

    def bodies(self, path: str | None = None) -> list[dict[str, Any]]:
        """Parsed bodies of the requests received (to ``path``, if given), in order."""
        with self._lock:
            return [r.body for r in self.requests if path is None or r.path == path]

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # -- answers ------------------------------------------------------------------------

    def _take(self, path: str, body: dict[str, Any]) -> Reply | None:
        prompt = prompt_of(body)
        with self._lock:
            reply = None
            for rule in self.rules:
                if rule.applies(prompt):
                    rule.used += 1
                    reply = rule.reply
                    break
            self.requests.append(Request(path=path, body=body, prompt=prompt, reply=reply))
        return reply

    def judge_text(self, body: dict[str, Any]) -> str:
        """The healthy judge's answer (score only, or a reason and ``Score: N``)."""
        prompt = prompt_of(body)
        marker = SCORE_MARKER.search(prompt)
        score = int(marker.group(1)) if marker else self.default_score
        if RUBRIC_FORM in prompt and not prompt.rstrip().endswith(SCORE_ONLY):
            return f"The reply names the user's feeling and responds to it.\nScore: {score}"
        return str(score)

    def _texts(self, body: dict[str, Any], reply: Reply | None, n: int) -> list[str]:
        if reply is not None and reply.texts:
            return [reply.texts[i % len(reply.texts)] for i in range(n)]
        if reply is not None and reply.text is not None:
            return [reply.text] * n
        return [self.judge_text(body)] * n

    def _effort(self, body: dict[str, Any], effort: Any, param: str) -> str | None:
        """The reasoning effort the request runs at (None: not a reasoning model); refuses
        an effort the model does not accept (texts: see `reasoning_family`; e.g.
        "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model. Supported
        values are: 'none', 'low', 'medium', and 'high'.", param ``reasoning.effort``,
        code ``unsupported_value``, https://github.com/openai/openai-agents-python/issues/2089).
        """
        model = str(body.get("model", ""))
        family = reasoning_family(model)
        if family is None:
            return None
        efforts, default = family
        if effort is None:
            return default
        if effort not in efforts:
            raise _Refusal(
                f"Unsupported value: '{effort}' is not supported with the '{model}' model. "
                f"Supported values are: {_effort_list(efforts)}.",
                param,
                "unsupported_value",
            )
        return str(effort)

    def _no_temperature(self, body: dict[str, Any]) -> None:
        """Reasoning models take only the default temperature 1.

        gpt-5: "Unsupported value: 'temperature' does not support 0 with this model. Only
        the default (1) value is supported." (param temperature, code unsupported_value;
        https://github.com/gabrii/Cursor-Azure-GPT-5/issues/33,
        https://github.com/QwenLM/qwen-code/issues/921 for gpt-5-mini on api.openai.com).
        o-series: "Unsupported parameter: 'temperature' is not supported with this model."
        (code unsupported_parameter; https://github.com/chatboxai/chatbox/issues/1830, o3-mini).
        Seen on chat completions; the same rule on /v1/responses is our assumption.
        """
        temperature = body.get("temperature")
        if temperature is None or temperature == 1:
            return
        if re.match(r"o\d", str(body.get("model", "")).lower()):
            raise _Refusal(
                "Unsupported parameter: 'temperature' is not supported with this model.",
                "temperature",
                "unsupported_parameter",
            )
        raise _Refusal(
            f"Unsupported value: 'temperature' does not support {temperature} with this "
            "model. Only the default (1) value is supported.",
            "temperature",
            "unsupported_value",
        )

    def _spend(self, effort: str | None, bound: Any, text: str) -> tuple[int, list[str], bool]:
        """Reasoning tokens spent, visible tokens, and whether the bound cut the answer.

        Reasoning tokens come first and count against the output bound; the bound can run
        out "before any visible output tokens are produced" (OpenAI reasoning guide,
        https://platform.openai.com/docs/guides/reasoning#allocating-space-for-reasoning;
        on chat completions o3-mini ends with finish_reason "length",
        https://community.openai.com/t/1134663). A thread reports gpt-5 cut mid-answer with
        status "completed" and incomplete_details null
        (https://community.openai.com/t/1355725); the fake follows the guide instead.
        """
        reasoning = self.reasoning_tokens.get(effort, 0) if effort is not None else 0
        tokens = split_tokens(text)
        if bound is None:
            return reasoning, tokens, False
        bound = int(bound)
        if reasoning >= bound:
            return bound, [], True
        room = bound - reasoning
        return reasoning, tokens[:room], len(tokens) > room

    # OpenAI Responses API --------------------------------------------------------------

    def _responses(self, body: dict[str, Any], reply: Reply | None) -> dict[str, Any]:
        bound = body.get("max_output_tokens")
        if bound is not None and int(bound) < MIN_OUTPUT_TOKENS:
            raise _Refusal(
                "Invalid 'max_output_tokens': integer below minimum value. Expected a value "
                f">= {MIN_OUTPUT_TOKENS}, but got {bound} instead.",
                "max_output_tokens",
                "integer_below_min_value",
            )
        model = str(body.get("model", "fake"))
        effort = self._effort(body, (body.get("reasoning") or {}).get("effort"), "reasoning.effort")
        reasons = effort is not None and effort != "none"
        include = list(body.get("include") or [])
        if reasons and "message.output_text.logprobs" in include:
            # https://github.com/vllm-project/vllm/pull/23319 (curl to api.openai.com,
            # gpt-5-mini with include message.output_text.logprobs and top_logprobs)
            raise _Refusal(
                "logprobs are not supported with reasoning models.",
                "include",
                "unsupported_parameter",
            )
        if reasons:
            self._no_temperature(body)
        if reply is not None and reply.respond is not None:
            return reply.respond(body)
        text = self._texts(body, reply, 1)[0]
        spent, tokens, cut = self._spend(effort if reasons else None, bound, text)
        output: list[dict[str, Any]] = []
        if effort is not None:
            item: dict[str, Any] = {"type": "reasoning", "id": "rs_fake", "summary": []}
            if "reasoning.encrypted_content" in include:
                item["encrypted_content"] = "fake-encrypted-reasoning"
            output.append(item)
        want_logprobs = (
            "message.output_text.logprobs" in include
            and self.logprobs_supported
            and (reply is None or reply.logprobs)
        )
        top = int(body.get("top_logprobs") or 0)
        if tokens:
            content: dict[str, Any] = {
                "type": "output_text",
                "text": "".join(tokens),
                "annotations": [],
                # "logprobs": [] when not asked for, as in the gpt-5 answer quoted in
                # https://community.openai.com/t/1355725
                "logprobs": [
                    {
                        "token": tok,
                        "logprob": _chosen_logprob(tok),
                        "bytes": utf8_bytes(tok),
                        "top_logprobs": _alternatives(tok, top, utf8_bytes),
                    }
                    for tok in tokens
                ]
                if want_logprobs
                else [],
            }
            output.append(
                {
                    "type": "message",
                    "id": "msg_fake",
                    "status": "incomplete" if cut else "completed",
                    "role": "assistant",
                    "content": [content],
                }
            )
        prompt_tokens = count_tokens(prompt_of(body))
        output_tokens = spent + len(tokens)
        return {
            "id": "resp_fake",
            "object": "response",
            "created_at": 1700000000,
            "model": model,
            "status": "incomplete" if cut else "completed",
            # https://platform.openai.com/docs/guides/reasoning#allocating-space-for-reasoning
            "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
            "error": None,
            "instructions": body.get("instructions"),
            "max_output_tokens": bound,
            "metadata": {},
            "output": output,
            "parallel_tool_calls": True,
            "reasoning": {"effort": effort, "summary": None},
            "store": body.get("store", True),
            "temperature": body.get("temperature", 1.0),
            "text": {"format": {"type": "text"}},
            "tool_choice": "auto",
            "tools": [],
            "top_logprobs": top,
            "top_p": body.get("top_p", 1.0),
            "truncation": "disabled",
            "usage": {
                "input_tokens": prompt_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": spent},
                "total_tokens": prompt_tokens + output_tokens,
            },
        }

    # Chat completions (OpenAI, Together, vLLM, Ollama, llama-cpp-python) -----------------

    def _chat_rules(self, body: dict[str, Any]) -> str | None:
        """OpenAI's refusals for reasoning models on chat completions; the effort."""
        if reasoning_family(str(body.get("model", ""))) is None:
            return None
        if "max_tokens" in body:
            # https://github.com/griptape-ai/ComfyUI-Griptape/issues/312 (gpt-5),
            # https://github.com/ITSpecialist111/ai_automation_suggester/issues/38 (o1)
            raise _Refusal(
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                "max_tokens",
                "unsupported_parameter",
            )
        effort = self._effort(body, body.get("reasoning_effort"), "reasoning_effort")
        if effort != "none" and body.get("logprobs"):
            if re.match(r"o\d", str(body.get("model", "")).lower()):
                # o4-mini answered 403 (https://github.com/confident-ai/deepeval/pull/2184)
                raise _Refusal(
                    "You are not allowed to request logprobs from this model",
                    None,
                    None,
                    status=403,
                )
            # gpt-5 refuses logprobs (https://community.openai.com/t/1345768, quoted in
            # https://github.com/CopilotKit/CopilotKit/pull/7191); the exact text is not
            # published there: this is OpenAI's usual unsupported_parameter wording.
            raise _Refusal(
                "Unsupported parameter: 'logprobs' is not supported with this model.",
                "logprobs",
                "unsupported_parameter",
            )
        if effort != "none":
            self._no_temperature(body)
        return effort

    def _chat(self, body: dict[str, Any], reply: Reply | None) -> dict[str, Any]:
        effort = self._chat_rules(body) if self.service == "openai" else None
        if reply is not None and reply.respond is not None:
            return reply.respond(body)
        n = int(body.get("n") or 1)
        if self.service in ("ollama", "llamacpp"):
            # Ollama builds one choice (ToChatCompletion in ollama/ollama openai/openai.go);
            # llama-cpp-python's server lists n among unsupported fields (unverified).
            n = 1
        bound = body.get("max_completion_tokens", body.get("max_tokens"))
        texts = self._texts(body, reply, n)
        want = (
            bool(body.get("logprobs"))
            and self.logprobs_supported
            and (reply is None or reply.logprobs)
        )
        top = int(body.get("top_logprobs") or 0)
        choices, completion_tokens, reasoning_total = [], 0, 0
        for index, text in enumerate(texts):
            spent, tokens, cut = self._spend(
                effort if effort not in (None, "none") else None, bound, text
            )
            completion_tokens += spent + len(tokens)
            reasoning_total += spent
            message: dict[str, Any] = {"role": "assistant", "content": "".join(tokens)}
            if reply is not None and reply.refusal is not None:
                message = {"role": "assistant", "content": None, "refusal": reply.refusal}
            choice: dict[str, Any] = {
                "index": index,
                "message": message,
                "finish_reason": "length" if cut else "stop",
                "logprobs": self._logprobs(tokens, top) if want else None,
            }
            if self.service == "together":
                message["tool_calls"] = []
                choice["seed"] = 1234
            choices.append(choice)
        prompt_tokens = count_tokens(prompt_of(body))
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if effort is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_total}
        payload: dict[str, Any] = {
            "id": f"chatcmpl-fake-{self.service}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": str(body.get("model", "fake")),
            "choices": choices,
            "usage": usage,
        }
        if self.service == "together":
            payload["prompt"] = []
        if self.service == "ollama":
            payload["system_fingerprint"] = "fp_ollama"
        return payload

    def _logprobs(self, tokens: list[str], top: int) -> dict[str, Any]:
        """The logprobs of one choice, in the service's own shape."""
        if self.service == "together":
            # Native format, https://docs.together.ai/docs/logprobs: tokens and
            # token_logprobs; recent answers add token_ids and top_logprobs as one dict per
            # position (recorded answer in
            # https://github.com/tsaichris/NLP-final/blob/main/logP/Together.py).
            # No bytes: Inspect builds them as code points, list(map(ord, token)).
            return {
                "tokens": tokens,
                "token_logprobs": [_chosen_logprob(t) for t in tokens],
                "token_ids": [1000 + i for i in range(len(tokens))],
                "top_logprobs": [
                    {a["token"]: a["logprob"] for a in _alternatives(t, max(top, 1), utf8_bytes)}
                    for t in tokens
                ],
            }
        if self.service == "llamacpp":
            # llama-cpp-python converts completion logprobs to chat ones with "bytes": None
            # (_convert_text_completion_logprobs_to_chat, llama_cpp/llama_chat_format.py).
            def bytes_of(_: str) -> None:
                return None
        else:
            # OpenAI and Ollama (api.Logprob / TokenLogprob carry Bytes []int, ollama
            # api/types.go, v0.12.11+): UTF-8 bytes. vLLM:
            # list(token.encode("utf-8", errors="replace")) and logprob floored at -9999.0
            # (vllm/entrypoints/openai/serving_chat.py _get_top_logprobs).
            bytes_of = utf8_bytes  # type: ignore[assignment]
        content = []
        for token in tokens:
            logprob = _chosen_logprob(token)
            if self.service == "vllm":
                logprob = max(logprob, -9999.0)
            content.append(
                {
                    "token": token,
                    "logprob": logprob,
                    "bytes": bytes_of(token),
                    "top_logprobs": _alternatives(token, top, bytes_of) if top else [],
                }
            )
        return {"content": content, "refusal": None}

    def models(self) -> dict[str, Any]:
        """``GET /v1/models``: vLLM's lists ``max_model_len`` (Inspect's vllm provider reads
        it as the context window, ``_server_context_length`` in its vllm.py)."""
        return {
            "object": "list",
            "data": [
                {
                    "id": f"fake-{self.service}-model",
                    "object": "model",
                    "created": 1700000000,
                    "owned_by": self.service,
                    **({"max_model_len": self.max_model_len} if self.service == "vllm" else {}),
                }
            ],
        }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client that hung up
        super().handle_error(request, client_address)


def _handler_for(server: ShapeServer) -> type[BaseHTTPRequestHandler]:
    paths = {RESPONSES_PATH, CHAT_PATH} if server.service == "openai" else {CHAT_PATH}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def do_GET(self) -> None:  # noqa: N802
            if self.path.split("?")[0] == MODELS_PATH and server.service != "openai":
                self._send(200, server.models())
                return
            self._unknown("unknown path")

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            path = self.path.split("?")[0]
            if path not in paths:
                self._unknown("unknown path")
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(400, error_body("openai", 400))
                return
            reply = server._take(path, body)
            if body.get("stream"):
                self._unknown("streaming is not supported")
                return
            if reply is not None and reply.delay and server._stopping.wait(reply.delay):
                return
            if reply is not None and reply.body is not None:
                self._send_raw(reply.status, reply.body, reply.headers)
                return
            if reply is not None and reply.status != 200:
                self._send(reply.status, error_body("openai", reply.status), reply.headers)
                return
            try:
                payload = (
                    server._responses(body, reply)
                    if path == RESPONSES_PATH
                    else server._chat(body, reply)
                )
            except _Refusal as refusal:
                self._send(refusal.status, refusal.body)
                return
            self._send(200, payload, reply.headers if reply else None)

        def _unknown(self, why: str) -> None:
            with server._lock:
                server.unknown.append(f"{self.command} {self.path} ({why})")
            self._send(404, error_body("openai", 404))

        def _send(
            self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            self._send_raw(status, json.dumps(payload).encode(), headers)

        def _send_raw(self, status: int, data: bytes, headers: dict[str, str] | None) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except OSError:
                self.close_connection = True

    return Handler


# -- fixtures -----------------------------------------------------------------------------
#
# Session-scoped servers (Inspect may reuse a provider and its HTTP client across evals in
# one process, so each URL stays fixed); function-scoped fixtures clear them and point the
# provider's environment at them. `responses_server` sets OPENAI_BASE_URL like
# conftest's `openai_server`: use one or the other in a test, not both.


@pytest.fixture(scope="session")
def _shape_servers() -> Iterator[dict[str, ShapeServer]]:
    servers: dict[str, ShapeServer] = {}

    yield servers
    for server in servers.values():
        server.stop()


def _serve(
    servers: dict[str, ShapeServer],
    service: Service,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
) -> Iterator[ShapeServer]:
    if service not in servers:
        servers[service] = ShapeServer(service)
    server = servers[service]
    server.clear()
    for name, value in env.items():
        monkeypatch.setenv(name, value.replace("{url}", server.url))
    yield server
    server.assert_no_unknown()


@pytest.fixture
def responses_server(
    _shape_servers: dict[str, ShapeServer], monkeypatch: pytest.MonkeyPatch
) -> Iterator[ShapeServer]:
    """Fake OpenAI (Responses API and reasoning-model chat completions) for ``openai/``."""
    env = {"OPENAI_BASE_URL": "{url}", "OPENAI_API_KEY": "test"}
    yield from _serve(_shape_servers, "openai", monkeypatch, env)


@pytest.fixture
def together_server(
    _shape_servers: dict[str, ShapeServer], monkeypatch: pytest.MonkeyPatch
) -> Iterator[ShapeServer]:
    """Fake Together for ``together/<org>/<model>`` (native logprobs)."""
    env = {"TOGETHER_BASE_URL": "{url}", "TOGETHER_API_KEY": "test"}
    yield from _serve(_shape_servers, "together", monkeypatch, env)


@pytest.fixture
def vllm_server(
    _shape_servers: dict[str, ShapeServer], monkeypatch: pytest.MonkeyPatch
) -> Iterator[ShapeServer]:
    """Fake vLLM server for ``vllm/<model>``: with VLLM_BASE_URL set, Inspect connects to it
    and does not start a server. Inspect remembers the server per base model for the whole
    process (``_vllm_servers``), so use model names no other test points elsewhere."""
    env = {"VLLM_BASE_URL": "{url}", "VLLM_API_KEY": "test"}
    yield from _serve(_shape_servers, "vllm", monkeypatch, env)


@pytest.fixture
def ollama_server(
    _shape_servers: dict[str, ShapeServer], monkeypatch: pytest.MonkeyPatch
) -> Iterator[ShapeServer]:
    """Fake Ollama (OpenAI-compatible endpoint) for ``ollama/<model>``."""
    env = {"OLLAMA_BASE_URL": "{url}"}
    yield from _serve(_shape_servers, "ollama", monkeypatch, env)


@pytest.fixture
def llamacpp_server(
    _shape_servers: dict[str, ShapeServer], monkeypatch: pytest.MonkeyPatch
) -> Iterator[ShapeServer]:
    """Fake llama-cpp-python server for ``llama-cpp-python/<model>``."""
    env = {"LLAMA_CPP_PYTHON_BASE_URL": "{url}"}
    yield from _serve(_shape_servers, "llamacpp", monkeypatch, env)
