"""Inspect metrics: how the judge's scores relate to human ratings, and what they look like.

The statistics themselves are plain functions in `_agreement.py`."""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Score, Value, mean, metric, stderr

from .._util.summary import SamplesDone, samples_done
from ..dataset._samples import RUN_RATED_KEY, RUN_SAMPLES_KEY
from ..dialogs import HUMAN_KEY, scored_rater_ratings
from ._agreement import agreement, krippendorff_alpha, round_score, shares_by_level, somers_d_all

logger = logging.getLogger(__name__)

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


UNCALIBRATED_KEY = "uncalibrated"
"""Score metadata key: the judge's own score where ``-T calibration`` mapped it."""

RANK_KEYS = ("spearman", "kendall", "pearson")
"""The agreement metrics read on the judge's own scores: calibration is for where the scores
sit on the scale (MAE, RMSE, QWK, exact, within one), never for their order."""


def uncalibrated(score: Score) -> float | None:
    """The judge's own score where a calibration file mapped ``score`` (its metadata's
    ``uncalibrated``), else None."""
    raw = (score.metadata or {}).get(UNCALIBRATED_KEY)
    if isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw):
        return float(raw)
    return None


def own_score(sample_score: SampleScore) -> float:
    """The judge's own score: the uncalibrated one where a calibration file mapped it."""
    raw = uncalibrated(sample_score.score)
    return sample_score.score.as_float() if raw is None else raw


def in_progress() -> bool:
    """Inspect is computing a running task's live figures (`_util.summary.samples_done`): it
    recomputes every metric over all scores so far, at most every 0.9 s, so a metric that
    reads every score (all but the headline) reports nothing until the task's final
    results; the headline (`coverage_agreement`) is live, within a budget
    (`LIVE_HEADLINE_RATIO`)."""
    return samples_done() is not None


@metric
def human_agreement() -> Metric:
    """Spearman, Kendall tau-b, Pearson, MAE, RMSE, QWK, exact and within-one
    agreement of the judge with human ratings, over samples that have them (how many:
    the end-of-task line, `_util.summary`, as a whole number).

    Reports nothing when no sample carries a human rating. ``spearman`` (judge
    mode's headline) is always reported when some do, and before any sample is
    scored: NaN while it is undefined (fewer than two pairs, or no variation),
    so that the headline resolves. With ``-T calibration`` the correlations
    (`RANK_KEYS`) are on the judge's own scores (`own_score`), the rest on the
    calibrated ones.
    """

    def compute(scores: list[SampleScore]) -> Value:
        if not scores:
            # nothing scored yet (Inspect's live results): keep the headline resolvable
            return {"spearman": float("nan")}
        if in_progress():
            return {}
        rated = [(s, h) for s in scores if (h := human_rating(s)) is not None]
        if not rated:
            return {}
        human = [h for _, h in rated]
        shown = [s.score.as_float() for s, _ in rated]
        result = {"spearman": float("nan"), **agreement(shown, human)}
        del result["n_human"]  # a count: the end-of-task line says it
        own = [own_score(s) for s, _ in rated]
        if own != shown:
            ranks = agreement(own, human)
            for key in RANK_KEYS:
                result.pop(key, None)
                if key in ranks:
                    result[key] = ranks[key]
            result.setdefault("spearman", float("nan"))
        return result

    return compute


def _run_count(scores: list[SampleScore], key: str) -> int | None:
    """The run's sample count stamped in the samples' metadata (`DialogDataset`), if any."""
    for s in scores:
        value = (s.sample_metadata or {}).get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


LIVE_HEADLINE_RATIO = 400.0
"""While a run is in progress, the headline is recomputed only once the time since its last
recomputation is at least this many times what that recomputation took, so it takes at most
about 1/401 (0.25%) of the run's time whatever the run's size (a recomputation every
10-15 s or so at 10,000 scores, every minute and a half or so at 50,000, against Inspect's
0.9 s); in between, the run's last live headline is shown again, with its coverage brought
up to date."""

_clock = time.perf_counter
"""The clock of the live headline's budget (tests put their own)."""

_FINGERPRINT = 4
"""How many of the first scores tell apart the live headlines of two empathy scorers of one
task (`_fingerprint`)."""


