"""Statistics for comparing judges: Spearman, bootstrap CIs, paired differences, Holm.

Plain numpy/scipy functions on arrays, no pandas. Up to ``BCA_MAX_N`` dialogs the
CIs are scipy's BCa bootstrap (its jackknife costs n x n, run in batches). Beyond
that they are percentile intervals from a bootstrap over dialogs that never
materialises the resampled data: a resample is how often each dialog was drawn
(`_resample.resample_counts`), and each dialog's mid-rank within its resample follows
from the counts summed over its distinct value and a cumulative sum over the sorted
distinct values, instead of sorting the resample. That is exactly Spearman of the
resampled arrays (ties included) in linear time and bounded memory. The resamples
depend on the seed and the number of dialogs only, and are drawn once for every judge
and statistic that asks for them: a paired test is the difference of its two judges'
distributions, each computed once (`rho_draws`).
"""

from __future__ import annotations

import hashlib
import math
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..stats._agreement import BCA_MAX_N, round_score, scipy_bootstrap, shares_by_level
from ..stats._agreement import spearman_along as spearman
from ..stats._resample import batches, resample_counts
from ..stats._resample import percentile_interval as percentile_interval
from .comparison import LEVELS

BATCH_ELEMENTS = 200_000
"""Draw counts per batch of resamples: enough to amortise the per-batch work over small
samples; a sample of ``ONE_ROW`` dialogs or more is read one resample at a time (its rows
alone outgrow the CPU caches)."""
ONE_ROW = 50_000


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
        """Mid-rank of each draw in each resample (rows of ``drawn``, dialog indices), and
        the sum of squares."""
        rows = drawn.shape[0]
        offsets = (np.arange(rows, dtype=np.int64) * self.groups)[:, None]
        flat = self.group[drawn] + offsets
        weight = np.bincount(flat.ravel(), minlength=rows * self.groups)
        weight = weight.reshape(rows, self.groups)
        mid = np.cumsum(weight, axis=1) - (weight - 1) / 2
        squares = (weight * mid * mid).sum(axis=1)
        return np.take(mid.ravel(), flat), squares


def _rho(x: tuple[np.ndarray, np.ndarray], y: tuple[np.ndarray, np.ndarray], n: int) -> np.ndarray:
    """Spearman of each resample from mid-ranks per draw: Pearson with mean (n + 1) / 2."""
    (rx, sx), (ry, sy) = x, y
    mean_square = n * ((n + 1) / 2) ** 2
    cov = np.einsum("ij,ij->i", rx, ry) - mean_square
    var = (sx - mean_square) * (sy - mean_square)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 0, cov / np.sqrt(np.where(var > 0, var, 1)), np.nan)


