"""Response mode's paired test of two reply models under one grader: studentised, as the
judges' paired test (`stats.studentised_p`), so that Holm's far tail holds its level."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as ss

from inspect_empathy.compare.replying import reply_pairs


def _scores(a: np.ndarray, b: np.ndarray) -> pd.DataFrame:
    n = len(a)
    ids = [str(i) for i in range(n)]
    return pd.DataFrame(
        {
            "dataset": "d",
            "grader": "g",
            "reply_model": ["a"] * n + ["b"] * n,
            "id": ids * 2,
            "prompt": ids * 2,
            "score": np.concatenate([a, b]),
        }
    )


def test_a_clear_difference_gets_a_p_below_the_resamples_floor() -> None:
    """A p-value counted off the resamples is never below 2 / (resamples + 1): with eight
    reply models Holm's first step tests at 0.05 / 28 = 0.0018, out of its reach at 300."""
    rng = np.random.default_rng(0)
    base = rng.integers(1, 6, 120).astype(float)
    better = np.clip(base + rng.choice([0.0, 1.0], 120, p=[0.4, 0.6]), 1, 5)
    [pair] = reply_pairs(_scores(better, base), 300, 1).to_dict("records")
    assert pair["model_a"] == "a" and pair["diff"] > 0.4
    assert pair["p_value"] < 2 / 301 / 10


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(12, 80),
    shift=st.floats(-0.6, 0.6),
    seed=st.integers(0, 2**16),
)
def test_p_is_the_mean_difference_over_its_bootstrap_se(n: int, shift: float, seed: int) -> None:
    """The p-value's z is the mean difference over the standard error of a mean of the
    paired differences (what the paired bootstrap's SD estimates, within its resampling
    noise at 2,000 resamples); the same whichever model is called A."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 6, n).astype(float)
    b = np.clip(np.rint(a + shift + rng.normal(0, 1.2, n)), 1, 5)
    d = a - b
    if not np.any(d != 0) or d.mean() == 0:
        return
    [pair] = reply_pairs(_scores(a, b), 2000, seed).to_dict("records")
    assert pair["diff"] == pytest.approx(abs(d.mean()))
    se = d.std(ddof=0) / math.sqrt(n)
    assert 0 < pair["p_value"] <= 1
    assert ss.norm.isf(pair["p_value"] / 2) == pytest.approx(abs(d.mean()) / se, rel=0.1)
    [swapped] = reply_pairs(_scores(b, a), 2000, seed).to_dict("records")
    assert ss.norm.isf(swapped["p_value"] / 2) == pytest.approx(abs(d.mean()) / se, rel=0.1)