@dataclass
class _Headline:
    """The headline over some scores, and what it needs to bring coverage up to date."""

    value: dict[str, float]
    run_samples: int | None
    """The run's sample count stamped in the metadata (`_run_count`)."""
    ended_unseen: int = 0
    """Scored samples that ended without a sample hook (an eval-retry's reused ones)."""
    at: float = 0.0
    """When the live recomputation ended (`_clock`)."""
    cost: float = 0.0
    """What it took (`_clock`)."""


def _headline(scores: list[SampleScore], done: SamplesDone | None) -> _Headline:
    """`coverage_agreement` over every score: the run's, or over the samples ``done`` so
    far of a run in progress."""
    result: dict[str, float] = {}
    run_samples = counted = _run_count(scores, RUN_SAMPLES_KEY)
    run_rated = _run_count(scores, RUN_RATED_KEY)
    rated = [(s, h) for s in scores if (h := human_rating(s)) is not None]
    unseen = 0
    if done is not None:
        # a run in progress: over the samples done so far, not those yet to run
        ended = done.all | {s.sample_id for s in scores}
        unseen = len(ended) - len(done.all)
        run_samples = min(run_samples, len(ended)) if run_samples else run_samples
        ended_rated = done.rated | {s.sample_id for s, _ in rated}
        run_rated = min(run_rated, len(ended_rated)) if run_rated else run_rated
    if run_samples:
        result["coverage"] = min(1.0, len(scores) / run_samples)
    pairs = [(own_score(s), h) for s, h in rated]
    if pairs or run_rated:
        judge, human = (list(v) for v in zip(*pairs, strict=True)) if pairs else ([], [])
        unscored = max(0, (run_rated or 0) - len(pairs))
        result = {"somers_d_all": somers_d_all(judge, human, unscored), **result}
    return _Headline(result, counted, unseen)


def _fingerprint(scores: list[SampleScore]) -> tuple[Any, ...]:
    """Which scorer's scores these are, read from the first few (Inspect keeps the scores
    in the order the samples ended, so the first stay first): the metric is one function
    for every empathy scorer, and a task may have two."""
    return tuple(
        (s.sample_id, s.score.value, s.score.explanation, (s.score.metadata or {}).get("method"))
        for s in scores[:_FINGERPRINT]
    )


def _live_headline(scores: list[SampleScore], done: SamplesDone) -> dict[str, float]:
    """The headline of a run in progress, within the budget of `LIVE_HEADLINE_RATIO`.

    Inspect recomputes every metric over all scores so far at most every 0.9 s (and waits
    ten times what a recomputation took when that is longer), so a headline recomputed in
    full each time costs the run O(n^2) (measured: about 40 ms a time at 10,000 scores,
    220 ms at 50,000). The budget is adaptive, on the time a recomputation takes, rather
    than a schedule on the score count: the cost per score differs by machine and load,
    and the share holds whatever they are, while a short run (a recomputation of a few
    ms) still gets a fresh headline every time. Kept per run (`_util.summary.SamplesDone.live`,
    released when the run ends, so two runs never share one) and per scorer
    (`_fingerprint`). Between recomputations ``coverage`` is brought up to date from the
    counts (constant time); ``somers_d_all`` is the last recomputed one."""
    key = ("coverage_agreement", _fingerprint(scores))
    last: _Headline | None = done.live.get(key)
    if last is None or _clock() - last.at >= LIVE_HEADLINE_RATIO * last.cost:
        start = _clock()
        fresh = _headline(scores, done)
        fresh.at = _clock()
        fresh.cost = fresh.at - start
        if last is None and len(done.live) >= 64:
            done.live.clear()  # keys of scores that changed since (an epoch reduced again)
        done.live[key] = fresh
        return dict(fresh.value)
    value = dict(last.value)
    if last.run_samples and "coverage" in value:
        ended = max(len(scores), len(done.all) + last.ended_unseen)
        value["coverage"] = min(1.0, len(scores) / min(last.run_samples, ended))
    return value


