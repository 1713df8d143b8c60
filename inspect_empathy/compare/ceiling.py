"""The human ceiling and cross-fitted calibration inside the comparison.

With several raters per dialog (sample metadata ``human_ratings``), the raters'
agreement with each other (``humans.humans_table``: each pair, each rater against
the rest) is the ceiling, and each judge is read on the same footing
(``humans.judge_vs_aggregate``) on the dialogs the ranking uses. Whatever the
raters, each judge's MAE and QWK are also given after a cross-fitted calibration
(``stats.calibration.calibrated_agreement``) beside the raw ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..stats import calibration, humans
from .stats import BCA_MAX_N, seed_for

LARGE_RESAMPLES = 200
"""Bootstrap resamples of the ceiling's CIs beyond ``BCA_MAX_N`` rated dialogs (each of its
many rows resamples every dialog: this keeps a 10,000-dialog comparison within its budget)."""
ALPHA_LARGE_RESAMPLES = 200
"""Resamples of the raters' alpha CI beyond ``BCA_MAX_N`` dialogs (one alpha per resample)."""

CALIBRATED_COLUMNS = [
    "mae_low",
    "mae_high",
    "qwk_low",
    "qwk_high",
    "mae_calibrated",
    "mae_calibrated_low",
    "mae_calibrated_high",
    "qwk_calibrated",
    "qwk_calibrated_low",
    "qwk_calibrated_high",
]
"""Columns ``judges.csv`` gains from `calibrated_columns` (plus ``calibration_method``)."""


@dataclass
class Ceiling:
    """The raters' table, each judge beside it, the raters' alpha, and a note."""

    humans: pd.DataFrame | None
    beside: pd.DataFrame | None
    alpha: dict[str, float] | None
    note: str


def ratings_table(samples: pd.DataFrame) -> pd.DataFrame | None:
    """Dialogs x raters on 1-5 (``humans.ratings_frame``), or None where no dialog has
    raters' ratings."""
    if "ratings" not in samples:
        return None
    per_dialog = samples.dropna(subset=["ratings"]).groupby("id", sort=True)["ratings"].first()
    if per_dialog.empty:
        return None
    return humans.ratings_frame(per_dialog.to_dict())


def detect_aggregate(ratings: pd.DataFrame, human: pd.Series) -> humans.Aggregate:
    """``mean`` when the logs' human ratings are the raters' means and not their medians,
    else ``median`` (the loaders' default ``rater_aggregate``)."""
    median = humans.aggregate_ratings(ratings, "median")
    mean = humans.aggregate_ratings(ratings, "mean")
    both = pd.DataFrame({"h": human.reindex(ratings.index), "md": median, "mn": mean}).dropna()
    differ = both[~np.isclose(both["md"], both["mn"])]
    if len(differ) and np.allclose(differ["h"], differ["mn"]):
        return "mean"
    return "median"


def human_ceiling(
    samples: pd.DataFrame,
    wide: pd.DataFrame,
    common: pd.Index,
    human: pd.Series,
    judges: list[str],
    resamples: int,
    seed: int,
) -> Ceiling:
    """The ceiling and each judge beside it, or a note saying why there is none.

    ``wide`` holds the scores (dialogs x judges); each judge is compared on the
    ``common`` dialogs (those the ranking uses) that the raters rated.
    """
    ratings = ratings_table(samples)
    if ratings is None:
        why = "no dialog carries several raters' ratings (sample metadata human_ratings)"
        return Ceiling(None, None, None, f"No human ceiling (no humans.csv): {why}.")
    if ratings.shape[1] < 2:
        why = f"the dialogs carry one rater's ratings ({ratings.columns[0]}), the ceiling needs two"
        return Ceiling(None, None, None, f"No human ceiling (no humans.csv): {why}.")
    aggregate = detect_aggregate(ratings, human)
    large = len(ratings) > BCA_MAX_N
    resamples_used = min(resamples, LARGE_RESAMPLES) if large else resamples
    table = humans.humans_table(ratings, aggregate, resamples_used, seed)
    alpha = humans.ordinal_alpha(
        ratings, min(resamples, ALPHA_LARGE_RESAMPLES) if large else resamples, seed
    )
    rows = []
    on = common.intersection(ratings.index)
    for judge in judges:
        scores = wide.loc[on, judge].rename(judge)
        rows.append(humans.judge_vs_aggregate(scores, ratings, aggregate, resamples_used, seed))
    beside = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=humans.COLUMNS)
    note = (
        f"Human ceiling: {ratings.shape[1]} raters ({', '.join(map(str, ratings.columns))}) on "
        f"{len(ratings)} dialogs, aggregate {aggregate}; judges on the {len(on)} common dialogs "
        f"the raters rated"
    )
    if resamples_used != resamples:
        note += f"; ceiling CIs from {resamples_used} percentile resamples"
    return Ceiling(table, beside, alpha, note + ".")


def ceiling_medians(beside: pd.DataFrame, judge: str) -> dict[str, float]:
    """A judge's median Spearman and QWK against the rest of each rater."""
    rows = beside[(beside["rater_a"] == judge) & (beside["rater_b"] != humans.ALL_RATERS)]
    return {
        "vs_rest_spearman": _median(rows["spearman"]),
        "vs_rest_qwk": _median(rows["qwk"]),
    }


def rest_medians(table: pd.DataFrame) -> dict[str, float]:
    """The raters' median Spearman and QWK against the rest (the ceiling to compare with)."""
    rows = table[table["rater_b"] == humans.REST]
    return {"spearman": _median(rows["spearman"]), "qwk": _median(rows["qwk"])}


def _median(values: pd.Series) -> float:
    values = pd.to_numeric(values, errors="coerce").dropna()
    return float(values.median()) if len(values) else math.nan


def calibrated_columns(
    judge: str, x: np.ndarray, h: np.ndarray, method: str, resamples: int, seed: int
) -> dict[str, Any]:
    """Raw MAE / QWK CIs and the cross-fitted calibrated MAE / QWK with CIs of one judge on
    the common dialogs (``stats.calibration.calibrated_agreement``): the folds' seed derives from
    the judge's name, the resamples are the pairs' (the judge table's Spearman CI and the
    paired tests draw the same common dialogs once for every judge). NaN with fewer than
    two dialogs."""
    out: dict[str, Any] = dict.fromkeys(CALIBRATED_COLUMNS, math.nan)
    out["calibration_method"] = method
    if len(x) < 2:
        return out
    result = calibration.calibrated_agreement(
        x, h, method=method, seed=seed_for(judge, seed=seed), resamples=resamples,
        resample_seed=seed_for("pairs", seed=seed),
    )  # fmt: skip
    out.update({key: result[key] for key in CALIBRATED_COLUMNS})
    return out
