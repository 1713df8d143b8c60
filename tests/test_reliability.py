"""Reliability through the real provider SDKs: every fault ends with every sample accounted for.

The judges are the real ``openai/...`` and ``anthropic/...`` Inspect providers (and
their SDKs) talking to fake servers on 127.0.0.1 (see ``fake_servers.py``). Faults
are keyed on one dialog's text, so the other samples show that one bad request does
not disturb the rest. After every run the log is read back from disk and checked:
each dataset sample appears exactly once and is scored, unscored with a reason, or
(only where a test says so) errored; ``scored_samples + unscored_samples`` in the
log's results equals the number of samples that completed.

Retries and timeouts are bounded (``max_retries``, ``timeout``, ``attempt_timeout``)
and Inspect's own backoff is shortened by the ``quick_backoff`` fixture, so the file
runs in well under a minute; the SDKs keep their default retries (2, honouring
``Retry-After``), which the request counts below include.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_servers import FakeServer, Reply, expected_logprob_score
from inspect_ai import Task, eval
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log
from inspect_ai.model import GenerateConfig, Model, get_model

from inspect_empathy.tasks import empathy

FIXTURE = Path(__file__).parent / "fixtures" / "reliability" / "dialogs.jsonl"
RECORDS = [json.loads(line) for line in FIXTURE.read_text("utf-8").splitlines() if line.strip()]
IDS = sorted(r["id"] for r in RECORDS)
KEYS = {r["id"]: r["turns"][0]["content"] for r in RECORDS}
"""Each dialog's first user turn: unique text found in every judge prompt for that dialog."""
TARGET = "rel-4"
KEY = KEYS[TARGET]

OPENAI = "openai/gpt-4o-mini"
"""A chat-completions model: gpt-5 / o-series names would go to the Responses API."""
ANTHROPIC = "anthropic/claude-haiku-4-5"
MODELS = {"openai": OPENAI, "anthropic": ANTHROPIC}
SCORER = "empathy_scorer"

BOUNDS: dict[str, Any] = {"max_tokens": 16, "max_retries": 2, "timeout": 60}
"""Bounded retries and time for every run (max_tokens stays far below Anthropic's
streaming threshold)."""

pytestmark = pytest.mark.usefixtures("quick_backoff")


# -- helpers ------------------------------------------------------------------------------


def run(task: Task | str, model: str, log_dir: Path, **kwargs: Any) -> EvalLog:
    """Run one eval and return its log as read back from disk."""
    options: dict[str, Any] = {**BOUNDS, "fail_on_error": False, **kwargs}
    [log] = eval(task, model=model, log_dir=str(log_dir), display="none", **options)
    assert log.location
    return read_eval_log(log.location)


def run_judge(model: str, log_dir: Path, method: str = "auto", **kwargs: Any) -> EvalLog:
    """Judge mode (the model under evaluation is the judge) on the fixture dialogs."""
    return run(empathy(dataset=str(FIXTURE), method=method), model, log_dir, **kwargs)  # type: ignore[arg-type]


def outcomes(log: EvalLog) -> dict[str, tuple[str, Any]]:
    """Each sample's outcome, after checking that none is lost or counted twice.

    ``("scored", value)``, ``("unscored", explanation)`` or ``("error", message)``.
    The log's ``scored_samples``/``unscored_samples`` must match the samples.
    """
    assert log.samples is not None
    ids = [str(s.id) for s in log.samples]
    assert sorted(ids) == IDS, f"samples lost or duplicated: {ids}"
    result: dict[str, tuple[str, Any]] = {}
    for sample in log.samples:
        if sample.error is not None:
            assert not sample.scores, "an errored sample must not carry a score"
            assert sample.error.message
            result[str(sample.id)] = ("error", sample.error.message)
            continue
        assert sample.scores and set(sample.scores) == {SCORER}
        score = sample.scores[SCORER]
        value = float(score.value)  # type: ignore[arg-type]
        if math.isnan(value):
            assert score.reason, "an unscored sample needs a reason"
            assert score.explanation
            result[str(sample.id)] = ("unscored", score.explanation)
        else:
            assert 1.0 <= value <= 5.0
            result[str(sample.id)] = ("scored", value)
    kinds = [kind for kind, _ in result.values()]
    if kinds.count("error") == len(kinds):
        return result
    assert log.results is not None
    [eval_score] = [s for s in log.results.scores if s.scorer == SCORER]
    assert eval_score.scored_samples == kinds.count("scored")
    assert eval_score.unscored_samples == kinds.count("unscored")
    assert eval_score.scored_samples + eval_score.unscored_samples + kinds.count("error") == len(
        IDS
    )
    return result