class _PairRanks:
    """What Spearman of ``x`` and ``y`` under resampling needs, computed once: the dialogs
    in ``x``'s order, its groups of tied values and ``y``'s levels in that order."""

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        n = len(x)
        self.order = np.argsort(x, kind="stable")
        xs, ys = x[self.order], y[self.order]
        starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]]) if n else np.zeros(0, int)
        sizes = np.diff(np.r_[starts, n])
        tied = sizes > 1
        # the positions in groups of tied x values, each group's first and last position
        self.tied = np.flatnonzero(np.repeat(tied, sizes))
        self.tied_starts = np.r_[0, np.cumsum(sizes[tied])[:-1]].astype(int)
        self.tied_ends = (starts + sizes - 1)[tied]
        self.tied_group = np.repeat(np.arange(int(tied.sum())), sizes[tied])
        levels, level = np.unique(ys, return_inverse=True)
        self.levels = len(levels)
        level = level.reshape(-1)
        # each level's dialogs side by side (x's order within a level): a level's sum is a
        # sum over consecutive columns, in integers (exact, and no BLAS call: a matrix
        # product's threads cost more than the sums on a busy machine)
        self.y_order = np.argsort(level, kind="stable")
        self.y_starts = np.flatnonzero(np.r_[True, np.diff(level[self.y_order]) != 0])
        self.y_dialogs = self.order[self.y_order]  # the same, as the dialogs' own indices
        # the tied positions' levels, side by side in the same way
        tied_level = level[self.tied]
        self.tied_y_order = np.argsort(tied_level, kind="stable")
        self.tied_levels, self.tied_y_starts = np.unique(
            tied_level[self.tied_y_order], return_index=True
        )
        self.wide = np.int64 if n * 255 * 4 >= 2**31 else np.int32

    def _by_level(self, values: np.ndarray) -> np.ndarray:
        """Sums of each row's values over ``y``'s levels (rows x levels, integers)."""
        return np.add.reduceat(
            np.take(values, self.y_order, axis=1), self.y_starts, axis=1, dtype=np.int64
        )

    def rows(self, counts: np.ndarray) -> tuple[np.ndarray, ...]:
        """What `rho` reads of each resample that does not depend on ``x``: the number of
        draws, the sum of ``c^3 - c`` over the dialogs' counts ``c`` (as a float), over each
        level of ``y`` the sum of ``c`` (as floats) and of ``c - c^2``, and the sum of
        ``c^3 - c`` again (an integer)."""
        total = counts.sum(axis=1, dtype=np.int64).astype(float)
        drawn = np.take(counts, self.y_dialogs, axis=1).astype(np.int64)
        by_level = np.add.reduceat(drawn, self.y_starts, axis=1)
        squares = np.add.reduceat(drawn * drawn, self.y_starts, axis=1)
        cubes = _cubes(counts)
        return total, cubes.astype(float), by_level.astype(float), by_level - squares, cubes

    def rho(self, counts: np.ndarray, rows: tuple[np.ndarray, ...]) -> np.ndarray:
        """Spearman of each resample (rows of draw counts, dialogs in their given order;
        ``rows``: `rows` of them).

        With ``c`` a dialog's count and ``C`` the cumulative count up to it in ``x``'s
        order, its mid-rank is ``C - (c - 1) / 2`` (for a group of tied values, the group's
        ``C`` and ``c``); ``2 c rank`` is an integer, ``2 c C + c - c^2`` for an untied
        dialog, summed per level of ``y`` (``c - c^2`` from `rows`) and weighted by ``y``'s
        mid-ranks. The sums of squared mid-ranks are ``N (N + 1) (2N + 1) / 6`` less
        ``(w^3 - w) / 12`` per group of weight ``w``."""
        c = np.take(counts, self.order, axis=1).astype(self.wide)
        cum = np.cumsum(c, axis=1, dtype=self.wide)
        total, cubes, level_weight, linear, _ = rows
        cubes = cubes.copy()
        level_twice = 2 * self._by_level(c * cum) + linear  # 2 c rank of untied dialogs
        if len(self.tied):
            within = c[:, self.tied]
            weight = np.add.reduceat(within, self.tied_starts, axis=1, dtype=np.int64)
            # a tied dialog's 2 c rank is c (2 C_end - w + 1): beyond its untied one by
            # c (2 (C_end - C) - w + c)
            beyond = 2 * (cum[:, self.tied_ends][:, self.tied_group] - cum[:, self.tied])
            beyond = within * (beyond - weight[:, self.tied_group] + within)
            level_twice[:, self.tied_levels] += np.add.reduceat(
                np.take(beyond, self.tied_y_order, axis=1), self.tied_y_starts, axis=1,
                dtype=np.int64,
            )  # fmt: skip
            cubes += (weight**3 - weight).sum(axis=1) - (within**3 - within).sum(axis=1)
        return _spearman(total, cubes, level_twice, level_weight)


class _CellRanks(_PairRanks):
    """`_PairRanks` where ``x`` has few distinct values (integer scores, averages of a few
    samples): a resample is read as its counts summed over the cells of ``x``'s tied
    groups and ``y``'s levels, so each group's mid-rank is read once, not once per dialog.
    Every sum is the one `_PairRanks.rho` makes (integers, added in the same order): the
    same Spearman."""

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        super().__init__(x, y)
        n = len(x)
        xs = x[self.order]
        group = np.cumsum(np.r_[True, xs[1:] != xs[:-1]]) - 1  # each position's x group
        level = np.empty(n, dtype=np.int64)
        level[self.y_order] = np.repeat(
            np.arange(len(self.y_starts)), np.diff(np.r_[self.y_starts, n])
        )
        cell = group * self.levels + level  # positions are in x's order: cells by group
        self.cell_positions = np.argsort(cell, kind="stable")
        cells, self.cell_starts = np.unique(cell[self.cell_positions], return_index=True)
        self.cell_dialogs = self.order[self.cell_positions]
        self.cell_group = cells // self.levels
        self.group_starts = np.flatnonzero(np.r_[True, np.diff(self.cell_group) != 0])
        self.groups = len(self.group_starts)
        sizes = np.bincount(group, minlength=self.groups)
        self.tied_groups = sizes > 1
        self.untied_dialogs = self.order[np.flatnonzero(sizes[group] == 1)]
        cell_level = cells % self.levels
        self.level_cells = np.argsort(cell_level, kind="stable")
        self.present_levels, self.level_cell_starts = np.unique(
            cell_level[self.level_cells], return_index=True
        )

    @property
    def cells(self) -> int:
        return len(self.cell_starts)

    def rho(self, counts: np.ndarray, rows: tuple[np.ndarray, ...]) -> np.ndarray:
        """Spearman of each resample (see `_PairRanks.rho`): a group of weight ``w`` ending
        at cumulative count ``C`` gives each of its cells ``(2 C - w + 1)`` times the
        cell's count."""
        total, cubes, level_weight, _, all_cubes = rows
        drawn = np.take(counts, self.cell_dialogs, axis=1).astype(np.int64)
        cell = np.add.reduceat(drawn, self.cell_starts, axis=1)
        weight = np.add.reduceat(cell, self.group_starts, axis=1)
        twice_mid = 2 * np.cumsum(weight, axis=1) - weight + 1
        twice = cell * twice_mid[:, self.cell_group]
        level_twice = np.zeros((len(counts), self.levels), dtype=np.int64)
        level_twice[:, self.present_levels] = np.add.reduceat(
            np.take(twice, self.level_cells, axis=1), self.level_cell_starts, axis=1
        )
        # the tied groups' correction to the dialogs' c^3 - c, as `_PairRanks.rho` adds it
        tied = weight[:, self.tied_groups]
        untied = _cubes(np.take(counts, self.untied_dialogs, axis=1))
        cubes = cubes + ((tied**3 - tied).sum(axis=1) - (all_cubes - untied))
        return _spearman(total, cubes, level_twice, level_weight)


