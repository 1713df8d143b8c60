"""Weighted kappas on a scale's own categories, and the index-spaced kappa of Kumar et al.

Two quadratic weighted kappas, both ``1 - sum(w * observed) / sum(w * expected)`` over a
contingency table of two raters:

- ``standard`` (the default everywhere): the categories are the integers of the rating
  scale (``0..2``, ``1..5``, ``1..7``), ratings rounded half up onto them, and a
  disagreement of ``i`` against ``j`` weighs ``(i - j) ** 2``: the usual QWK. It is the
  plugin's one QWK formula (`stats._agreement.weighted_kappa`) on the scale's own
  categories: mapping a 1-7 scale onto 1-5 and rounding would merge categories and change it.
- ``paper``: the kappa of Kumar et al. (2025, "When LLMs are reliable for judging
  empathic communication"), as their notebook computes it: ratings times 100, rounded;
  the categories are the values *observed* in either rater, sorted, and weights are
  spaced by their **index** (statsmodels ``cohens_kappa(table, wt="quadratic")``). On
  integer ratings that use every category it equals ``standard``; it differs where a
  category in the middle of the scale is never used (the categories on either side
  become neighbours) and on fractional ratings (crowd means, where 3.33 and 3.5 are
  neighbouring categories however far apart they are).

Both are undefined (NaN) where a rater gave every item one rating, as Spearman is.

`kappa_test` adds statsmodels' asymptotic standard error (Fleiss, Cohen and Everitt
1969, as in SAS) and the two-sided p-value of z = kappa / se, which is how the paper's
``Kappa P-value`` column is made.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy import stats

from ..stats._agreement import weighted_kappa

KappaKind = Literal["standard", "paper"]
KAPPAS: tuple[str, ...] = ("standard", "paper")


def _table(a: np.ndarray, b: np.ndarray, categories: np.ndarray) -> np.ndarray:
    k = len(categories)
    ia = np.searchsorted(categories, a)
    ib = np.searchsorted(categories, b)
    table = np.zeros((k, k))
    np.add.at(table, (ia, ib), 1)
    return table


def _kappa_of(table: np.ndarray, spacing: np.ndarray) -> tuple[float, float]:
    """(kappa, its asymptotic standard error) of a table with quadratic weights on
    ``spacing`` (statsmodels' ``cohens_kappa(table, weights=spacing, wt="quadratic")``):
    the kappa is `stats._agreement.weighted_kappa` (NaN where a rater has no variation), the
    standard error statsmodels' formula."""
    n = table.sum()
    if n == 0 or len(spacing) < 2:
        return math.nan, math.nan
    kappa = float(weighted_kappa(table, spacing))
    if not math.isfinite(kappa):
        return math.nan, math.nan
    probs = table / n
    rows, cols = probs.sum(axis=1), probs.sum(axis=0)
    span = spacing[-1] - spacing[0]
    agree_w = 1 - (spacing[:, None] - spacing[None, :]) ** 2 / span**2
    expected_agree = float((agree_w * np.outer(rows, cols)).sum())
    row_w = agree_w @ cols  # mean agreement weight of each row category
    col_w = rows @ agree_w
    term = (agree_w - (row_w[:, None] + col_w[None, :]) * (1 - kappa)) ** 2
    var = ((probs * term).sum() - (kappa - expected_agree * (1 - kappa)) ** 2) / (
        n * (1 - expected_agree) ** 2
    )
    return float(kappa), float(math.sqrt(var)) if var > 0 else math.nan


def scale_categories(scale: Sequence[float]) -> np.ndarray:
    """The integer categories of a scale ``(low, high)``: ``0..2``, ``1..7``."""
    low, high = math.ceil(float(scale[0])), math.floor(float(scale[1]))
    return np.arange(low, high + 1, dtype=float)


def round_half_up(values: np.ndarray) -> np.ndarray:
    """Ratings rounded half up onto whole numbers (2.5 -> 3, never banker's rounding)."""
    return np.floor(np.asarray(values, float) + 0.5)


def standard_kappa(a: Sequence[float], b: Sequence[float], scale: Sequence[float]) -> float:
    """QWK on the scale's own integer categories (ratings rounded half up onto them)."""
    return kappa_test(a, b, "standard", scale)["kappa"]


def paper_kappa(a: Sequence[float], b: Sequence[float]) -> float:
    """Kumar et al.'s kappa: categories = observed values x 100, weights by index."""
    return kappa_test(a, b, "paper")["kappa"]


def kappa_test(
    a: Sequence[float],
    b: Sequence[float],
    kind: str = "standard",
    scale: Sequence[float] | None = None,
) -> dict[str, float]:
    """``{"kappa", "se", "z", "p", "n"}`` of paired ratings (NaN pairs dropped).

    ``kind="standard"`` needs the ``scale``; ``kind="paper"`` ignores it.
    """
    x, y = np.asarray(a, float), np.asarray(b, float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    out = {"kappa": math.nan, "se": math.nan, "z": math.nan, "p": math.nan, "n": float(len(x))}
    if not len(x):
        return out
    if kind == "paper":
        x, y = np.round(x * 100), np.round(y * 100)
        categories = np.unique(np.concatenate([x, y]))
        spacing = np.arange(len(categories), dtype=float)
    elif kind == "standard":
        if scale is None:
            raise ValueError("the standard kappa needs the rating scale (low, high)")
        categories = scale_categories(scale)
        x, y = round_half_up(x), round_half_up(y)
        outside = np.setdiff1d(np.concatenate([x, y]), categories)
        if len(outside):
            raise ValueError(
                f"ratings {outside.tolist()} lie outside the scale {scale[0]:g}-{scale[1]:g}"
            )
        spacing = categories
    else:
        raise ValueError(f"kappa must be one of {', '.join(KAPPAS)}, not {kind!r}")
    kappa, se = _kappa_of(_table(x, y, categories), spacing)
    out["kappa"], out["se"] = kappa, se
    if math.isfinite(kappa) and math.isfinite(se) and se > 0:
        out["z"] = kappa / se
        out["p"] = float(2 * stats.norm.sf(abs(out["z"])))
    return out