def complete(log: EvalLog) -> dict[str, tuple[str, Any]]:
    """Outcomes of a run that must have completed with every sample scored or unscored."""
    assert log.status == "success", log.error
    result = outcomes(log)
    assert log.results is not None
    [eval_score] = [s for s in log.results.scores if s.scorer == SCORER]
    assert eval_score.scored_samples + eval_score.unscored_samples == len(IDS)
    return result


def healthy_value(kind: str) -> float:
    """What the healthy fake judge's answer scores as (logprobs on OpenAI, parse on Anthropic)."""
    return expected_logprob_score() if kind == "openai" else 4.0


def assert_others_healthy(result: dict[str, tuple[str, Any]], kind: str) -> None:
    for sample_id, (outcome, value) in result.items():
        if sample_id != TARGET:
            assert outcome == "scored"
            assert value == pytest.approx(healthy_value(kind))


def assert_one_request_each(server: FakeServer) -> None:
    for sample_id, key in KEYS.items():
        if sample_id != TARGET:
            assert server.count(key) == 1, sample_id


# -- transport faults: retried, then scored ------------------------------------------------


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_rate_limit_429_with_retry_after(
    kind: str, fake_judges: dict[str, FakeServer], tmp_path: Path
) -> None:
    """429 + Retry-After three times: the SDK waits and retries twice, Inspect once more."""
    server = fake_judges[kind]
    server.script(Reply(status=429, headers={"Retry-After": "1"}), when=KEY, times=3)
    result = complete(run_judge(MODELS[kind], tmp_path))
    assert result[TARGET] == ("scored", pytest.approx(healthy_value(kind)))
    assert_others_healthy(result, kind)
    assert server.count(KEY) == 4  # 3 rate-limited + 1 answered
    assert server.count() == len(IDS) + 3
    assert_one_request_each(server)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("status", [500, 503])
def test_server_errors_are_retried(
    kind: str, status: int, fake_judges: dict[str, FakeServer], tmp_path: Path
) -> None:
    """500 and 503, three in a row (more than the SDK retries): scored on Inspect's retry."""
    server = fake_judges[kind]
    server.script(Reply(status=status), when=KEY, times=3)
    result = complete(run_judge(MODELS[kind], tmp_path))
    assert result[TARGET] == ("scored", pytest.approx(healthy_value(kind)))
    assert_others_healthy(result, kind)
    assert server.count(KEY) == 4
    assert_one_request_each(server)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_connection_reset_is_retried(
    kind: str, fake_judges: dict[str, FakeServer], tmp_path: Path
) -> None:
    """The connection is reset (TCP RST) three times, then the judge answers."""
    server = fake_judges[kind]
    server.script(Reply(reset=True), when=KEY, times=3)
    result = complete(run_judge(MODELS[kind], tmp_path))
    assert result[TARGET][0] == "scored"
    assert_others_healthy(result, kind)
    assert server.count(KEY) == 4
    assert_one_request_each(server)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_reply_slower_than_attempt_timeout_is_retried(
    kind: str, fake_judges: dict[str, FakeServer], tmp_path: Path
) -> None:
    """A reply that would take 5 s is abandoned at attempt_timeout=1 and asked again."""
    server = fake_judges[kind]
    server.script(Reply(delay=5.0), when=KEY, times=1)
    result = complete(run_judge(MODELS[kind], tmp_path, attempt_timeout=1))
    assert result[TARGET] == ("scored", pytest.approx(healthy_value(kind)))
    assert server.count(KEY) == 2
    assert_one_request_each(server)


