"""Fake batch APIs (OpenAI's Batch API, Anthropic's Message Batches API), with fixtures.

Each fake is a standard-library HTTP server on 127.0.0.1 in a thread, reached through
Inspect's own ``openai/`` and ``anthropic/`` providers with ``--batch`` and the real SDKs.
Every batched request is answered by the healthy fake judge of `benchmarks/fake_openai.py`
(``server.judge``, a `FakeServer` of the same kind, whose ``script`` rules apply to batched
requests too): 4, or the score of a ``[judge-says:N]`` marker, with logprobs when asked.

- ``BatchServer("openai")``, the endpoints Inspect's ``OpenAIBatcher``
  (``inspect_ai/model/_providers/_openai_batch.py``, ``util/file_batcher.py``) calls:
  ``POST /v1/files`` (multipart upload of the JSONL, ``purpose=batch``), ``POST /v1/batches``,
  ``GET /v1/batches/{id}`` and ``GET /v1/files/{id}/content``. A batch answers
  ``validating`` at creation and ``in_progress`` for ``server.polls`` checks, then ends as
  the next scripted `BatchFault` says (``completed`` when none is scripted).
- ``BatchServer("anthropic")``, the endpoints of ``_anthropic_batch.py`` through the SDK:
  ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}`` (``processing_status``
  ``in_progress``, then ``ended`` with ``results_url``) and ``GET`` of that URL (JSONL of
  ``succeeded`` results).

Shapes, as OpenAI documents them (https://platform.openai.com/docs/guides/batch and the API
reference's batch object and request output):

- an output line: ``{"id", "custom_id", "response": {"status_code": 200, "request_id",
  "body": <the endpoint's answer>}, "error": null}``;
- a request the API answered with an error goes to the *error file* with the same shape,
  ``status_code`` 400 and ``body: {"error": {...}}`` (as read by
  https://github.com/ProjectTech4DevAI/kaapi-backend/issues/723);
- a request an expired or cancelled batch never ran goes to the error file as ``{"custom_id",
  "response": null, "error": {"code": "batch_expired" | "batch_cancelled", "message"}}``
  (``BatchRequestOutputError`` codes); answers to the requests that did run stay in the
  output file ("any responses to completed requests are made available via the batch's
  output file", and are charged);
- a rejected batch is ``status: failed`` with ``errors: {"object": "list", "data":
  [{"code", "message", "param", "line"}]}``, no files and zero counts; e.g. one
  ``token_limit_exceeded`` for the whole batch (https://github.com/openai/openai-python/issues/2084).

Standard library only, besides pytest for the fixtures.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import pytest
from fake_servers import FakeServer

Kind = Literal["openai", "anthropic"]

# benchmarks/fake_openai.py, on the import path once fake_servers is imported
from fake_openai import error_body, prompt_text  # noqa: E402

EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."
CANCELLED_MESSAGE = "This request was not executed because the batch was cancelled."
TOKEN_LIMIT = {
    "code": "token_limit_exceeded",
    "message": "Enqueued token limit reached for gpt-4o-mini in organization org-fake. "
    "Limit: 2,000,000 enqueued tokens. Please try again once some in_progress batches "
    "have been completed.",
    "param": None,
    "line": None,
}
"""The error of a batch OpenAI rejected as a whole (openai/openai-python#2084)."""


@dataclass
class BatchFault:
    """How the fake ends one OpenAI batch (each new batch takes the next scripted fault).

    ``unfinished``, ``request_error`` and ``missing`` select requests by a text in their
    prompt (``""``: every request).
    """

    status: Literal["completed", "expired", "cancelled", "failed"] = "completed"
    unfinished: str | None = None
    """``expired`` / ``cancelled``: requests the batch never ran (error file, code
    ``batch_expired`` / ``batch_cancelled``); the others are answered in the output file."""
    request_error: str | None = None
    """Requests the API answered with HTTP 400 (a line in the error file)."""
    missing: str | None = None
    """Requests that get no line at all, in either file."""
    errors: tuple[dict[str, Any], ...] = (TOKEN_LIMIT,)
    """``failed``: the batch's ``errors.data``."""


@dataclass
class _Batch:
    id: str
    requests: list[dict[str, Any]]
    fault: BatchFault
    created_at: int
    checks: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed: int = 0
    failed: int = 0
    ended: bool = False
    results: bytes = b""


def _selects(text: str | None, prompt: str) -> bool:
    return text is not None and text in prompt


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


class BatchServer:
    """A fake batch API (``openai`` or ``anthropic``) on 127.0.0.1, in a thread.

    ``polls``: checks a batch answers as still running before it ends. ``calls``: every
    request received (``"GET /v1/batches/batch_1"``), for tests that count polls.
    """

    def __init__(self, kind: Kind, port: int = 0) -> None:
        self.kind: Kind = kind
        self.judge = FakeServer(kind)
        """Answers each batched request (its own HTTP endpoint is not used: stopped now)."""
        self.judge.stop()
        self.polls = 1
        self.faults: list[BatchFault] = []
        self.batches: dict[str, _Batch] = {}
        self.files: dict[str, bytes] = {}
        self.calls: list[str] = []
        self.unknown: list[str] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", port), _handler_for(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def url(self) -> str:
        """Base URL for the provider (``model_base_url``): the OpenAI SDK appends paths to
        ``/v1``, the Anthropic SDK ``/v1/...`` to the bare host."""
        return f"{self.root}/v1" if self.kind == "openai" else self.root

    def script(self, *faults: BatchFault) -> None:
        """End the next batches as these faults say (then healthy again)."""
        with self._lock:
            self.faults.extend(faults)

    def clear(self) -> None:
        with self._lock:
            self.faults.clear()
            self.batches.clear()
            self.files.clear()
            self.calls.clear()
            self.unknown.clear()
        self.polls = 1
        self.judge.clear()

    def count(self, call: str) -> int:
        """Requests received whose ``"METHOD /path"`` starts with ``call``."""
        with self._lock:
            return sum(1 for c in self.calls if c.startswith(call))

    def batched(self) -> list[dict[str, Any]]:
        """Every request body sent inside a batch, in order."""
        with self._lock:
            return [r for b in self.batches.values() for r in b.requests]

    def assert_no_unknown(self) -> None:
        assert not self.unknown, f"{self.kind} batch fake got unknown requests: {self.unknown}"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # -- OpenAI -----------------------------------------------------------------------

    def upload(self, content_type: str, raw: bytes) -> dict[str, Any]:
        """``POST /v1/files``: keep the uploaded JSONL."""
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw
        )
        data, purpose, filename = b"", None, "upload.jsonl"
        for part in message.iter_parts():  # type: ignore[attr-defined]
            name = part.get_param("name", header="content-disposition")
            if name == "file":
                data = part.get_payload(decode=True) or b""
                filename = part.get_filename() or filename
            elif name == "purpose":
                purpose = part.get_content().strip()
        file_id = f"file-{next(self._ids)}"
        with self._lock:
            self.files[file_id] = data
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose or "batch",
            "status": "processed",
        }

    def create_openai(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/batches``."""
        with self._lock:
            data = self.files[body["input_file_id"]]
            fault = self.faults.pop(0) if self.faults else BatchFault()
        lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        batch = _Batch(f"batch_{next(self._ids)}", lines, fault, int(time.time()))
        with self._lock:
            self.batches[batch.id] = batch
        return self.openai_batch(batch, body, status="validating")

    def check_openai(self, batch_id: str) -> dict[str, Any]:
        """``GET /v1/batches/{id}``: running for ``polls`` checks, then ended."""
        batch = self.batches[batch_id]
        batch.checks += 1
        if batch.checks <= self.polls:
            return self.openai_batch(batch, {}, status="in_progress")
        if not batch.ended:
            self._end_openai(batch)
        return self.openai_batch(batch, {}, status=batch.fault.status)

    def _end_openai(self, batch: _Batch) -> None:
        fault = batch.fault
        batch.ended = True
        if fault.status == "failed":
            return
        output, errors = [], []
        for index, line in enumerate(batch.requests):
            body = line["body"]
            prompt = prompt_text(body)
            custom_id = line["custom_id"]
            head = {"id": f"batch_req_{index}", "custom_id": custom_id}
            if _selects(fault.missing, prompt):
                continue
            if fault.status in ("expired", "cancelled") and _selects(fault.unfinished, prompt):
                code, text = (
                    ("batch_expired", EXPIRED_MESSAGE)
                    if fault.status == "expired"
                    else ("batch_cancelled", CANCELLED_MESSAGE)
                )
                errors.append({**head, "response": None, "error": {"code": code, "message": text}})
            elif _selects(fault.request_error, prompt):
                failure = error_body("openai", 400)
                failure["error"]["message"] = "fake invalid request: 'messages' is malformed"
                response = {"status_code": 400, "request_id": f"req_{index}", "body": failure}
                errors.append({**head, "response": response, "error": None})
            else:
                reply = self.judge._take(line.get("url", ""), body)
                answer = self.judge.answer(body, reply)
                self.judge._done(answer)
                response = {"status_code": 200, "request_id": f"req_{index}", "body": answer}
                output.append({**head, "response": response, "error": None})
        batch.completed, batch.failed = len(output), len(errors)
        if output:
            batch.output_file_id = self._store(output)
        if errors:
            batch.error_file_id = self._store(errors)

    def _store(self, lines: list[dict[str, Any]]) -> str:
        file_id = f"file-{next(self._ids)}"
        with self._lock:
            self.files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
        return file_id

    def openai_batch(self, batch: _Batch, body: dict[str, Any], status: str) -> dict[str, Any]:
        """The batch object, as ``GET /v1/batches/{id}`` returns it."""
        now = int(time.time())
        ended = status in ("completed", "expired", "cancelled", "failed")
        failed = status == "failed"
        total = 0 if failed else len(batch.requests)
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": body.get("endpoint", "/v1/chat/completions"),
            "errors": {"object": "list", "data": list(batch.fault.errors)} if failed else None,
            "input_file_id": body.get("input_file_id", "file-input"),
            "completion_window": "24h",
            "status": status,
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "created_at": batch.created_at,
            "in_progress_at": None if status == "validating" or failed else batch.created_at,
            "expires_at": batch.created_at + 86400,
            "finalizing_at": None,
            "completed_at": now if status == "completed" else None,
            "failed_at": now if failed else None,
            "expired_at": now if status == "expired" else None,
            "cancelling_at": now if status == "cancelled" else None,
            "cancelled_at": now if status == "cancelled" else None,
            "request_counts": {
                "total": total,
                "completed": batch.completed if ended else 0,
                "failed": batch.failed if ended else 0,
            },
            "metadata": None,
        }

    # -- Anthropic --------------------------------------------------------------------

    def create_anthropic(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/messages/batches``."""
        batch = _Batch(f"msgbatch_{next(self._ids)}", body["requests"], BatchFault(),
                       int(time.time()))  # fmt: skip
        with self._lock:
            self.batches[batch.id] = batch
        return self.anthropic_batch(batch)

    def check_anthropic(self, batch_id: str) -> dict[str, Any]:
        """``GET /v1/messages/batches/{id}``: in progress for ``polls`` checks, then ended."""
        batch = self.batches[batch_id]
        batch.checks += 1
        if batch.checks > self.polls and not batch.ended:
            lines = []
            for request in batch.requests:
                params = request["params"]
                reply = self.judge._take("/v1/messages", params)
                message = self.judge.answer(params, reply)
                self.judge._done(message)
                result = {"type": "succeeded", "message": message}
                lines.append({"custom_id": request["custom_id"], "result": result})
            batch.results = "".join(json.dumps(x) + "\n" for x in lines).encode()
            batch.completed, batch.ended = len(lines), True
        return self.anthropic_batch(batch)

    def anthropic_batch(self, batch: _Batch) -> dict[str, Any]:
        n = len(batch.requests)
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if batch.ended else "in_progress",
            "request_counts": {
                "processing": 0 if batch.ended else n,
                "succeeded": batch.completed,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "created_at": _iso(batch.created_at),
            "expires_at": _iso(batch.created_at + 86400),
            "ended_at": _iso(time.time()) if batch.ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.root}/v1/messages/batches/{batch.id}/results"
            if batch.ended
            else None,
        }


