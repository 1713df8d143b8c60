"""Local fake judge APIs for reliability tests: OpenAI chat completions and Anthropic messages.

Each server listens on 127.0.0.1 on a random port, in a background thread, and is
used through the real ``openai/...`` and ``anthropic/...`` Inspect providers (point
``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL`` at ``server.url``). It answers the
rubric prompt like a judge (a score, with ``logprobs``/``top_logprobs`` and ``n``
choices on the OpenAI side), counts every request it receives, and can be scripted
to answer with faults: HTTP errors, resets, slow replies, malformed JSON, junk text.

A request to a path the server does not know is recorded in ``unknown`` and answered
404; tests call ``assert_no_unknown()`` so a provider that quietly switched endpoint
(for example to the Responses API) fails loudly.
"""

from __future__ import annotations

import json
import math
import re
import socket
import struct
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Kind = Literal["openai", "anthropic"]

DEFAULT_SCORE = 4
"""What the healthy fake judge answers when no rule and no marker says otherwise."""

SCORE_MARKER = re.compile(r"\[judge-says:(\d+)\]")
"""A marker a test dialog can carry to make the healthy judge answer with that score."""

SCORE_LOGPROBS: dict[str, float] = {
    tok: math.log(p) for tok, p in {"4": 0.70, "3": 0.17, "5": 0.10, "2": 0.02, "1": 0.005}.items()
}
"""Top logprobs at the score token when the judge answers 4 (shifted for other scores)."""


