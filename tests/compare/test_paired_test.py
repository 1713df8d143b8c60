"""The paired test of two judges' Spearman with the people: studentised, so that its far
tail (where Holm tests with several judges) holds its level."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as ss

from inspect_empathy.compare import stats


@settings(max_examples=40, deadline=None)
@given(
    diff=st.floats(-1, 1, allow_nan=False),
    scale=st.floats(0.01, 0.5),
    seed=st.integers(0, 2**16),
)
def test_studentised_p_is_the_difference_over_its_bootstrap_se(
    diff: float, scale: float, seed: int
) -> None:
    draws = np.random.default_rng(seed).normal(diff, scale, 400)
    p = stats.studentised_p(diff, draws)
    assert p == pytest.approx(min(1.0, 2 * ss.norm.sf(abs(diff) / draws.std(ddof=1))))
    assert stats.studentised_p(-diff, -draws) == pytest.approx(p)
    assert 0 <= p <= 1


def test_undefined_and_degenerate_draws() -> None:
    assert math.isnan(stats.studentised_p(0.1, np.array([0.2])))
    assert math.isnan(stats.studentised_p(math.nan, np.zeros(10)))
    assert stats.studentised_p(0.0, np.zeros(10)) == 1.0
    assert stats.studentised_p(0.1, np.full(10, 0.1)) == 0.0


def test_a_clear_difference_gets_a_p_below_the_resamples_floor() -> None:
    """A p-value counted off the resamples is never below 2 / (resamples + 1): with eight
    judges Holm's first step tests at 0.05 / 28 = 0.0018, out of its reach at 1,000 draws."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=200)
    human = np.clip(np.rint(3 + z + rng.normal(0, 0.5, 200)), 1, 5)
    good, poor = z + rng.normal(0, 0.3, 200), z + rng.normal(0, 2.0, 200)
    result = stats.paired_difference(good, poor, human, resamples=300, seed=1)
    assert result["diff"] > 0.2
    assert result["p_value"] < 2 / 301 / 10
