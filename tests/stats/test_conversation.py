"""Metrics per conversation of per-turn samples (`stats.conversation`)."""

from __future__ import annotations

import pytest
from inspect_ai.scorer import SampleScore, Score
from scipy import stats

from inspect_empathy.dataset.per_turn import CONVERSATION_KEY, CONVERSATION_RATING_KEY
from inspect_empathy.stats.conversation import conversation_metrics


def sample_score(value: float, conversation: str, rating: float | None = None) -> SampleScore:
    metadata = {CONVERSATION_KEY: conversation}
    if rating is not None:
        metadata[CONVERSATION_RATING_KEY] = rating
    return SampleScore(score=Score(value=value), sample_id=conversation, sample_metadata=metadata)


def test_conversation_metrics_against_a_hand_computation() -> None:
    scores = [
        sample_score(4.0, "a", 5.0), sample_score(2.0, "a", 5.0),
        sample_score(5.0, "b", 4.0), sample_score(5.0, "b", 4.0), sample_score(3.0, "b", 4.0),
        sample_score(1.0, "c", 1.0),
        sample_score(float("nan"), "c", 1.0),  # unscored turns are not read
    ]  # fmt: skip
    result = conversation_metrics()(scores)
    assert isinstance(result, dict)
    assert "conversations" not in result  # a count: the end-of-task line says it
    assert result["conv_mean"] == pytest.approx((3.0 + 13 / 3 + 1.0) / 3)
    assert result["conv_min"] == pytest.approx((2.0 + 3.0 + 1.0) / 3)
    assert result["conv_share_ge_4"] == pytest.approx((0.5 + 2 / 3 + 0.0) / 3)
    expected = stats.spearmanr([3.0, 13 / 3, 1.0], [5.0, 4.0, 1.0]).statistic
    assert result["conv_spearman"] == pytest.approx(expected)
    assert conversation_metrics()([SampleScore(score=Score(value=3.0), sample_id="x")]) == {}


def test_conv_share_ge_4_counts_scores_rounded_as_share_ge_4() -> None:
    # 3.6 rounds to 4 (share_ge_4 counts it): so does conv_share_ge_4; 3.4 does not
    scores = [sample_score(3.6, "a"), sample_score(3.4, "a"), sample_score(4.5, "b")]
    result = conversation_metrics()(scores)
    assert isinstance(result, dict)
    assert result["conv_share_ge_4"] == pytest.approx((0.5 + 1.0) / 2)
