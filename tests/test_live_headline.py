"""The live headline (Inspect's progress line) is over the dialogs done so far: dialogs not
yet run are not counted as skipped (the headline read -1.00 for a whole run before)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from inspect_ai import eval, task_with
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from inspect_empathy import _summary, empathy
from inspect_empathy._samples import RUN_RATED_KEY, RUN_SAMPLES_KEY
from inspect_empathy.dialogs import HUMAN_KEY
from inspect_empathy.metrics import coverage_agreement, somers_d_all

N = 12


def _score(i: int, value: float, human: float) -> SampleScore:
    return SampleScore(
        score=Score(value=value),
        sample_id=f"d{i}",
        sample_metadata={HUMAN_KEY: human, RUN_SAMPLES_KEY: 40, RUN_RATED_KEY: 40},
    )


def test_in_a_run_the_headline_counts_only_dialogs_done() -> None:
    # 10 of 40 dialogs done, 8 scored in the humans' order, 2 left unscored
    scores = [_score(i, float(1 + i % 5), float(1 + i % 5)) for i in range(8)]
    run = "test-live-run"
    _summary._done[run] = _summary.SamplesDone(
        all={f"d{i}" for i in range(10)}, rated={f"d{i}" for i in range(10)}
    )
    token = _summary._live_run.set(run)
    try:
        live = coverage_agreement()(scores)
    finally:
        _summary._live_run.reset(token)
        _summary._done.pop(run)
    judge = [float(1 + i % 5) for i in range(8)]
    assert live["somers_d_all"] == pytest.approx(somers_d_all(judge, judge, 2))
    assert live["coverage"] == pytest.approx(8 / 10)
    # the same scores read from a finished log: the 32 dialogs without a score count
    final = coverage_agreement()(scores)
    assert final["somers_d_all"] == pytest.approx(somers_d_all(judge, judge, 32))
    assert final["somers_d_all"] < 0 < live["somers_d_all"]


SEEN: list[int | None] = []


@metric
def _probe_metric():
    def compute(scores: list[SampleScore]) -> float:
        done = _summary.samples_done()
        SEEN.append(None if done is None else len(done.all))
        return 0.0

    return compute


@scorer(metrics=[_probe_metric()])
def _probe() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=1.0)

    return score


def test_inspect_computes_the_live_metrics_inside_the_run(tmp_path: Path) -> None:
    rows = [
        {
            "id": f"d{i:02d}",
            "rating": 1 + i % 5,
            "turns": [
                {"role": "user", "content": "Something happened to me today."},
                {"role": "assistant", "content": "I hear you. Tell me more about it."},
            ],
        }
        for i in range(N)
    ]
    dataset = tmp_path / "d.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    def answer(messages, tools, tool_choice, config) -> ModelOutput:
        # Inspect recomputes the live metrics at most every 0.9 s (update_metrics_display_fn):
        # 12 samples of 0.25 s each leave room for computations mid-run, in any process
        time.sleep(0.25)
        output = ModelOutput.from_content("mockllm/model", "4")
        output.usage = ModelUsage(input_tokens=400, output_tokens=1, total_tokens=401)
        return output

    base = empathy(dataset=str(dataset), method="parse")
    probed = task_with(base, scorer=[*base.scorer, _probe()])
    SEEN.clear()
    [log] = eval(
        probed,
        model=get_model("mockllm/model", custom_outputs=answer),
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_samples=1,
    )
    assert log.status == "success"
    live = [n for n in SEEN[:-1] if n is not None]
    assert live, f"no live computation saw the run's samples: {SEEN}"
    assert min(live) < N  # computed mid-run, over the samples ended so far
    # the final results are computed over every sample (an eval-retry's reused ones too,
    # which no sample hook sees): from the run's counts, not the live ones
    assert SEEN[-1] is None
    assert log.eval.eval_id not in _summary._done  # forgotten when the task ends


def test_an_eval_retry_counts_the_reused_unscored_dialogs(tmp_path: Path) -> None:
    """Samples an eval-retry reuses from the first log end without any sample hook: the
    final headline still counts the reused unscored ones (it is computed from the run's
    counts, as when the log is read again)."""
    from inspect_ai import eval_retry

    rows = [
        {
            "id": f"d{i:02d}",
            "rating": 1 + i % 5,
            "turns": [
                {"role": "user", "content": f"Something happened to me today (case {i})."},
                {"role": "assistant", "content": "I hear you. Tell me more about it."},
            ],
        }
        for i in range(N)
    ]
    dataset = tmp_path / "d.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    def answer(messages, tools, tool_choice, config) -> ModelOutput:
        case = int(messages[-1].text.split("(case ")[1].split(")")[0])
        if case % 4 == 3:
            raise RuntimeError("service unavailable")  # errored: the retry runs it again
        text = "I would rather not say." if case % 4 == 2 else str(1 + case % 5)
        output = ModelOutput.from_content("mockllm/model", text)
        output.usage = ModelUsage(input_tokens=400, output_tokens=1, total_tokens=401)
        return output

    [first] = eval(
        empathy(dataset=str(dataset), method="parse"),
        model=get_model("mockllm/model", custom_outputs=answer),
        log_dir=str(tmp_path / "logs"),
        display="none",
        fail_on_error=False,
        retry_on_error=0,
    )
    assert first.status == "error" or any(s.error for s in first.samples or [])
    [retried] = eval_retry(first, log_dir=str(tmp_path / "logs"), display="none")
    scores = [
        (float(s.scores["empathy_scorer"].value), float(s.metadata[HUMAN_KEY]))  # type: ignore[index]
        for s in retried.samples or []
        if s.scores and s.scores["empathy_scorer"].value == s.scores["empathy_scorer"].value
    ]
    judge, human = [j for j, _ in scores], [h for _, h in scores]
    expected = somers_d_all(judge, human, N - len(scores))
    assert retried.results is not None
    shown = retried.results.scores[0].metrics["somers_d_all"].value
    assert shown == pytest.approx(expected)


def test_in_a_run_only_the_headline_is_recomputed() -> None:
    """Inspect recomputes every metric over all scores so far while a task runs: the costly
    ones (agreement statistics, level shares, counts) wait for the final results, where
    they are computed over every score."""
    from inspect_empathy.metrics import human_agreement, level_shares, scoring_counts

    scores = [_score(i, float(1 + i % 5), float(1 + (i * 3) % 5)) for i in range(8)]
    run = "test-live-only-headline"
    _summary._done[run] = _summary.SamplesDone(
        all={f"d{i}" for i in range(8)}, rated={f"d{i}" for i in range(8)}
    )
    token = _summary._live_run.set(run)
    try:
        live = [m(scores) for m in (human_agreement(), level_shares(), scoring_counts())]
        headline = coverage_agreement()(scores)
    finally:
        _summary._live_run.reset(token)
        _summary._done.pop(run)
    assert live == [{}, {}, {}]
    assert "somers_d_all" in headline
    final = [m(scores) for m in (human_agreement(), level_shares(), scoring_counts())]
    assert "spearman" in final[0] and "share_ge_4" in final[1] and final[2]["scored"] == 8
