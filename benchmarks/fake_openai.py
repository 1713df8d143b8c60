"""A fake OpenAI chat-completions server on 127.0.0.1 for the benchmarks.

It answers ``POST /v1/chat/completions`` after a fixed latency with a judge's score
(``4``, or a short reasoning ending ``Score: 4`` when the prompt asks for reasoning),
with logprobs and top logprobs when asked, ``n`` choices when asked (unless
``--ignore-n``), and ``usage`` counted as whitespace tokens (an approximation of real
tokenizer counts). ``GET /stats`` reports calls, tokens, request settings seen, peak
in-flight requests and timing; ``POST /reset`` clears them; ``POST /shutdown`` stops it.
It also stops by itself after ``--idle-exit`` seconds without requests or
``--max-lifetime`` seconds in all.

    python benchmarks/fake_openai.py --port 0 --latency 0.2   # prints "PORT <n>"
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

SCORE_ONLY = "(return score ONLY):"
_TOKEN = re.compile(r"\s*\S+")
# alternatives at the score token, around the chosen score
_SPREAD = (0.6, 0.2, 0.1, 0.06, 0.04)


class Stats:
    """What the server saw."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.max_completion_tokens_per_call = 0
        self.choices = 0
        self.inflight = 0
        self.max_inflight = 0
        self.first_arrival: float | None = None
        self.last_done: float | None = None
        self.n_values: Counter[str] = Counter()
        self.max_tokens_values: Counter[str] = Counter()
        self.logprobs_requested = 0
        self.top_logprobs_values: Counter[str] = Counter()
        self.other_paths: Counter[str] = Counter()

    def as_dict(self) -> dict[str, Any]:
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
            "other_paths": dict(self.other_paths),
        }


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def count_tokens(text: str) -> int:
    """Approximate tokens: whitespace-separated words."""
    return len(text.split())


def pick_score(prompt: str, index: int, temperature: float) -> int:
    """4 at temperature 0; otherwise a deterministic draw around 4 per choice."""
    if temperature <= 0:
        return 4
    digest = hashlib.sha256(f"{prompt}\x00{index}".encode()).digest()
    return (3, 4, 4, 5, 4, 3, 5, 4)[digest[0] % 8]


