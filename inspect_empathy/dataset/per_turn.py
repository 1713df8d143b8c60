"""Every bot turn of a conversation: one sample per bot turn.

`expand_turns` makes, of each dialog, one record per bot turn: the conversation up to and
including that turn (ids ``<conversation>#t<k>``, k counting bot turns from 1). A rating
that belongs to the last reply (``rating_scope: reply``, the default) stays on the last
turn's record; one that belongs to the whole conversation (``rating_scope: conversation``:
iEval, EmpatheticDialogues, ESConv's survey) moves to ``conversation_rating`` on every turn,
so that agreement is measured at the level the rating belongs to (the metrics per
conversation: `stats.conversation`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..dialogs import (
    CONVERSATION_KEY,
    CONVERSATION_RATING_KEY,
    CONVERSATION_TURNS_KEY,
    RATING_SCOPE_KEY,
    DialogRecord,
    normalise_rating,
)

TURN_KEY = "turn"
"""Sample metadata key of a per-turn sample: which bot turn (1, 2, ...) it ends with."""


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
