"""Statistics for comparing judges: bootstrap CIs, paired differences, bias diagnostics."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .metrics import agreement, krippendorff_alpha, round_score, shares_by_level

HUMAN = "human"
"""Label of the human ratings wherever they are listed beside the judges."""

LEVELS = (1, 2, 3, 4, 5)


def spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray | float:
    """Spearman's rho along ``axis`` (vectorised over bootstrap resamples).

    Ties get average ranks, as in ``scipy.stats.spearmanr``. A resample with no
    variation on either side gives NaN.
    """
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


def _varied(*arrays: np.ndarray) -> bool:
    return all(len(a) >= 3 and np.ptp(a) > 0 for a in arrays)


def _bootstrap(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray | float],
    resamples: int,
    seed: int,
) -> Any:
    """Paired bootstrap (BCa, falling back to percentile where BCa is undefined)."""
    result = None
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                result = stats.bootstrap(
                    data,
                    statistic,
                    n_resamples=resamples,
                    paired=True,
                    vectorized=True,
                    method=method,
                    rng=np.random.default_rng(seed),
                )
            except (ValueError, FloatingPointError):
                continue
        low, high = result.confidence_interval
        if math.isfinite(low) and math.isfinite(high):
            return result
    return result


def spearman_ci(
    x: np.ndarray, y: np.ndarray, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """95% bootstrap CI of Spearman's rho between paired ``x`` and ``y``."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if not _varied(x, y) or resamples <= 0:
        return math.nan, math.nan
    result = _bootstrap((x, y), spearman, resamples, seed)
    if result is None:
        return math.nan, math.nan
    low, high = result.confidence_interval
    return float(low), float(high)


