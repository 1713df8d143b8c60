"""The one fake judge server that the tests and the benchmarks share (benchmarks/fake_openai.py)."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_servers import BENCHMARKS, FakeServer, Reply

ROOT = Path(__file__).resolve().parents[1]
SCORE_ONLY_PROMPT = "Rate it.\n\nEvaluation Form (return score ONLY):"
COT_PROMPT = "Rate it.\n\nEvaluation Form (scores ONLY):\n- Empathy (1-5): reason first"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer("openai", control=True)
    yield fake
    fake.stop()


def post(server: FakeServer, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}{path}",
        data=json.dumps(body or {}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def chat(server: FakeServer, prompt: str, **settings: Any) -> dict[str, Any]:
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": prompt}]}
    return post(server, "/v1/chat/completions", {**body, **settings})


def test_tests_and_benchmarks_use_the_same_server_module() -> None:
    import fake_openai

    assert FakeServer is fake_openai.FakeServer
    assert Path(fake_openai.__file__).resolve() == BENCHMARKS / "fake_openai.py"
    judge_servers = [  # modules that start an HTTP server and answer chat completions
        path.relative_to(ROOT).as_posix()
        for folder in ("tests", "benchmarks")
        for path in (ROOT / folder).rglob("*.py")
        if re.search(r"HTTPServer\(|web\.Application\(", text := path.read_text("utf-8"))
        and "chat/completions" in text
        and path.name != "test_fake_server.py"
    ]
    # the one OpenAI chat fake; tests/fake_providers.py stands for other services (Gemini,
    # Groq's and Mistral's own APIs), and tests/fake_openai_shapes.py reuses this one's rules
    assert sorted(judge_servers) == ["benchmarks/fake_openai.py", "tests/fake_providers.py"]


def test_healthy_judge_answers_the_rubric_with_logprobs_and_counts_tokens(
    server: FakeServer,
) -> None:
    answer = chat(server, SCORE_ONLY_PROMPT, temperature=0, logprobs=True, top_logprobs=20)
    [choice] = answer["choices"]
    assert choice["message"]["content"] == "4" and choice["finish_reason"] == "stop"
    [token] = choice["logprobs"]["content"]
    assert len(token["top_logprobs"]) == 20  # the spread over 1-5, padded like a provider
    assert {t["token"] for t in token["top_logprobs"]} >= {"1", "2", "3", "4", "5"}
    assert answer["usage"] == {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8}
    reasoned = chat(server, COT_PROMPT)["choices"][0]["message"]["content"]
    assert reasoned.endswith("\nScore: 4")


def test_choices_vary_only_at_a_temperature_and_ignore_n_answers_one(
    server: FakeServer,
) -> None:
    cold = chat(server, SCORE_ONLY_PROMPT, n=8, temperature=0)["choices"]
    warm = chat(server, SCORE_ONLY_PROMPT, n=8, temperature=1.0)["choices"]
    assert {c["message"]["content"] for c in cold} == {"4"}
    assert {c["message"]["content"] for c in warm} > {"4"}
    assert warm == chat(server, SCORE_ONLY_PROMPT, n=8, temperature=1.0)["choices"]
    server.ignore_n = True
    assert len(chat(server, SCORE_ONLY_PROMPT, n=8)["choices"]) == 1


def test_rambling_judge_is_cut_at_the_output_bound(server: FakeServer) -> None:
    server.ramble = 60
    [choice] = chat(server, SCORE_ONLY_PROMPT, max_completion_tokens=2)["choices"]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["content"] == "Let me"
    server.ramble = 0
    scripted = "Relevance: 5\nOverall: 4, because the reply names the feeling"
    server.script(Reply(text=scripted))
    [choice] = chat(server, SCORE_ONLY_PROMPT, max_tokens=2)["choices"]
    assert choice["message"]["content"] == scripted  # scripted payloads are sent as written


def test_control_endpoints_report_and_reset_what_the_server_saw(server: FakeServer) -> None:
    chat(server, SCORE_ONLY_PROMPT, n=3, max_tokens=8, logprobs=True, top_logprobs=20)
    chat(server, SCORE_ONLY_PROMPT, max_tokens=8)
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/stats", timeout=10) as r:
        stats = json.loads(r.read())
    assert stats["calls"] == 2 and stats["choices"] == 4 and stats["completion_tokens"] == 4
    assert stats["n_values"] == {"3": 1, "None": 1} and stats["max_tokens_values"] == {"8": 2}
    assert stats["logprobs_requested"] == 1 and stats["max_inflight"] == 1
    assert post(server, "/reset") == {"ok": True}
    assert server.stats_dict()["calls"] == 0 and server.count() == 0
    # a request is done before its answer's last byte: one client asking in turn never has
    # two in flight (the counter once lagged behind the next request)
    for _ in range(100):
        chat(server, SCORE_ONLY_PROMPT, max_tokens=8)
    assert server.stats_dict()["max_inflight"] == 1
    post(server, "/shutdown")
    assert server.shutdown_requested.is_set()


def test_without_control_the_endpoints_are_unknown_paths() -> None:
    fake = FakeServer("openai")
    try:
        with pytest.raises(urllib.error.HTTPError):
            post(fake, "/reset")
        assert fake.unknown == ["POST /reset (unknown path)"]
    finally:
        fake.stop()