def _spearman(
    total: np.ndarray, cubes: np.ndarray, level_twice: np.ndarray, level_weight: np.ndarray
) -> np.ndarray:
    """Spearman of each resample from its sums (`_PairRanks.rho`): ``total`` drawn,
    ``cubes`` the sum of c^3 - c over x's tied groups, ``level_twice`` twice the x mid-rank
    sum at each y level and ``level_weight`` each level's count."""
    level_mid = np.cumsum(level_weight, axis=1) - (level_weight - 1) / 2
    cross = (level_twice * level_mid).sum(axis=1) / 2
    level_cubes = (level_weight**3 - level_weight).sum(axis=1)
    mean_square = total * ((total + 1) / 2) ** 2
    spread = total * (total * total - 1) / 12
    var = (spread - cubes / 12) * (spread - level_cubes / 12)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 0, (cross - mean_square) / np.sqrt(np.where(var > 0, var, 1)),
                        np.nan)  # fmt: skip


_CUBES = (lambda k: k * k * k - k)(np.arange(256, dtype=np.int64))
"""``c^3 - c`` of each count a byte holds."""


def _cubes(counts: np.ndarray) -> np.ndarray:
    """The sum of ``c^3 - c`` over each row's counts (any order: the dialogs' own), in
    integers."""
    if counts.dtype == np.uint8:
        return np.take(_CUBES, counts).sum(axis=1)
    c = counts.astype(np.int64)
    return (c * c * c - c).sum(axis=1)


def _ranks(x: np.ndarray, y: np.ndarray) -> _PairRanks:
    """`_CellRanks` where ``x``'s tied groups and ``y``'s levels make few cells (a quarter
    of the dialogs or fewer), else `_PairRanks`."""
    cells = _CellRanks(x, y)
    return cells if 4 * cells.cells <= len(x) else _PairRanks(x, y)


def spearman_draws(x: np.ndarray, y: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Spearman of ``x`` and ``y`` in each of ``resamples`` resamples of the rows, drawn as
    `resample_counts` (``n``, ``resamples``, ``seed``), computed from the counts without
    per-draw ranks."""
    pair = _ranks(np.asarray(x, float), np.asarray(y, float))
    counts = resample_counts(len(x), resamples, seed)
    kept = _resample_rows(pair, counts, (len(x), resamples, seed), y)
    out = np.empty(resamples)
    elements = len(x) if len(x) >= ONE_ROW else BATCH_ELEMENTS
    for start, rows in batches(resamples, len(x), elements):
        end = start + rows
        out[start:end] = pair.rho(counts[start:end], tuple(k[start:end] for k in kept))
    return out


ROWS_KEPT = 64
"""`_PairRanks.rows` of whole count tables `_resample_rows` keeps (2,000 resamples: a few
tens of KB each)."""
_rows_kept: OrderedDict[tuple[Any, ...], tuple[np.ndarray, ...]] = OrderedDict()


def _resample_rows(
    pair: _PairRanks, counts: np.ndarray, drawn: tuple[int, int, int], y: np.ndarray
) -> tuple[np.ndarray, ...]:
    """`_PairRanks.rows` of every resample of ``counts`` (drawn as ``drawn``: n, resamples,
    seed), kept for the next statistic of the same draws and ``y`` (every judge of the
    same dialogs shares its human ratings' level sums)."""
    key = (*drawn, _digest(np.asarray(y, float)))
    if key in _rows_kept:
        _rows_kept.move_to_end(key)
        return _rows_kept[key]
    parts = [pair.rows(counts[s : s + r]) for s, r in batches(len(counts), counts.shape[1])]
    rows = tuple(np.concatenate(p) for p in zip(*parts, strict=True))
    _rows_kept[key] = rows
    while len(_rows_kept) > ROWS_KEPT:
        _rows_kept.popitem(last=False)
    return rows


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
    of the rows (`spearman_draws`, drawn from ``seed``).

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
    draws = spearman_draws(x, y, resamples, seed)
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
        # the joint bootstrap of the difference over the same draws, each judge's rhos once
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
