"""The one fake judge API on 127.0.0.1, for the tests and the benchmarks.

It speaks OpenAI chat completions (``POST /v1/chat/completions``) and, for the reliability
tests, Anthropic messages (``POST /v1/messages``, plain or streamed), and is used through
Inspect's real ``openai/...`` and ``anthropic/...`` providers (point ``OPENAI_BASE_URL`` /
``ANTHROPIC_BASE_URL`` at ``server.url``).

The healthy judge answers the rubric prompt with a score: 4 (``default_score``), or the
score a ``[judge-says:N]`` marker in the dialog asks for; at an explicit temperature above 0
each choice draws a score around it (deterministically, from the prompt and the choice's
index); a prompt that asks for reasoning (not ending ``(return score ONLY):``) gets a line of
reasoning and ``Score: N``; with ``ramble`` the judge first writes that many words whatever
the prompt asks. Its answer stops at the request's ``max_tokens`` / ``max_completion_tokens``
(``finish_reason: length``). It returns ``n`` choices (unless ``ignore_n``), logprobs and
``top_logprobs`` when asked (a spread over 1-5 at every score token, padded with filler tokens
up to ``top_logprobs``), and ``usage`` counted as whitespace tokens (an approximation of a
real tokenizer). Every request waits ``latency`` seconds first.

Two ways to run it:

- In process (the tests): ``FakeServer("openai")`` serves from a background thread,
  records every request, and can be scripted (`Reply`, `FakeServer.script`) to answer with
  faults: HTTP errors, resets, slow replies, malformed JSON, junk text, hand-made payloads.
  A request to an unknown path is recorded in ``unknown`` and answered 404, so a provider
  that quietly switched endpoint fails ``assert_no_unknown()``.
- As its own process (the benchmarks, so that its CPU time is its own):
  ``python benchmarks/fake_openai.py --port 0 --latency 0.2`` prints ``PORT <n>`` and adds
  ``GET /stats`` (calls, tokens, request settings seen, peak in-flight requests, timing),
  ``POST /reset`` and ``POST /shutdown``; it stops by itself after ``--idle-exit`` seconds
  without requests or ``--max-lifetime`` seconds in all. `FakeOpenAI` runs it as a child.

Standard library only: it imports neither Inspect nor ``inspect_empathy`` (the benchmarks
run it beside evals that must not load the plugin twice; the tests import it through
``tests/fake_servers.py``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

Kind = Literal["openai", "anthropic"]

DEFAULT_SCORE = 4
"""What the healthy fake judge answers when no rule and no marker says otherwise."""

SCORE_MARKER = re.compile(r"\[judge-says:(\d+)\]")
"""A marker a test dialog can carry to make the healthy judge answer with that score."""

SCORE_ONLY = "(return score ONLY):"
"""How the score-only rubric prompt ends; any other rubric prompt asks for reasoning."""

RUBRIC_FORM = "Evaluation Form"
"""Present in every rubric prompt (a prompt without it asks for a reply, not a score)."""

SCORE_LOGPROBS: dict[str, float] = {
    tok: math.log(p) for tok, p in {"4": 0.70, "3": 0.17, "5": 0.10, "2": 0.02, "1": 0.005}.items()
}
"""Top logprobs at the score token when the judge answers 4 (shifted for other scores)."""

RAMBLE = "Let me weigh how well the reply meets the user's feelings. "
"""What a rambling judge writes (repeated, cut to its word count) before its answer."""

_DRAWS = (-1, 0, 0, 1, 0, -1, 1, 0)
"""Offsets from the judge's score that a choice at temperature > 0 draws from."""


@dataclass
class Reply:
    """What the server does with one request.

    Attributes:
      status: HTTP status. Anything but 200 is answered with an API-style error body.
      text: Completion text; None means the healthy judge's answer to the prompt.
      texts: Completion texts for ``n`` choices (cycled); overrides ``text``.
      body: Raw response body sent as is (e.g. malformed JSON); overrides everything.
      headers: Extra response headers (e.g. ``Retry-After``).
      delay: Seconds to wait before answering (interrupted when the server stops);
        None: the server's ``latency``.
      reset: Reset the TCP connection (RST) instead of answering.
      logprobs: Include logprobs when the request asks for them.
      refusal: Answer with a refusal instead of content.
      stream_error: On a streamed (Anthropic) answer, an ``error`` event of this type
        (e.g. ``overloaded_error``) after ``message_start``, instead of the answer.
      respond: Builds the whole JSON answer from the request body (e.g. a provider that
        ignores ``n`` or honours ``seed``, or a payload with hand-made tokens).
    """

    status: int = 200
    text: str | None = None
    texts: list[str] | None = None
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float | None = None
    reset: bool = False
    logprobs: bool = True
    refusal: str | None = None
    stream_error: str | None = None
    respond: Callable[[dict[str, Any]], dict[str, Any]] | None = None


