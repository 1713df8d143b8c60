"""Units of the ceiling in the comparison: reading raters' ratings from a sample, the
vectorised QWK behind the bootstrap, and the bounded resamples of a large ceiling."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from inspect_ai.log import EvalSampleSummary

from inspect_empathy.compare import ceiling
from inspect_empathy.compare.logs import rater_ratings
from inspect_empathy.stats import humans
from inspect_empathy.stats._agreement import quadratic_weighted_kappa


def summary(metadata: dict) -> EvalSampleSummary:
    return EvalSampleSummary(id="d7", epoch=1, input="hi", target="", metadata=metadata)


def test_rater_ratings_map_the_scale_onto_1_to_5() -> None:
    sample = summary({"human_ratings": {"a": 0, "b": 4, "c": None}, "human_rating_scale": [0, 4]})
    assert rater_ratings(sample) == {"a": 1.0, "b": 5.0}
    assert rater_ratings(summary({"human_rating": 3.0})) is None


def test_rater_ratings_name_the_sample_and_rater() -> None:
    bad = summary({"human_ratings": {"a": 9}, "human_rating_scale": [0, 4]})
    with pytest.raises(ValueError, match=r"sample d7: human_ratings rater 'a': 9: .*outside"):
        rater_ratings(bad)
    with pytest.raises(ValueError, match="sample d7: human_ratings without a human_rating_scale"):
        rater_ratings(summary({"human_ratings": {"a": 2}}))


def test_qwk_along_equals_qwk_row_by_row() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(1, 6, size=(40, 30))
    b = np.clip(a + rng.integers(-2, 3, size=a.shape), 1, 5)
    b[0] = 3  # one row without variation on one side
    a[1], b[1] = 2, 2  # a row where QWK is undefined
    expected = [quadratic_weighted_kappa(x, y) for x, y in zip(a, b, strict=True)]
    np.testing.assert_allclose(humans.qwk_along(a, b), expected, equal_nan=True)
    assert humans.qwk_along(a[5], b[5]) == pytest.approx(expected[5])
    np.testing.assert_allclose(humans.qwk_along(a.T, b.T, axis=0), expected, equal_nan=True)


def test_bootstrap_beyond_bca_max_n_is_percentile() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=humans.BCA_MAX_N + 1)
    y = x + rng.normal(size=len(x))

    def mean_diff(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(a - b, axis=axis)

    from scipy import stats

    expected = stats.bootstrap(
        (x, y), mean_diff, n_resamples=300, paired=True, vectorized=True,
        method="percentile", batch=humans.BATCH, rng=np.random.default_rng(5),
    ).confidence_interval  # fmt: skip
    low, high = humans.bootstrap_ci((x, y), mean_diff, 300, 5)
    assert (low, high) == pytest.approx((expected.low, expected.high))


def large_samples(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    truth = rng.integers(1, 6, size=n).astype(float)
    rows = []
    for i, t in enumerate(truth):
        ratings = {r: float(np.clip(t + rng.integers(-1, 2), 1, 5)) for r in ("a", "b", "c")}
        rows.append({"judge": "j", "id": f"d{i:05d}", "score": t, "ratings": ratings,
                     "human": float(np.median(list(ratings.values())))})  # fmt: skip
    return pd.DataFrame(rows)


def test_a_large_ceiling_bounds_its_resamples() -> None:
    samples = large_samples(humans.BCA_MAX_N + 200)
    wide = samples.pivot(index="id", columns="judge", values="score")
    human = samples.set_index("id")["human"]
    result = ceiling.human_ceiling(samples, wide, wide.index, human, ["j"], 2000, 0)
    assert f"from {ceiling.LARGE_RESAMPLES} percentile resamples" in result.note
    ratings = ceiling.ratings_table(samples)
    rows = humans.rater_vs_rest(ratings, "median", ceiling.LARGE_RESAMPLES, 0)
    pd.testing.assert_frame_equal(result.humans.iloc[3:].reset_index(drop=True), rows)
    assert math.isfinite(result.humans["qwk_low"].iloc[0])


def test_detect_aggregate_reads_mean_or_median() -> None:
    ratings = pd.DataFrame({"a": [1.0, 2.0, 5.0], "b": [2.0, 2.0, 4.0], "c": [4.0, 5.0, 4.0]},
                           index=["x", "y", "z"])  # fmt: skip
    assert ceiling.detect_aggregate(ratings, ratings.median(axis=1)) == "median"
    assert ceiling.detect_aggregate(ratings, ratings.mean(axis=1)) == "mean"
