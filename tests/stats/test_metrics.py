"""Metrics against scipy and scikit-learn on known vectors."""

import math

import numpy as np
import pytest
from inspect_ai.scorer import SampleScore, Score
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from inspect_empathy.stats._agreement import (
    agreement,
    krippendorff_alpha,
    quadratic_weighted_kappa,
    round_score,
)
from inspect_empathy.stats.metrics import human_agreement, level_shares

JUDGE = [4.2, 3.1, 1.0, 2.6, 5.0, 3.5, 1.9, 4.5]
HUMAN = [5.0, 3.0, 1.0, 2.0, 4.0, 4.0, 2.0, 4.0]


def test_agreement_matches_scipy() -> None:
    result = agreement(JUDGE, HUMAN)
    assert result["spearman"] == pytest.approx(stats.spearmanr(JUDGE, HUMAN).statistic)
    assert result["kendall"] == pytest.approx(stats.kendalltau(JUDGE, HUMAN).statistic)
    assert result["pearson"] == pytest.approx(stats.pearsonr(JUDGE, HUMAN).statistic)
    errors = np.subtract(JUDGE, HUMAN)
    assert result["mae"] == pytest.approx(np.mean(np.abs(errors)))
    assert result["rmse"] == pytest.approx(math.sqrt(np.mean(errors**2)))
    assert result["n_human"] == len(JUDGE)


def test_rounding_is_half_up_and_agreement_on_rounded_scores() -> None:
    assert list(round_score([4.5, 2.5, 1.49, 0.2, 5.7])) == [5, 3, 1, 1, 5]
    result = agreement(JUDGE, HUMAN)
    # rounded judge: 4 3 1 3 5 4 2 5 vs human 5 3 1 2 4 4 2 4
    assert result["exact"] == pytest.approx(4 / 8)
    assert result["within_one"] == pytest.approx(1.0)


def test_qwk_matches_sklearn() -> None:
    a, b = round_score(JUDGE), round_score(HUMAN)
    expected = cohen_kappa_score(a, b, weights="quadratic", labels=[1, 2, 3, 4, 5])
    assert quadratic_weighted_kappa(a, b) == pytest.approx(expected)
    assert agreement(JUDGE, HUMAN)["qwk"] == pytest.approx(expected)


def test_qwk_hand_computed() -> None:
    # perfect agreement is 1; a constant rater against a varied one is undefined (as
    # Spearman is), not 0
    assert quadratic_weighted_kappa([1, 2, 3, 4, 5], [1, 2, 3, 4, 5]) == pytest.approx(1.0)
    assert math.isnan(quadratic_weighted_kappa([3, 3, 3, 3], [1, 2, 4, 5]))


def test_undefined_correlations_are_left_out_not_nan() -> None:
    result = agreement([3.0, 3.0, 3.0], [1.0, 4.0, 5.0])
    assert "spearman" not in result and "pearson" not in result
    assert all(math.isfinite(v) for v in result.values())
    assert agreement([], []) == {"n_human": 0.0}


def scores(values: list[float], humans: list[float | None]) -> list[SampleScore]:
    return [
        SampleScore(score=Score(value=v), sample_id=i, sample_metadata={"human_rating": h})
        for i, (v, h) in enumerate(zip(values, humans, strict=True))
    ]


def test_human_agreement_uses_only_samples_with_ratings() -> None:
    humans: list[float | None] = [*HUMAN, None, None]
    result = human_agreement()(scores([*JUDGE, 1.0, 5.0], humans))
    expected = agreement(JUDGE, HUMAN)
    del expected["n_human"]  # a count: the end-of-task line says it, not a metric
    assert result == pytest.approx(expected)


def test_human_agreement_reports_nothing_without_ratings() -> None:
    assert human_agreement()(scores([1.0, 2.0], [None, None])) == {}


def test_level_shares() -> None:
    result = level_shares()(scores([1.0, 4.4, 4.6, 3.9], [None] * 4))
    assert result == pytest.approx(
        {
            "share_1": 0.25,
            "share_2": 0,
            "share_3": 0,
            "share_4": 0.5,
            "share_5": 0.25,
            "share_ge_4": 0.75,  # rounded: 1, 4, 5, 4
        }
    )


def test_krippendorff_alpha_ordinal() -> None:
    import krippendorff

    a = [1, 2, 3, 4, 5, 3, None]
    b = [1, 2, 4, 4, 5, 2, 3]
    expected = krippendorff.alpha(
        reliability_data=np.array([a, b], dtype=float),
        level_of_measurement="ordinal",
        value_domain=[1, 2, 3, 4, 5],
    )
    assert krippendorff_alpha([a, b]) == pytest.approx(expected)
    assert krippendorff_alpha([[1.2, 4.6], [0.9, 5.0]]) == pytest.approx(1.0)  # rounded first
    assert krippendorff_alpha([a]) is None
    assert krippendorff_alpha([[3, 3], [3, 3]]) is None


def test_spearman_is_always_reported_for_the_headline() -> None:
    nothing = human_agreement()([])
    assert list(nothing) == ["spearman"] and math.isnan(nothing["spearman"])  # type: ignore[index,call-overload]
    flat = human_agreement()(scores([3.0, 3.0], [1.0, 5.0]))
    assert math.isnan(flat["spearman"])  # type: ignore[index,call-overload]
    assert human_agreement()(scores([3.0], [None])) == {}