@dataclass(kw_only=True)
class PromptRule:
    """When a scripted answer applies: to requests whose prompt contains ``when`` (any, if
    None), ``times`` times (None: forever). The fakes of other services script with it too."""

    when: str | None = None
    times: int | None = None
    """How many matching requests the rule answers before it expires; None: forever."""
    used: int = 0

    def applies(self, prompt: str) -> bool:
        if self.times is not None and self.used >= self.times:
            return False
        return self.when is None or self.when in prompt


class ScriptedFake:
    """What every fake judge service shares: rules scripted by tests (first match wins),
    the requests it recorded (each with its ``prompt``), requests to what it does not serve
    (``unknown``), the healthy judge's ``default_score``, and one lock over them."""

    label = "fake"
    """How `assert_no_unknown` names the fake."""

    def _start_records(self) -> None:
        self._lock = threading.Lock()
        self.rules: list[Any] = []
        self.requests: list[Any] = []
        self.unknown: list[str] = []
        self.default_score = DEFAULT_SCORE

    def _add_rule(self, rule: Any) -> Any:
        with self._lock:
            self.rules.append(rule)
        return rule

    def heal(self) -> None:
        """Forget every rule: from now on the healthy judge answers."""
        with self._lock:
            self.rules.clear()

    def clear(self) -> None:
        """Forget rules, recorded and unknown requests; back to the default score."""
        with self._lock:
            self.rules.clear()
            self.requests.clear()
            self.unknown.clear()
        self.default_score = DEFAULT_SCORE

    def count(self, containing: str | None = None) -> int:
        """Requests recorded, optionally only those whose prompt contains a text."""
        with self._lock:
            return sum(1 for r in self.requests if containing is None or containing in r.prompt)

    def prompts(self) -> list[str]:
        with self._lock:
            return [r.prompt for r in self.requests]

    def assert_no_unknown(self) -> None:
        assert not self.unknown, f"{self.label} got unknown requests: {self.unknown}"


@dataclass
class Rule(PromptRule):
    """A scripted reply for requests whose prompt contains ``when`` (any, if None)."""

    reply: Reply


@dataclass(frozen=True)
class Request:
    """One request as the server received it."""

    path: str
    body: dict[str, Any]
    prompt: str
    reply: Reply | None
    """The scripted reply it got (None: the healthy judge answered)."""


