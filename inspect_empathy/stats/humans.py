"""The human ceiling: how well several raters agree with each other, and a judge beside them.

Input everywhere is a ratings table: a pandas DataFrame with one row per dialog
(indexed by dialog id), one column per rater, ratings on the 1-5 scale (fractional
ratings allowed) and NaN where a rater did not rate a dialog. Missing ratings are
kept: every figure is computed on the dialogs where the raters it compares are
present, and its ``n`` says how many those are.

Spearman is computed on the ratings as given, QWK on the ratings rounded half up
onto 1-5 (`stats._agreement.round_score`), Krippendorff's alpha (ordinal) on the rounded
ratings too. Confidence intervals come from a bootstrap over dialogs
(``scipy.stats.bootstrap``, BCa falling back to percentile, fixed seed); with
``resamples=0`` they are NaN and nothing is resampled.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from ._agreement import (
    BCA_MAX_N,
    krippendorff_alpha,
    quadratic_weighted_kappa,
    qwk_along,
    round_score,
    scipy_bootstrap,
    spearman_along,
)

Aggregate = Literal["median", "mean"]

COLUMNS = [
    "rater_a",
    "rater_b",
    "n",
    "spearman",
    "spearman_low",
    "spearman_high",
    "qwk",
    "qwk_low",
    "qwk_high",
]
"""Columns of `humans_table` (and of ``humans.csv``)."""

REST = "rest"
"""``rater_b`` of a rater compared with the aggregate of the other raters."""

ALL_RATERS = "all raters"
"""``rater_b`` of a judge compared with the aggregate of every rater."""

BATCH = 250
"""Bootstrap resamples computed at once: bounds memory whatever ``resamples`` is."""

# --------------------------------------------------------------------------- input


def validate_ratings(df: pd.DataFrame, min_raters: int = 2) -> pd.DataFrame:
    """The ratings table as floats, or a ValueError naming the rater, dialog and problem.

    Every non-missing rating must be a number from 1 to 5; rater names must be
    unique; at least ``min_raters`` raters are needed.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"ratings must be a pandas DataFrame (dialogs x raters), not {type(df)}")
    names = [str(c) for c in df.columns]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(f"ratings: rater names must be unique, repeated: {', '.join(duplicated)}")
    if len(names) < min_raters:
        raise ValueError(
            f"ratings: {len(names)} rater column(s) ({', '.join(names) or 'none'}), "
            f"need at least {min_raters}"
        )
    out = {}
    for column, name in zip(df.columns, names, strict=True):
        out[name] = _rating_column(df[column], f"rater '{name}'")
    return pd.DataFrame(out, index=df.index)


def _rating_column(values: pd.Series, what: str) -> pd.Series:
    numbers = pd.to_numeric(values, errors="coerce").astype(float)
    for dialog, raw, number in zip(values.index, values, numbers, strict=True):
        if pd.isna(number):
            if not pd.isna(raw):
                raise ValueError(f"ratings: {what}, dialog '{dialog}': {raw!r} is not a number")
        elif not 1 <= number <= 5:
            raise ValueError(
                f"ratings: {what}, dialog '{dialog}': {raw!r} is outside the 1-5 scale"
            )
    return numbers


def ratings_frame(per_dialog: Mapping[str, Mapping[str, float | None]]) -> pd.DataFrame:
    """The ratings table from ``{dialog id: {rater: rating or None}}`` (e.g. each
    sample's ratings by rater name): raters in order of first appearance, NaN where
    a rater did not rate a dialog. Ratings are checked as in `validate_ratings`."""
    by_name = {
        dialog: {str(rater): value for rater, value in ratings.items() if value is not None}
        for dialog, ratings in per_dialog.items()
    }
    raters = list(dict.fromkeys(r for ratings in by_name.values() for r in ratings))
    frame = pd.DataFrame(
        [[ratings.get(r) for r in raters] for ratings in by_name.values()],
        index=list(by_name),
        columns=raters,
        dtype=object,
    )
    return validate_ratings(frame, min_raters=1)


def raters_present(df: pd.DataFrame) -> pd.Series:
    """How many raters rated each dialog."""
    return validate_ratings(df, min_raters=1).notna().sum(axis=1)


def aggregate_ratings(df: pd.DataFrame, aggregate: Aggregate = "median") -> pd.Series:
    """Each dialog's aggregate rating over the raters present (NaN where none is)."""
    ratings = validate_ratings(df, min_raters=1)
    return _aggregate(ratings, aggregate)


def _aggregate(ratings: pd.DataFrame, aggregate: str) -> pd.Series:
    if aggregate == "median":
        return ratings.median(axis=1, skipna=True)
    if aggregate == "mean":
        return ratings.mean(axis=1, skipna=True)
    raise ValueError(f"rater aggregate must be 'median' or 'mean', not {aggregate!r}")


# --------------------------------------------------------------------------- statistics


