"""Metrics: how the judge's scores relate to human ratings, and what they look like."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from inspect_ai.scorer import Metric, SampleScore, Value, metric

HUMAN_KEY = "human_rating"
"""Sample (and score) metadata key holding the human rating on the 1-5 scale."""


def human_rating(sample_score: SampleScore) -> float | None:
    """The human rating (1-5) of a scored sample, if the dataset has one."""
    for source in (sample_score.sample_metadata, sample_score.score.metadata):
        if source and source.get(HUMAN_KEY) is not None:
            value = float(source[HUMAN_KEY])
            if math.isfinite(value):
                return value
    return None


def round_score(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Round scores half up onto the 1-5 integer scale (4.5 -> 5, 2.5 -> 3)."""
    return np.clip(np.floor(np.asarray(values, dtype=float) + 0.5), 1, 5).astype(int)


def quadratic_weighted_kappa(
    a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray, levels: int = 5
) -> float:
    """Cohen's kappa with quadratic weights for two raters on a 1..levels scale."""
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
        # imported here: scipy.stats costs ~0.7 s, and Inspect imports every
        # plugin at startup, also for runs that never compute these metrics
        from scipy import stats

        result["spearman"] = float(stats.spearmanr(x, y).statistic)
        result["kendall"] = float(stats.kendalltau(x, y, variant="b").statistic)
        result["pearson"] = float(stats.pearsonr(x, y).statistic)
    qwk = quadratic_weighted_kappa(rx, ry)
    if math.isfinite(qwk):
        result["qwk"] = qwk
    return result


@metric
def human_agreement() -> Metric:
    """Spearman, Kendall tau-b, Pearson, MAE, RMSE, QWK, exact and within-one
    agreement of the judge with human ratings, over samples that have them.

    Reports nothing when no sample carries a human rating.
    """

    def compute(scores: list[SampleScore]) -> Value:
        pairs = [(s.score.as_float(), h) for s in scores if (h := human_rating(s)) is not None]
        if not pairs:
            return {}
        judge, human = zip(*pairs, strict=True)
        return agreement(judge, human)  # type: ignore[return-value]

    return compute


def shares_by_level(rounded: np.ndarray) -> dict[str, float]:
    """Share of rounded scores (see `round_score`) at each level 1-5, as ``share_1``..."""
    return {f"share_{k}": float(np.mean(rounded == k)) for k in range(1, 6)}


@metric
def level_shares(threshold: float = 4.0) -> Metric:
    """Share of scores at each level 1-5 and at or above ``threshold``, all on scores
    rounded half up (so ``share_ge_4`` is ``share_4 + share_5``)."""

    def compute(scores: list[SampleScore]) -> Value:
        values = [s.score.as_float() for s in scores]
        if not values:
            return {}
        rounded = round_score(values)
        shares: dict[str, Any] = shares_by_level(rounded)
        shares[f"share_ge_{threshold:g}"] = float(np.mean(rounded >= threshold))
        return shares

    return compute


def krippendorff_alpha(ratings: Sequence[Sequence[float | None]]) -> float | None:
    """Ordinal Krippendorff's alpha for judges (rows) x items (columns), rounded to 1-5.

    Missing ratings are None. Returns None where alpha is undefined (fewer than
    two judges, no item rated twice, or no variation at all).
    """
    import krippendorff

    data = np.array(
        [[np.nan if v is None else float(round_score([v])[0]) for v in row] for row in ratings],
        dtype=float,
    )
    if data.ndim != 2 or data.shape[0] < 2:
        return None
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    values = data[:, pairable]
    if values.size == 0 or len(np.unique(values[~np.isnan(values)])) < 2:
        return None
    alpha = krippendorff.alpha(
        reliability_data=data, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5]
    )
    return float(alpha) if math.isfinite(alpha) else None


@metric
def judge_agreement() -> Metric:
    """Inter-judge agreement of a panel: ordinal Krippendorff's alpha over its judges.

    Reports nothing for a single judge.
    """

    def compute(scores: list[SampleScore]) -> Value:
        panels = [(s.score.metadata or {}).get("judges") for s in scores]
        panels = [p for p in panels if isinstance(p, dict)]
        if not panels:
            return {}
        names = sorted({name for p in panels for name in p})
        matrix = [[p.get(name, {}).get("value") for p in panels] for name in names]
        alpha = krippendorff_alpha(matrix)
        return {} if alpha is None else {"judge_alpha": alpha}

    return compute


@metric
def share_at_least(threshold: float = 4.0) -> Metric:
    """Share of scores, rounded half up, at or above ``threshold`` (one number, so it
    can be grouped)."""

    def compute(scores: list[SampleScore]) -> Value:
        values = [s.score.as_float() for s in scores]
        if not values:
            return float("nan")
        return float(np.mean(round_score(values) >= threshold))

    return compute


@metric
def judge_means() -> Metric:
    """Mean score of each judge of a panel, as ``judge_mean(<model>)``.

    Reports nothing for a single judge.
    """

    def compute(scores: list[SampleScore]) -> Value:
        per_judge: dict[str, list[float]] = {}
        for s in scores:
            judges = (s.score.metadata or {}).get("judges")
            if not isinstance(judges, dict):
                continue
            for name, result in judges.items():
                value = result.get("value") if isinstance(result, dict) else None
                if value is not None and math.isfinite(float(value)):
                    per_judge.setdefault(name, []).append(float(value))
        return {f"judge_mean({name})": float(np.mean(v)) for name, v in per_judge.items()}

    return compute


def response_metrics(group_by: str | None = None, threshold: float = 4.0) -> list[Metric]:
    """Metrics for replies rated by a grader (response mode or any task's replies).

    Mean and stderr, the share at each level 1-5 and at or above ``threshold``,
    a panel's per-judge means and Krippendorff's alpha; with ``group_by`` (a
    sample metadata field every sample has, e.g. ``emotion``) also the mean,
    stderr and share >= ``threshold`` of each group, via Inspect's ``grouped()``.
    """
    from inspect_ai.scorer import grouped, mean, stderr

    metrics: list[Metric] = [
        mean(),
        stderr(),
        level_shares(threshold),
        judge_agreement(),
        judge_means(),
    ]
    if group_by:
        key = group_by.replace("{", "{{").replace("}", "}}")
        for name, inner in (
            ("mean", mean()),
            ("stderr", stderr()),
            (f"share_ge_{threshold:g}", share_at_least(threshold)),
        ):
            # parentheses, not brackets: Inspect's console treats [..] as markup
            template = f"{name}({key}={{group_name}})"
            metrics.append(grouped(inner, group_by, all=False, name_template=template))
    return metrics