@dataclass
class Reply:
    """What the server does with one request.

    Attributes:
      status: HTTP status. Anything but 200 is answered with an API-style error body.
      text: Completion text; None means the healthy judge's score for the prompt.
      texts: Completion texts for ``n`` choices (cycled); overrides ``text``.
      body: Raw response body sent as is (e.g. malformed JSON); overrides everything.
      headers: Extra response headers (e.g. ``Retry-After``).
      delay: Seconds to wait before answering (interrupted when the server stops).
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
    delay: float = 0.0
    reset: bool = False
    logprobs: bool = True
    refusal: str | None = None
    stream_error: str | None = None
    respond: Callable[[dict[str, Any]], dict[str, Any]] | None = None


@dataclass
class Rule:
    """A scripted reply for requests whose prompt contains ``when`` (any, if None)."""

    reply: Reply
    when: str | None = None
    times: int | None = None
    """How many matching requests the rule answers before it expires; None: forever."""
    used: int = 0

    def applies(self, prompt: str) -> bool:
        if self.times is not None and self.used >= self.times:
            return False
        return self.when is None or self.when in prompt


@dataclass(frozen=True)
class Request:
    """One request as the server received it."""

    path: str
    body: dict[str, Any]
    prompt: str
    reply: Reply | None
    """The scripted reply it got (None: the healthy judge answered)."""


class FakeServer:
    """A fake judge API (``openai`` or ``anthropic``) on 127.0.0.1, in a thread."""

    def __init__(self, kind: Kind) -> None:
        self.kind: Kind = kind
        self.rules: list[Rule] = []
        self.requests: list[Request] = []
        self.unknown: list[str] = []
        self.default_score = DEFAULT_SCORE
        self.in_flight = 0
        self.max_in_flight = 0
        """Most judge requests the server was answering at one time."""
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _handler_for(self))
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
        rule = Rule(reply=reply, when=when, times=times)
        with self._lock:
            self.rules.append(rule)
        return rule

    def heal(self) -> None:
        """Forget every rule: from now on the healthy judge answers."""
        with self._lock:
            self.rules.clear()

    def clear(self) -> None:
        """Forget rules and recorded requests."""
        with self._lock:
            self.rules.clear()
            self.requests.clear()
            self.unknown.clear()
            self.max_in_flight = 0
        self.default_score = DEFAULT_SCORE

    def count(self, containing: str | None = None) -> int:
        """Requests received (to the judge endpoint), optionally whose prompt contains a text."""
        with self._lock:
            return sum(1 for r in self.requests if containing is None or containing in r.prompt)

    def prompts(self) -> list[str]:
        with self._lock:
            return [r.prompt for r in self.requests]

    def assert_no_unknown(self) -> None:
        assert not self.unknown, f"{self.kind} fake server got unknown requests: {self.unknown}"

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
        return reply

    def _judge_text(self, body: dict[str, Any]) -> str:
        marker = SCORE_MARKER.search(prompt_text(body))
        return marker.group(1) if marker else str(self.default_score)

    def answer(self, body: dict[str, Any], reply: Reply | None) -> dict[str, Any]:
        """The JSON answer to a judge request."""
        reply = reply or Reply()
        if reply.respond is not None:
            return reply.respond(body)
        n = int(body.get("n") or 1) if self.kind == "openai" else 1
        if reply.texts:
            texts = [reply.texts[i % len(reply.texts)] for i in range(n)]
        else:
            texts = [reply.text if reply.text is not None else self._judge_text(body)] * n
        model = str(body.get("model", "fake"))
        if self.kind == "openai":
            want_logprobs = bool(body.get("logprobs")) and reply.logprobs
            top = int(body.get("top_logprobs") or 0)
            return openai_completion(model, texts, want_logprobs, top, reply.refusal)
        return anthropic_message(model, texts[0], reply.refusal)


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


def tokens_of(text: str) -> list[str]:
    """Split text into tokens that concatenate back to it (words with leading space)."""
    return re.findall(r"\s*\S+|\s+", text) or [""]


def score_top_logprobs(token: str, top: int) -> list[dict[str, Any]]:
    """Top logprobs at a token: a spread over 1-5 centred on a score token, else itself."""
    stripped = token.strip()
    if stripped in {"1", "2", "3", "4", "5"}:
        shift = int(stripped) - 4
        alternatives = []
        for tok, logprob in SCORE_LOGPROBS.items():
            k = int(tok) + shift
            if 1 <= k <= 5:
                alternatives.append((token.replace(stripped, str(k)), logprob))
        alternatives.append((" Four", math.log(0.003)))
    else:
        alternatives = [(token, -0.01)]
    alternatives.sort(key=lambda item: -item[1])
    return [
        {"token": tok, "logprob": lp, "bytes": list(tok.encode())} for tok, lp in alternatives[:top]
    ]


def openai_completion(
    model: str, texts: list[str], logprobs: bool, top: int, refusal: str | None
) -> dict[str, Any]:
    """A chat.completion object with one choice per text."""
    choices = []
    for index, text in enumerate(texts):
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
        if refusal is not None:
            message = {"role": "assistant", "content": None, "refusal": refusal}
        choice: dict[str, Any] = {
            "index": index,
            "message": message,
            "finish_reason": "stop",
            "logprobs": None,
        }
        if logprobs and refusal is None:
            content = []
            for token in tokens_of(text):
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
        "usage": {"prompt_tokens": 100, "completion_tokens": len(texts), "total_tokens": 101},
    }


def anthropic_message(model: str, text: str, refusal: str | None) -> dict[str, Any]:
    """A Messages API message answering with text (or a refusal)."""
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": refusal if refusal is not None else text}],
        "stop_reason": "refusal" if refusal is not None else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 1},
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


class _HTTPServer(ThreadingHTTPServer):
    """Threaded server whose slow handlers do not hold up shutdown, and that can abort."""

    daemon_threads = True
    block_on_close = False

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
            return  # keep test output quiet

        def do_GET(self) -> None:  # noqa: N802
            self._unknown()

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path.split("?")[0] != server.path:
                self._unknown(raw)
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(400, json.dumps(error_body(server.kind, 400)).encode())
                return
            reply = server._take(self.path, body)
            with server._lock:
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            try:
                self._answer(body, raw, reply)
            finally:
                with server._lock:
                    server.in_flight -= 1

        def _answer(self, body: dict[str, Any], raw: bytes, reply: Reply | None) -> None:
            if reply is not None and reply.delay and server._stopping.wait(reply.delay):
                return
            if reply is not None and reply.reset:
                self._reset()
                return
            if reply is not None and reply.body is not None:
                self._send(reply.status, reply.body, reply.headers)
            elif reply is not None and reply.status != 200:
                data = json.dumps(error_body(server.kind, reply.status)).encode()
                self._send(reply.status, data, reply.headers)
            elif body.get("stream"):
                if server.kind != "anthropic":
                    self._unknown(raw, why="streaming is not supported")
                    return
                events = anthropic_events(
                    server.answer(body, reply), reply.stream_error if reply else None
                )
                self._send(200, events, reply.headers if reply else {}, "text/event-stream")
            else:
                data = json.dumps(server.answer(body, reply)).encode()
                self._send(200, data, reply.headers if reply else {})

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
        ) -> None:
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


def expected_logprob_score(score: int = DEFAULT_SCORE) -> float:
    """The G-Eval value the healthy fake judge's logprobs give for a score."""
    shift = score - 4
    mass = {int(t) + shift: math.exp(lp) for t, lp in SCORE_LOGPROBS.items()}
    mass = {k: p for k, p in mass.items() if 1 <= k <= 5}
    total = sum(mass.values())
    return sum(k * p for k, p in mass.items()) / total