def test_reply_never_arriving_is_a_clean_sample_error(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    """A judge that never answers in time: the sample errors when retries run out."""
    openai_server.script(Reply(delay=30.0), when=KEY)
    result = outcomes(run_judge(OPENAI, tmp_path, attempt_timeout=1, max_retries=1))
    assert result[TARGET][0] == "error"
    assert "AttemptTimeoutError" in result[TARGET][1]
    assert_others_healthy(result, "openai")
    assert openai_server.count(KEY) == 2  # max_retries=1: two attempts, then give up


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_malformed_json_is_retried_as_a_sample(
    kind: str, fake_judges: dict[str, FakeServer], tmp_path: Path
) -> None:
    """A 200 with a truncated JSON body is not retried by the SDKs or Inspect's request
    retry: the sample errors, and ``retry_on_error`` runs it again."""
    server = fake_judges[kind]
    server.script(Reply(body=b'{"id": "x", "choices": ['), when=KEY, times=1)
    log = run_judge(MODELS[kind], tmp_path, retry_on_error=1)
    result = complete(log)
    assert result[TARGET] == ("scored", pytest.approx(healthy_value(kind)))
    assert server.count(KEY) == 2
    assert log.samples is not None
    [target] = [s for s in log.samples if s.id == TARGET]
    assert target.error_retries and "JSONDecodeError" in target.error_retries[0].message


def test_malformed_json_without_retry_is_a_clean_error(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    """Without sample retries, the default fail_on_error stops the eval with the parse error."""
    openai_server.script(Reply(body=b"<html>not json"), when=KEY)
    log = run_judge(OPENAI, tmp_path, fail_on_error=True)
    assert log.status == "error"
    assert log.error is not None and "JSONDecodeError" in log.error.message
    assert openai_server.count(KEY) == 1


# -- content faults: the judge answered, but not with a score -------------------------------


def unscored_explanation(log: EvalLog) -> str:
    result = complete(log)
    outcome, explanation = result[TARGET]
    assert outcome == "unscored"
    return str(explanation)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_empty_content_is_unscored(
    kind: str, fake_judges: dict[str, FakeServer], tmp_path: Path
) -> None:
    server = fake_judges[kind]
    server.script(Reply(text=""), when=KEY)
    explanation = unscored_explanation(run_judge(MODELS[kind], tmp_path))
    assert "empty output" in explanation
    assert server.count(KEY) == 1  # a junk answer is final: not asked again


def test_null_content_is_unscored(openai_server: FakeServer, tmp_path: Path) -> None:
    """``content: null`` (as on a length stop) is an empty answer, not an error."""
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": None},
        "finish_reason": "length",
        "logprobs": None,
    }
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [choice]}
    openai_server.script(Reply(body=json.dumps(body).encode()), when=KEY)
    assert "cut off by max_tokens before any output" in unscored_explanation(
        run_judge(OPENAI, tmp_path)
    )


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_refusal_is_unscored(kind: str, fake_judges: dict[str, FakeServer], tmp_path: Path) -> None:
    server = fake_judges[kind]
    server.script(Reply(refusal="I can't help with rating this conversation."), when=KEY)
    explanation = unscored_explanation(run_judge(MODELS[kind], tmp_path))
    assert "can't help" in explanation and "refused" in explanation
    assert "no score in the answer" not in explanation


