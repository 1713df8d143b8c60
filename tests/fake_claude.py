"""A fake Anthropic Messages API that thinks as each Claude model does, on 127.0.0.1.

Reached through Inspect's own ``anthropic/<model>`` provider and the real ``anthropic`` SDK
(``ANTHROPIC_BASE_URL``), plain or streamed (Inspect streams whenever it asks for thinking).
Unlike the plain Anthropic fake of ``benchmarks/fake_openai.py`` it applies each model's
thinking rules, with their sources:

- Claude 3.7 to 4.6 think only when asked, with ``thinking: {type: enabled, budget_tokens}``:
  the budget must be at least 1024 and below ``max_tokens`` (a 400 otherwise, in the API's
  words as quoted in liuw1535/antigravity2api-nodejs#149);
  https://platform.claude.com/docs/en/build-with-claude/extended-thinking.
- Claude 4.6 also takes adaptive thinking; 4.7 and later refuse ``enabled``.
- Claude 5 models think (adaptive) unless told not to: Sonnet 5, Opus 5 and Haiku 5.5 take
  ``disabled``, Sonnet 5.5 ``between_tools`` only; Opus 5.5, Fable and Mythos always think and
  answer 400 to ``disabled`` ("thinking.type.disabled" is not supported for this model, as
  the dev.to post "Claude Opus 5.5 / Sonnet 5.5: 5 settings that return 400" quotes it);
  https://platform.claude.com/docs/en/build-with-claude/thinking-troubleshooting.
- Opus 4.7 and 4.8, where the sources disagree, get the harder reading of both: they think
  unless told not to and refuse ``disabled``.

Thinking tokens count against ``max_tokens``: a model spends `THINKING` tokens (by effort;
``high`` where none is given, at most the budget) before its answer; a bound that runs out
first cuts the answer (stop reason ``max_tokens``, no text). The judge answers as the other
fakes' healthy judge does (4, or a ``[judge-says:N]`` marker's score; a reason and
``Score: N`` when the prompt asks for reasoning); ``script(...)`` as in `fake_providers`.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fake_openai import _HTTPServer, count_tokens, prompt_text, tokens_of
from fake_providers import ApiError, ProviderRule, _FakeProvider, handler_for, json_body

THINKING = {"low": 120, "medium": 400, "high": 900, "xhigh": 1500, "max": 3000}
"""Thinking tokens a model spends before it answers, by effort (adaptive thinking)."""


@dataclass(frozen=True)
class ClaudeRules:
    """What one Claude model does with the ``thinking`` field."""

    budget: bool
    """Takes ``{type: enabled, budget_tokens}``."""
    adaptive: bool
    """Takes ``{type: adaptive}`` (and ``output_config.effort``)."""
    thinks_by_default: bool
    """Thinks (adaptive, at effort high) when ``thinking`` is left out."""
    off: str | None
    """The ``thinking.type`` that turns it off (None: it cannot be)."""


def claude_rules(model: str) -> ClaudeRules:
    """The thinking rules of a Claude model id (see the module's sources)."""
    if re.search(r"claude-3-(?:5-)?[a-z]", model) and "3-7" not in model:
        return ClaudeRules(budget=False, adaptive=False, thinks_by_default=False, off=None)
    found = re.search(r"claude-([a-z]+)-(\d+)(?:[-.](\d)(?!\d))?", model)
    tier, major, minor = (found.group(1), int(found.group(2)), int(found.group(3) or 0)) if (
        found
    ) else ("sonnet", 3, 7)
    if major < 4 or (major == 4 and minor <= 5):
        return ClaudeRules(budget=True, adaptive=False, thinks_by_default=False, off="disabled")
    if major == 4 and minor == 6:
        return ClaudeRules(budget=True, adaptive=True, thinks_by_default=False, off="disabled")
    if major == 4:
        return ClaudeRules(budget=False, adaptive=True, thinks_by_default=True, off=None)
    if tier == "sonnet" and minor >= 5:
        off: str | None = "between_tools"
    elif (tier in ("sonnet", "opus") and minor < 5) or (tier == "haiku" and minor >= 5):
        off = "disabled"
    else:
        off = None
    return ClaudeRules(budget=False, adaptive=True, thinks_by_default=True, off=off)


class FakeClaude(_FakeProvider):
    """Anthropic's Messages API (``POST /v1/messages``) with each model's thinking rules."""

    name = "claude"

    def __init__(self, port: int = 0) -> None:
        self.label = f"{self.name} fake"
        self._start_records()
        self._httpd = _HTTPServer(("127.0.0.1", port), handler_for(self, _claude_body))
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def route(self, method: str, path: str) -> str | None:
        return "messages" if method == "POST" and path.split("?")[0] == "/v1/messages" else None

    def prompt_of(self, endpoint: str, body: dict[str, Any]) -> str:
        return prompt_text(body)

    def streamed(self, endpoint: str, path: str, body: dict[str, Any]) -> bool:
        return False  # answered as events by the handler

    def check_auth(self, headers: Any) -> None:
        # the SDK sends the key as x-api-key, or (anthropic 2.x) as a bearer token
        if not headers.get("x-api-key") and not headers.get("Authorization"):
            raise ApiError(401, "x-api-key header is required")

    def error_body(self, status: int, message: str, grpc: str | None) -> dict[str, Any]:
        kinds = {401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error"}
        kind = kinds.get(status, "invalid_request_error" if status < 500 else "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def answer(
        self, endpoint: str, path: str, body: dict[str, Any], rule: ProviderRule | None
    ) -> dict[str, Any]:
        model = str(body.get("model", ""))
        bound = int(body["max_tokens"])
        spend = self._thinking(claude_rules(model), body, bound)
        [text] = self.texts_for(rule, self.prompt_of(endpoint, body), 1, None)
        content: list[dict[str, Any]] = []
        if spend:
            thought = " ".join(["weighing"] * min(spend, bound))
            content.append({"type": "thinking", "thinking": thought, "signature": "c2ln"})
        room = bound - spend
        tokens = tokens_of(text) if room > 0 else []
        cut = spend >= bound or len(tokens) > room
        tokens = tokens[: max(room, 0)]
        if tokens:
            content.append({"type": "text", "text": "".join(tokens)})
        return {
            "id": "msg_fake_claude",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "max_tokens" if cut else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": count_tokens(prompt_text(body)),
                "output_tokens": min(spend, bound) + len(tokens),
                # the API reports the thinking's share (Inspect reads it as reasoning tokens)
                "output_tokens_details": {"thinking_tokens": min(spend, bound)},
            },
        }

    def _thinking(self, rules: ClaudeRules, body: dict[str, Any], bound: int) -> int:
        """Thinking tokens this request spends, or the API's 400 for its ``thinking``."""
        thinking = body.get("thinking")
        effort = (body.get("output_config") or {}).get("effort") or "high"
        kind = thinking.get("type") if isinstance(thinking, dict) else None
        if kind is None:
            return THINKING[effort] if rules.thinks_by_default else 0
        if kind == "enabled":
            if not rules.budget:
                raise ApiError(400, '"thinking.type.enabled" is not supported for this model. '
                               'Use "thinking.type.adaptive" and "output_config.effort" to '
                               "control thinking behavior.")  # fmt: skip
            budget = int(thinking.get("budget_tokens", 0))
            if budget < 1024:
                raise ApiError(400, "thinking.enabled.budget_tokens: Input should be greater "
                               "than or equal to 1024")  # fmt: skip
            if bound <= budget:
                raise ApiError(400, "`max_tokens` must be greater than `thinking.budget_tokens`"
                               ". Please consult our documentation at https://docs.claude.com/"
                               "en/docs/build-with-claude/extended-thinking#max-tokens-and-"
                               "context-window-size")  # fmt: skip
            return min(budget, THINKING["high"])
        if kind == "adaptive" and rules.adaptive:
            return THINKING[effort]
        if kind in ("disabled", "between_tools") and kind == rules.off:
            return 0
        raise ApiError(400, f'"thinking.type.{kind}" is not supported for this model. Use '
                       '"thinking.type.adaptive" and "output_config.effort" to control '
                       "thinking behavior.")  # fmt: skip


def _events(message: dict[str, Any]) -> bytes:
    """A message as the server-sent events of a streamed answer."""
    start = {**message, "content": [], "stop_reason": None,
             "usage": {**message["usage"], "output_tokens": 1}}  # fmt: skip
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"message": start})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "thinking":
            empty = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": block["thinking"]},
                      {"type": "signature_delta", "signature": block["signature"]}]  # fmt: skip
        else:
            empty = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": block["text"]}]
        events.append(("content_block_start", {"index": index, "content_block": empty}))
        events.extend(("content_block_delta", {"index": index, "delta": d}) for d in deltas)
        events.append(("content_block_stop", {"index": index}))
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append(("message_delta", {"delta": stop, "usage": message["usage"]}))
    events.append(("message_stop", {}))
    return "".join(
        f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n" for name, data in events
    ).encode()


def _claude_body(raw: bytes, status: int, payload: Any) -> tuple[str, bytes]:
    """A reply as the Messages API sends it: server-sent events when the request streams."""
    if status == 200 and bool(json.loads(raw or b"{}").get("stream")):
        return "text/event-stream", _events(payload)
    return json_body(raw, status, payload)


@pytest.fixture(scope="session")
def _fake_claude() -> Iterator[FakeClaude]:
    server = FakeClaude()
    yield server
    server.stop()


@pytest.fixture
def claude_server(
    _fake_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeClaude]:
    """The fake Claude, cleared, with Inspect's ``anthropic/`` provider pointed at it."""
    _fake_claude.clear()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", _fake_claude.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    yield _fake_claude
    _fake_claude.assert_no_unknown()
