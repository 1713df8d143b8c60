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

from inspect_empathy import empathy
from inspect_empathy._util import summary as _summary
from inspect_empathy.dataset._samples import RUN_RATED_KEY, RUN_SAMPLES_KEY
from inspect_empathy.dialogs import HUMAN_KEY
from inspect_empathy.stats.metrics import coverage_agreement, somers_d_all

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
    from inspect_empathy.stats.metrics import human_agreement, level_shares, scoring_counts

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


# The live headline's budget (`metrics._live_headline`): tests put their own clock, and
# each recomputation of the headline takes COST of it.

COST = 1.0


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> tuple[_Clock, list[int]]:
    """A clock of the test's own, and the headline's recomputations (their score counts)."""
    from inspect_empathy.stats import metrics

    fake = _Clock()
    computed: list[int] = []
    original = metrics._headline

    def timed(scores, done):
        computed.append(len(scores))
        fake.now += COST
        return original(scores, done)

    monkeypatch.setattr(metrics, "_clock", fake)
    monkeypatch.setattr(metrics, "_headline", timed)
    monkeypatch.setattr(metrics, "LIVE_HEADLINE_RATIO", 50.0)
    return fake, computed


def _scores(n: int, shift: int = 0) -> list[SampleScore]:
    return [_score(i, float(1 + (i * 7 + shift) % 5), float(1 + i % 5)) for i in range(n)]


def _live(run: str, scores: list[SampleScore], done: int) -> dict[str, float]:
    """The headline of ``scores`` in live run ``run`` with ``done`` dialogs ended."""
    entry = _summary._done.setdefault(run, _summary.SamplesDone())
    entry.all.update(f"d{i}" for i in range(done))
    entry.rated.update(f"d{i}" for i in range(done))
    token = _summary._live_run.set(run)
    try:
        return coverage_agreement()(scores)  # type: ignore[return-value]
    finally:
        _summary._live_run.reset(token)


def _exact(scores: list[SampleScore], done: int) -> float:
    judge = [float(s.score.value) for s in scores]  # type: ignore[arg-type]
    human = [float(s.sample_metadata[HUMAN_KEY]) for s in scores]  # type: ignore[index]
    return somers_d_all(judge, human, done - len(scores))


def test_the_live_headline_is_reused_until_its_budget_allows(clock) -> None:
    fake, computed = clock
    run = "test-live-budget"
    try:
        first = _live(run, _scores(8), done=10)
        assert computed == [8]
        assert first["somers_d_all"] == pytest.approx(_exact(_scores(8), 10))
        # 49 s later: less than 50 x the 1 s the recomputation took, so the last headline
        # again, its coverage up to date (12 scored of 16 ended)
        fake.now += 49.0
        reused = _live(run, _scores(12), done=16)
        assert computed == [8]
        assert reused["somers_d_all"] == first["somers_d_all"]
        assert reused["coverage"] == pytest.approx(12 / 16)
        assert _exact(_scores(12), 16) != pytest.approx(first["somers_d_all"])
        # 50 s after the recomputation ended: recomputed, over the dialogs done now
        fake.now += 1.0
        fresh = _live(run, _scores(12), done=16)
        assert computed == [8, 12]
        assert fresh["somers_d_all"] == pytest.approx(_exact(_scores(12), 16))
        assert fresh["coverage"] == pytest.approx(12 / 16)
    finally:
        _summary._done.pop(run, None)


def test_the_final_headline_is_over_every_score_whatever_the_live_one(clock) -> None:
    fake, computed = clock
    run = "test-live-then-final"
    try:
        _live(run, _scores(8), done=10)
        final = coverage_agreement()(_scores(12))  # outside the run: its final results
    finally:
        _summary._done.pop(run, None)
    assert computed == [8, 12]  # no budget for the final results
    # every dialog of the run counts: the 28 without a score too
    assert final == {"somers_d_all": _exact(_scores(12), 40), "coverage": 12 / 40}


def test_two_live_runs_keep_their_own_headline(clock) -> None:
    fake, computed = clock
    # the same first scores (one fingerprint), then different ones
    a = _scores(12)
    b = _scores(4) + _scores(12, shift=2)[4:]
    try:
        in_a = _live("test-live-run-a", a, done=12)
        in_b = _live("test-live-run-b", b, done=12)  # at once: within a's budget
    finally:
        _summary._done.pop("test-live-run-a", None)
        _summary._done.pop("test-live-run-b", None)
    assert computed == [12, 12]
    assert in_a["somers_d_all"] == pytest.approx(_exact(a, 12))
    assert in_b["somers_d_all"] == pytest.approx(_exact(b, 12))
    assert in_a["somers_d_all"] != pytest.approx(in_b["somers_d_all"])