def test_refusal_after_a_digit_is_unscored(anthropic_server: FakeServer, tmp_path: Path) -> None:
    """A refusal (stop reason ``refusal``) is no judgement even if a score came first."""
    anthropic_server.script(Reply(refusal="5"), when=KEY)
    explanation = unscored_explanation(run_judge(ANTHROPIC, tmp_path))
    assert "refused" in explanation


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_chatty_text_without_score_is_unscored(
    kind: str, fake_judges: dict[str, FakeServer], tmp_path: Path
) -> None:
    server = fake_judges[kind]
    text = "The bot's reply is quite short and could show more warmth towards the user."
    server.script(Reply(text=text), when=KEY)
    assert "no score" in unscored_explanation(run_judge(MODELS[kind], tmp_path))


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("text", ["7", "0", "Score: 6"])
def test_score_outside_1_to_5_is_unscored(
    kind: str, text: str, fake_judges: dict[str, FakeServer], tmp_path: Path
) -> None:
    fake_judges[kind].script(Reply(text=text), when=KEY)
    assert "outside 1-5" in unscored_explanation(run_judge(MODELS[kind], tmp_path))


def test_logprobs_missing_falls_back_to_the_parsed_score(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    """``auto``: a judge that usually sends logprobs omits them once; that score is parsed."""
    openai_server.script(Reply(text="2", logprobs=False), when=KEY)
    log = run_judge(OPENAI, tmp_path, method="auto")
    result = complete(log)
    assert result[TARGET] == ("scored", 2.0)
    assert_others_healthy(result, "openai")
    assert log.samples is not None
    [target] = [s for s in log.samples if s.id == TARGET]
    metadata = target.scores[SCORER].metadata if target.scores else None
    assert metadata and metadata["method"] == "parse"
    assert "no logprobs" in metadata["logprobs_unavailable"]
    assert all(body_asked_logprobs(r) for r in openai_server.requests)


def test_logprobs_missing_with_method_logprobs_is_unscored(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    """``logprobs`` (strict): no silent fallback; the sample is unscored with the reason."""
    openai_server.script(Reply(text="2", logprobs=False), when=KEY)
    explanation = unscored_explanation(run_judge(OPENAI, tmp_path, method="logprobs"))
    assert "no logprobs" in explanation


def body_asked_logprobs(request: Any) -> bool:
    return bool(request.body.get("logprobs")) and int(request.body.get("top_logprobs", 0)) > 0


# -- the samples method: n choices, or top-up calls where n is not supported --------------


def test_samples_method_uses_n_and_skips_junk_choices(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    """One request with ``n=16`` per dialog; a junk choice is left out of the mean (one of 16
    unread moves it by 0.25 at most); two would leave the dialog unscored."""
    openai_server.script(Reply(texts=["4", "3", "no idea", "5"] + ["4"] * 12), when=KEY)
    log = run(empathy(dataset=str(FIXTURE), method="samples", completions=16), OPENAI, tmp_path)
    result = complete(log)
    assert result[TARGET] == ("scored", pytest.approx(4.0))  # mean of 4, 3, 5 and twelve 4s
    assert openai_server.count() == len(IDS)
    assert all(r.body.get("n") == 16 for r in openai_server.requests)
    assert log.samples is not None
    [target] = [s for s in log.samples if s.id == TARGET]
    metadata = target.scores[SCORER].metadata if target.scores else {}
    assert metadata["n_received"] == 16 and metadata["n_parsed"] == 15


def test_samples_method_tops_up_without_n(anthropic_server: FakeServer, tmp_path: Path) -> None:
    """Anthropic has no ``n``: the scorer asks again until it has ``completions`` answers,
    and a transient 500 in between does not add or lose one."""
    anthropic_server.script(Reply(status=500), when=KEY, times=1)
    log = run(empathy(dataset=str(FIXTURE), method="samples", completions=3), ANTHROPIC, tmp_path)
    result = complete(log)
    assert all(outcome == ("scored", 4.0) for outcome in result.values())
    assert log.samples is not None
    for sample in log.samples:
        metadata = sample.scores[SCORER].metadata if sample.scores else {}
        assert metadata["n_received"] == 3
    for sample_id, key in KEYS.items():
        assert anthropic_server.count(key) == (4 if sample_id == TARGET else 3), sample_id


# -- eval-retry: only the missing samples are judged again ----------------------------------


def inspect_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the real ``inspect`` CLI (same interpreter) with the fake servers' environment."""
    command = [sys.executable, "-m", "inspect_ai", *args]
    env = {**os.environ, "INSPECT_DISPLAY": "none", "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.slow
def test_eval_retry_judges_only_the_missing_samples(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    """Run 1 (CLI, judge mode): two dialogs fail for good (503, malformed JSON), one gets a
    junk answer. ``inspect eval-retry`` after the judge recovers judges exactly the two
    errored dialogs again; the unscored one is final and is not re-judged."""
    failing = {"rel-2": Reply(status=503), "rel-5": Reply(body=b"{not json")}
    for sample_id, reply in failing.items():
        openai_server.script(reply, when=KEYS[sample_id])
    openai_server.script(Reply(text="Hard to say."), when=KEYS["rel-6"])
    logs = tmp_path / "logs"
    first = inspect_cli(
        "eval",
        "inspect_empathy/empathy",
        "--model",
        OPENAI,
        "-T",
        f"dataset={FIXTURE}",
        "--max-retries",
        "0",
        "--timeout",
        "60",
        "--max-tokens",
        "16",
        "--no-fail-on-error",
        "--log-dir",
        str(logs),
        cwd=tmp_path,
    )
    assert first.returncode == 0, first.stderr
    [first_info] = list_eval_logs(str(logs))
    result = outcomes(read_eval_log(first_info))
    assert {i for i, (kind, _) in result.items() if kind == "error"} == set(failing)
    assert result["rel-6"][0] == "unscored"
    counts_before = {sample_id: openai_server.count(key) for sample_id, key in KEYS.items()}
    assert counts_before["rel-2"] == 3  # the SDK's own 2 retries; Inspect's max_retries=0
    assert counts_before["rel-5"] == 1  # malformed JSON is not retried
    assert all(counts_before[i] == 1 for i in KEYS if i not in failing)

    openai_server.heal()
    second = inspect_cli(
        "eval-retry", first_info.name, "--max-retries", "0", "--log-dir", str(logs), cwd=tmp_path
    )
    assert second.returncode == 0, second.stderr
    retried = [info for info in list_eval_logs(str(logs)) if info.name != first_info.name]
    assert len(retried) == 1
    final = read_eval_log(retried[0])
    result = complete(final)
    assert {i for i, (kind, _) in result.items() if kind == "scored"} == set(IDS) - {"rel-6"}
    assert result["rel-6"][0] == "unscored"
    counts_after = {sample_id: openai_server.count(key) for sample_id, key in KEYS.items()}
    judged_again = {i: counts_after[i] - counts_before[i] for i in KEYS}
    assert judged_again == {i: (1 if i in failing else 0) for i in KEYS}


# -- response mode: a grader behind the real SDKs -----------------------------------------


def run_response(log_dir: Path, grader: str | Model | list[str], **kwargs: Any) -> EvalLog:
    """Response mode: the offline baseline writes the replies, the fake API grades them."""
    graders = grader if isinstance(grader, list) else [grader]
    options: dict[str, Any] = {**BOUNDS, "fail_on_error": False, **kwargs}
    [log] = eval(
        "inspect_empathy/empathy_response",
        task_args={"dataset": str(FIXTURE)},
        model="empathy_baseline/lexicon",
        model_roles={"grader": graders if len(graders) > 1 else graders[0]},
        log_dir=str(log_dir),
        display="none",
        **options,
    )
    assert log.location
    return read_eval_log(log.location)


def test_response_mode_grader_recovers_and_reports_junk(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    """The grader fails transiently for one dialog and answers junk for another."""
    openai_server.script(Reply(status=500), when=KEY, times=3)
    openai_server.script(Reply(text="Score: eleven"), when=KEYS["rel-1"])
    result = complete(run_response(tmp_path, OPENAI))
    assert result[TARGET] == ("scored", pytest.approx(expected_logprob_score()))
    assert result["rel-1"][0] == "unscored"
    assert openai_server.count(KEY) == 4
    assert openai_server.count(KEYS["rel-1"]) == 1
    assert openai_server.count() == len(IDS) + 3


def test_response_mode_grader_failing_for_good_errors_the_sample(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    """A grader that cannot be reached is an error (so eval-retry can redo the sample),
    never a silently missing score."""
    openai_server.script(Reply(status=503), when=KEY)
    result = outcomes(run_response(tmp_path, OPENAI, max_retries=1))
    assert result[TARGET][0] == "error"
    assert "InternalServerError" in result[TARGET][1]  # the 503, after retries
    assert all(kind == "scored" for i, (kind, _) in result.items() if i != TARGET)
    assert openai_server.count(KEY) == 6  # (1 + 2 SDK retries) x (1 + 1 Inspect retry)


def test_response_mode_panel_survives_one_judge_failing(
    fake_judges: dict[str, FakeServer], tmp_path: Path
) -> None:
    """A panel of an OpenAI and an Anthropic grader: when one refuses, the other's score
    stands and the refusal is recorded under that judge."""
    fake_judges["anthropic"].script(Reply(refusal="I won't rate this."), when=KEY)
    fake_judges["openai"].script(Reply(reset=True), when=KEY, times=1)
    log = run_response(tmp_path, [OPENAI, ANTHROPIC])
    result = complete(log)
    assert result[TARGET] == ("scored", pytest.approx(expected_logprob_score()))
    for sample_id, (_, value) in result.items():
        if sample_id != TARGET:
            assert value == pytest.approx((expected_logprob_score() + 4.0) / 2)
    assert log.samples is not None
    [target] = [s for s in log.samples if s.id == TARGET]
    judges = target.scores[SCORER].metadata["judges"] if target.scores else {}
    [anthropic_judge] = [v for name, v in judges.items() if name.startswith("anthropic/")]
    assert anthropic_judge["value"] is None and "refused" in anthropic_judge["unscored_reason"]
    assert fake_judges["openai"].count(KEY) == 2
    assert fake_judges["anthropic"].count(KEY) == 1
    assert fake_judges["anthropic"].count() == len(IDS)


def test_response_mode_streamed_grader_overloaded_mid_stream(
    fake_judges: dict[str, FakeServer], tmp_path: Path
) -> None:
    """An Anthropic grader with its default max_tokens streams; an ``overloaded_error``
    event mid-stream is retried and the dialog is graded once."""
    anthropic = fake_judges["anthropic"]
    anthropic.script(Reply(stream_error="overloaded_error"), when=KEY, times=1)
    # the scorer bounds output to 8 tokens; a grader given 8192 or more streams
    streaming = get_model(ANTHROPIC, config=GenerateConfig(max_tokens=8192))
    result = complete(run_response(tmp_path, streaming))
    assert all(outcome == ("scored", 4.0) for outcome in result.values())
    assert all(r.body.get("stream") for r in anthropic.requests)  # the streaming path
    assert anthropic.count(KEY) == 2
    assert anthropic.count() == len(IDS) + 1


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_prompt_too_long_is_unscored_with_its_reason_never_parsed(
    kind: str, fake_judges: dict[str, FakeServer], tmp_path: Path
) -> None:
    """A provider's "too long" refusal comes back from Inspect as an output whose text is
    the error message: it holds numbers (and a 4) but is no answer."""
    import json

    if kind == "openai":
        error = {"error": {"message": "This model's maximum context length is 128000 tokens. "
                           "However, your messages resulted in 250312 tokens (4 images).",
                           "type": "invalid_request_error", "param": "messages",
                           "code": "context_length_exceeded"}}  # fmt: skip
    else:
        error = {"type": "error", "error": {"type": "invalid_request_error",
                 "message": "prompt is too long: 250312 tokens > 200000 maximum (4)"}}  # fmt: skip
    fake_judges[kind].script(Reply(status=400, body=json.dumps(error).encode()), when=KEY)
    explanation = unscored_explanation(run_judge(MODELS[kind], tmp_path))
    assert "too long for the judge's context" in explanation and "max_turns" in explanation
