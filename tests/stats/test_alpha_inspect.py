"""The plugin's one ordinal Krippendorff's alpha (`stats._agreement.krippendorff_alpha`: the
``krippendorff`` package on the 1-5 domain, fast enough to bootstrap) equals Inspect's public
``krippendorff_alpha(level="ordinal")`` metric on random panels with missing ratings."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from inspect_empathy.stats._agreement import krippendorff_alpha, round_score


def _inspect_alpha(raw: np.ndarray) -> float:
    """Inspect's metric, each item rated twice or more a unit (rounded half up onto 1-5)."""
    from inspect_ai.scorer import SampleScore, Score
    from inspect_ai.scorer import krippendorff_alpha as inspect_alpha

    data = np.where(np.isnan(raw), np.nan, round_score(np.nan_to_num(raw, nan=3.0)))
    units = [[float(v) for v in column if v == v] for column in data.T]
    units = [unit for unit in units if len(unit) >= 2]
    scores = [SampleScore(score=Score(value=u), sample_id=i) for i, u in enumerate(units)]
    return float(inspect_alpha(level="ordinal")(scores))


@pytest.mark.parametrize("seed", range(40))
def test_equal_to_inspects_metric(seed: int) -> None:
    rng = np.random.default_rng(seed)
    judges, items = int(rng.integers(2, 6)), int(rng.integers(3, 50))
    if seed % 2:
        raw = rng.uniform(0.6, 5.4, size=(judges, items))  # rounded half up onto 1-5
    else:
        raw = rng.integers(1, 6, size=(judges, items)).astype(float)
    if seed % 5 == 0:
        raw = np.clip(raw, 2, 4)  # levels missing from the middle and the ends
    raw[rng.random(raw.shape) < 0.3] = np.nan  # missing ratings, some items rated once
    ours = krippendorff_alpha([[None if np.isnan(v) else v for v in row] for row in raw])
    if ours is None:
        pytest.skip("alpha undefined for this draw")
    assert ours == pytest.approx(_inspect_alpha(raw), abs=1e-12)


def test_undefined_cases_and_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    assert krippendorff_alpha([[1, 2, 3]]) is None  # one judge
    assert krippendorff_alpha([[1, None], [None, 2]]) is None  # no item rated twice
    assert krippendorff_alpha([[3, 3], [3, 3]]) is None  # no variation
    with caplog.at_level(logging.WARNING):
        value = krippendorff_alpha([[1, 2, 5, None], [1, 3, 5, 4]])  # item 4 rated once
    assert value is not None and not caplog.records  # left out, no warning