def rowwise(fn: Callable[..., float]) -> Callable[..., Any]:
    """A statistic of 1-D arrays made to work along the last axis of stacked resamples."""

    def statistic(*arrays: np.ndarray, axis: int = -1) -> np.ndarray | float:
        moved = [np.moveaxis(np.asarray(a), axis, -1) for a in arrays]
        shape = moved[0].shape[:-1]
        flat = [a.reshape(-1, a.shape[-1]) for a in moved]
        values = np.array([fn(*row) for row in zip(*flat, strict=True)], dtype=float)
        return values.reshape(shape) if shape else float(values[0])

    return statistic


def bootstrap_ci(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., Any],
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Paired bootstrap CI over dialogs of a vectorised ``statistic(*data, axis=-1)``.

    BCa, falling back to percentile where BCa is undefined (percentile alone beyond
    `BCA_MAX_N` dialogs, where the jackknife would cost n x n); (NaN, NaN) where
    neither gives finite bounds (e.g. resamples without variation) or with
    ``resamples=0``.
    """
    if resamples <= 0 or len(data[0]) < 3:
        return math.nan, math.nan
    methods = ("BCa", "percentile") if len(data[0]) <= BCA_MAX_N else ("percentile",)
    for method in methods:
        found = scipy_bootstrap(data, statistic, resamples, seed, method, confidence, BATCH)
        if found is not None:
            return found[0]
    return math.nan, math.nan


def _varied(*arrays: np.ndarray) -> bool:
    return all(len(a) >= 2 and np.ptp(a) > 0 for a in arrays)


def agreement_row(
    a: str, b: str, x: np.ndarray, y: np.ndarray, resamples: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """One row of `COLUMNS`: Spearman of ``x`` and ``y`` and QWK of both rounded half up.

    ``x`` and ``y`` are paired ratings on the 1-5 scale with nothing missing.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    row: dict[str, Any] = {"rater_a": a, "rater_b": b, "n": len(x)}
    row |= dict.fromkeys(COLUMNS[3:], math.nan)
    if _varied(x, y):
        row["spearman"] = float(stats.spearmanr(x, y).statistic)
        row["spearman_low"], row["spearman_high"] = bootstrap_ci(
            (x, y), spearman_along, resamples, seed
        )
    if len(x):
        rx, ry = round_score(x), round_score(y)
        row["qwk"] = quadratic_weighted_kappa(rx, ry)
        if math.isfinite(row["qwk"]):
            row["qwk_low"], row["qwk_high"] = bootstrap_ci(
                (rx, ry), qwk_along, resamples, seed
            )
    return row


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS).astype({"n": int})


def rater_pairs(df: pd.DataFrame, resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Each pair of raters (in column order) on the dialogs both rated: `COLUMNS`."""
    ratings = validate_ratings(df)
    rows = []
    for a, b in itertools.combinations(ratings.columns, 2):
        both = ratings[[a, b]].dropna()
        rows.append(agreement_row(a, b, both[a].to_numpy(), both[b].to_numpy(), resamples, seed))
    return _frame(rows)


def rest_of(ratings: pd.DataFrame, rater: str, aggregate: Aggregate = "median") -> pd.Series:
    """Each dialog's aggregate over the raters other than ``rater`` (NaN where none)."""
    return _aggregate(ratings.drop(columns=[rater]), aggregate)


def rater_vs_rest(
    df: pd.DataFrame, aggregate: Aggregate = "median", resamples: int = 2000, seed: int = 0
) -> pd.DataFrame:
    """Each rater against the aggregate of the *other* raters (leave-one-rater-out).

    One row per rater (``rater_b`` is ``"rest"``), on the dialogs that rater rated
    and at least one other rater rated too.
    """
    ratings = validate_ratings(df)
    rows = []
    for rater in ratings.columns:
        pair = pd.DataFrame({"x": ratings[rater], "y": rest_of(ratings, rater, aggregate)})
        pair = pair.dropna()
        rows.append(
            agreement_row(rater, REST, pair["x"].to_numpy(), pair["y"].to_numpy(), resamples, seed)
        )
    return _frame(rows)


def humans_table(
    df: pd.DataFrame, aggregate: Aggregate = "median", resamples: int = 2000, seed: int = 0
) -> pd.DataFrame:
    """The rows of ``humans.csv``: every rater pair, then every rater against the rest."""
    return pd.concat(
        [rater_pairs(df, resamples, seed), rater_vs_rest(df, aggregate, resamples, seed)],
        ignore_index=True,
    )[COLUMNS]


def _rounded_matrix(ratings: pd.DataFrame) -> np.ndarray:
    """Raters x dialogs, rounded half up onto 1-5, NaN where missing."""
    values = ratings.to_numpy(dtype=float).T
    missing = np.isnan(values)
    rounded = round_score(np.where(missing, 3.0, values)).astype(float)
    return np.where(missing, np.nan, rounded)


def _alpha_of(matrix: np.ndarray) -> float:
    alpha = krippendorff_alpha(matrix)
    return math.nan if alpha is None else alpha


def ordinal_alpha(df: pd.DataFrame, resamples: int = 2000, seed: int = 0) -> dict[str, float]:
    """Krippendorff's alpha (ordinal, values 1..5) over all raters, with a bootstrap
    CI over dialogs: ``{"alpha", "alpha_low", "alpha_high", "n"}`` (``n``: dialogs
    rated by two raters or more, the ones alpha is computed on)."""
    ratings = validate_ratings(df)
    matrix = _rounded_matrix(ratings)
    matrix = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
    value = _alpha_of(matrix)
    out = {"alpha": value, "alpha_low": math.nan, "alpha_high": math.nan}
    out["n"] = float(matrix.shape[1])
    if math.isfinite(value):
        columns = np.arange(matrix.shape[1])
        out["alpha_low"], out["alpha_high"] = bootstrap_ci(
            (columns,), rowwise(lambda idx: _alpha_of(matrix[:, idx.astype(int)])), resamples, seed
        )
    return out


# --------------------------------------------------------------------------- judges


def _judge(judge: pd.Series, ratings: pd.DataFrame) -> pd.Series:
    """The judge's scores aligned on the ratings' dialogs (NaN where unscored)."""
    if not isinstance(judge, pd.Series):
        raise TypeError(
            f"judge scores must be a pandas Series indexed by dialog, not {type(judge)}"
        )
    unknown = [str(i) for i in judge.index.difference(ratings.index)]
    if unknown:
        shown = ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else "")
        raise ValueError(
            f"judge '{judge.name}': {len(unknown)} dialog(s) not in the ratings: {shown}"
        )
    if judge.index.has_duplicates:
        raise ValueError(f"judge '{judge.name}': dialog ids repeat in its scores")
    name = "judge" if judge.name is None else str(judge.name)
    return _rating_column(judge, f"judge '{name}'").reindex(ratings.index)


