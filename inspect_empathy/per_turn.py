"""Every bot turn of a conversation: one sample per bot turn, and metrics per conversation.

`expand_turns` makes, of each dialog, one record per bot turn: the conversation up to and
including that turn (ids ``<conversation>#t<k>``, k counting bot turns from 1). A rating
that belongs to the last reply (``rating_scope: reply``, the default) stays on the last
turn's record; one that belongs to the whole conversation (``rating_scope: conversation``:
iEval, EmpatheticDialogues, ESConv's survey) moves to ``conversation_rating`` on every turn,
so that agreement is measured at the level the rating belongs to (`conversation_metrics`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Iterator
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Value, metric

from ._stats import round_score
from .dialogs import RATING_SCOPE_KEY, DialogRecord, normalise_rating
from .metrics import in_progress

CONVERSATION_KEY = "conversation"
"""Sample metadata key of a per-turn sample: the conversation's id."""
TURN_KEY = "turn"
"""Sample metadata key of a per-turn sample: which bot turn (1, 2, ...) it ends with."""
CONVERSATION_TURNS_KEY = "conversation_turns"
"""Sample metadata key of a per-turn sample: how many bot turns its conversation has."""
CONVERSATION_RATING_KEY = "conversation_rating"
"""Sample metadata key of a per-turn sample: the conversation's human rating on 1-5."""


def expand_turns(records: Iterable[DialogRecord]) -> Iterator[DialogRecord]:
    """One record per bot turn of each dialog, each the dialog's prefix ending there.

    Consecutive bot turns count as one reply (the prefix ends after the last of them).
    The prefixes share the original turns: memory grows with the number of bot turns,
    not with the text of every prefix.
    """
    for record in records:
        turns = record.turns
        ends = [
            i
            for i, turn in enumerate(turns)
            if turn.role == "bot" and (i + 1 == len(turns) or turns[i + 1].role != "bot")
        ]
        conversation = record.metadata.get(RATING_SCOPE_KEY) == "conversation"
        for k, end in enumerate(ends, start=1):
            metadata: dict[str, Any] = {
                **record.metadata,
                CONVERSATION_KEY: record.id,
                TURN_KEY: k,
                CONVERSATION_TURNS_KEY: len(ends),
            }
            rating = None
            if record.rating is not None:
                if conversation:
                    metadata[CONVERSATION_RATING_KEY] = normalise_rating(
                        record.rating, record.scale
                    )
                elif end == ends[-1]:
                    rating = record.rating
            yield DialogRecord(
                id=f"{record.id}#t{k}",
                turns=turns[: end + 1],
                rating=rating,
                scale=record.scale,
                metadata=metadata,
            )


@metric
def conversation_metrics(threshold: float = 4.0) -> Metric:
    """Per conversation of per-turn samples: the mean over conversations of their mean and
    minimum turn score (``conv_mean``, ``conv_min``) and of their share of turns at or
    above ``threshold`` (``conv_share_ge_4``, on scores rounded half up, as ``share_ge_4``),
    their number (``conversations``), and where conversations carry a rating, the Spearman
    correlation of each conversation's mean turn score with it (``conv_spearman``, over
    ``conv_rated`` conversations). ``conv_partial``: conversations some of whose turns are
    not in the figures (a run cut by ``--limit`` in the middle of a conversation, or turns
    left unscored), reported where there are any. Reports nothing for samples that are
    not per-turn, nor while the run is in progress (`metrics.in_progress`)."""

    def compute(scores: list[SampleScore]) -> Value:
        if in_progress():
            return {}
        turns: dict[str, list[float]] = {}
        rating: dict[str, float] = {}
        size: dict[str, int] = {}
        for s in scores:
            meta = s.sample_metadata or {}
            conversation = meta.get(CONVERSATION_KEY)
            value = s.score.as_float()
            if conversation is None or not math.isfinite(value):
                continue
            turns.setdefault(str(conversation), []).append(value)
            total = meta.get(CONVERSATION_TURNS_KEY)
            if isinstance(total, int) and not isinstance(total, bool):
                size[str(conversation)] = total
            if isinstance(meta.get(CONVERSATION_RATING_KEY), int | float):
                rating[str(conversation)] = float(meta[CONVERSATION_RATING_KEY])
        if not turns:
            return {}
        share = [
            float((round_score(t) >= threshold).mean()) for t in turns.values()
        ]  # rounded half up, as share_ge_4
        result: dict[str, float] = {
            "conversations": float(len(turns)),
            "conv_mean": statistics.fmean(statistics.fmean(t) for t in turns.values()),
            "conv_min": statistics.fmean(min(t) for t in turns.values()),
            f"conv_share_ge_{threshold:g}": statistics.fmean(share),
        }
        partial = sum(len(t) < size[c] for c, t in turns.items() if c in size)
        if partial:
            result["conv_partial"] = float(partial)
        rated = [c for c in turns if c in rating]
        if rated:
            result["conv_rated"] = float(len(rated))
            means = [statistics.fmean(turns[c]) for c in rated]
            humans = [rating[c] for c in rated]
            if len(rated) >= 2 and len(set(means)) > 1 and len(set(humans)) > 1:
                from scipy import stats  # on use: importing it costs a task build 0.6 s

                result["conv_spearman"] = float(stats.spearmanr(means, humans).statistic)
        return result

    return compute