_OPENAI_BATCH = re.compile(r"^/v1/batches/([\w-]+)$")
_OPENAI_CONTENT = re.compile(r"^/v1/files/([\w-]+)/content$")
_ANTHROPIC_BATCH = re.compile(r"^/v1/messages/batches/([\w-]+)$")
_ANTHROPIC_RESULTS = re.compile(r"^/v1/messages/batches/([\w-]+)/results$")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False


def _handler_for(server: BatchServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def do_GET(self) -> None:  # noqa: N802
            path = self.path.split("?")[0]
            with server._lock:
                server.calls.append(f"GET {path}")
            if server.kind == "openai":
                if (found := _OPENAI_BATCH.match(path)) and found[1] in server.batches:
                    self._json(server.check_openai(found[1]))
                    return
                if (found := _OPENAI_CONTENT.match(path)) and found[1] in server.files:
                    self._send(200, server.files[found[1]], "application/octet-stream")
                    return
            else:
                if (found := _ANTHROPIC_BATCH.match(path)) and found[1] in server.batches:
                    self._json(server.check_anthropic(found[1]))
                    return
                found = _ANTHROPIC_RESULTS.match(path)
                if found and found[1] in server.batches and server.batches[found[1]].ended:
                    self._send(200, server.batches[found[1]].results, "application/binary")
                    return
            self._unknown()

        def do_POST(self) -> None:  # noqa: N802
            path = self.path.split("?")[0]
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            with server._lock:
                server.calls.append(f"POST {path}")
            if server.kind == "openai" and path == "/v1/files":
                self._json(server.upload(self.headers.get("Content-Type", ""), raw))
            elif server.kind == "openai" and path == "/v1/batches":
                self._json(server.create_openai(json.loads(raw)))
            elif server.kind == "anthropic" and path == "/v1/messages/batches":
                self._json(server.create_anthropic(json.loads(raw)))
            else:
                self._unknown()

        def _unknown(self) -> None:
            with server._lock:
                server.unknown.append(f"{self.command} {self.path}")
            self._json(error_body(server.kind, 404), 404)

        def _json(self, payload: dict[str, Any], status: int = 200) -> None:
            self._send(status, json.dumps(payload).encode(), "application/json")

        def _send(self, status: int, data: bytes, content_type: str) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                self.close_connection = True

    return Handler


# -- fixtures -----------------------------------------------------------------------------
# Session-wide servers (fixed URLs); each test clears them. Tests pass ``server.url`` as the
# model's base URL (an explicit base URL keeps a provider, and its batcher, to one test).
# A test module imports ``_batch_servers``, ``openai_batch_server_fixture`` and
# ``anthropic_batch_server_fixture`` (unused names, for pytest: noqa F401), and asks for
# ``openai_batch_server`` / ``anthropic_batch_server``.


@pytest.fixture(scope="session")
def _batch_servers() -> Iterator[dict[str, BatchServer]]:
    servers = {"openai": BatchServer("openai"), "anthropic": BatchServer("anthropic")}
    yield servers
    for server in servers.values():
        server.stop()


def _serving(
    server: BatchServer, key: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[BatchServer]:
    """A cleared batch server with its API key set; no unknown request once the test ends."""
    server.clear()
    monkeypatch.setenv(key, "test")
    yield server
    server.assert_no_unknown()


@pytest.fixture(name="openai_batch_server")
def openai_batch_server_fixture(
    _batch_servers: dict[str, BatchServer], monkeypatch: pytest.MonkeyPatch
) -> Iterator[BatchServer]:
    yield from _serving(_batch_servers["openai"], "OPENAI_API_KEY", monkeypatch)


@pytest.fixture(name="anthropic_batch_server")
def anthropic_batch_server_fixture(
    _batch_servers: dict[str, BatchServer], monkeypatch: pytest.MonkeyPatch
) -> Iterator[BatchServer]:
    yield from _serving(_batch_servers["anthropic"], "ANTHROPIC_API_KEY", monkeypatch)