def logprob_entry(token: str, score: int | None, top: int) -> dict[str, Any]:
    """One logprobs content item; the score token gets alternatives over 1-5."""
    if score is None:
        alternatives = [(token, 0.0)]
    else:
        order = sorted(range(1, 6), key=lambda k: abs(k - score))
        alternatives = [(str(k), math.log(p)) for k, p in zip(order, _SPREAD, strict=True)]
        prefix = token[: len(token) - len(token.lstrip())]
        alternatives = [(prefix + t, lp) for t, lp in alternatives]
        alternatives += [(f"{prefix}x{i}", -12.0 - i) for i in range(max(0, top - 5))]
    first_logprob = alternatives[0][1]
    return {
        "token": token,
        "logprob": first_logprob,
        "bytes": list(token.encode()),
        "top_logprobs": [
            {"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in alternatives[:top]
        ],
    }


def make_choice(
    index: int, prompt: str, body: dict[str, Any], ramble: int = 0
) -> tuple[dict[str, Any], int]:
    """One completion choice and its output-token count.

    A compliant judge writes the score (after a line of reasoning for a CoT prompt); with
    ``ramble`` it first writes that many words whatever the prompt asks. The output stops
    at the request's ``max_tokens`` / ``max_completion_tokens`` (``finish_reason: length``).
    """
    temperature = float(body.get("temperature") if body.get("temperature") is not None else 1.0)
    score = pick_score(prompt, index, temperature)
    cot = not prompt.rstrip().endswith(SCORE_ONLY)
    text = (
        f"The reply names the user's feeling and responds to it.\nScore: {score}"
        if cot
        else str(score)
    )
    if ramble:
        words = ("Let me weigh how well the reply meets the user's feelings. " * ramble).split()
        text = " ".join(words[:ramble]) + " " + text
    tokens = _TOKEN.findall(text)
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    finish = "stop"
    scored_at = len(tokens) - 1
    if limit is not None and len(tokens) > int(limit):
        tokens, finish = tokens[: int(limit)], "length"
        text = "".join(tokens)
    choice: dict[str, Any] = {
        "index": index,
        "message": {"role": "assistant", "content": text, "refusal": None},
        "finish_reason": finish,
        "logprobs": None,
    }
    if body.get("logprobs"):
        top = int(body.get("top_logprobs") or 0)
        content = [
            logprob_entry(tok, score if i == scored_at else None, top)
            for i, tok in enumerate(tokens)
        ]
        choice["logprobs"] = {"content": content, "refusal": None}
    return choice, len(tokens)


def build_app(
    latency: float, ignore_n: bool, stats: Stats, stop: asyncio.Event, ramble: int = 0
) -> Any:
    from aiohttp import web

    async def completions(request: web.Request) -> web.Response:
        now = time.perf_counter()
        if stats.first_arrival is None:
            stats.first_arrival = now
        stats.inflight += 1
        stats.max_inflight = max(stats.max_inflight, stats.inflight)
        try:
            body = await request.json()
            messages = body.get("messages") or []
            texts = [message_text(m) for m in messages]
            prompt = texts[-1] if texts else ""
            prompt_tokens = sum(count_tokens(t) for t in texts)
            n = 1 if ignore_n else int(body.get("n") or 1)
            stats.n_values[str(body.get("n"))] += 1
            max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
            stats.max_tokens_values[str(max_tokens)] += 1
            if body.get("logprobs"):
                stats.logprobs_requested += 1
            stats.top_logprobs_values[str(body.get("top_logprobs"))] += 1
            if latency > 0:
                await asyncio.sleep(latency)
            choices = [make_choice(i, prompt, body, ramble) for i in range(n)]
            completion_tokens = sum(c[1] for c in choices)
            stats.calls += 1
            stats.prompt_tokens += prompt_tokens
            stats.completion_tokens += completion_tokens
            stats.max_completion_tokens_per_call = max(
                stats.max_completion_tokens_per_call, completion_tokens
            )
            stats.choices += n
            payload = {
                "id": f"chatcmpl-bench{stats.calls}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "gpt-4o-mini"),
                "choices": [c[0] for c in choices],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
                "system_fingerprint": None,
            }
            return web.json_response(payload)
        finally:
            stats.inflight -= 1
            stats.last_done = time.perf_counter()

    async def get_stats(request: web.Request) -> web.Response:
        return web.json_response(stats.as_dict())

    async def reset(request: web.Request) -> web.Response:
        stats.reset()
        return web.json_response({"ok": True})

    async def shutdown(request: web.Request) -> web.Response:
        stop.set()
        return web.json_response({"ok": True})

    async def other(request: web.Request) -> web.Response:
        stats.other_paths[f"{request.method} {request.path}"] += 1
        return web.json_response({"error": {"message": "not found"}}, status=404)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_get("/stats", get_stats)
    app.router.add_post("/reset", reset)
    app.router.add_post("/shutdown", shutdown)
    app.router.add_route("*", "/{tail:.*}", other)
    return app


async def serve(
    port: int,
    latency: float,
    ignore_n: bool,
    idle_exit: float,
    max_lifetime: float,
    ramble: int = 0,
) -> None:
    from aiohttp import web

    stats = Stats()
    stop = asyncio.Event()
    app = build_app(latency, ignore_n, stats, stop, ramble)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port, backlog=1024)
    await site.start()
    bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"PORT {bound}", flush=True)
    started = last_seen = time.monotonic()
    seen_calls = -1
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), timeout=0.5)
        except TimeoutError:
            pass
        now = time.monotonic()
        if stats.calls != seen_calls or stats.inflight:
            seen_calls, last_seen = stats.calls, now
        if now - last_seen > idle_exit or now - started > max_lifetime:
            break
    await runner.cleanup()


class FakeOpenAI:
    """Run the fake server in a child process (context manager)."""

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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per request")
    parser.add_argument("--ignore-n", action="store_true", help="always return one choice")
    parser.add_argument(
        "--ramble", type=int, default=0, help="words the judge writes before its score"
    )
    parser.add_argument("--idle-exit", type=float, default=120.0)
    parser.add_argument("--max-lifetime", type=float, default=1800.0)
    args = parser.parse_args()
    asyncio.run(
        serve(
            args.port, args.latency, args.ignore_n, args.idle_exit, args.max_lifetime, args.ramble
        )
    )


if __name__ == "__main__":
    main()
