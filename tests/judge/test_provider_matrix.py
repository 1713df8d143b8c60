"""Every judge people use, with the default command, through Inspect's own providers and the
real SDKs against fakes that answer and refuse as each service documents (the fakes:
tests/fake_providers.py, tests/fake_openai_shapes.py, benchmarks/fake_openai.py).

Each row is one judge-mode eval of three dialogs: the expected value (or unscored reason)
per dialog, the method that scored it, and what the request sent must (not) hold. No
sample may end in an error for a refusal of an option the plugin chose itself.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fake_servers import expected_logprob_score
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
from matrix_dialogs import SCORES, dialogs, outcomes

from inspect_empathy import empathy_scorer
from inspect_empathy.judge._judge_call import BUDGET, PRECISION
from inspect_empathy.tasks import empathy

pytestmark = pytest.mark.usefixtures("quick_backoff")


def run(model: str, tmp_path: Path, **task_args: Any) -> EvalLog:
    [log] = eval(
        empathy(dataset=str(dialogs(tmp_path / "d.jsonl")), **task_args),
        model=model,
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_retries=0,
        timeout=30,
        fail_on_error=False,
        reasoning_summary="none",
    )
    return log


def weighted(k: int) -> float:
    return expected_logprob_score(k)


@dataclass(frozen=True)
class Row:
    model: str
    server: str
    expect: Callable[[int], float]
    method: str
    sent: Callable[[list[dict[str, Any]]], None] = field(default=lambda bodies: None)


def sent_no_logprobs(bodies: list[dict[str, Any]]) -> None:
    for body in bodies:
        config = body.get("generationConfig", body)
        assert not config.get("logprobs") and not config.get("responseLogprobs"), body


def gemini_thinking(budget: int | None = None, level: str | None = None) -> Callable[..., None]:
    def check(bodies: list[dict[str, Any]]) -> None:
        sent_no_logprobs(bodies)
        for body in bodies:
            thinking = body["generationConfig"].get("thinkingConfig", {})
            if budget is not None:
                assert thinking.get("thinking_budget", thinking.get("thinkingBudget")) == budget
            if level is not None:
                assert str(thinking.get("thinking_level", thinking.get("thinkingLevel"))) == level
            if budget != 0:  # room for the thinking it cannot turn off
                assert body["generationConfig"]["maxOutputTokens"] > 24

    return check


def responses_bound(bodies: list[dict[str, Any]]) -> None:
    judged = [b for b in bodies if "hello, world" not in json.dumps(b)]
    assert judged
    for body in judged:
        assert body["max_output_tokens"] >= 16
        assert body.get("reasoning", {}).get("effort") == "minimal"
        assert "message.output_text.logprobs" not in (body.get("include") or [])


ROWS = [
    Row("google/gemini-2.0-flash", "google", weighted, "logprobs"),
    Row("google/gemini-2.5-pro", "google", float, "parse", gemini_thinking(budget=128)),
    Row("google/gemini-2.5-flash", "google", float, "parse", gemini_thinking(budget=0)),
    Row("google/gemini-3-pro-preview", "google", float, "parse", gemini_thinking(level="LOW")),
    Row("openai/gpt-5", "responses", float, "parse", responses_bound),
    Row("groq/llama-3.3-70b-versatile", "groq", float, "parse", sent_no_logprobs),
    Row("mistral/mistral-large-latest", "mistral", float, "parse"),
    Row("vllm/matrix-judge", "vllm", weighted, "logprobs"),
    Row("llama-cpp-python/matrix-judge", "llamacpp", weighted, "logprobs"),
    Row("ollama/matrix-judge", "ollama", weighted, "logprobs"),
    Row("anthropic/claude-sonnet-4-6", "anthropic", float, "parse"),
]


@pytest.fixture
def servers(request: pytest.FixtureRequest) -> Callable[[str], Any]:
    names = {
        "google": "google_server",
        "responses": "responses_server",
        "groq": "groq_server",
        "mistral": "mistral_server",
        "vllm": "vllm_server",
        "llamacpp": "llamacpp_server",
        "ollama": "ollama_server",
        "together": "together_server",
        "anthropic": "anthropic_server",
    }
    return lambda kind: request.getfixturevalue(names[kind])


@pytest.mark.parametrize("row", ROWS, ids=[r.model.split("/")[0] + ":" + r.model.split("/")[-1]
                                           for r in ROWS])  # fmt: skip
def test_default_command_scores_every_judge(
    row: Row, servers: Callable[[str], Any], tmp_path: Path
) -> None:
    server = servers(row.server)
    log = run(row.model, tmp_path)
    found = outcomes(log)
    for k in SCORES:
        value, method, metadata = found[f"d{k}"]
        assert method == row.method, (k, method, metadata)
        assert value == pytest.approx(row.expect(k), abs=1e-6), (k, metadata)
    row.sent([r.body for r in server.requests])


def test_gemini_that_refuses_logprobs_is_learnt_once(
    google_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Gemini the table does not know is asked for logprobs; the service's refusal is
    learnt, and every sample is parsed instead of erroring."""
    import fake_providers

    rules = fake_providers.gemini_model_rules
    monkeypatch.setattr(
        fake_providers,
        "gemini_model_rules",
        lambda name: rules("gemini-2.5-flash" if "exp-1206" in name else name),
    )
    log = run("google/gemini-exp-1206", tmp_path)
    found = outcomes(log)
    assert {k: v[0] for k, v in found.items()} == {"d2": 2.0, "d4": 4.0, "d5": 5.0}
    assert all(v[2].get("logprobs_unavailable") for v in found.values())
    refused = [r for r in google_server.requests if r.status == 400]
    assert 1 <= len(refused) <= len(SCORES)  # the samples already in flight may each hear it


