"""Metrics per conversation of per-turn samples (``-T per_turn=true``, `dataset.per_turn`)."""

from __future__ import annotations

import math
import statistics

from inspect_ai.scorer import Metric, SampleScore, Value, metric

from ..dialogs import CONVERSATION_KEY, CONVERSATION_RATING_KEY
from ._agreement import round_score
from .metrics import in_progress


@metric
def conversation_metrics(threshold: float = 4.0) -> Metric:
    """Per conversation of per-turn samples: the mean over conversations of their mean and
    minimum turn score (``conv_mean``, ``conv_min``) and of their share of turns at or
    above ``threshold`` (``conv_share_ge_4``, on scores rounded half up, as ``share_ge_4``),
    and where conversations carry a rating, the Spearman correlation of each
    conversation's mean turn score with it (``conv_spearman``, over the rated
    conversations; NaN where undefined: a per-turn run rated per conversation has it as
    its headline). How many conversations, rated or missing turns (cut by ``--limit``, or
    turns left unscored): the end-of-task line (`_util.summary`), as whole numbers.
    Reports nothing for samples that are not per-turn, nor while the run is in progress
    (`metrics.in_progress`)."""

    def compute(scores: list[SampleScore]) -> Value:
        if in_progress():
            # the headline of a per-turn run rated per conversation stays resolvable
            first = (scores[0].sample_metadata or {}) if scores else {}
            return {"conv_spearman": float("nan")} if CONVERSATION_RATING_KEY in first else {}
        turns: dict[str, list[float]] = {}
        rating: dict[str, float] = {}
        for s in scores:
            meta = s.sample_metadata or {}
            conversation = meta.get(CONVERSATION_KEY)
            value = s.score.as_float()
            if conversation is None or not math.isfinite(value):
                continue
            turns.setdefault(str(conversation), []).append(value)
            if isinstance(meta.get(CONVERSATION_RATING_KEY), int | float):
                rating[str(conversation)] = float(meta[CONVERSATION_RATING_KEY])
        if not turns:
            return {}
        share = [
            float((round_score(t) >= threshold).mean()) for t in turns.values()
        ]  # rounded half up, as share_ge_4
        result: dict[str, float] = {
            "conv_mean": statistics.fmean(statistics.fmean(t) for t in turns.values()),
            "conv_min": statistics.fmean(min(t) for t in turns.values()),
            f"conv_share_ge_{threshold:g}": statistics.fmean(share),
        }
        rated = [c for c in turns if c in rating]
        if rated:
            result["conv_spearman"] = float("nan")  # undefined: still the run's headline
            means = [statistics.fmean(turns[c]) for c in rated]
            humans = [rating[c] for c in rated]
            if len(rated) >= 2 and len(set(means)) > 1 and len(set(humans)) > 1:
                from scipy import stats  # on use: importing it costs a task build 0.6 s

                result["conv_spearman"] = float(stats.spearmanr(means, humans).statistic)
        return result

    return compute