def judge_vs_aggregate(
    judge: pd.Series,
    df: pd.DataFrame,
    aggregate: Aggregate = "median",
    resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """A judge read on the same footing as a rater against the rest.

    For each rater R, the judge against the aggregate of the raters other than R,
    on the dialogs where "R against the rest" is computed (and the judge scored):
    the same target and the same dialogs as R's row in `rater_vs_rest`, so a
    judge row beside a rater row compares like with like (``rater_b`` is
    ``"rest of R"``). A last row compares the judge with the aggregate of every
    rater (``rater_b`` ``"all raters"``), the human rating used elsewhere. The
    judge is a Series indexed by dialog id (its name is ``rater_a``).
    """
    ratings = validate_ratings(df)
    scores = _judge(judge, ratings)
    name = "judge" if judge.name is None else str(judge.name)
    rows = []
    for rater in ratings.columns:
        frame = pd.DataFrame(
            {"x": scores, "y": rest_of(ratings, rater, aggregate), "r": ratings[rater]}
        ).dropna()
        rows.append(
            agreement_row(
                name,
                f"{REST} of {rater}",
                frame["x"].to_numpy(),
                frame["y"].to_numpy(),
                resamples,
                seed,
            )
        )
    frame = pd.DataFrame({"x": scores, "y": _aggregate(ratings, aggregate)}).dropna()
    rows.append(
        agreement_row(
            name, ALL_RATERS, frame["x"].to_numpy(), frame["y"].to_numpy(), resamples, seed
        )
    )
    return _frame(rows)


def _median(values: pd.Series) -> float:
    values = values.dropna()
    return float(values.median()) if len(values) else math.nan


def ceiling_summary(df: pd.DataFrame, aggregate: Aggregate = "median") -> dict[str, float]:
    """A few scalars for a log's metrics (no bootstrap): raters, dialogs, median
    pairwise QWK and Spearman, median rater-vs-rest QWK and Spearman, ordinal alpha."""
    ratings = validate_ratings(df)
    pairs = rater_pairs(ratings, resamples=0)
    rest = rater_vs_rest(ratings, aggregate, resamples=0)
    present = ratings.notna().sum(axis=1)
    return {
        "raters": float(ratings.shape[1]),
        "dialogs": float((present > 0).sum()),
        "dialogs_missing_raters": float(((present > 0) & (present < ratings.shape[1])).sum()),
        "pair_qwk_median": _median(pairs["qwk"]),
        "pair_spearman_median": _median(pairs["spearman"]),
        "rest_qwk_median": _median(rest["qwk"]),
        "rest_spearman_median": _median(rest["spearman"]),
        "alpha": ordinal_alpha(ratings, resamples=0)["alpha"],
    }


def judge_summary(
    judge: pd.Series, df: pd.DataFrame, aggregate: Aggregate = "median"
) -> dict[str, float]:
    """The judge's figures to set beside `ceiling_summary` (no bootstrap): median QWK
    and Spearman against the rest of each rater, and against all raters."""
    table = judge_vs_aggregate(judge, df, aggregate, resamples=0)
    rest, everyone = table.iloc[:-1], table.iloc[-1]
    return {
        "rest_qwk_median": _median(rest["qwk"]),
        "rest_spearman_median": _median(rest["spearman"]),
        "all_qwk": float(everyone["qwk"]),
        "all_spearman": float(everyone["spearman"]),
        "n": float(everyone["n"]),
    }