@dataclass
class Stats:
    """What the server saw: answered calls, tokens, request settings, timing."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    max_completion_tokens_per_call: int = 0
    choices: int = 0
    max_inflight: int = 0
    first_arrival: float | None = None
    last_done: float | None = None
    n_values: Counter[str] = field(default_factory=Counter)
    max_tokens_values: Counter[str] = field(default_factory=Counter)
    logprobs_requested: int = 0
    top_logprobs_values: Counter[str] = field(default_factory=Counter)

    def arrived(self, body: dict[str, Any]) -> None:
        if self.first_arrival is None:
            self.first_arrival = time.perf_counter()
        self.n_values[str(body.get("n"))] += 1
        self.max_tokens_values[str(output_bound(body))] += 1
        if body.get("logprobs"):
            self.logprobs_requested += 1
        self.top_logprobs_values[str(body.get("top_logprobs"))] += 1

    def answered(self, payload: dict[str, Any]) -> None:
        usage = payload.get("usage") or {}
        output = int(usage.get("completion_tokens", usage.get("output_tokens", 0)))
        self.calls += 1
        self.prompt_tokens += int(usage.get("prompt_tokens", usage.get("input_tokens", 0)))
        self.completion_tokens += output
        self.max_completion_tokens_per_call = max(self.max_completion_tokens_per_call, output)
        self.choices += len(payload.get("choices") or [None])

    def as_dict(self, unknown: list[str]) -> dict[str, Any]:
        span = (
            self.last_done - self.first_arrival
            if self.first_arrival is not None and self.last_done is not None
            else None
        )
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "max_completion_tokens_per_call": self.max_completion_tokens_per_call,
            "choices": self.choices,
            "max_inflight": self.max_inflight,
            "span_s": span,
            "requests_per_s": self.calls / span if span else None,
            "n_values": dict(self.n_values),
            "max_tokens_values": dict(self.max_tokens_values),
            "logprobs_requested": self.logprobs_requested,
            "top_logprobs_values": dict(self.top_logprobs_values),
            "other_paths": dict(Counter(u.split(" (")[0] for u in unknown)),
        }


class FakeServer(ScriptedFake):
    """A fake judge API (``openai`` or ``anthropic``) on 127.0.0.1, in a thread.

    ``latency`` delays every answer, ``ignore_n`` answers one choice whatever ``n`` asks,
    ``ramble`` makes the healthy judge write that many words before its score, ``control``
    adds the ``/stats``, ``/reset`` and ``/shutdown`` endpoints (the server as a process).
    """

    def __init__(
        self,
        kind: Kind,
        port: int = 0,
        latency: float = 0.0,
        ignore_n: bool = False,
        ramble: int = 0,
        control: bool = False,
    ) -> None:
        self.kind: Kind = kind
        self.latency = latency
        self.ignore_n = ignore_n
        self.ramble = ramble
        self.control = control
        self.label = f"{kind} fake server"
        self._start_records()
        self.stats = Stats()
        self.in_flight = 0
        self.max_in_flight = 0
        """Most judge requests the server was answering at one time."""
        self.shutdown_requested = threading.Event()
        self._stopping = threading.Event()
        self._httpd = _HTTPServer(("127.0.0.1", port), _handler_for(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """Base URL for the provider (``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``).

        The OpenAI SDK appends ``/chat/completions`` to its base URL (which ends in
        ``/v1``); the Anthropic SDK appends ``/v1/messages`` to the bare host.
        """
        root = f"http://127.0.0.1:{self.port}"
        return f"{root}/v1" if self.kind == "openai" else root

    @property
    def path(self) -> str:
        return "/v1/chat/completions" if self.kind == "openai" else "/v1/messages"

    def script(self, reply: Reply, when: str | None = None, times: int | None = None) -> Rule:
        """Answer matching requests with ``reply`` (first matching rule wins)."""
        return self._add_rule(Rule(reply=reply, when=when, times=times))

    def clear(self) -> None:
        """Forget rules, recorded requests and statistics."""
        super().clear()
        with self._lock:
            self.max_in_flight = 0
            self.stats = Stats()

    def stats_dict(self) -> dict[str, Any]:
        """The statistics as ``GET /stats`` reports them."""
        with self._lock:
            return self.stats.as_dict(self.unknown)

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # -- called from handler threads -------------------------------------------------

    def _take(self, path: str, body: dict[str, Any]) -> Reply | None:
        prompt = prompt_text(body)
        with self._lock:
            reply = None
            for rule in self.rules:
                if rule.applies(prompt):
                    rule.used += 1
                    reply = rule.reply
                    break
            self.requests.append(Request(path=path, body=body, prompt=prompt, reply=reply))
            self.stats.arrived(body)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.stats.max_inflight = max(self.stats.max_inflight, self.in_flight)
        return reply

    def _done(self, payload: dict[str, Any] | None) -> None:
        with self._lock:
            self.in_flight -= 1
            if payload is not None:
                self.stats.answered(payload)
            self.stats.last_done = time.perf_counter()

    def judge_texts(self, body: dict[str, Any], n: int) -> tuple[list[str], list[bool]]:
        """The healthy judge's answers for ``n`` choices, and which were cut off."""
        prompt = prompt_text(body)
        marker = SCORE_MARKER.search(prompt)
        score = int(marker.group(1)) if marker else self.default_score
        temperature = body.get("temperature")
        cot = RUBRIC_FORM in prompt and not prompt.rstrip().endswith(SCORE_ONLY)
        bound = output_bound(body)
        texts, cut = [], []
        for index in range(n):
            k = score
            if isinstance(temperature, int | float) and temperature > 0:
                digest = hashlib.sha256(f"{prompt}\x00{index}".encode()).digest()
                k = min(5, max(1, score + _DRAWS[digest[0] % len(_DRAWS)]))
            text = (
                f"The reply names the user's feeling and responds to it.\nScore: {k}"
                if cot
                else str(k)
            )
            if self.ramble:
                words = (RAMBLE * self.ramble).split()[: self.ramble]
                text = " ".join(words) + " " + text
            tokens = tokens_of(text)
            stopped = bound is not None and len(tokens) > int(bound)
            texts.append("".join(tokens[: int(bound)]) if stopped else text)
            cut.append(stopped)
        return texts, cut

    def answer(self, body: dict[str, Any], reply: Reply | None) -> dict[str, Any]:
        """The JSON answer to a judge request."""
        reply = reply or Reply()
        if reply.respond is not None:
            return reply.respond(body)
        n = int(body.get("n") or 1) if self.kind == "openai" and not self.ignore_n else 1
        cut = [False] * n
        if reply.texts:
            texts = [reply.texts[i % len(reply.texts)] for i in range(n)]
        elif reply.text is not None:
            texts = [reply.text] * n
        else:
            texts, cut = self.judge_texts(body, n)
        model = str(body.get("model", "fake"))
        prompt_tokens = count_tokens(prompt_text(body))
        if self.kind == "openai":
            want_logprobs = bool(body.get("logprobs")) and reply.logprobs
            top = int(body.get("top_logprobs") or 0)
            return openai_completion(
                model, texts, want_logprobs, top, reply.refusal, cut, prompt_tokens
            )
        return anthropic_message(model, texts[0], reply.refusal, cut[0], prompt_tokens)


