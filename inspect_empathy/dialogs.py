"""Dialog records: the common shape every dataset source is mapped onto."""

from __future__ import annotations

import itertools
import math
import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser

from ._rubric import Turn, render_dialog, render_prompt

Scale = tuple[float, float]

_WORD = re.compile(r"\w+(?:'\w+)?")

HUMAN_KEY = "human_rating"
"""Sample (and score) metadata key: the human rating mapped onto 1-5."""

HUMAN_RATINGS_KEY = "human_ratings"
"""Sample metadata key: each rater's raw rating by rater name (several raters)."""

HUMAN_SCALE_KEY = "human_rating_scale"
"""Sample metadata key: the raw ratings' scale ``[low, high]``."""

LEFT_OUT_KEY = "turns_left_out"
"""Sample metadata key: how many earlier turns ``max_turns`` left out."""

JUDGE_PROMPT_KEY = "judge_prompt"
"""Sample metadata key, True on judge-mode samples: the messages are the rubric prompt
(the sample input itself, or the `empathy_prompt` solver's swap), not a conversation."""


@dataclass(slots=True)
class DialogRecord:
    """One dialog ending in the bot reply to rate, with its human rating if known.

    ``rating`` is the raw value on ``scale`` (min, max); samples carry it mapped
    linearly onto 1-5 next to the raw value and the scale.
    """

    id: str
    turns: list[Turn]
    rating: float | None = None
    scale: Scale = (1.0, 5.0)
    metadata: dict[str, Any] = field(default_factory=dict)


def reply_words(text: str) -> int:
    """Length of a reply in words (for length-bias diagnostics)."""
    return len(_WORD.findall(text))


def normalise_rating(raw: float, scale: Scale) -> float:
    """Map a rating linearly from its declared scale onto 1-5."""
    low, high = scale
    if not high > low:
        raise ValueError(f"scale ({low}, {high}) must have max > min")
    if not math.isfinite(raw) or raw < low or raw > high:
        raise ValueError(f"rating {raw} is outside the scale {low:g}-{high:g}")
    return 1.0 + 4.0 * (raw - low) / (high - low)


def rater_ratings(metadata: Mapping[str, Any], sample_id: object) -> dict[str, float] | None:
    """Each rater's rating on 1-5: ``human_ratings`` mapped from ``human_rating_scale``.

    None when the sample has no ``human_ratings``; a rater whose rating is None is
    missing. A ValueError names the sample and rater of a rating that is not a number
    on the scale, or ratings without a scale.
    """
    ratings = metadata.get(HUMAN_RATINGS_KEY)
    if not isinstance(ratings, dict) or not ratings:
        return None
    scale = metadata.get(HUMAN_SCALE_KEY)
    if not (isinstance(scale, list | tuple) and len(scale) == 2):
        raise ValueError(
            f"sample {sample_id}: {HUMAN_RATINGS_KEY} without a {HUMAN_SCALE_KEY} [low, high]"
        )
    out: dict[str, float] = {}
    for rater, raw in ratings.items():
        if raw is None:
            continue
        try:
            out[str(rater)] = normalise_rating(float(raw), (float(scale[0]), float(scale[1])))
        except (TypeError, ValueError) as ex:
            raise ValueError(
                f"sample {sample_id}: {HUMAN_RATINGS_KEY} rater {rater!r}: {raw!r}: {ex}"
            ) from None
    return out or None


def left_out_marker(count: int) -> str:
    """The note that stands in for turns cut by ``max_turns``."""
    return f"[{count} earlier turn{'s' if count != 1 else ''} left out]"


def truncate_turns(turns: list[Turn], max_turns: int | None) -> tuple[list[Turn], int]:
    """Keep the last ``max_turns`` turns, led by a marker saying how many were left out.

    The marker is a user-side turn of its own, ``[N earlier turns left out]``, so
    the rendered dialog always opens with ``USER: [N earlier turns left out]``: a
    bracketed note in the third person, never the user's words. When the kept
    window starts with a user turn the judge's renderer joins the two user turns,
    and the real text follows the note on an indented line; in the chat input
    (response mode) the note and the user's message stay separate messages.
    """
    if max_turns is None or len(turns) <= max_turns:
        return turns, 0
    left_out = len(turns) - max_turns
    return [Turn("user", left_out_marker(left_out)), *turns[-max_turns:]], left_out