@pytest.mark.parametrize(
    ("model", "server", "per_call"),
    [
        ("google/gemini-2.5-flash", "google", 8),
        ("google/gemini-3-pro-preview", "google", 1),
        ("groq/llama-3.3-70b-versatile", "groq", 1),
        ("anthropic/claude-sonnet-4-6", "anthropic", 1),
    ],
)
def test_samples_split_into_calls_each_service_accepts(
    model: str, server: str, per_call: int, servers: Callable[[str], Any], tmp_path: Path
) -> None:
    fake = servers(server)
    completions = 10
    [log] = eval(
        empathy(dataset=str(dialogs(tmp_path / "d.jsonl", (4,))), method="samples",
                completions=completions, precision=0),
        model=model, log_dir=str(tmp_path / "logs"), display="none", max_retries=0,
        fail_on_error=False,
    )  # fmt: skip
    found = outcomes(log)
    value, method, metadata = found["d4"]
    assert method == "samples" and metadata["n_parsed"] == completions, metadata
    assert 3.0 <= value <= 5.0
    sizes = []
    for r in fake.requests:
        body = r.body
        n = body.get("generationConfig", {}).get("candidateCount") or body.get("n") or 1
        sizes.append(n)
        assert getattr(r, "status", None) in (None, 200), r
    assert max(sizes) <= per_call and sum(sizes) == completions, sizes


