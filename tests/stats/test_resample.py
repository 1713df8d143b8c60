"""Bootstrap resamples as draw counts (`_resample`): the counts of the draws, the same in
batches as at once, drawn once per (n, resamples, seed), in a type that holds them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspect_empathy.stats import _resample


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 300), resamples=st.integers(1, 30), seed=st.integers(0, 2**32 - 1))
def test_counts_are_the_counts_of_the_draws(n: int, resamples: int, seed: int) -> None:
    _resample._kept.clear()
    drawn = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    expected = np.stack([np.bincount(row, minlength=n) for row in drawn])
    got = _resample.resample_counts(n, resamples, seed)
    np.testing.assert_array_equal(got, expected)
    assert (got.sum(axis=1) == n).all()


def test_batches_draw_what_one_draw_would(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = _resample.resample_counts(50, 40, 7).copy()
    _resample._kept.clear()
    monkeypatch.setattr(_resample, "BATCH_ELEMENTS", 120)  # batches of two resamples
    assert len(list(_resample.batches(40, 50, 120))) == 20
    np.testing.assert_array_equal(_resample.resample_counts(50, 40, 7), whole)


def test_counts_are_drawn_once_and_read_only() -> None:
    _resample._kept.clear()
    first = _resample.resample_counts(30, 10, 1)
    assert _resample.resample_counts(30, 10, 1) is first
    assert _resample.resample_counts(30, 10, 2) is not first
    with pytest.raises(ValueError, match="read-only"):
        first[0, 0] = 1


def test_a_count_past_the_type_widens_it() -> None:
    counts = np.zeros((2, 3), dtype=np.uint8)
    assert _resample._widen(counts, 255).dtype == np.uint8
    wider = _resample._widen(counts, 256)
    assert wider.dtype == np.uint16 and wider.shape == (2, 3)
    assert _resample._widen(wider, 3).dtype == np.uint16  # never narrowed
    with pytest.raises(ValueError, match="32 bits"):
        _resample._widen(counts, 2**32)


def test_the_kept_counts_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    _resample._kept.clear()
    monkeypatch.setattr(_resample, "KEPT_BYTES", 2_500)
    for seed in range(5):
        _resample.resample_counts(100, 10, seed)  # 1,000 bytes each
    assert sum(c.nbytes for c in _resample._kept.values()) <= 2_500
    assert list(_resample._kept) == [(100, 10, 3), (100, 10, 4)]