def paired_difference(
    a: np.ndarray, b: np.ndarray, human: np.ndarray, resamples: int = 2000, seed: int = 0
) -> dict[str, float]:
    """Spearman(a, human) - Spearman(b, human) on the same samples, with a paired bootstrap.

    Samples (dialogs) are resampled with replacement, keeping each dialog's two
    judge scores and human rating together. Returns the difference, its 95% CI
    and a two-sided bootstrap p-value for "no difference" (twice the share of
    resampled differences on the far side of zero, with a +1 correction so it
    is never exactly 0).
    """
    a, b, h = (np.asarray(v, float) for v in (a, b, human))
    out = {"diff": math.nan, "diff_low": math.nan, "diff_high": math.nan, "p_value": math.nan}
    if not _varied(a, h) or not _varied(b, h):
        return out

    def statistic(x: np.ndarray, y: np.ndarray, z: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(spearman(x, z, axis=axis)) - np.asarray(spearman(y, z, axis=axis))

    out["diff"] = float(statistic(a, b, h))
    if resamples <= 0:
        return out
    result = _bootstrap((a, b, h), statistic, resamples, seed)
    if result is None:
        return out
    low, high = result.confidence_interval
    draws = np.asarray(result.bootstrap_distribution, float)
    draws = draws[np.isfinite(draws)]
    out["diff_low"], out["diff_high"] = float(low), float(high)
    if len(draws):
        tail = min(int((draws <= 0).sum()), int((draws >= 0).sum()))
        out["p_value"] = min(1.0, 2 * (tail + 1) / (len(draws) + 1))
    return out


def _methods(methods: pd.Series) -> str:
    counts = methods.dropna().astype(str).value_counts()
    if counts.empty:
        return ""
    if len(counts) == 1:
        return str(counts.index[0])
    return ", ".join(f"{m} {n}" for m, n in counts.items())


def level_shares(values: np.ndarray) -> dict[str, float]:
    """Share of values at each level 1-5 (rounded half up) and at 3 or 4 together."""
    values = np.asarray(values, float)
    values = values[np.isfinite(values)]
    if not len(values):
        return {f"share_{k}": math.nan for k in LEVELS} | {"share_3_4": math.nan}
    shares = shares_by_level(round_score(values))
    shares["share_3_4"] = shares["share_3"] + shares["share_4"]
    return shares


def judge_table(samples: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """One row per judge: agreement with humans (with a Spearman CI), volume, cost, bias.

    ``samples`` has one row per judge and dialog (see ``compare.load_scores``).
    Judges are ranked by Spearman with the human ratings (then QWK, then MAE).
    """
    rows = []
    for judge, group in samples.groupby("judge", sort=False):
        scored = group[group["score"].notna()]
        rated = scored[scored["human"].notna()]
        x, h = rated["score"].to_numpy(float), rated["human"].to_numpy(float)
        row: dict[str, object] = {
            "judge": judge,
            "model": group["model"].iloc[0],
            "method": _methods((scored if len(scored) else group)["method"]),
            "samples": len(group),
            "scored": len(scored),
            "unscored": len(group) - len(scored),
        }
        metrics = agreement(x, h) if len(rated) else {}
        row["n_human"] = len(rated)
        row["spearman"] = metrics.get("spearman", math.nan)
        row["spearman_low"], row["spearman_high"] = spearman_ci(x, h, resamples, seed)
        for key in ("kendall", "pearson", "mae", "rmse", "qwk", "exact", "within_one"):
            row[key] = metrics.get(key, math.nan)
        row["mean_score"] = float(scored["score"].mean()) if len(scored) else math.nan
        row["tokens_per_sample"] = float(group["tokens"].mean())
        row["length_spearman"] = _length_rho(scored["score"], scored["reply_words"])
        row["share_3_4"] = level_shares(scored["score"].to_numpy(float))["share_3_4"]
        row["logs"] = group["log"].nunique()
        rows.append(row)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table = table.sort_values(
        ["spearman", "qwk", "mae"], ascending=[False, False, True], na_position="last"
    ).reset_index(drop=True)
    table.insert(0, "rank", range(1, len(table) + 1))
    return table


def _length_rho(score: pd.Series, words: pd.Series) -> float:
    both = pd.DataFrame({"s": score, "w": words}).dropna()
    if not _varied(both["s"].to_numpy(float), both["w"].to_numpy(float)):
        return math.nan
    return float(spearman(both["s"].to_numpy(float), both["w"].to_numpy(float)))


def wide_scores(samples: pd.DataFrame, judges: list[str]) -> pd.DataFrame:
    """Scores as dialogs (rows: dataset, id) x judges (columns), NaN where unscored."""
    wide = samples.pivot_table(
        index=["dataset", "id"], columns="judge", values="score", aggfunc="mean", dropna=False
    )
    return wide.reindex(columns=judges)


def human_ratings(samples: pd.DataFrame) -> pd.Series:
    """The human rating of each dialog (dataset, id), where any log has one."""
    rated = samples.dropna(subset=["human"])
    return rated.groupby(["dataset", "id"])["human"].first()


def pair_table(samples: pd.DataFrame, judges: list[str], resamples: int, seed: int) -> pd.DataFrame:
    """One row per pair of judges (better-ranked first), on the dialogs both scored.

    With human ratings: difference in Spearman with its paired bootstrap CI and
    p-value. Always: inter-judge Spearman and ordinal Krippendorff's alpha.
    """
    wide = wide_scores(samples, judges)
    human = human_ratings(samples).reindex(wide.index)
    rows = []
    for index, (a, b) in enumerate(itertools.combinations(judges, 2)):
        both = wide[[a, b]].dropna()
        row: dict[str, object] = {"judge_a": a, "judge_b": b, "n_common": len(both)}
        xa, xb = both[a].to_numpy(float), both[b].to_numpy(float)
        row["judge_spearman"] = float(spearman(xa, xb)) if _varied(xa, xb) else math.nan
        alpha = krippendorff_alpha([list(xa), list(xb)]) if len(both) else None
        row["judge_alpha"] = math.nan if alpha is None else alpha
        row["mean_diff"] = float(np.mean(xa - xb)) if len(both) else math.nan
        rated = both.assign(human=human.reindex(both.index)).dropna()
        row["n_human"] = len(rated)
        ya, yb, h = (rated[c].to_numpy(float) for c in (a, b, "human"))
        row["spearman_a"] = float(spearman(ya, h)) if _varied(ya, h) else math.nan
        row["spearman_b"] = float(spearman(yb, h)) if _varied(yb, h) else math.nan
        diff = paired_difference(ya, yb, h, resamples, seed + index)
        row.update(diff)
        low, high = diff["diff_low"], diff["diff_high"]
        row["significant"] = bool(math.isfinite(low) and (low > 0 or high < 0))
        rows.append(row)
    return pd.DataFrame(rows)


def overall_alpha(samples: pd.DataFrame, judges: list[str]) -> float:
    """Ordinal Krippendorff's alpha over all judges (NaN with fewer than two)."""
    wide = wide_scores(samples, judges)
    matrix = [[None if pd.isna(v) else float(v) for v in wide[j]] for j in judges]
    alpha = krippendorff_alpha(matrix) if len(judges) >= 2 else None
    return math.nan if alpha is None else alpha


def length_bias(
    samples: pd.DataFrame, judges: list[str], resamples: int, seed: int
) -> pd.DataFrame:
    """Spearman of score against reply length (words) per judge and for the humans."""
    rows = []
    per_dialog = samples.groupby(["dataset", "id"]).agg(
        human=("human", "first"), reply_words=("reply_words", "first")
    )
    sources = [(j, samples[samples["judge"] == j][["score", "reply_words"]]) for j in judges]
    sources.append((HUMAN, per_dialog.rename(columns={"human": "score"})))
    for name, frame in sources:
        both = frame.dropna()
        s, w = both["score"].to_numpy(float), both["reply_words"].to_numpy(float)
        rho = float(spearman(s, w)) if _varied(s, w) else math.nan
        low, high = spearman_ci(s, w, resamples, seed)
        rows.append(
            {
                "rater": name,
                "n": len(both),
                "length_spearman": rho,
                "low": low,
                "high": high,
                "mean_reply_words": float(w.mean()) if len(w) else math.nan,
            }
        )
    return pd.DataFrame(rows)


def histogram_table(samples: pd.DataFrame, judges: list[str]) -> pd.DataFrame:
    """Share of scores at each level 1-5 per judge and for the humans."""
    rows = []
    for judge in judges:
        values = samples.loc[samples["judge"] == judge, "score"].to_numpy(float)
        rows.append({"rater": judge, "n": int(np.isfinite(values).sum()), **level_shares(values)})
    human = human_ratings(samples).to_numpy(float)
    if len(human):
        rows.append({"rater": HUMAN, "n": len(human), **level_shares(human)})
    return pd.DataFrame(rows)


def emotion_table(samples: pd.DataFrame, judges: list[str]) -> pd.DataFrame:
    """Per emotion and judge: n, mean score, mean human rating, Spearman, MAE.

    Empty when no dialog has an ``emotion`` in its metadata.
    """
    if "emotion" not in samples or samples["emotion"].isna().all():
        return pd.DataFrame()
    rows = []
    for (emotion, judge), group in samples.dropna(subset=["emotion"]).groupby(
        ["emotion", "judge"], sort=True
    ):
        scored = group.dropna(subset=["score"])
        rated = scored.dropna(subset=["human"])
        x, h = rated["score"].to_numpy(float), rated["human"].to_numpy(float)
        rows.append(
            {
                "emotion": emotion,
                "judge": judge,
                "n": len(scored),
                "mean_score": float(scored["score"].mean()) if len(scored) else math.nan,
                "mean_human": float(rated["human"].mean()) if len(rated) else math.nan,
                "spearman": float(spearman(x, h)) if _varied(x, h) else math.nan,
                "mae": float(np.mean(np.abs(x - h))) if len(rated) else math.nan,
            }
        )
    table = pd.DataFrame(rows)
    order = {j: i for i, j in enumerate(judges)}
    return table.sort_values(
        ["emotion", "judge"], key=lambda c: c.map(order) if c.name == "judge" else c
    ).reset_index(drop=True)


def confusion(judge: np.ndarray, human: np.ndarray) -> np.ndarray:
    """5x5 counts of rounded judge scores (rows) against rounded human ratings (columns)."""
    matrix = np.zeros((5, 5), dtype=int)
    if len(judge):
        np.add.at(matrix, (round_score(judge) - 1, round_score(human) - 1), 1)
    return matrix
