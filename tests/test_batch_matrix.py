"""``--batch`` through Inspect's own batchers (OpenAI Batch API, Anthropic Message Batches)
against the fakes of tests/fake_batches.py.

The first tests are the provider matrix with ``batch=...``: every dialog scored with the
expected value and method, none errored. The others document what Inspect 0.3.285 itself
does when an OpenAI batch ends badly (docs/reliability.md, ``## --batch``): they assert
Inspect's behaviour as observed, so that a change in Inspect is noticed here; the docs'
table then needs the same change.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from fake_batches import (  # noqa: F401
    BatchFault,
    BatchServer,
    _batch_servers,
    anthropic_batch_server_fixture,
    openai_batch_server_fixture,
)
from fake_servers import FakeServer, expected_logprob_score
from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import BatchConfig, GenerateConfig, Model, get_model
from matrix_dialogs import SCORES, dialogs, outcomes

from inspect_empathy.tasks import empathy

BATCH = BatchConfig(size=len(SCORES), send_delay=0.3, tick=0.02)
"""One batch for the three dialogs (sent once all three are queued, or after 0.3 s), polled
every 0.02 s (Inspect's defaults: 100 requests, 15 s, 15 s)."""

OPENAI = "openai/gpt-4o-mini"
ANTHROPIC = "anthropic/claude-sonnet-4-6"


def batch_model(name: str, server: BatchServer, **config: Any) -> Model:
    """The provider pointed at the fake (a fresh instance: its batcher is this test's)."""
    return get_model(name, base_url=server.url, config=GenerateConfig(**config), memoize=False)


def run(model: Model, tmp_path: Path, **eval_args: Any) -> EvalLog:
    settings: dict[str, Any] = {"max_retries": 0, "batch": BATCH, **eval_args}
    [log] = eval(
        empathy(dataset=str(dialogs(tmp_path / "d.jsonl"))),
        model=model,
        log_dir=str(tmp_path / "logs"),
        display="none",
        fail_on_error=False,
        reasoning_summary="none",
        **settings,
    )
    return log


def errors(log: EvalLog) -> dict[str, str]:
    """Per sample: its error message ('' when it did not error)."""
    assert log.samples is not None
    return {str(s.id): s.error.message if s.error else "" for s in log.samples}


# -- the matrix with --batch ----------------------------------------------------------------


def test_openai_judge_mode_in_one_batch(openai_batch_server: BatchServer, tmp_path: Path) -> None:
    log = run(batch_model(OPENAI, openai_batch_server), tmp_path)
    found = outcomes(log)
    for k in SCORES:
        value, method, metadata = found[f"d{k}"]
        assert method == "logprobs", metadata
        assert value == pytest.approx(expected_logprob_score(k), abs=1e-6), metadata
    assert openai_batch_server.count("POST /v1/batches") == 1
    bodies = openai_batch_server.batched()
    assert len(bodies) == len(SCORES)
    for line in bodies:
        assert line["url"] == "/v1/chat/completions" and line["method"] == "POST"
        assert line["body"]["logprobs"] is True and line["body"]["top_logprobs"] >= 5


def test_anthropic_judge_mode_in_one_batch(
    anthropic_batch_server: BatchServer, tmp_path: Path
) -> None:
    log = run(batch_model(ANTHROPIC, anthropic_batch_server), tmp_path)
    found = outcomes(log)
    assert {k: (v[0], v[1]) for k, v in found.items()} == {
        f"d{k}": (float(k), "parse") for k in SCORES
    }
    assert anthropic_batch_server.count("POST /v1/messages/batches") == 1
    assert anthropic_batch_server.count("GET /v1/messages/batches/msgbatch_") >= 2
    assert len(anthropic_batch_server.batched()) == len(SCORES)


def test_response_mode_grader_batches_with_its_own_config(
    openai_batch_server: BatchServer, openai_server: FakeServer, tmp_path: Path
) -> None:
    """A grader bound with ``model_roles`` batches when its own config says so
    (``--model-role 'grader={model: ..., batch: true}'``); the eval's ``--batch`` is not
    passed on to a role model (Inspect hands roles only connections, retries, timeout,
    cache), so a grader without its own ``batch`` calls the API directly."""
    data = str(dialogs(tmp_path / "d.jsonl", (4,)))

    def response_run(grader: Model, logs: str) -> EvalLog:
        [log] = eval(
            "inspect_empathy/empathy_response", task_args={"dataset": data},
            model="empathy_baseline/lexicon", model_roles={"grader": grader},
            batch=BATCH, log_dir=str(tmp_path / logs), display="none", max_retries=0,
        )  # fmt: skip
        return log

    log = response_run(batch_model(OPENAI, openai_batch_server, batch=BATCH), "batched")
    value, method, _ = outcomes(log)["d4"]
    assert (value, method) == (pytest.approx(expected_logprob_score(4)), "logprobs")
    assert len(openai_batch_server.batched()) == 1 and openai_server.count() == 0

    direct = get_model(OPENAI, base_url=openai_server.url, memoize=False)
    value, method, _ = outcomes(response_run(direct, "direct"))["d4"]
    assert method == "logprobs" and openai_server.count() == 1
    assert len(openai_batch_server.batched()) == 1  # no second batch


# -- what Inspect 0.3.285 does when an OpenAI batch ends badly ------------------------------
# Each asserts Inspect's own behaviour (not the plugin's), as docs/reliability.md describes it.


def first_errors(log: EvalLog) -> dict[str, str]:
    """Per sample, the error of its first try (``--retry-on-error`` keeps it in
    ``error_retries``); every sample must have been scored on its retry."""
    assert log.samples is not None
    found = {}
    for s in log.samples:
        assert s.error is None and s.error_retries, (s.id, s.error)
        found[str(s.id)] = s.error_retries[0].message
    outcomes(log)
    return found


@pytest.mark.parametrize("status", ["expired", "cancelled"])
def test_expired_or_cancelled_batch_errors_every_sample(
    status: str, openai_batch_server: BatchServer, tmp_path: Path, quick_backoff: None
) -> None:
    """Two of three requests ran (their answers are in the output file, and are charged);
    one did not (``batch_expired`` / ``batch_cancelled`` in the error file). Inspect builds
    an HTTP error whose status is that code (a string), fails on it, and errors all three;
    ``--max-retries`` does not retry it (each sample's first try errored);
    ``--retry-on-error`` asks all three again in a new batch (two answers bought twice)."""
    server = openai_batch_server
    server.script(BatchFault(status, unfinished="[judge-says:5]"))  # type: ignore[arg-type]
    log = run(batch_model(OPENAI, server), tmp_path, max_retries=2, retry_on_error=1)
    found = first_errors(log)
    for message in found.values():
        assert "'>=' not supported between instances of 'str' and 'int'" in message, found
    first = next(iter(server.batches.values()))
    assert (first.completed, first.failed) == (2, 1)  # d2, d4 answered; both files read
    assert server.count("GET /v1/files/file-") >= 3
    assert server.judge.count() == 2 + 3


def test_one_request_error_in_the_error_file_errors_every_sample(
    openai_batch_server: BatchServer, tmp_path: Path
) -> None:
    """One request answered 400 (a line in the error file): Inspect reads its error body as
    a ChatCompletion, the validation error fails the whole batch's results, and the error
    message cuts the API's own words short."""
    server = openai_batch_server
    server.script(BatchFault(request_error="[judge-says:5]"))
    found = errors(run(batch_model(OPENAI, server), tmp_path))
    for message in found.values():
        assert "validation errors for ChatCompletion" in message, found
        assert "fake invalid request" not in message  # pydantic's repr cuts the API's words
    assert server.judge.count() == 2


def test_rejected_batch_loses_the_providers_reason(
    openai_batch_server: BatchServer, tmp_path: Path
) -> None:
    """``status: failed`` with one error for the batch (``token_limit_exceeded``): every
    sample errors with Inspect's generic message; the provider's code and words are gone."""
    server = openai_batch_server
    server.script(BatchFault("failed"))
    found = errors(run(batch_model(OPENAI, server), tmp_path))
    for message in found.values():
        assert message == (
            "RuntimeError('Batch rejected: error information could not be determined')"
        )
        assert "token_limit_exceeded" not in message and "Enqueued" not in message
    assert server.judge.count() == 0


def test_completed_batch_missing_a_line_waits_until_the_attempt_timeout(
    openai_batch_server: BatchServer, tmp_path: Path
) -> None:
    """Inspect resolves the two requests it has lines for, logs the mismatch and forgets the
    batch: nothing polls or resolves the third again. Only ``attempt_timeout`` ends its
    wait (``--timeout`` does not: it is checked between attempts); without it, the eval
    never ends (tried by hand: still waiting after 25 s, nothing sent after the download)."""
    server = openai_batch_server
    server.script(BatchFault(missing="[judge-says:5]"))
    started = time.monotonic()
    log = run(batch_model(OPENAI, server), tmp_path, attempt_timeout=2, timeout=1)
    assert time.monotonic() - started >= 2
    found = errors(log)
    assert not found["d2"] and not found["d4"]
    assert "AttemptTimeoutError" in found["d5"], found
    downloaded = max(i for i, c in enumerate(server.calls) if c.startswith("GET /v1/files/"))
    assert downloaded == len(server.calls) - 1, server.calls  # nothing asked after it


def test_missing_line_is_asked_again_with_attempt_timeout_and_retries(
    openai_batch_server: BatchServer, tmp_path: Path, quick_backoff: None
) -> None:
    """The remedy: ``--attempt-timeout`` with ``--max-retries``: the timed-out request goes
    into a new batch and is scored. Behaviour only: however long a batch takes on a loaded
    machine (a whole batch that outlives the timeout is sent again too), the dialog whose
    line was missing is asked again in a later batch and every dialog is scored."""
    server = openai_batch_server
    server.script(BatchFault(missing="[judge-says:5]"))
    found = outcomes(run(batch_model(OPENAI, server), tmp_path, attempt_timeout=2,
                         max_retries=5))  # fmt: skip
    for k in SCORES:
        assert found[f"d{k}"][0] == pytest.approx(expected_logprob_score(k), abs=1e-6)
    first, *later = server.batches.values()
    assert len(first.requests) == len(SCORES)
    asked_again = [json.dumps(r) for b in later for r in b.requests]
    assert any("[judge-says:5]" in r for r in asked_again), asked_again


def test_time_limit_ends_the_wait_but_leaves_the_sample_unscored(
    openai_batch_server: BatchServer, tmp_path: Path
) -> None:
    """``--time-limit`` also ends the wait, but Inspect then runs the scorer on a sample
    without output, and the plugin's scorer records it as *unscored* (final: ``eval-retry``
    does not ask again), not as errored. This asserts the plugin's behaviour as observed
    (scorer.py); docs/reliability.md advises ``--attempt-timeout`` instead."""
    server = openai_batch_server
    server.script(BatchFault(missing="[judge-says:5]"))
    log = run(batch_model(OPENAI, server), tmp_path, time_limit=2)
    assert log.samples is not None
    [d5] = [s for s in log.samples if s.id == "d5"]
    assert d5.error is None and d5.limit is not None and d5.limit.type == "time"
    score = d5.scores["empathy_scorer"]  # type: ignore[index]
    assert (
        score.metadata and score.metadata["unscored_reason"] == "the judge returned no completion"
    )