def output_bound(body: dict[str, Any]) -> Any:
    """The request's output bound (``max_completion_tokens``, else ``max_tokens``)."""
    return body.get("max_completion_tokens", body.get("max_tokens"))


def prompt_text(body: dict[str, Any]) -> str:
    """All text of a request's messages (and system prompt), joined by newlines."""
    parts: list[str] = []
    system = body.get("system")
    if isinstance(system, str):
        parts.append(system)
    elif isinstance(system, list):
        parts.extend(str(b.get("text", "")) for b in system if isinstance(b, dict))
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "\n".join(parts)


def count_tokens(text: str) -> int:
    """Approximate tokens: whitespace-separated words."""
    return len(text.split())


def tokens_of(text: str) -> list[str]:
    """Split text into tokens that concatenate back to it (words with leading space)."""
    return re.findall(r"\s*\S+|\s+", text) or [""]


def score_top_logprobs(token: str, top: int) -> list[dict[str, Any]]:
    """Top logprobs at a token: a spread over 1-5 centred on a score token (padded with
    filler tokens up to ``top``, as a real provider fills its list), else the token itself."""
    stripped = token.strip()
    if stripped in {"1", "2", "3", "4", "5"}:
        shift = int(stripped) - 4
        alternatives = []
        for tok, logprob in SCORE_LOGPROBS.items():
            k = int(tok) + shift
            if 1 <= k <= 5:
                alternatives.append((token.replace(stripped, str(k)), logprob))
        alternatives.append((" Four", math.log(0.003)))
        prefix = token[: len(token) - len(token.lstrip())]
        filler = max(0, top - len(alternatives))
        alternatives += [(f"{prefix}x{i}", -12.0 - i) for i in range(filler)]
    else:
        alternatives = [(token, -0.01)]
    alternatives.sort(key=lambda item: -item[1])
    return [
        {"token": tok, "logprob": lp, "bytes": list(tok.encode())} for tok, lp in alternatives[:top]
    ]


def openai_completion(
    model: str,
    texts: list[str],
    logprobs: bool,
    top: int,
    refusal: str | None,
    cut: list[bool] | None = None,
    prompt_tokens: int = 100,
) -> dict[str, Any]:
    """A chat.completion object with one choice per text (``cut``: stopped by the bound)."""
    choices = []
    completion_tokens = 0
    for index, text in enumerate(texts):
        tokens = tokens_of(text)
        completion_tokens += len(tokens)
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
        if refusal is not None:
            message = {"role": "assistant", "content": None, "refusal": refusal}
        choice: dict[str, Any] = {
            "index": index,
            "message": message,
            "finish_reason": "length" if cut and cut[index] else "stop",
            "logprobs": None,
        }
        if logprobs and refusal is None:
            content = []
            for token in tokens:
                alternatives = score_top_logprobs(token, max(top, 1))
                chosen = next((a for a in alternatives if a["token"] == token), None)
                content.append(
                    {
                        "token": token,
                        "logprob": chosen["logprob"] if chosen else -0.5,
                        "bytes": list(token.encode()),
                        "top_logprobs": alternatives if top else [],
                    }
                )
            choice["logprobs"] = {"content": content, "refusal": None}
        choices.append(choice)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": choices,
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
        "system_fingerprint": None,
    }