class _MessageIds:
    """Message ids: a random prefix per process and a counter, unique like Inspect's uuids.

    Inspect gives a message without an id a fresh ``shortuuid`` (about 10 us each,
    two thirds of building a message); one random prefix and a counter cost nothing.
    A forked child draws a new prefix.
    """

    def __init__(self) -> None:
        self.reset()
        os.register_at_fork(after_in_child=self.reset)

    def reset(self) -> None:
        self.prefix = uuid.uuid4().hex[:16]
        self.counter = itertools.count()

    def __call__(self) -> str:
        return f"{self.prefix}{next(self.counter):x}"


message_id = _MessageIds()


def turn_message(turn: Turn) -> ChatMessage:
    """A chat message for a turn: user, or assistant for the bot."""
    if turn.role == "user":
        return ChatMessageUser(content=turn.content, id=message_id())
    return ChatMessageAssistant(content=turn.content, id=message_id())


def _sample(
    id: str, input: str | list[ChatMessage], target: str, metadata: dict[str, Any]
) -> Sample:
    """A sample of checked parts, without pydantic validating them again (every field set,
    as `Sample` sets them: about 8 us saved of a sample's 13)."""
    return Sample.model_construct(
        input=input, choices=None, target=target, id=id, description=None, metadata=metadata,
        sandbox=None, files=None, setup=None, checkpoint=None,
    )  # fmt: skip


def record_to_sample(
    record: DialogRecord,
    cut_reply: bool = False,
    max_turns: int | None = None,
    prompt_cot: bool | None = None,
) -> Sample:
    """An Inspect sample for a dialog record.

    With ``prompt_cot`` set (judge mode; the CoT variant when True) the input is
    the rubric prompt itself, a plain string ready for ``generate()``, and the
    metadata carries ``judge_prompt: True`` and the judged reply's length in
    words (``reply_words``); the dialog lives only in the prompt. Otherwise the
    input is the dialog as chat messages, with its rendering in ``transcript``.
    With ``max_turns`` only the last turns are kept (see `truncate_turns`). With
    ``cut_reply`` (response mode) the final bot reply is cut off and kept, with
    its rating, in metadata. Every sample keeps the human rating on 1-5, the raw
    rating and its scale, and the record's own metadata.
    """
    turns = record.turns
    if not turns or turns[-1].role != "bot":
        raise ValueError(f"dialog {record.id!r} does not end with a bot turn")
    if cut_reply and prompt_cot is not None:
        raise ValueError("a rubric-prompt input needs the bot reply: not with cut_reply")
    turns, left_out = truncate_turns(turns, max_turns)
    metadata: dict[str, Any] = {
        HUMAN_KEY: None,
        "human_rating_raw": record.rating,
        HUMAN_SCALE_KEY: list(record.scale) if record.rating is not None else None,
        **record.metadata,
    }
    if left_out:
        metadata[LEFT_OUT_KEY] = left_out
    if record.rating is not None:
        metadata[HUMAN_KEY] = normalise_rating(record.rating, record.scale)
    human = metadata[HUMAN_KEY]
    target = f"{human:g}" if human is not None else ""
    if prompt_cot is not None:
        metadata["reply_words"] = reply_words(turns[-1].content)
        metadata[JUDGE_PROMPT_KEY] = True
        return _sample(record.id, render_prompt(render_dialog(turns), prompt_cot), target, metadata)
    # the dialog as the judge would see it (response mode: with the reference reply)
    metadata = {"transcript": render_dialog(turns), **metadata}
    if cut_reply:
        # the human rating belongs to the original reply, not to the one the
        # model will write: keep it for reference, out of the agreement metrics
        metadata["reference_reply"] = turns[-1].content
        metadata["reference_rating"] = human
        metadata[HUMAN_KEY] = None
        target = ""
        turns = turns[:-1]
        if not turns:
            raise ValueError(f"dialog {record.id!r} has no user turn before the reply")
    return _sample(record.id, [turn_message(turn) for turn in turns], target, metadata)
