"""Shared pytest fixtures (fixtures only: helpers live in their own modules)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from fake_servers import FakeServer
from hypothesis import settings
from inspect_ai.model import ModelAPI
from tenacity import wait_fixed

pytest_plugins = ["fake_providers", "fake_openai_shapes"]

# CI (CI=true) draws the same examples on every run, so a red CI is reproducible; a local run
# draws new ones each time (their failures are saved in .hypothesis/ and replayed)
settings.register_profile("ci", derandomize=True, deadline=None, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def _fake_judge_servers() -> Iterator[dict[str, FakeServer]]:
    """One fake OpenAI and one fake Anthropic server for the whole session.

    Session-wide so their URLs stay fixed: Inspect may reuse a provider (and its
    HTTP client) across evals in one process.
    """
    servers = {"openai": FakeServer("openai"), "anthropic": FakeServer("anthropic")}
    yield servers
    for server in servers.values():
        server.stop()


@pytest.fixture
def openai_server(
    _fake_judge_servers: dict[str, FakeServer], monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeServer]:
    """The fake OpenAI chat-completions server, reset, with the real provider pointed at it."""
    server = _fake_judge_servers["openai"]
    server.clear()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    yield server
    server.assert_no_unknown()


@pytest.fixture
def anthropic_server(
    _fake_judge_servers: dict[str, FakeServer], monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeServer]:
    """The fake Anthropic messages server, reset, with the real provider pointed at it."""
    server = _fake_judge_servers["anthropic"]
    server.clear()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    yield server
    server.assert_no_unknown()


@pytest.fixture
def fake_judges(openai_server: FakeServer, anthropic_server: FakeServer) -> dict[str, FakeServer]:
    """Both fake servers by kind (``openai``, ``anthropic``)."""
    return {"openai": openai_server, "anthropic": anthropic_server}


@pytest.fixture
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shorten Inspect's own retry backoff (3 s exponential) to 0.05 s.

    Only Inspect's wait between attempts changes: which errors are retried, how
    many times (``max_retries``), and the provider SDKs' own retries (which honour
    ``Retry-After``) are untouched.
    """
    monkeypatch.setattr(ModelAPI, "retry_wait", lambda self: wait_fixed(0.05))
