"""Statistics for comparing judges: Spearman, bootstrap CIs, paired differences, Holm.

Plain numpy/scipy functions on arrays, no pandas. Up to ``BCA_MAX_N`` dialogs the
CIs are scipy's BCa bootstrap (its jackknife costs n x n, run in batches). Beyond
that they are percentile intervals from a bootstrap over dialogs that never
materialises the resampled data: a resample is
a matrix of drawn dialog indices, and each draw's mid-rank within its resample
follows from how often each distinct value was drawn (a bincount and a
cumulative sum over the sorted distinct values) instead of sorting the resample. That is
exactly Spearman of the resampled arrays (ties included) in linear time and
bounded memory, so 10,000 dialogs x 2,000 resamples takes about a second. The
resamples depend on the seed and the number of dialogs only: a paired test is the
difference of its two judges' distributions, each computed once (`rho_draws`).
"""

from __future__ import annotations

import hashlib
import math
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._stats import BCA_MAX_N, round_score, scipy_bootstrap, shares_by_level
from .._stats import spearman_along as spearman
from .comparison import LEVELS

BATCH_ELEMENTS = 80_000
"""Draws per batch of resamples: small enough for the CPU caches (3x faster than 256 rows at
n = 10,000), large enough to amortise the per-batch work."""

def seed_for(*names: str, seed: int = 0) -> int:
    """A bootstrap seed from names (a judge, a pair): the same whatever else is compared."""
    return (zlib.crc32("\x1f".join(names).encode("utf-8", "surrogatepass")) + seed) % 2**32


def varied(*arrays: np.ndarray) -> bool:
    """At least three values and some variation in each array (else rho is undefined)."""
    return all(len(a) >= 3 and np.ptp(a) > 0 for a in arrays)


