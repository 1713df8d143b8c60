"""Metrics: how the judge's scores relate to human ratings, and what they look like."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from inspect_ai.scorer import Metric, SampleScore, Value, metric

if TYPE_CHECKING:
    import numpy as np

# numpy, scipy and krippendorff are imported where they are used: Inspect imports
# every plugin at start-up, also for runs that never compute these metrics

HUMAN_KEY = "human_rating"
"""Sample (and score) metadata key holding the human rating on the 1-5 scale."""

GROUP_KEY = "group"
"""Score metadata key: ``{field: value}`` of the sample's group (scorer ``group_by``)."""

EPOCHS_KEY = "epochs"
"""Score metadata key set by the `empathy_mean` reducer: each epoch's value and method."""


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
    import numpy as np

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
        shares[f"share_ge_{threshold:g}"] = float((rounded >= threshold).mean())
        return shares

    return compute


def krippendorff_alpha(ratings: Sequence[Sequence[float | None]]) -> float | None:
    """Ordinal Krippendorff's alpha for judges (rows) x items (columns), rounded to 1-5.

    Missing ratings are None. Returns None where alpha is undefined (fewer than
    two judges, no item rated twice, or no variation at all).
    """
    import krippendorff
    import numpy as np

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


def _panel_values(score: SampleScore) -> dict[str, list[float | None]] | None:
    """A panel score's values per judge, one per epoch (every epoch, when reduced by
    `empathy_mean`; Inspect's own reducers keep the first epoch's metadata only)."""
    judges = (score.score.metadata or {}).get("judges")
    if not isinstance(judges, dict):
        return None
    values: dict[str, list[float | None]] = {}
    for name, result in judges.items():
        if not isinstance(result, dict):
            continue
        epoch_values = result.get("epoch_values")
        raw = epoch_values if isinstance(epoch_values, list) else [result.get("value")]
        values[name] = [_finite(v) for v in raw]
    return values


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


@metric
def judge_agreement() -> Metric:
    """Inter-judge agreement of a panel: ordinal Krippendorff's alpha over its judges,
    with each (sample, epoch) as a unit. Reports nothing for a single judge."""

    def compute(scores: list[SampleScore]) -> Value:
        panels = [p for s in scores if (p := _panel_values(s)) is not None]
        if not panels:
            return {}
        names = sorted({name for p in panels for name in p})
        units = [(p, e) for p in panels for e in range(max(len(v) for v in p.values()))]
        matrix = [
            [p[name][e] if name in p and e < len(p[name]) else None for p, e in units]
            for name in names
        ]
        alpha = krippendorff_alpha(matrix)
        return {} if alpha is None else {"judge_alpha": alpha}

    return compute


@metric
def share_at_least(threshold: float = 4.0) -> Metric:
    """Share of scores, rounded half up, at or above ``threshold`` (one number)."""

    def compute(scores: list[SampleScore]) -> Value:
        values = [s.score.as_float() for s in scores]
        if not values:
            return float("nan")
        return float((round_score(values) >= threshold).mean())

    return compute


@metric
def judge_means() -> Metric:
    """Mean score of each judge of a panel over every sample and epoch, as
    ``judge_mean(<model>)``. Reports nothing for a single judge."""

    def compute(scores: list[SampleScore]) -> Value:
        per_judge: dict[str, list[float]] = {}
        for s in scores:
            for name, values in (_panel_values(s) or {}).items():
                per_judge.setdefault(name, []).extend(v for v in values if v is not None)
        return {f"judge_mean({name})": math.fsum(v) / len(v) for name, v in per_judge.items() if v}

    return compute


@metric
def scoring_counts() -> Metric:
    """How the scored samples were scored: ``scored``, ``by_<method>`` (logprobs, parse,
    samples, panel), ``low_mass`` (logprobs scores whose score tokens held under half
    the probability), ``partial`` (samples scores from fewer than all samples) and
    ``fallback`` (``auto`` scores parsed because logprobs were unusable).

    Unscored samples never reach metrics: Inspect counts them in the results
    (``unscored_samples``), and the plugin prints them at the end of the run.
    """

    def compute(scores: list[SampleScore]) -> Value:
        counts: Counter[str] = Counter()
        for s in scores:
            metadata = s.score.metadata or {}
            counts["scored"] += 1
            counts[f"by_{metadata.get('method', 'unknown')}"] += 1
            for flag, key in (("low_mass", "low_mass"), ("partial", "partial")):
                if metadata.get(flag):
                    counts[key] += 1
            if metadata.get("logprobs_unavailable"):
                counts["fallback"] += 1
        return {key: float(value) for key, value in counts.items()}

    return compute


@metric
def group_metrics(threshold: float = 4.0) -> Metric:
    """Mean, stderr and share >= ``threshold`` of each group of the scorer's ``group_by``
    field, as ``mean(<field>=<group>)``. Reports nothing without ``group_by``."""

    def compute(scores: list[SampleScore]) -> Value:
        from inspect_ai.scorer import mean, stderr

        groups: dict[tuple[str, str], list[SampleScore]] = {}
        for s in scores:
            group = (s.score.metadata or {}).get(GROUP_KEY)
            if isinstance(group, dict) and len(group) == 1:
                ((key, value),) = group.items()
                groups.setdefault((str(key), str(value)), []).append(s)
        result: dict[str, Any] = {}
        for (key, value), members in sorted(groups.items()):
            # parentheses, not brackets: Inspect's console treats [..] as markup
            label = f"{key}={value}"
            result[f"mean({label})"] = mean()(members)
            result[f"stderr({label})"] = stderr()(members)
            result[f"share_ge_{threshold:g}({label})"] = share_at_least(threshold)(members)
        return result

    return compute
