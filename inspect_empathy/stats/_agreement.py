"""Plain statistics of judge scores and human ratings on the 1-5 scale (numpy).

Used by the Inspect metrics (`metrics.py`) and the comparison; numpy and the krippendorff
package are imported where they are used, since Inspect imports every plugin at
start-up, also for runs that never compute these. The three correlations are numpy, not
``scipy.stats``: the metrics run inside every eval, and importing ``scipy.stats`` there
added about 70 MB to the eval's peak memory (docs/performance.md); the tests check them
against scipy.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


def round_score(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Round scores half up onto the 1-5 integer scale (4.5 -> 5, 2.5 -> 3)."""
    import numpy as np

    return np.clip(np.floor(np.asarray(values, dtype=float) + 0.5), 1, 5).astype(int)


def weighted_kappa(observed: np.ndarray, spacing: Sequence[float] | np.ndarray) -> np.ndarray:
    """Cohen's kappa with quadratic weights of contingency tables ``observed`` (``[..., k, k]``,
    rows the first rater's categories, columns the second's) whose categories sit at
    ``spacing`` (the 1-5 scale: 1, 2, ..., 5): ``1 - sum(w * observed) / sum(w * expected)``,
    ``w = (s_i - s_j) ** 2``. The one QWK formula of the package (`qwk_along`, the published
    kappas of ``compare.kappa``).

    NaN where it is undefined: a rater who gave every item one category (no variation, as
    Spearman is undefined then; the formula would say 0 whatever the other rater did), or
    an empty table.
    """
    import numpy as np

    table = np.asarray(observed, dtype=float)
    places = np.asarray(spacing, dtype=float)
    weights = (places[:, None] - places[None, :]) ** 2
    rows, cols = table.sum(axis=-1), table.sum(axis=-2)
    total = rows.sum(axis=-1)
    varied = ((rows > 0).sum(axis=-1) >= 2) & ((cols > 0).sum(axis=-1) >= 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = rows[..., :, None] * cols[..., None, :] / total[..., None, None]
        disagree = (weights * expected).sum(axis=(-2, -1))
        kappa = 1 - (weights * table).sum(axis=(-2, -1)) / np.where(disagree > 0, disagree, 1)
    return np.where(varied & (disagree > 0), kappa, np.nan)


def qwk_along(
    a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray, axis: int = -1, levels: int = 5
) -> np.ndarray | float:
    """Quadratic weighted kappa of ratings rounded onto 1..``levels`` along ``axis``,
    vectorised over the other axes (each row's table from one bincount; for bootstraps).
    NaN where it is undefined (`weighted_kappa`)."""
    import numpy as np

    a = np.moveaxis(np.asarray(a, dtype=int), axis, -1)
    b = np.moveaxis(np.asarray(b, dtype=int), axis, -1)
    shape = a.shape[:-1]
    a, b = a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1])
    rows, cells = a.shape[0], levels * levels
    index = (a - 1) * levels + (b - 1) + (np.arange(rows) * cells)[:, None]
    observed = np.bincount(index.ravel(), minlength=rows * cells).reshape(rows, levels, levels)
    kappa = weighted_kappa(observed, np.arange(1, levels + 1))
    return kappa.reshape(shape) if shape else float(kappa[0])


def quadratic_weighted_kappa(
    a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray, levels: int = 5
) -> float:
    """Cohen's kappa with quadratic weights for two raters on a 1..levels scale (NaN where
    undefined: either rater without variation, see `weighted_kappa`)."""
    return float(qwk_along(a, b, levels=levels))