@metric
def coverage_agreement() -> Metric:
    """Judge mode's headline and the share of the run scored.

    ``somers_d_all``: Somers' D of the judge's scores on the human ratings over every
    rated dialog of the run, a dialog the judge left unscored counting as ordered
    against people in each of its pairs (`somers_d_all`): a judge that skips hard
    dialogs cannot rank above the same judge scoring them all. On the judge's own
    scores (`own_score`): a calibration map does not move it. ``coverage``: scored
    samples / samples in the run. Both need the run's counts in the sample metadata
    (``run_samples``, ``run_rated``: datasets from `load_dialogs` carry them); without
    them only ``somers_d_all`` over the scored dialogs is reported. While the run is in
    progress (Inspect's live figures) both are over the samples done so far
    (`_util.summary.samples_done`), not counting those yet to run as skipped, and
    ``somers_d_all`` is recomputed within a budget (`_live_headline`): on a long run it
    may lag a minute. The final results are over every score, computed in full.
    """

    def compute(scores: list[SampleScore]) -> Value:
        if not scores:
            # nothing scored yet (Inspect's live results): keep the headline resolvable
            return {"somers_d_all": float("nan")}
        done = samples_done()
        if done is not None:
            return _live_headline(scores, done)
        return _headline(scores, None).value

    return compute


@metric
def empathy_headline() -> Metric:
    """The scorer's first figures, the headline first: ``somers_d_all`` when the run has
    human ratings (`coverage_agreement`), then Inspect's ``mean`` and ``stderr``, then
    ``coverage``. Inspect prints a scorer's metrics in the order they come and, with no
    headline declared, takes the first as the log's headline (`inspect_ai.log.headline_metric`),
    so a run with human ratings leads with agreement in the terminal, the log list and the
    log header, in every task the scorer joins; without ratings it leads with ``mean``."""
    agreement_, mean_, stderr_ = coverage_agreement(), mean(), stderr()

    def compute(scores: list[SampleScore]) -> Value:
        head = dict(agreement_(scores))  # type: ignore[arg-type]
        result: dict[str, float] = {}
        if "somers_d_all" in head:
            result["somers_d_all"] = head.pop("somers_d_all")
        nan = float("nan")
        result["mean"] = float(mean_(scores)) if scores else nan  # type: ignore[arg-type]
        result["stderr"] = float(stderr_(scores)) if scores else nan  # type: ignore[arg-type]
        return result | head

    return compute


@metric
def level_shares(threshold: float = 4.0) -> Metric:
    """Share of scores at each level 1-5 and at or above ``threshold``, all on scores
    rounded half up (so ``share_ge_4`` is ``share_4 + share_5``)."""

    def compute(scores: list[SampleScore]) -> Value:
        if in_progress():
            return {}
        values = [s.score.as_float() for s in scores]
        if not values:
            return {}
        rounded = round_score(values)
        shares: dict[str, Any] = shares_by_level(rounded)
        shares[f"share_ge_{threshold:g}"] = float((rounded >= threshold).mean())
        return shares

    return compute


class _OneEpochOfMany(Exception):
    """A panel score reduced over several epochs by a reducer that kept one epoch's
    per-judge metadata."""


def _panel_values(score: SampleScore) -> dict[str, list[float | None]] | None:
    """A panel score's values per judge, one per epoch (every epoch, when reduced by
    `empathy_mean`). Raises `_OneEpochOfMany` for a reduction by Inspect's own reducers
    over several epochs: they keep one epoch's metadata, and drop an explanation that
    differs between epochs (each panel explanation names its epoch)."""
    metadata = score.score.metadata or {}
    judges = metadata.get("judges")
    if not isinstance(judges, dict):
        return None
    if (
        "epoch" in metadata
        and score.score.explanation is None
        and not any(isinstance(r, dict) and "epoch_values" in r for r in judges.values())
    ):
        raise _OneEpochOfMany
    values: dict[str, list[float | None]] = {}
    for name, result in judges.items():
        if not isinstance(result, dict):
            continue
        epoch_values = result.get("epoch_values")
        raw = epoch_values if isinstance(epoch_values, list) else [result.get("value")]
        values[name] = [_finite(v) for v in raw]
    return values


def _panels(scores: list[SampleScore]) -> list[dict[str, list[float | None]]]:
    """Every panel score's per-judge values, or none (with a note) where a reducer
    other than `empathy_mean` kept one epoch's of several."""
    try:
        return [p for s in scores if (p := _panel_values(s)) is not None]
    except _OneEpochOfMany:
        logger.warning(
            "judge_mean(...) and judge_alpha withheld: the epochs were reduced by a reducer "
            "that keeps one epoch's per-judge scores (use --epochs-reducer empathy_mean for "
            "per-judge figures over every epoch)",
        )
        return []


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