def test_two_scorers_of_one_run_keep_their_own_headline(clock) -> None:
    fake, computed = clock
    run = "test-live-two-scorers"
    one, other = _scores(12), _scores(12, shift=2)
    try:
        first = _live(run, one, done=12)
        second = _live(run, other, done=12)
    finally:
        _summary._done.pop(run, None)
    assert computed == [12, 12]
    assert first["somers_d_all"] == pytest.approx(_exact(one, 12))
    assert second["somers_d_all"] == pytest.approx(_exact(other, 12))


def test_the_live_headline_is_released_when_its_task_or_run_ends(clock) -> None:
    """The last live headline is kept with the run's samples done (`SamplesDone.live`): gone
    with them when the task ends, or when its run ends for a task that never reached its
    end (it raised)."""
    import asyncio
    import gc
    import weakref
    from types import SimpleNamespace

    from inspect_empathy._util.summary import ScoringSummary

    hooks = ScoringSummary()
    ended = SimpleNamespace(run_id="test-run", eval_id="test-task-raised")
    asyncio.run(hooks.on_task_start(ended))  # type: ignore[arg-type]
    _live(ended.eval_id, _scores(8), done=8)
    kept = weakref.ref(_summary._done[ended.eval_id])
    assert _summary._done[ended.eval_id].live  # the last live headline
    # no task end: the task raised; its run ends (with the exception)
    asyncio.run(hooks.on_run_end(SimpleNamespace(run_id="test-run")))  # type: ignore[arg-type]
    gc.collect()
    assert ended.eval_id not in _summary._done
    assert kept() is None


def test_a_task_that_raises_before_its_end_is_forgotten(tmp_path: Path) -> None:
    """Inspect calls the task-end hook only for a task that finished: one whose final
    results raised leaves its samples done behind until its run ends."""
    rows = [
        {
            "id": f"d{i:02d}",
            "rating": 1 + i % 5,
            "turns": [
                {"role": "user", "content": "Something happened to me today."},
                {"role": "assistant", "content": "I hear you. Tell me more about it."},
            ],
        }
        for i in range(4)
    ]
    dataset = tmp_path / "d.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    @metric
    def _raises_at_the_end():
        def compute(scores: list[SampleScore]) -> float:
            if _summary.samples_done() is None:
                raise RuntimeError("final results failed")
            return 0.0

        return compute

    @scorer(metrics=[_raises_at_the_end()])
    def _failing() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=1.0)

        return score

    base = empathy(dataset=str(dataset), method="parse")
    before = set(_summary._done)
    failing = task_with(base, scorer=[*base.scorer, _failing()])
    logs = eval(
        failing,
        model=get_model(
            "mockllm/model", custom_outputs=lambda *a: ModelOutput.from_content("m", "4")
        ),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert logs[0].status == "error"
    assert logs[0].eval.eval_id not in _summary._done
    assert set(_summary._done) <= before


def test_in_a_run_the_metrics_over_every_score_wait_for_the_final_results() -> None:
    """Per-judge, per-group, per-epoch figures and the human ceiling: nothing live."""
    from inspect_empathy.dataset.per_turn import CONVERSATION_KEY, CONVERSATION_TURNS_KEY
    from inspect_empathy.stats.alt_metric import alt_test_metric
    from inspect_empathy.stats.consistency import self_consistency
    from inspect_empathy.stats.conversation import conversation_metrics
    from inspect_empathy.stats.metrics import (
        EPOCHS_KEY,
        GROUP_KEY,
        group_metrics,
        human_ceiling,
        judge_agreement,
        judge_means,
    )

    scores = [
        SampleScore(
            score=Score(
                value=float(1 + i % 5),
                metadata={
                    "method": "panel",
                    "judges": {"a": {"value": 1 + i % 5}, "b": {"value": 1 + (i * 2) % 5}},
                    GROUP_KEY: {"topic": "x" if i % 2 else "y"},
                    EPOCHS_KEY: [{"value": 1 + i % 5}, {"value": 1 + (i * 3) % 5}],
                },
            ),
            sample_id=f"d{i}",
            sample_metadata={
                HUMAN_KEY: float(1 + i % 5),
                CONVERSATION_KEY: f"c{i // 2}",
                CONVERSATION_TURNS_KEY: 2,
            },
        )
        for i in range(10)
    ]
    made = [
        judge_agreement(),
        judge_means(),
        group_metrics(),
        self_consistency(),
        human_ceiling(),
        alt_test_metric(),
        conversation_metrics(),
    ]
    run = "test-live-none-over-every-score"
    _summary._done[run] = _summary.SamplesDone(all={f"d{i}" for i in range(10)})
    token = _summary._live_run.set(run)
    try:
        live = [m(scores) for m in made]
    finally:
        _summary._live_run.reset(token)
        _summary._done.pop(run)
    assert live == [{}] * len(made)
    final = [m(scores) for m in made]
    assert all(final[:4])  # alpha, judge means, group figures, self-consistency
    assert "conv_mean" in final[-1]  # the per-conversation figures