def average_ranks(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Ranks 1..n, tied values sharing their mean rank (``scipy.stats.rankdata``'s default)."""
    import numpy as np

    _, inverse, counts = np.unique(
        np.asarray(values, dtype=float), return_inverse=True, return_counts=True
    )
    ends = np.cumsum(counts)
    return (ends - (counts - 1) / 2.0)[inverse.reshape(-1)]


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson's r of two equally long vectors (NaN when either is constant)."""
    import numpy as np

    dx = np.asarray(x, dtype=float) - np.mean(x)
    dy = np.asarray(y, dtype=float) - np.mean(y)
    denominator = math.sqrt(float(np.dot(dx, dx)) * float(np.dot(dy, dy)))
    if denominator == 0:
        return math.nan
    return max(-1.0, min(1.0, float(np.dot(dx, dy)) / denominator))


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman's rho: Pearson's r of the average ranks (as ``scipy.stats.spearmanr``)."""
    return pearson(average_ranks(x), average_ranks(y))


def _tied_pairs(*columns: np.ndarray) -> int:
    """Pairs of rows equal in every column given."""
    import numpy as np

    _, counts = np.unique(np.column_stack(columns), axis=0, return_counts=True)
    return int((counts * (counts - 1) // 2).sum())


def _inversions(ranks: np.ndarray) -> int:
    """Pairs i < j with ranks[i] > ranks[j] (integer ranks >= 0): a bottom-up merge
    sort, one vectorised level at a time, so O(n log^2 n) without a Python loop per item."""
    import numpy as np

    values = np.asarray(ranks, dtype=np.int64)
    n = len(values)
    levels = int(values.max()) + 1 if n else 1
    position = np.arange(n)
    total = 0
    width = 1
    while width < n:
        block = position // (2 * width)
        left = position % (2 * width) < width
        # within each block both halves are sorted (previous level); offsetting by block
        # keeps the left halves globally sorted, so one searchsorted counts for all blocks
        keys = block * levels + values
        left_keys, right_keys = keys[left], keys[~left]
        left_end = np.searchsorted(left_keys, (block[~left] + 1) * levels, side="left")
        total += int((left_end - np.searchsorted(left_keys, right_keys, side="right")).sum())
        values = np.sort(keys) - block * levels
        width *= 2
    return total


def kendall_tau_b(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Kendall's tau-b (as ``scipy.stats.kendalltau``), Knight's O(n log n) pair count."""
    import numpy as np

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = len(x)
    pairs = n * (n - 1) // 2
    tied_x, tied_y, tied_both = _tied_pairs(x), _tied_pairs(y), _tied_pairs(x, y)
    denominator = math.sqrt(float(pairs - tied_x) * float(pairs - tied_y))
    if denominator == 0:
        return math.nan
    # sorted by x, then y: the pairs that y puts in the other order are the discordant ones
    order = np.lexsort((y, x))
    _, y_ranks = np.unique(y[order], return_inverse=True)
    discordant = _inversions(y_ranks.reshape(-1))
    concordant = pairs - tied_x - tied_y + tied_both - discordant
    return max(-1.0, min(1.0, (concordant - discordant) / denominator))


def agreement(judge: Sequence[float], human: Sequence[float]) -> dict[str, float]:
    """Agreement of judge scores with human ratings, both on the 1-5 scale.

    Correlations need two or more pairs and some variation on both sides; where
    they are undefined they are left out rather than reported as NaN.
    """
    import numpy as np

    x = np.asarray(judge, dtype=float)
    y = np.asarray(human, dtype=float)
    result: dict[str, float] = {"n_human": float(len(x))}
    if len(x) == 0:
        return result
    error = x - y
    result["mae"] = float(np.mean(np.abs(error)))
    result["rmse"] = float(np.sqrt(np.mean(error**2)))
    rx, ry = round_score(x), round_score(y)
    result["exact"] = float(np.mean(rx == ry))
    result["within_one"] = float(np.mean(np.abs(rx - ry) <= 1))
    varied = len(x) >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0
    if varied:
        result["spearman"] = spearman(x, y)
        result["kendall"] = kendall_tau_b(x, y)
        result["pearson"] = pearson(x, y)
    qwk = quadratic_weighted_kappa(rx, ry)
    if math.isfinite(qwk):
        result["qwk"] = qwk
    return result


def shares_by_level(rounded: np.ndarray) -> dict[str, float]:
    """Share of rounded scores (see `round_score`) at each level 1-5, as ``share_1``..."""
    import numpy as np

    return {f"share_{k}": float(np.mean(rounded == k)) for k in range(1, 6)}


def krippendorff_alpha(ratings: Sequence[Sequence[float | None]] | np.ndarray) -> float | None:
    """Ordinal Krippendorff's alpha for judges or raters (rows) x items (columns), rounded
    half up onto 1-5: the one alpha of the package (panels, self-consistency, the human
    ceiling and its bootstrap).

    Missing ratings are None or NaN. Returns None where alpha is undefined (fewer than
    two rows, no item rated twice, or no variation at all). Computed by the
    ``krippendorff`` package's ordinal alpha on the 1-5 domain, each item that two or
    more rows rated a unit; it equals Inspect's ``krippendorff_alpha(level="ordinal")``
    metric to 1e-12 (tests/stats/test_alpha_inspect.py), which costs about 70 ms a call
    against the package's 0.2 ms, too slow for the human ceiling's 2,000 resamples.
    """
    import warnings

    import krippendorff
    import numpy as np

    raw = np.array(
        [[np.nan if v is None else v for v in row] for row in ratings], dtype=float, ndmin=2
    )
    if raw.ndim != 2 or raw.shape[0] < 2:
        return None
    present = ~np.isnan(raw)
    data = np.full(raw.shape, np.nan)
    data[present] = round_score(raw[present])
    data = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    values = data[~np.isnan(data)]
    if not data.shape[1] or len(np.unique(values)) < 2:
        return None
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore")
        alpha = float(
            krippendorff.alpha(
                reliability_data=data, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5]
            )
        )
    return alpha if math.isfinite(alpha) else None


def somers_d_all(
    judge: Sequence[float] | np.ndarray, human: Sequence[float] | np.ndarray, unscored: int
) -> float:
    """Somers' D of judge scores on human ratings over every rated dialog of a run,
    ``unscored`` of which the judge left unscored.

    Over the scored dialogs: (pairs the judge orders as people did - pairs it orders the
    other way) / pairs people rated differently, the usual Somers' D. Every pair with an
    unscored dialog counts as ordered the other way, in the numerator and the
    denominator alike, so leaving a dialog unscored can never raise the figure: whatever
    the judge would have said, it scores at least as well (see tests/stats/test_log_list.py).
    NaN when no pair is left to count.
    """
    import numpy as np

    m = len(judge)
    total = m + unscored
    with_unscored = total * (total - 1) // 2 - m * (m - 1) // 2
    untied, net = 0, 0.0
    if m >= 2:
        x, y = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
        pairs = m * (m - 1) // 2
        tied_x = sum(c * (c - 1) // 2 for c in Counter(x.tolist()).values())
        tied_y = sum(c * (c - 1) // 2 for c in Counter(y.tolist()).values())
        untied = pairs - tied_y
        if untied and pairs - tied_x:
            tau = kendall_tau_b(x, y)  # (C - D) / sqrt((pairs - tied_x) (pairs - tied_y))
            if math.isfinite(tau):
                net = tau * math.sqrt((pairs - tied_x) * untied)
    denominator = untied + with_unscored
    if denominator == 0:
        return float("nan")
    return (net - with_unscored) / denominator


def somers_d_all_weighted(counts: np.ndarray, scores: np.ndarray, human: np.ndarray) -> np.ndarray:
    """`somers_d_all` of each row of ``counts`` (how often each dialog is drawn: a bootstrap
    resample, `_resample.resample_counts`), without building the resampled arrays:
    ``scores`` the judge's (NaN where unscored), ``human`` the ratings (`_SomersPlan`)."""
    return _SomersPlan(scores, human)(counts)


class _SomersPlan:
    """What `somers_d_all_weighted` computes once for a judge's scores and the ratings,
    whatever the resamples.

    The scored dialogs are put in (score, rating) order once. A resample's net ordered pairs
    are then ``2 P - S + T``: ``P`` the weight of pairs whose second dialog is higher in
    both score and rating (for each rating level, a cumulative sum over the lower levels'
    dialogs read at each dialog's score), ``S`` the pairs with different scores and ``T``
    those of them with the same rating (both from sums of squared group weights). Linear in
    the dialogs for each pair of rating levels; every sum is of integers (exact)."""

    def __init__(self, scores: np.ndarray, human: np.ndarray) -> None:
        import numpy as np

        x, y = np.asarray(scores, dtype=float), np.asarray(human, dtype=float)
        scored = np.flatnonzero(np.isfinite(x))
        order = scored[np.lexsort((y[scored], x[scored]))]
        xs, ys = x[order], y[order]
        level = np.unique(ys, return_inverse=True)[1].reshape(-1)
        levels = int(level.max(initial=-1)) + 1
        self.scored = len(order)
        # each level's dialogs (in score order), and where each of its dialogs' score group
        # begins in each lower level's cumulative sum: the dialogs strictly below it
        self.at: list[np.ndarray] = []
        self.lower: list[list[np.ndarray]] = []
        self.table: tuple[Any, ...] | None = None
        if len(order):
            new_score = np.r_[True, xs[1:] != xs[:-1]]
            new_cell = new_score | np.r_[True, ys[1:] != ys[:-1]]
            score_starts = np.flatnonzero(new_score)
            group_start = score_starts[np.cumsum(new_score) - 1]
            positions = [np.flatnonzero(level == k) for k in range(levels)]
            for k in range(levels):
                self.at.append(order[positions[k]])
                starts = group_start[positions[k]]
                self.lower.append([np.searchsorted(positions[j], starts) for j in range(k)])
            self.score_groups = _TiedGroups(order, score_starts)
            self.cell_groups = _TiedGroups(order, np.flatnonzero(new_cell))
            # few distinct scores (integers, averages of a few samples): a resample is read
            # as the table of its counts by score group and rating level
            cell_starts = np.flatnonzero(new_cell)
            groups = len(score_starts)
            if 4 * len(cell_starts) <= len(order) and groups * levels <= len(order):
                cell_group = (np.cumsum(new_score) - 1)[cell_starts]
                self.table = (order, cell_starts, cell_group, level[cell_starts], groups, levels)

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        import numpy as np

        counts = np.atleast_2d(np.asarray(counts))
        rows = len(counts)
        total = counts.sum(axis=1, dtype=np.int64).astype(float)
        m = np.zeros(rows)
        net = np.zeros(rows)
        level_squares = np.zeros(rows)
        if self.table is not None:
            m, net, level_squares = self._by_table(counts)
        elif self.scored:
            squares = np.zeros(rows, dtype=np.int64)
            below: list[np.ndarray] = []  # per lower level: its cumulative sums
            higher_both = np.zeros(rows)
            for at, lower_at in zip(self.at, self.lower, strict=True):
                weight = np.take(counts, at, axis=1)
                cum = np.zeros((rows, len(at) + 1), dtype=np.int64)
                np.cumsum(weight, axis=1, out=cum[:, 1:])
                level_squares += cum[:, -1].astype(float) ** 2
                m += cum[:, -1]
                squares += np.einsum("ij,ij->i", weight, weight, dtype=np.int64)
                if below:
                    lower = np.zeros((rows, len(at)), dtype=np.int64)
                    for cumulative, index in zip(below, lower_at, strict=True):
                        lower += np.take(cumulative, index, axis=1)
                    higher_both += np.einsum("ij,ij->i", weight, lower, dtype=np.int64)
                below.append(cum)
            squares = squares.astype(float)
            different_score = (m * m - self.score_groups.squared(counts, squares)) / 2
            same_level = (level_squares - self.cell_groups.squared(counts, squares)) / 2
            net = 2 * higher_both - different_score + same_level
        untied = (m * m - level_squares) / 2
        with_unscored = total * (total - 1) / 2 - m * (m - 1) / 2
        denominator = untied + with_unscored
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(denominator > 0, (net - with_unscored) / denominator, np.nan)

    def _by_table(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``m``, the net ordered pairs and the sum of squared level weights of each
        resample, from its counts summed by score group and rating level (the same integers
        as the dialog by dialog sums)."""
        import numpy as np

        assert self.table is not None
        order, starts, group, level, groups, levels = self.table
        cell = np.add.reduceat(np.take(counts, order, axis=1), starts, axis=1, dtype=np.int64)
        table = np.zeros((len(counts), groups, levels), dtype=np.int64)
        table[:, group, level] = cell
        by_group, by_level = table.sum(axis=2), table.sum(axis=1)
        m = by_level.sum(axis=1).astype(float)
        level_squares = (by_level * by_level).sum(axis=1).astype(float)
        # the weight below each cell in both score and rating
        below = np.zeros_like(table)
        below[:, 1:, 1:] = np.cumsum(np.cumsum(table, axis=1), axis=2)[:, :-1, :-1]
        higher_both = (table * below).sum(axis=(1, 2)).astype(float)
        different_score = (m * m - (by_group * by_group).sum(axis=1)) / 2
        same_level = (level_squares - (cell * cell).sum(axis=1)) / 2
        return m, 2 * higher_both - different_score + same_level, level_squares


class _TiedGroups:
    """Groups of consecutive dialogs of ``order`` (beginning at ``starts``): the sum over
    the groups of each row's squared group weight (`squared`)."""

    def __init__(self, order: np.ndarray, starts: np.ndarray) -> None:
        import numpy as np

        sizes = np.diff(np.r_[starts, len(order)])
        tied = sizes > 1
        self.tied = bool(tied.any())
        self.columns = order[np.flatnonzero(np.repeat(tied, sizes))]
        self.starts = np.r_[0, np.cumsum(sizes[tied])[:-1]]

    def squared(self, counts: np.ndarray, squares: np.ndarray) -> np.ndarray:
        """Each row's squared group weights summed: each dialog's square (``squares``, the
        rows' sums of squared counts), plus twice the products within the groups of more
        than one dialog (summed over those dialogs only)."""
        import numpy as np

        if not self.tied:
            return squares
        within = np.take(counts, self.columns, axis=1).astype(np.int64)
        sums = np.add.reduceat(within, self.starts, axis=1)
        return squares + (sums * sums).sum(axis=1) - (within * within).sum(axis=1)


def somers_d_all_ci(
    scores: Sequence[float] | np.ndarray,
    human: Sequence[float] | np.ndarray,
    resamples: int,
    seed: int,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of `somers_d_all` over rated dialogs: ``scores`` the
    judge's (NaN where it left the dialog unscored), ``human`` the ratings. Each resample
    draws dialogs, scored and unscored alike, with replacement (the counts of
    `_resample.resample_counts`, shared by every judge of the same dialogs and seed).
    (NaN, NaN) with ``resamples=0``, fewer than three dialogs or no finite resample."""
    import numpy as np

    from ._resample import batches, percentile_interval, resample_counts

    x, y = np.asarray(scores, dtype=float), np.asarray(human, dtype=float)
    n = len(x)
    if resamples <= 0 or n < 3:
        return math.nan, math.nan
    counts = resample_counts(n, resamples, seed)
    plan = _SomersPlan(x, y)
    values = np.concatenate(
        [plan(counts[start : start + rows]) for start, rows in batches(resamples, n)]
    )
    return percentile_interval(values, confidence)


BCA_MAX_N = 1000
"""Largest sample for the BCa bootstrap interval (its jackknife costs n x n); larger samples
get percentile intervals (the comparison and the human ceiling alike)."""


def spearman_along(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray | float:
    """Spearman's rho along ``axis``, vectorised over the other axes (for bootstraps).

    Average-tie ranks (``scipy.stats.rankdata``), then Pearson's r of the ranks; a row
    without variation on either side gives NaN.
    """
    import numpy as np
    from scipy import stats

    rx = stats.rankdata(x, axis=axis)
    ry = stats.rankdata(y, axis=axis)
    rx = rx - rx.mean(axis=axis, keepdims=True)
    ry = ry - ry.mean(axis=axis, keepdims=True)
    numerator = (rx * ry).sum(axis=axis)
    denominator = np.sqrt((rx**2).sum(axis=axis) * (ry**2).sum(axis=axis))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(
            denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan
        )
    return float(rho) if np.ndim(rho) == 0 else rho


def scipy_bootstrap(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., Any],
    resamples: int,
    seed: int,
    method: str = "BCa",
    confidence: float = 0.95,
    batch: int | None = None,
) -> tuple[tuple[float, float], np.ndarray] | None:
    """``scipy.stats.bootstrap`` over paired rows (dialogs) of a vectorised statistic.

    Returns the interval and the bootstrap distribution, or None where scipy cannot
    compute it or its bounds are not finite (e.g. resamples without variation).
    """
    import warnings

    import numpy as np
    from scipy import stats

    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore")
        try:
            result = stats.bootstrap(
                data,
                statistic,
                n_resamples=resamples,
                batch=batch,
                paired=True,
                vectorized=True,
                confidence_level=confidence,
                method=method,
                rng=np.random.default_rng(seed),
            )
        except (ValueError, FloatingPointError):
            return None
    low, high = result.confidence_interval
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    return (float(low), float(high)), np.asarray(result.bootstrap_distribution, float)


ICC_KINDS = ("c1", "a1", "ck", "ak")
"""The intraclass correlations `icc` gives, in McGraw & Wong's (1996) names: ICC(C,1)
consistency and ICC(A,1) absolute agreement of a single rating, ICC(C,k) and ICC(A,k) of
the mean of the k raters (Shrout & Fleiss's ICC(3,1), ICC(2,1), ICC(3,k), ICC(2,k);
pingouin's ICC3, ICC2, ICC3k, ICC2k)."""


def icc(ratings: Sequence[Sequence[float]] | np.ndarray, confidence: float = 0.95) -> dict:
    """Intraclass correlations of targets (rows: dialogs, responses or responders) x raters
    (columns: e.g. a judge and the people's aggregate), two-way model, with McGraw & Wong's
    (1996) F-based intervals: ``icc_c1``, ``icc_a1``, ``icc_ck``, ``icc_ak``, each with
    ``_low`` / ``_high``, and ``icc_n`` (targets used).

    Rows with a missing rating are left out. From the two-way ANOVA's mean squares (targets
    MSR, raters MSC, residual MSE; n targets, k raters):
    ICC(C,1) = (MSR - MSE) / (MSR + (k-1) MSE), ICC(A,1) = (MSR - MSE) / (MSR + (k-1) MSE
    + k (MSC - MSE) / n); the average measures are (MSR - MSE) / MSR and (MSR - MSE) /
    (MSR + (MSC - MSE) / n). Consistency's interval is the F interval of MSR / MSE; absolute
    agreement's uses Satterthwaite's degrees of freedom (McGraw & Wong's Table 7, as
    pingouin's ``intraclass_corr`` and R's ``psych::ICC``), and its average-measure bounds
    are the single-measure bounds stepped up by Spearman-Brown. NaN where undefined (fewer
    than two complete rows or raters, or no variation at all)."""
    import numpy as np
    from scipy.stats import f

    keys = [f"icc_{kind}{end}" for kind in ICC_KINDS for end in ("", "_low", "_high")]
    out: dict = dict.fromkeys(keys, math.nan)
    data = np.asarray(ratings, dtype=float)
    if data.ndim != 2:
        raise ValueError("icc needs a targets x raters table")
    data = data[np.isfinite(data).all(axis=1)]
    n, k = data.shape
    out["icc_n"] = n
    if n < 2 or k < 2:
        return out
    grand = data.mean()
    ss_rows = k * float(((data.mean(axis=1) - grand) ** 2).sum())
    ss_cols = n * float(((data.mean(axis=0) - grand) ** 2).sum())
    ss_error = float(((data - grand) ** 2).sum()) - ss_rows - ss_cols
    msr, msc = ss_rows / (n - 1), ss_cols / (k - 1)
    mse = max(ss_error, 0.0) / ((n - 1) * (k - 1))
    if msr <= 0 and mse <= 0:
        return out
    tail = 1 - (1 - confidence) / 2
    df_rows, df_error = n - 1, (n - 1) * (k - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["icc_c1"] = (msr - mse) / (msr + (k - 1) * mse)
        out["icc_a1"] = a1 = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
        out["icc_ck"] = (msr - mse) / msr if msr > 0 else math.nan
        out["icc_ak"] = (msr - mse) / (msr + (msc - mse) / n)
        if mse > 0:
            ratio = msr / mse
            low_f = ratio / f.ppf(tail, df_rows, df_error)
            high_f = ratio * f.ppf(tail, df_error, df_rows)
            out["icc_c1_low"] = (low_f - 1) / (low_f + k - 1)
            out["icc_c1_high"] = (high_f - 1) / (high_f + k - 1)
            out["icc_ck_low"], out["icc_ck_high"] = 1 - 1 / low_f, 1 - 1 / high_f
            fc = msc / mse
            base = n * (1 + (k - 1) * a1) - k * a1
            v = df_error * (k * a1 * fc + base) ** 2 / (df_rows * (k * a1 * fc) ** 2 + base**2)
            if math.isfinite(v) and v > 0:
                f_high, f_low = f.ppf(tail, df_rows, v), f.ppf(tail, v, df_rows)
                spread = k * msc + (k * n - k - n) * mse
                low = n * (msr - f_high * mse) / (f_high * spread + n * msr)
                high = n * (f_low * msr - mse) / (spread + n * f_low * msr)
                out["icc_a1_low"], out["icc_a1_high"] = low, high
                out["icc_ak_low"] = low * k / (1 + low * (k - 1))
                out["icc_ak_high"] = high * k / (1 + high * (k - 1))
    return {key: float(value) for key, value in out.items() if key != "icc_n"} | {"icc_n": n}