def anthropic_message(
    model: str, text: str, refusal: str | None, cut: bool = False, prompt_tokens: int = 100
) -> dict[str, Any]:
    """A Messages API message answering with text (or a refusal)."""
    stop = "refusal" if refusal is not None else "max_tokens" if cut else "end_turn"
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": refusal if refusal is not None else text}],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": prompt_tokens, "output_tokens": len(tokens_of(text))},
    }


def anthropic_events(message: dict[str, Any], error: str | None = None) -> bytes:
    """A Messages API message as the server-sent events of a streamed answer.

    With ``error``, the stream breaks off after ``message_start`` with an error event.
    """
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"message": start})]
    if error is not None:
        events.append(("error", {"error": {"type": error, "message": f"fake {error}"}}))
        return _sse(events)
    for index, block in enumerate(message["content"]):
        events.append(
            ("content_block_start", {"index": index, "content_block": {**block, "text": ""}})
        )
        delta = {"type": "text_delta", "text": block["text"]}
        events.append(("content_block_delta", {"index": index, "delta": delta}))
        events.append(("content_block_stop", {"index": index}))
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append(("message_delta", {"delta": stop, "usage": message["usage"]}))
    events.append(("message_stop", {}))
    return _sse(events)


def _sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return "".join(
        f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n" for name, data in events
    ).encode()


def error_body(kind: Kind, status: int) -> dict[str, Any]:
    if kind == "openai":
        kinds = {429: "rate_limit_exceeded", 500: "server_error", 503: "server_error"}
        return {
            "error": {
                "message": f"fake error {status}",
                "type": kinds.get(status, "invalid_request_error"),
                "param": None,
                "code": kinds.get(status),
            }
        }
    kinds = {429: "rate_limit_error", 500: "api_error", 503: "api_error", 529: "overloaded_error"}
    return {
        "type": "error",
        "error": {"type": kinds.get(status, "invalid_request_error"), "message": f"fake {status}"},
    }


def expected_logprob_score(score: int = DEFAULT_SCORE) -> float:
    """The G-Eval value the healthy fake judge's logprobs give for a score."""
    shift = score - 4
    mass = {int(t) + shift: math.exp(lp) for t, lp in SCORE_LOGPROBS.items()}
    mass = {k: p for k, p in mass.items() if 1 <= k <= 5}
    total = sum(mass.values())
    return sum(k * p for k, p in mass.items()) / total