def test_unknown_service_that_refuses_n_is_asked_one_at_a_time(
    openai_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A service the table does not know that refuses ``n`` (400): single calls."""
    from fake_servers import Reply

    monkeypatch.setenv("UNKNOWNHOST_API_KEY", "test")
    openai_server.script(
        Reply(status=400, body=json.dumps({"error": {
            "message": "'n' : number must be at most 1", "type": "invalid_request_error"
        }}).encode()),
        when="[judge-says:4]", times=1,
    )  # fmt: skip
    [log] = eval(
        empathy(dataset=str(dialogs(tmp_path / "d.jsonl", (4,))), method="samples",
                completions=4, precision=0),
        model="openai-api/unknownhost/judge", model_base_url=openai_server.url,
        log_dir=str(tmp_path / "logs"), display="none", max_retries=0,
    )  # fmt: skip
    value, method, metadata = outcomes(log)["d4"]
    assert method == "samples" and metadata["n_parsed"] == 4
    ns = [r.body.get("n") for r in openai_server.requests]
    assert ns[0] == 4 and all(n in (None, 1) for n in ns[1:]), ns


def test_together_code_point_bytes_never_crash(together_server: Any, tmp_path: Path) -> None:
    together_server.script("I’d give it a 4.")
    found = outcomes(run("together/meta-llama/Llama-3.3-70B-Instruct-Turbo", tmp_path))
    for value, method, metadata in found.values():
        assert value == 4.0 and method == "parse", metadata
        assert metadata.get("logprobs_unavailable")


def test_mistral_answer_that_used_the_whole_bound_is_cut(
    mistral_server: Any, tmp_path: Path
) -> None:
    """Inspect's Mistral path reports ``stop`` for a cut answer: the bound decides, and the
    cut call is asked again once with room to finish (issue 47)."""
    mistral_server.script("Let me weigh the reply. " * 400 + "\nScore: 2")
    found = outcomes(run("mistral/mistral-large-latest", tmp_path, cot=True))
    for value, _, metadata in found.values():
        assert value == 2.0, metadata
        assert metadata["asked_again"] == {"max_tokens": 512, "again": 2048, "cut": 1}


def test_response_mode_and_own_task_with_a_gemini_2_5_grader(
    google_server: Any, tmp_path: Path
) -> None:
    [log] = eval(
        "inspect_empathy/empathy_response",
        task_args={"dataset": str(dialogs(tmp_path / "d.jsonl", (4,)))},
        model="empathy_baseline/lexicon",
        model_roles={"grader": "google/gemini-2.5-pro"},
        log_dir=str(tmp_path / "logs"), display="none", max_retries=0,
    )  # fmt: skip
    value, method, _ = outcomes(log)["d4"]
    assert (value, method) == (4.0, "parse")
    messages = [
        ChatMessageUser(content="[judge-says:3] I lost my job."),
        ChatMessageAssistant(content="I'm sorry, that is a hard blow."),
    ]
    task = Task(dataset=[Sample(input=messages, id="own")], solver=[],
                scorer=empathy_scorer(model="google/gemini-2.5-pro"))  # fmt: skip
    [own] = eval(task, model="empathy_baseline/length", log_dir=str(tmp_path / "own"),
                 display="none")  # fmt: skip
    value, method, _ = outcomes(own)["own"]
    assert (value, method) == (3.0, "parse")
    sent_no_logprobs([r.body for r in google_server.requests])


def alternating(texts: list[str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """An Anthropic judge whose successive answers cycle through ``texts``."""
    calls = {"n": 0}

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        text = texts[calls["n"] % len(texts)]
        calls["n"] += 1
        return {
            "id": "msg", "type": "message", "role": "assistant", "model": body["model"],
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 1},
        }  # fmt: skip

    return respond


@pytest.mark.parametrize(
    ("answers", "most_calls", "least_calls"),
    [(["4"], 4, 4), (["3", "4"], 6, 6)],
    ids=["always-4", "split-3-4"],
)
def test_sequential_sampling_stops_when_precise_enough(
    answers: list[str], most_calls: int, least_calls: int, anthropic_server: Any, tmp_path: Path
) -> None:
    """On a service without n: a judge that always says 4 is settled by its first four
    answers; one split between 3 and 4 draws the run's budget (a run of one dialog: six)."""
    from fake_servers import Reply

    anthropic_server.script(Reply(respond=alternating(answers)))
    [log] = eval(
        empathy(dataset=str(dialogs(tmp_path / "d.jsonl", (4,))), method="samples"),
        model="anthropic/claude-sonnet-4-6", log_dir=str(tmp_path / "logs"), display="none",
        max_retries=0,
    )  # fmt: skip
    value, method, metadata = outcomes(log)["d4"]
    calls = anthropic_server.count()
    assert least_calls <= calls <= most_calls, calls
    sequential = metadata["sequential"]
    assert sequential["drawn"] == calls == metadata["n_parsed"]
    assert value == pytest.approx(statistics.fmean(metadata["scores"]))
    if sequential["stopped"] == "precision":
        n = sequential["drawn"]
        assert sequential["posterior_sd"] <= PRECISION * (n + 5 * 0.005 + 1) ** 0.5 + 1e-4
    else:
        assert sequential["stopped"] == "budget" and calls == BUDGET


GRADERS = [
    ("google/gemini-2.5-pro", "google", "parse"),
    ("google/gemini-2.0-flash", "google", "logprobs"),
    ("openai/gpt-5", "responses", "parse"),
    ("groq/llama-3.3-70b-versatile", "groq", "parse"),
    ("mistral/mistral-large-latest", "mistral", "parse"),
    ("together/meta-llama/Llama-3.3-70B-Instruct-Turbo", "together", "parse"),
    ("vllm/matrix-grader", "vllm", "logprobs"),
    ("anthropic/claude-sonnet-4-6", "anthropic", "parse"),
]


@pytest.mark.parametrize(("grader", "server", "method"), GRADERS,
                         ids=[g.split("/")[0] for g, _, _ in GRADERS])  # fmt: skip
def test_empathy_scorer_in_a_task_of_ones_own_with_each_grader(
    grader: str, server: str, method: str, servers: Callable[[str], Any], tmp_path: Path
) -> None:
    """The grader role's path (the scorer asks the grader itself) on each service."""
    servers(server)
    messages = [
        ChatMessageUser(content="[judge-says:3] I lost my job."),
        ChatMessageAssistant(content="I'm sorry, that is a hard blow."),
    ]
    task = Task(dataset=[Sample(input=messages, id="own")], solver=[],
                scorer=empathy_scorer(model=grader))  # fmt: skip
    [log] = eval(task, model="empathy_baseline/length", log_dir=str(tmp_path), display="none",
                 max_retries=0, reasoning_summary="none")  # fmt: skip
    value, used, metadata = outcomes(log)["own"]
    assert used == method, metadata
    assert value == pytest.approx(3.0 if method == "parse" else weighted(3), abs=1e-6)


def test_what_was_chosen_for_a_judge_is_said_once_in_the_terminal(
    responses_server: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import logging

    from inspect_empathy.judge import _judge_call

    monkeypatch.setattr(_judge_call, "_said", set())
    with caplog.at_level(logging.WARNING):
        outcomes(run("openai/gpt-5", tmp_path))
    said = [m for r in caplog.records if "empathy judge openai/gpt-5" in (m := r.getMessage())]
    assert len(said) == 1, said
    [line] = said
    assert "method auto reads the whole number" in line and "-T method=samples" in line
    assert "max_tokens 2072" in line and "reasoning_effort=minimal" in line


# -- Claude with thinking (tests/fake_claude.py: each model's thinking rules) ----------------

from fake_claude import _fake_claude, claude_server  # noqa: E402, F401  (fixtures)


def claude_run(model: str, tmp_path: Path, **config: Any) -> EvalLog:
    tmp_path.mkdir(parents=True, exist_ok=True)
    [log] = eval(
        empathy(dataset=str(dialogs(tmp_path / "d.jsonl"))), model=model,
        log_dir=str(tmp_path / "logs"), display="none", max_retries=0, timeout=30,
        fail_on_error=False, **config,
    )  # fmt: skip
    return log


@pytest.mark.parametrize(
    ("model", "config", "thinking", "bound"),
    [
        # asked to think with a budget: the bound is the answer's 24 plus the budget
        (
            "anthropic/claude-sonnet-4-5",
            {"reasoning_tokens": 2048},
            {"type": "enabled", "budget_tokens": 2048},
            2072,
        ),
        (
            "anthropic/claude-3-7-sonnet-20250219",
            {"reasoning_tokens": 1024},
            {"type": "enabled", "budget_tokens": 1024},
            1048,
        ),
        # ... or an effort, which Inspect sends as a budget of 4096 to Claude 4.5
        (
            "anthropic/claude-opus-4-5",
            {"reasoning_effort": "low"},
            {"type": "enabled", "budget_tokens": 4096},
            4120,
        ),
        # a bound the user set at or below the budget is raised (Claude refuses it)
        (
            "anthropic/claude-sonnet-4-5",
            {"reasoning_tokens": 2048, "max_tokens": 1000},
            {"type": "enabled", "budget_tokens": 2048},
            2072,
        ),
        # think unless told not to: told not to
        ("anthropic/claude-sonnet-5", {}, {"type": "disabled"}, 24),
        ("anthropic/claude-opus-5", {}, {"type": "disabled"}, 24),
        ("anthropic/claude-haiku-5-5", {}, {"type": "disabled"}, 24),
        ("anthropic/claude-sonnet-5-5", {}, {"type": "between_tools"}, 24),
        # always think: the least effort, and room for it
        ("anthropic/claude-fable-5", {}, {"type": "adaptive"}, 2072),
        ("anthropic/claude-opus-5-5", {}, {"type": "adaptive"}, 2072),
        ("anthropic/claude-mythos-5-1", {}, {"type": "adaptive"}, 2072),
        # sources disagree: nothing sent about thinking, room left for it
        ("anthropic/claude-opus-4-7", {}, None, 2072),
        # an effort the user chose is kept, with room for the budget Inspect sends for it
        ("anthropic/claude-sonnet-5", {"reasoning_effort": "medium"}, {"type": "adaptive"}, 10024),
    ],
)
def test_claude_with_thinking_scores_every_dialog(
    claude_server: Any,  # noqa: F811
    tmp_path: Path,
    model: str,
    config: dict[str, Any],
    thinking: dict[str, Any] | None,
    bound: int,
) -> None:
    found = outcomes(claude_run(model, tmp_path, **config))
    assert {k: (v, m) for k, (v, m, _) in found.items()} == {
        f"d{k}": (float(k), "parse") for k in SCORES
    }
    for body in claude_server.bodies():
        sent = body.get("thinking")
        assert (sent and {k: sent[k] for k in thinking}) == thinking, body
        assert body["max_tokens"] == bound, body
        if thinking == {"type": "adaptive"}:
            assert body["output_config"]["effort"] == config.get("reasoning_effort", "low")
    assert not claude_server.refused()


def test_what_is_done_about_claudes_thinking_is_said_in_the_terminal(
    claude_server: Any,  # noqa: F811
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import logging

    from inspect_empathy.judge import _judge_call

    monkeypatch.setattr(_judge_call, "_said", set())
    said: dict[str, str] = {}
    for model, config in [("claude-sonnet-4-5", {"reasoning_tokens": 2048}),
                          ("claude-sonnet-5", {}), ("claude-fable-5", {})]:  # fmt: skip
        with caplog.at_level(logging.WARNING):
            outcomes(claude_run(f"anthropic/{model}", tmp_path / model, **config))
        lines = [r.getMessage() for r in caplog.records]
        [said[model]] = [m for m in lines if f"empathy judge anthropic/{model} " in m]
    assert (
        "max_tokens 2072: 24 for the answer and 2048 for the thinking budget"
        in (said["claude-sonnet-4-5"])
    )
    assert (
        "reasoning_effort=none: Claude Sonnet 5 reasons unless told not to; told not to"
        in (said["claude-sonnet-5"])
    )
    fable = said["claude-fable-5"]
    assert "reasoning_effort=low: the least reasoning Claude Fable 5 allows" in fable
    assert "max_tokens 2072" in fable


# -- a prompt too long for the judge's context, as each service words it ---------------------

TOO_LONG = {
    # Gemini's OpenAI-compatible endpoint: the error body is a list
    "gemini": (400, [{"error": {
        "code": 400,
        "message": "The input token count (1200293) exceeds the maximum number of tokens "
                   "allowed (1048576).",
        "errors": [{"message": "The input token count (1200293) exceeds the maximum number "
                               "of tokens allowed (1048576).",
                    "domain": "global", "reason": "badRequest"}],
        "status": "INVALID_ARGUMENT"}}]),
    "mistral": (400, {"object": "error", "message": "Prompt contains 300000 tokens, too large "
                      "for model with 131072 maximum context length",
                      "type": "invalid_request_error", "param": None, "code": None}),
    "groq": (413, {"error": {"message": "Request too large for model `llama-3.3-70b-versatile` "
                             "in organization `org_01kgg5588eftc8k70aes4864eb` service tier "
                             "`on_demand` on tokens per minute (TPM): Limit 12000, Requested "
                             "14137, please reduce your message size and try again. Need more "
                             "tokens? Upgrade to Dev Tier today at "
                             "https://console.groq.com/settings/billing",
                             "type": "tokens", "code": "rate_limit_exceeded"}}),
    "vllm": (400, {"object": "error", "message": "This model's maximum context length is 4096 "
                   "tokens. However, you requested 5000 tokens (4976 in the messages, 24 in "
                   "the completion). Please reduce the length of the messages or completion.",
                   "type": "BadRequestError", "param": None, "code": 400}),
    "vllm_engine": (400, {"object": "error", "message": "The decoder prompt (length 5000) is "
                          "longer than the maximum model length of 4096. Make sure that "
                          "`max_model_len` is no smaller than the number of text tokens.",
                          "type": "BadRequestError", "param": None, "code": 400}),
    "sglang": (400, {"object": "error", "message": "The input (5000 tokens) is longer than the "
                     "model's context length (4096 tokens).",
                     "type": "BadRequestError", "param": None, "code": 400}),
}  # fmt: skip
"""Each service's refusal of a prompt too long for its context, as its sources word it
(``_providers._CONTEXT_REFUSALS``); ``vllm_engine`` is vLLM's engine-side wording, served
under another service name: the wording is matched, not the name."""


def _through(service: str, server: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """``openai-api/<service>/judge``, pointed at the fake OpenAI server."""
    monkeypatch.setenv(f"{service.upper()}_BASE_URL", server.url)
    monkeypatch.setenv(f"{service.upper()}_API_KEY", "test")
    return f"openai-api/{service}/judge"


def _refuse(server: Any, status: int, body: Any) -> None:
    from fake_servers import Reply

    server.script(Reply(status=status, body=json.dumps(body).encode()))


@pytest.mark.parametrize("service", list(TOO_LONG))
@pytest.mark.parametrize("mode", ["judge", "response"])
def test_a_prompt_too_long_for_the_service_is_unscored_with_its_words_not_an_error(
    service: str,
    mode: str,
    openai_server: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    status, body = TOO_LONG[service]
    _refuse(openai_server, status, body)
    model = _through(service, openai_server, monkeypatch)
    data = str(dialogs(tmp_path / "d.jsonl"))
    if mode == "judge":
        log = run(model, tmp_path)
    else:
        [log] = eval("inspect_empathy/empathy_response", task_args={"dataset": data},
                     model="empathy_baseline/lexicon", model_roles={"grader": model},
                     log_dir=str(tmp_path / "logs"), display="none", max_retries=0,
                     fail_on_error=False)  # fmt: skip
    found = outcomes(log)  # no sample errored: eval-retry has nothing to send again
    assert log.status == "success" and set(found) == {f"d{k}" for k in SCORES}
    words = json.dumps(body).split('"message": "')[1].split('"')[0][:60]
    for value, _, metadata in found.values():
        reason = metadata["unscored_reason"]
        assert math.isnan(value)
        assert "too long for the judge's context" in reason and "-T max_turns=N" in reason
        assert words[:40] in reason and len(reason) < 600, reason
    assert openai_server.count() == len(SCORES)  # each dialog asked once, not retried


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "Invalid model name passed in model=judge."),
        (413, "Request Entity Too Large"),
        # the words of another service's refusal under a status it does not use for it
        (
            429,
            "This model's maximum context length is 4096 tokens. However, you requested 5000 "
            "tokens (4976 in the messages, 24 in the completion).",
        ),
    ],
)
def test_any_other_provider_error_stays_an_error(
    status: int,
    message: str,
    openai_server: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _refuse(openai_server, status, {"object": "error", "message": message,
                                    "type": "BadRequestError", "code": status})  # fmt: skip
    log = run(_through("vllm", openai_server, monkeypatch), tmp_path)
    assert log.samples and all(s.error is not None for s in log.samples)


def test_a_dialog_quoting_a_refusal_is_no_refusal(
    openai_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request Inspect quotes in its error holds the dialog: it is never read."""
    quoted = TOO_LONG["vllm"][1]["message"]
    path = tmp_path / "d.jsonl"
    turns = [{"role": "user", "content": f"My server said: {quoted}"},
             {"role": "assistant", "content": "That sounds frustrating."}]  # fmt: skip
    path.write_text(json.dumps({"id": "q", "turns": turns, "rating": 3}) + "\n", "utf-8")
    _refuse(openai_server, 400, {"object": "error", "message": "Invalid request.",
                                 "type": "BadRequestError", "code": 400})  # fmt: skip
    [log] = eval(empathy(dataset=str(path)), model=_through("vllm", openai_server, monkeypatch),
                 log_dir=str(tmp_path / "logs"), display="none", max_retries=0,
                 fail_on_error=False)  # fmt: skip
    [sample] = log.samples or []
    assert sample.error is not None and "Invalid request." in sample.error.message


# -- response mode: the grader's own bound and reasoning room --------------------------------


@pytest.mark.slow
def test_a_grader_takes_its_bound_and_thinking_from_its_role_on_the_command_line(
    claude_server: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    """``--max-tokens`` is the replying model's; the grader's bound and thinking budget come
    from its role (Inspect's model config), and the thinking gets room in the bound."""
    import os
    import subprocess
    import sys

    from inspect_ai.log import list_eval_logs, read_eval_log

    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": claude_server.url,
        "ANTHROPIC_API_KEY": "test",
        "COLUMNS": "2000",
    }  # the terminal's lines unwrapped
    run = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "inspect_empathy/empathy_response",
         "--model", "empathy_baseline/lexicon",
         "--model-role", "grader={model: anthropic/claude-sonnet-4-5, reasoning_tokens: 2048}",
         "--max-tokens", "300", "-T", f"dataset={dialogs(tmp_path / 'd.jsonl')}",
         "--log-dir", str(tmp_path / "logs"), "--display", "plain", "--max-retries", "0"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    [info] = list_eval_logs(str(tmp_path / "logs"))
    found = outcomes(read_eval_log(info))
    assert {k: (v, m) for k, (v, m, _) in found.items()} == {
        f"d{k}": (float(k), "parse") for k in SCORES
    }
    for body in claude_server.bodies():
        thinking = body["thinking"]
        assert (thinking["type"], thinking["budget_tokens"], body["max_tokens"]) == (
            "enabled",
            2048,
            2072,
        ), body
    said = " ".join((run.stdout + run.stderr).split())
    assert "--max-tokens 300 set the generation of the model under evaluation" in said
    assert "--model-role grader='{model: anthropic/claude-sonnet-4-5, max_tokens: 300}'" in said


def test_a_graders_own_bound_is_sent(openai_server: Any, tmp_path: Path) -> None:
    from inspect_ai.model import GenerateConfig, get_model

    grader = get_model("openai/gpt-4o-mini", config=GenerateConfig(max_tokens=4000))
    [log] = eval("inspect_empathy/empathy_response",
                 task_args={"dataset": str(dialogs(tmp_path / "d.jsonl"))},
                 model="empathy_baseline/lexicon", model_roles={"grader": grader},
                 log_dir=str(tmp_path / "logs"), display="none", max_retries=0)  # fmt: skip
    assert all(math.isfinite(v) for v, _, _ in outcomes(log).values())
    assert [r.body["max_tokens"] for r in openai_server.requests] == [4000] * len(SCORES)


def test_a_judge_mode_top_up_refused_as_too_long_is_unscored_not_an_error(
    openai_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Judge mode with another solver's ``generate()``: the service returned fewer answers
    than ``samples`` needs, and the scorer's top-up calls are refused as too long for the
    context (vLLM's wording): the dialog is unscored with the provider's words."""
    from fake_servers import Reply
    from inspect_ai.solver import generate

    def one_answer(body: dict[str, Any]) -> dict[str, Any]:
        usage = {"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101}
        return {"id": "c", "object": "chat.completion", "created": 0, "model": "judge",
                "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                             "message": {"role": "assistant", "content": "4"}}],
                "usage": usage}  # fmt: skip

    openai_server.script(Reply(respond=one_answer), times=1)
    status, body = TOO_LONG["vllm"]
    _refuse(openai_server, status, body)
    model = _through("vllm", openai_server, monkeypatch)
    data = dialogs(tmp_path / "d.jsonl", (4,))
    [log] = eval(empathy(dataset=str(data), method="samples", completions=3, input="prompt"),
                 solver=generate(), model=model,
                 log_dir=str(tmp_path / "logs"), display="none", max_retries=0,
                 fail_on_error=False)  # fmt: skip
    [sample] = log.samples or []
    assert sample.error is None, sample.error.traceback[-3000:]
    score = sample.scores["empathy_scorer"]  # type: ignore[index]
    reason = (score.metadata or {}).get("unscored_reason", "")
    assert math.isnan(score.value) and "too long for the judge's context" in reason, reason  # type: ignore[arg-type]
    assert len(openai_server.requests) >= 2  # the first answer, then a top-up refused