@metric
def judge_agreement() -> Metric:
    """Inter-judge agreement of a panel: ordinal Krippendorff's alpha over its judges,
    with each (sample, epoch) as a unit. Reports nothing for a single judge, nor while the
    run is in progress (`in_progress`)."""

    def compute(scores: list[SampleScore]) -> Value:
        if in_progress():
            return {}
        panels = _panels(scores)
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
    ``judge_mean(<model>)``. Reports nothing for a single judge, nor while the run is in
    progress (`in_progress`)."""

    def compute(scores: list[SampleScore]) -> Value:
        if in_progress():
            return {}
        per_judge: dict[str, list[float]] = {}
        for panel in _panels(scores):
            for name, values in panel.items():
                per_judge.setdefault(name, []).extend(v for v in values if v is not None)
        return {f"judge_mean({name})": math.fsum(v) / len(v) for name, v in per_judge.items() if v}

    return compute


@metric
def scoring_counts() -> Metric:
    """How the scored samples were scored: ``scored``, ``by_<method>`` (logprobs, parse,
    samples, panel), ``low_mass`` (logprobs scores whose score tokens held under half
    the probability), ``short_list`` (logprobs scores whose top-logprobs list left more
    than a tenth of the probability unlisted), ``partial`` (samples scores from fewer than
    all samples) and ``fallback`` (``auto`` scores parsed because logprobs were unusable).

    Not among `empathy_scorer`'s metrics: Inspect prints a metric with three decimals, so
    the end-of-task line (`_util.summary`) gives these counts as whole numbers, with the
    unscored samples (which never reach metrics). Kept for a suite of your own, and for
    logs that name it.
    """

    def compute(scores: list[SampleScore]) -> Value:
        if in_progress():
            return {}
        counts: Counter[str] = Counter()
        for s in scores:
            metadata = s.score.metadata or {}
            counts["scored"] += 1
            counts[f"by_{metadata.get('method', 'unknown')}"] += 1
            for flag in ("low_mass", "short_list", "partial"):
                if metadata.get(flag):
                    counts[flag] += 1
            if metadata.get("logprobs_unavailable"):
                counts["fallback"] += 1
        return {key: float(value) for key, value in counts.items()}

    return compute


@metric
def group_metrics(threshold: float = 4.0) -> Metric:
    """Mean, stderr and share >= ``threshold`` of each group of the scorer's ``group_by``
    field, as ``mean(<field>=<group>)``. Reports nothing without ``group_by``, nor while the
    run is in progress (`in_progress`)."""

    def compute(scores: list[SampleScore]) -> Value:
        if in_progress():
            return {}
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


@metric
def human_ceiling() -> Metric:
    """Where the judge stands against the human ceiling, for data with several raters
    per dialog (sample metadata ``human_ratings``, judge mode): ``humans_alpha``
    (ordinal Krippendorff's alpha over the raters), ``humans_pair_qwk`` and
    ``humans_pair_spearman`` (medians over rater pairs), ``humans_rest_qwk`` and
    ``humans_rest_spearman`` (medians of each rater against the aggregate of the
    others), and ``judge_rest_qwk`` / ``judge_rest_spearman`` (the judge against the
    same aggregates, read on the same footing). Reports nothing otherwise; the full
    table with CIs is `inspect-empathy compare`'s ``humans.csv``. Nothing while the run is
    in progress (`in_progress`)."""

    def compute(scores: list[SampleScore]) -> Value:
        if in_progress():
            return {}
        per_dialog, judge = scored_rater_ratings(scores)
        raters = {r for ratings in per_dialog.values() for r in ratings}
        if len(per_dialog) < 3 or len(raters) < 2:
            return {}
        import pandas as pd

        from .humans import ceiling_summary, judge_summary, ratings_frame

        frame = ratings_frame(per_dialog)
        ceiling = ceiling_summary(frame)
        standing = judge_summary(pd.Series(judge), frame)
        return {
            "humans_alpha": ceiling["alpha"],
            "humans_pair_qwk": ceiling["pair_qwk_median"],
            "humans_pair_spearman": ceiling["pair_spearman_median"],
            "humans_rest_qwk": ceiling["rest_qwk_median"],
            "humans_rest_spearman": ceiling["rest_spearman_median"],
            "judge_rest_qwk": standing["rest_qwk_median"],
            "judge_rest_spearman": standing["rest_spearman_median"],
        }

    return compute
