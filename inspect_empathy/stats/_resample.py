"""Bootstrap resamples over dialogs as draw counts, drawn once and shared.

A resample of ``n`` dialogs drawn with replacement is, for a statistic that does not depend
on the order of the draws, fully described by how often each dialog was drawn. Every
percentile bootstrap of the comparison (the headline's interval, Spearman's, the paired
tests, MAE and QWK) is computed from these counts (`resample_counts`), so a resample is
never materialised, and the counts of one ``(n, resamples, seed)`` are drawn once and read
by every judge and statistic that asks for them: the draws depend on the number of
dialogs, the number of resamples and the seed only (draws in batches equal draws at once).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

KEPT_BYTES = 512 * 2**20
"""Counts kept for the next statistic that asks for the same ``(n, resamples, seed)``: a
million judge-dialog rows keep about 300 MB."""

BATCH_ELEMENTS = 2_000_000
"""Draw counts computed together: enough rows to amortise numpy's per-call work, few enough
for the temporaries (16 MB a batch) to stay small."""

_kept: OrderedDict[tuple[int, int, int], np.ndarray] = OrderedDict()
_COUNT_DTYPES = ("uint8", "uint16", "uint32")


def resample_counts(n: int, resamples: int, seed: int) -> np.ndarray:
    """How often each of ``n`` dialogs is drawn in each of ``resamples`` bootstrap
    resamples (rows; each row sums to ``n``), from ``numpy.random.default_rng(seed)``:
    row ``r`` holds the counts of the draws ``rng.integers(0, n, size=(resamples, n))[r]``.

    Read-only, and kept (`KEPT_BYTES`) for the next call with the same arguments. Stored in
    the smallest unsigned type that holds the largest count."""
    import numpy as np

    key = (int(n), int(resamples), int(seed))
    if key in _kept:
        _kept.move_to_end(key)
        return _kept[key]
    counts = np.zeros((resamples, n), dtype=np.uint8)
    rng = np.random.default_rng(seed)
    # below 2**32 numpy draws 64-bit integers from the same 32-bit draws: the same values
    kind = np.int32 if n < 2**31 else np.int64
    for start, rows in batches(resamples, n):
        drawn = rng.integers(0, n, size=(rows, n), dtype=kind)
        for row in range(rows):
            batch = np.bincount(drawn[row], minlength=n)
            counts = _widen(counts, int(batch.max(initial=0)))
            counts[start + row] = batch
    counts.setflags(write=False)
    _kept[key] = counts
    while sum(c.nbytes for c in _kept.values()) > KEPT_BYTES and len(_kept) > 1:
        _kept.popitem(last=False)
    return counts


def _widen(counts: np.ndarray, largest: int) -> np.ndarray:
    """``counts`` in an unsigned type that holds ``largest`` (a copy only when it must grow)."""
    import numpy as np

    for name in _COUNT_DTYPES:
        if largest <= np.iinfo(name).max:
            return (
                counts if np.dtype(name).itemsize <= counts.dtype.itemsize else counts.astype(name)
            )
    raise ValueError(f"a draw count of {largest} does not fit in 32 bits")


def batches(resamples: int, n: int, elements: int = BATCH_ELEMENTS) -> Iterator[tuple[int, int]]:
    """``(first row, rows)`` of the batches of resamples of ``n`` dialogs computed together."""
    size = max(1, min(resamples, elements // max(n, 1)))
    for start in range(0, resamples, size):
        yield start, min(size, resamples - start)


def percentile_interval(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile interval of the finite bootstrap ``values`` ((NaN, NaN) when none)."""
    import math

    import numpy as np

    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if not len(values):
        return math.nan, math.nan
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)