class _Ranker:
    """Mid-ranks of one variable under resampling (see the module docstring)."""

    def __init__(self, values: np.ndarray) -> None:
        uniques, self.group = np.unique(values, return_inverse=True)
        self.groups = len(uniques)

    def ranks(self, drawn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mid-rank of each draw in each resample (rows of ``drawn``), and the sum of squares."""
        rows = drawn.shape[0]
        offsets = (np.arange(rows, dtype=np.int64) * self.groups)[:, None]
        flat = self.group[drawn] + offsets
        weight = np.bincount(flat.ravel(), minlength=rows * self.groups)
        weight = weight.reshape(rows, self.groups)
        mid = np.cumsum(weight, axis=1) - (weight - 1) / 2
        squares = (weight * mid * mid).sum(axis=1)
        return np.take(mid.ravel(), flat), squares


def _rho(
    x: tuple[np.ndarray, np.ndarray], y: tuple[np.ndarray, np.ndarray], n: int
) -> np.ndarray:
    """Spearman of each resample from mid-ranks per draw: Pearson with mean (n + 1) / 2."""
    (rx, sx), (ry, sy) = x, y
    mean_square = n * ((n + 1) / 2) ** 2
    cov = np.einsum("ij,ij->i", rx, ry) - mean_square
    var = (sx - mean_square) * (sy - mean_square)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 0, cov / np.sqrt(np.where(var > 0, var, 1)), np.nan)


def bootstrap_rhos(
    columns: Sequence[np.ndarray],
    statistic: Callable[[list[tuple[np.ndarray, np.ndarray]], int], np.ndarray],
    resamples: int,
    seed: int,
) -> np.ndarray:
    """``statistic(ranks, n)`` over ``resamples`` resamples of the dialogs (rows).

    ``ranks`` holds, per column, each draw's mid-rank within its resample and the
    resample's sum of squared ranks (see ``_rho``).
    """
    n = len(columns[0])
    rankers = [_Ranker(np.asarray(c, float)) for c in columns]
    rng = np.random.default_rng(seed)
    out = np.empty(resamples)
    batch = max(1, min(256, BATCH_ELEMENTS // max(n, 1)))
    for start in range(0, resamples, batch):
        size = min(batch, resamples - start)
        drawn = rng.integers(0, n, size=(size, n))
        out[start : start + size] = statistic([r.ranks(drawn) for r in rankers], n)
    return out


def _bca(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray | float],
    resamples: int,
    seed: int,
) -> tuple[tuple[float, float], np.ndarray] | None:
    """scipy's paired BCa bootstrap: 95% CI and bootstrap distribution (None if undefined)."""
    return scipy_bootstrap(
        data, statistic, resamples, seed, batch=max(1, 2_000_000 // len(data[0]))
    )


def percentile_interval(draws: np.ndarray | Sequence[float]) -> tuple[float, float]:
    """The 95% percentile interval of the finite bootstrap draws (NaNs when none)."""
    draws = np.asarray(draws, float)
    draws = draws[np.isfinite(draws)]
    if not len(draws):
        return math.nan, math.nan
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(low), float(high)


def spearman_ci(
    x: np.ndarray, y: np.ndarray, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """95% bootstrap CI of Spearman's rho between paired ``x`` and ``y``.

    BCa up to ``BCA_MAX_N`` pairs (percentile where BCa is undefined), percentile beyond.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if not varied(x, y) or resamples <= 0:
        return math.nan, math.nan
    if len(x) <= BCA_MAX_N:
        bca = _bca((x, y), spearman, resamples, seed)
        if bca is not None:
            return bca[0]
    return percentile_interval(rho_draws(x, y, resamples, seed))


DRAWS_KEPT = 256
"""Bootstrap distributions `rho_draws` keeps (2,000 resamples: 16 KB each)."""
_kept: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()


def _digest(values: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(values, float).tobytes(), digest_size=16).digest()


def rho_draws(x: np.ndarray, y: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Spearman of ``x`` and ``y`` in each of ``resamples`` percentile-bootstrap resamples
    of the rows (`bootstrap_rhos`, drawn from ``seed``).

    Kept for the next call with the same arrays, resamples and seed: a paired test of two
    judges is the difference of their two distributions over the same draws, so with one
    seed for every pair each judge's distribution is computed once, not once per pair (20
    judges: 20 bootstraps instead of 190 x 3 columns). The draws depend on the seed and the
    number of rows only, so the result is exactly what drawing for the pair would give.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    key = (_digest(x), _digest(y), len(x), resamples, seed)
    if key in _kept:
        _kept.move_to_end(key)
        return _kept[key]
    draws = bootstrap_rhos([x, y], lambda r, n: _rho(r[0], r[1], n), resamples, seed)
    draws.setflags(write=False)
    _kept[key] = draws
    while len(_kept) > DRAWS_KEPT:
        _kept.popitem(last=False)
    return draws


def paired_difference(
    a: np.ndarray, b: np.ndarray, human: np.ndarray, resamples: int = 2000, seed: int = 0
) -> dict[str, float]:
    """Spearman(a, human) - Spearman(b, human) on the same dialogs, with a paired bootstrap.

    Dialogs are resampled with replacement, keeping each dialog's two judge
    scores and human rating together. Returns the difference, its 95% CI (BCa up
    to ``BCA_MAX_N`` dialogs, else percentile) and the two-sided p-value of the
    studentised test of "no difference" (`studentised_p`: the difference over its
    bootstrap standard error), which holds its level in Holm's far tail, where a
    p-value read off the resamples' share beyond zero is liberal.
    """
    a, b, h = (np.asarray(v, float) for v in (a, b, human))
    out = {"diff": math.nan, "diff_low": math.nan, "diff_high": math.nan, "p_value": math.nan}
    if not varied(a, h) or not varied(b, h):
        return out
    out["diff"] = float(spearman(a, h)) - float(spearman(b, h))
    if resamples <= 0:
        return out

    def difference(x: np.ndarray, y: np.ndarray, z: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(spearman(x, z, axis=axis)) - np.asarray(spearman(y, z, axis=axis))

    bca = _bca((a, b, h), difference, resamples, seed) if len(a) <= BCA_MAX_N else None
    if bca is not None:
        (out["diff_low"], out["diff_high"]), draws = bca
    else:
        # what bootstrap_rhos([a, b, h]) of the difference gives, each judge's rhos once
        draws = rho_draws(a, h, resamples, seed) - rho_draws(b, h, resamples, seed)
        out["diff_low"], out["diff_high"] = percentile_interval(draws)
    out["p_value"] = studentised_p(out["diff"], draws)
    return out


def studentised_p(diff: float, draws: np.ndarray) -> float:
    """Two-sided p-value of "no difference" for an observed ``diff`` and its bootstrap
    ``draws``: ``diff / SD(draws)`` against the standard normal (a studentised, Wald
    test). NaN without two finite draws; 1 when they do not vary and ``diff`` is 0, 0
    when they do not vary and it is not."""
    from scipy.stats import norm

    draws = np.asarray(draws, float)
    draws = draws[np.isfinite(draws)]
    if not math.isfinite(diff) or len(draws) < 2:
        return math.nan
    se = float(draws.std(ddof=1))
    if se <= 0:
        return 1.0 if diff == 0 else 0.0
    return float(min(1.0, 2 * norm.sf(abs(diff) / se)))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (NaN stays NaN and does not count as a test)."""
    values = np.asarray(p_values, float)
    adjusted = np.full(len(values), math.nan)
    tested = np.flatnonzero(np.isfinite(values))
    m = len(tested)
    running = 0.0
    for rank, index in enumerate(tested[np.argsort(values[tested], kind="stable")]):
        running = max(running, min(1.0, (m - rank) * values[index]))
        adjusted[index] = running
    return [float(v) for v in adjusted]


def level_shares(values: np.ndarray) -> dict[str, float]:
    """Share of values at each level 1-5 (rounded half up) and at 3 or 4 together."""
    values = np.asarray(values, float)
    values = values[np.isfinite(values)]
    if not len(values):
        return {f"share_{k}": math.nan for k in LEVELS} | {"share_3_4": math.nan}
    shares = shares_by_level(round_score(values))
    shares["share_3_4"] = shares["share_3"] + shares["share_4"]
    return shares


def confusion(judge: np.ndarray, human: np.ndarray) -> np.ndarray:
    """5x5 counts of rounded judge scores (rows) against rounded human ratings (columns)."""
    matrix = np.zeros((5, 5), dtype=int)
    if len(judge):
        np.add.at(matrix, (round_score(judge) - 1, round_score(human) - 1), 1)
    return matrix