class _HTTPServer(ThreadingHTTPServer):
    """Threaded server whose slow handlers do not hold up shutdown, and that can abort."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 1024
    """Room for every connection of a benchmark opening at once (a full backlog drops SYNs)."""

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self._aborted: set[int] = set()

    def abort(self, connection: socket.socket) -> None:
        """Close this connection without the usual FIN (see ``shutdown_request``)."""
        self._aborted.add(id(connection))

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (timed out, was reset) is expected here; others are not."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        if id(request) in self._aborted:
            self._aborted.discard(id(request))
            request.close()  # SO_LINGER 0 is set: the kernel sends RST
            return
        super().shutdown_request(request)


def _handler_for(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return  # keep test and benchmark output quiet

        def do_GET(self) -> None:  # noqa: N802
            if server.control and self.path == "/stats":
                self._send(200, json.dumps(server.stats_dict()).encode())
                return
            self._unknown()

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            path = self.path.split("?")[0]
            if server.control and path in ("/reset", "/shutdown"):
                if path == "/reset":
                    server.clear()
                else:
                    server.shutdown_requested.set()
                self._send(200, b'{"ok": true}')
                return
            if path != server.path:
                self._unknown(raw)
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(400, json.dumps(error_body(server.kind, 400)).encode())
                return
            reply = server._take(self.path, body)
            self._open = True
            payload: dict[str, Any] | None = None
            try:
                payload = self._answer(body, raw, reply)
            finally:
                self._close(payload)

        def _close(self, payload: dict[str, Any] | None) -> None:
            """Count the request as done: before its last byte is sent, so that a client that
            sends its next request on receiving this answer never sees two in flight."""
            if getattr(self, "_open", False):
                self._open = False
                server._done(payload)

        def _answer(
            self, body: dict[str, Any], raw: bytes, reply: Reply | None
        ) -> dict[str, Any] | None:
            """Answer a judge request; the completion sent, if one was."""
            delay = server.latency if reply is None or reply.delay is None else reply.delay
            if delay and server._stopping.wait(delay):
                return None
            if reply is not None and reply.reset:
                self._reset()
                return None
            if reply is not None and reply.body is not None:
                self._send(reply.status, reply.body, reply.headers)
                return None
            if reply is not None and reply.status != 200:
                data = json.dumps(error_body(server.kind, reply.status)).encode()
                self._send(reply.status, data, reply.headers)
                return None
            headers = reply.headers if reply else {}
            if body.get("stream"):
                if server.kind != "anthropic":
                    self._unknown(raw, why="streaming is not supported")
                    return None
                payload = server.answer(body, reply)
                events = anthropic_events(payload, reply.stream_error if reply else None)
                self._send(200, events, headers, "text/event-stream", payload)
                return payload
            payload = server.answer(body, reply)
            self._send(200, json.dumps(payload).encode(), headers, payload=payload)
            return payload

        def _unknown(self, raw: bytes = b"", why: str = "unknown path") -> None:
            with server._lock:
                server.unknown.append(f"{self.command} {self.path} ({why})")
            self._send(404, json.dumps(error_body(server.kind, 404)).encode())

        def _send(
            self,
            status: int,
            data: bytes,
            headers: dict[str, str] | None = None,
            content_type: str = "application/json",
            payload: dict[str, Any] | None = None,
        ) -> None:
            self._close(payload)
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except OSError:
                self.close_connection = True  # the client gave up (e.g. timed out)

        def _reset(self) -> None:
            """Abort the connection: SO_LINGER 0, and a close without FIN sends a TCP RST."""
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            server._httpd.abort(self.connection)

        def finish(self) -> None:
            try:
                super().finish()
            except OSError:
                pass

    return Handler


def serve(
    port: int,
    latency: float,
    ignore_n: bool,
    idle_exit: float,
    max_lifetime: float,
    ramble: int = 0,
) -> None:
    """Run the OpenAI fake as a process until ``/shutdown``, idleness or its lifetime."""
    server = FakeServer("openai", port, latency, ignore_n, ramble, control=True)
    print(f"PORT {server.port}", flush=True)
    started = last_seen = time.monotonic()
    seen = -1
    while not server.shutdown_requested.wait(0.5):
        now = time.monotonic()
        calls = server.stats.calls
        if calls != seen or server.in_flight:
            seen, last_seen = calls, now
        if now - last_seen > idle_exit or now - started > max_lifetime:
            break
    server.stop()


class FakeOpenAI:
    """Run the fake OpenAI server in a child process (context manager)."""

    def __init__(
        self,
        latency: float = 0.2,
        ignore_n: bool = False,
        ramble: int = 0,
        idle_exit: float = 120.0,
        max_lifetime: float = 1800.0,
    ) -> None:
        self.args = [
            "--latency",
            str(latency),
            "--idle-exit",
            str(idle_exit),
            "--max-lifetime",
            str(max_lifetime),
            *(["--ignore-n"] if ignore_n else []),
            *(["--ramble", str(ramble)] if ramble else []),
        ]
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0

    def __enter__(self) -> FakeOpenAI:
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--port", "0", *self.args],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            self.proc.kill()
            raise RuntimeError(f"fake server did not start: {line!r}")
        self.port = int(line.split()[1])
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def env(self) -> dict[str, str]:
        """Environment for a child eval against this server (model openai/gpt-4o-mini)."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": "test"}

    def _call(self, method: str, path: str) -> dict[str, Any]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            method=method,
            data=b"" if method == "POST" else None,
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def stats(self) -> dict[str, Any]:
        return self._call("GET", "/stats")

    def cpu_seconds(self) -> float:
        """CPU time (user + sys) the server process has used so far."""
        assert self.proc is not None
        with open(f"/proc/{self.proc.pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def reset(self) -> None:
        self._call("POST", "/reset")

    def __exit__(self, *exc: object) -> None:
        if self.proc is None:
            return
        try:
            self._call("POST", "/shutdown")
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - make sure our own child goes away
            self.proc.kill()
            self.proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description="The fake OpenAI judge server on its own.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per request")
    parser.add_argument("--ignore-n", action="store_true", help="always return one choice")
    parser.add_argument(
        "--ramble", type=int, default=0, help="words the judge writes before its score"
    )
    parser.add_argument("--idle-exit", type=float, default=120.0)
    parser.add_argument("--max-lifetime", type=float, default=1800.0)
    args = parser.parse_args()
    serve(args.port, args.latency, args.ignore_n, args.idle_exit, args.max_lifetime, args.ramble)


if __name__ == "__main__":
    main()
