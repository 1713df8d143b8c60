"""The empathy_mean epoch reducer: one epoch's reduction, and the mean over several."""

import math
from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.scorer import Score

from inspect_empathy import empathy
from inspect_empathy.reducer import SAMPLE_ONLY, empathy_mean

DISTRIBUTION = {"1": 0.0, "2": 0.1, "3": 0.2, "4": 0.6, "5": 0.1}


def logprobs_score(value: float, distribution: dict[str, float] | None = None) -> Score:
    return Score(
        value=value,
        answer="4",
        metadata={
            "method": "logprobs",
            "distribution": dict(distribution or DISTRIBUTION),
            "score_token_mass": 0.97,
            "low_mass": False,
            "group": {"emotion": "sad"},
        },
    )


def test_one_epoch_reduction_leaves_the_distribution_to_the_sample_score() -> None:
    score = logprobs_score(3.7)
    reduced = empathy_mean()([score])
    assert reduced.value == 3.7 and reduced.answer == "4"
    kept = {"method": "logprobs", "low_mass": False, "group": {"emotion": "sad"}}
    assert reduced.metadata == kept
    # the sample's own score is not changed
    assert score.metadata is not None and set(SAMPLE_ONLY) <= set(score.metadata)


@pytest.mark.parametrize(
    "score",
    [Score(value=4.0, answer="4"), Score(value=4.0, metadata={"method": "parse"})],
)
def test_one_epoch_without_a_distribution_is_its_own_reduction(score: Score) -> None:
    assert empathy_mean()([score]) is score


def test_one_unscored_epoch_stays_unscored_with_its_reason() -> None:
    unscored = Score.unscored(
        reason="grader_failed",
        explanation="logprobs: unscored: no score token",
        metadata={"method": "logprobs", "distribution": None, "unscored_reason": "no token"},
    )
    reduced = empathy_mean()([unscored])
    assert isinstance(reduced.value, float) and math.isnan(reduced.value)
    assert reduced.metadata == {"method": "logprobs", "unscored_reason": "no token"}
    assert reduced.explanation == unscored.explanation


def test_several_epochs_average_the_distributions_and_list_each_epoch() -> None:
    other = {"1": 0.0, "2": 0.3, "3": 0.2, "4": 0.4, "5": 0.1}
    reduced = empathy_mean()([logprobs_score(3.7), logprobs_score(3.3, other)])
    assert reduced.value == pytest.approx(3.5)
    assert reduced.metadata is not None
    assert reduced.metadata["distribution"] == pytest.approx(
        {"1": 0.0, "2": 0.2, "3": 0.2, "4": 0.5, "5": 0.1}
    )
    assert [e["value"] for e in reduced.metadata["epochs"]] == [3.7, 3.3]


def test_judge_mode_log_reductions_and_sample_scores(tmp_path: Path) -> None:
    [log] = eval(
        empathy(), model="empathy_baseline/lexicon", limit=4, log_dir=str(tmp_path),
        display="none",
    )  # fmt: skip
    assert log.status == "success" and log.samples and log.results
    for sample in log.samples:
        metadata = sample.scores["empathy_scorer"].metadata  # type: ignore[index]
        assert metadata is not None and set(SAMPLE_ONLY) <= set(metadata)
    [reduction] = log.reductions or []
    assert reduction.reducer == "empathy_mean" and len(reduction.samples) == 4
    for reduced in reduction.samples:
        assert reduced.metadata == {"method": "logprobs"}
    # the end-of-task line counts the methods, as whole numbers (not metrics)
    from inspect_empathy._util.summary import summary_lines

    assert "by_logprobs" not in log.results.scores[0].metrics
    [line] = summary_lines(log)
    assert "4 of 4 samples scored (logprobs 4), 4 with human ratings" in line


def test_while_a_run_is_in_progress_one_epoch_is_its_own_reduction() -> None:
    """Inspect reduces every sample again at each live recomputation, keeping only the
    figures: live, one epoch's reduction is its score as it is (no copy); the final one
    still leaves the distribution to the sample's score."""
    from inspect_empathy._util import summary as _summary

    score = logprobs_score(3.8)
    run = "test-live-reducer"
    _summary._done[run] = _summary.SamplesDone(all={"d1"})
    token = _summary._live_run.set(run)
    try:
        live = empathy_mean()([score])
        several = empathy_mean()([score, logprobs_score(4.2)])
    finally:
        _summary._live_run.reset(token)
        _summary._done.pop(run)
    assert live is score
    assert several.value == pytest.approx(4.0)  # several epochs: reduced as ever
    final = empathy_mean()([score])
    assert final is not score and not set(SAMPLE_ONLY) & set(final.metadata or {})
