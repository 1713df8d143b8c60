"""Plain statistics of judge scores and human ratings on the 1-5 scale (numpy/scipy).

Used by the Inspect metrics (`metrics.py`) and the comparison; numpy, scipy and
krippendorff are imported where they are used, since Inspect imports every plugin at
start-up, also for runs that never compute these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def round_score(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Round scores half up onto the 1-5 integer scale (4.5 -> 5, 2.5 -> 3)."""
    import numpy as np

    return np.clip(np.floor(np.asarray(values, dtype=float) + 0.5), 1, 5).astype(int)


def quadratic_weighted_kappa(
    a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray, levels: int = 5
) -> float:
    """Cohen's kappa with quadratic weights for two raters on a 1..levels scale."""
    import numpy as np

    a = np.asarray(a, dtype=int) - 1
    b = np.asarray(b, dtype=int) - 1
    observed = np.zeros((levels, levels))
    np.add.at(observed, (a, b), 1)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    i, j = np.indices((levels, levels))
    weights = (i - j) ** 2 / (levels - 1) ** 2
    denominator = (weights * expected).sum()
    if denominator == 0:
        return float("nan")
    return float(1 - (weights * observed).sum() / denominator)


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
        from scipy import stats

        result["spearman"] = float(stats.spearmanr(x, y).statistic)
        result["kendall"] = float(stats.kendalltau(x, y, variant="b").statistic)
        result["pearson"] = float(stats.pearsonr(x, y).statistic)
    qwk = quadratic_weighted_kappa(rx, ry)
    if math.isfinite(qwk):
        result["qwk"] = qwk
    return result


def shares_by_level(rounded: np.ndarray) -> dict[str, float]:
    """Share of rounded scores (see `round_score`) at each level 1-5, as ``share_1``..."""
    import numpy as np

    return {f"share_{k}": float(np.mean(rounded == k)) for k in range(1, 6)}


def krippendorff_alpha(ratings: Sequence[Sequence[float | None]]) -> float | None:
    """Ordinal Krippendorff's alpha for judges (rows) x items (columns), rounded to 1-5.

    Missing ratings are None. Returns None where alpha is undefined (fewer than
    two judges, no item rated twice, or no variation at all).
    """
    import krippendorff
    import numpy as np

    raw = np.array([[np.nan if v is None else v for v in row] for row in ratings], dtype=float)
    if raw.ndim != 2 or raw.shape[0] < 2:
        return None
    present = ~np.isnan(raw)
    data = np.full(raw.shape, np.nan)
    data[present] = round_score(raw[present])
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    values = data[:, pairable]
    if values.size == 0 or len(np.unique(values[~np.isnan(values)])) < 2:
        return None
    alpha = krippendorff.alpha(
        reliability_data=data, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5]
    )
    return float(alpha) if math.isfinite(alpha) else None
