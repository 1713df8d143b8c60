"""Inspect samples from dialog records: chat messages, or the rubric prompt (judge mode)."""

from __future__ import annotations

import itertools
import os
import uuid
from typing import Any

from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser

from ..dialogs import (
    HUMAN_KEY,
    HUMAN_RATINGS_KEY,
    HUMAN_RAW_KEY,
    HUMAN_SCALE_KEY,
    JUDGE_DIALOG_KEY,
    JUDGE_PROMPT_KEY,
    LABELLED_INPUT_KEY,
    LEFT_OUT_KEY,
    REFERENCE_RATING_KEY,
    REPLY_WORDS_KEY,
    RUBRIC_SCALE,
    TRANSCRIPT_KEY,
    DialogRecord,
    Turn,
    ends_with_bot,
    labelled_text,
    normalise_rating,
    reply_words,
    truncate_turns,
)
from ..judge._rubric import render_dialog, render_prompt

RUN_SAMPLES_KEY = "run_samples"
"""Sample metadata key: how many samples the run holds (after ``--limit``/``--sample-id``),
so that metrics, which never see unscored samples, know how many there were."""

RUN_RATED_KEY = "run_rated"
"""Sample metadata key: how many samples of the run carry a human rating."""


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


def turn_message(turn: Turn, labelled: bool = False, first: bool = True) -> ChatMessage:
    """A chat message for a turn: user, or assistant for the bot; ``labelled``: its text opens
    with who speaks (`dialogs.labelled_text`)."""
    if turn.role == "user":
        content = labelled_text("user", turn.content, first) if labelled else turn.content
        return ChatMessageUser(content=content, id=message_id())
    content = labelled_text("assistant", turn.content, first) if labelled else turn.content
    return ChatMessageAssistant(content=content, id=message_id())


_SAMPLE_FIELDS = set(Sample.model_fields)
"""Every field of `Sample`, the fields `Sample(...)` marks as set: one set shared by all the
samples built here (pydantic only ever adds field names to it, and it holds them all),
instead of a set of about 500 bytes per sample that the dataset keeps for the whole run."""


def _sample(
    id: str, input: str | list[ChatMessage], target: str, metadata: dict[str, Any]
) -> Sample:
    """A sample of checked parts, without pydantic validating them again (every field set,
    as `Sample` sets them: about 8 us saved of a sample's 13)."""
    return Sample.model_construct(
        _SAMPLE_FIELDS,
        input=input, choices=None, target=target, id=id, description=None, metadata=metadata,
        sandbox=None, files=None, setup=None, checkpoint=None,
    )  # fmt: skip


def record_to_sample(
    record: DialogRecord,
    cut_reply: bool = False,
    max_turns: int | None = None,
    prompt_cot: bool | None = None,
    prompt_rubric: str | None = None,
    judge_text: bool = False,
    labelled: bool = False,
) -> Sample:
    """An Inspect sample for a dialog record (``prompt_rubric``: a rubric variant for the
    judge-mode input, `_rubric.load_rubric`; the seed by default).

    With ``judge_text`` (judge mode's default) the input is the dialog as ``USER:`` /
    ``BOT:`` lines (`render_dialog`), a plain string, and the metadata carries
    ``judge_dialog: True`` and ``reply_words``: `judge_generate` puts the dialog into the
    rubric prompt it sends, and the viewer shows the conversation as the input.

    With ``prompt_cot`` set (judge mode; the CoT variant when True) the input is
    the rubric prompt itself, a plain string ready for ``generate()``, and the
    metadata carries ``judge_prompt: True`` and the judged reply's length in
    words (``reply_words``); the dialog lives only in the prompt. Otherwise the
    input is the dialog as chat messages, with its rendering in ``transcript`` (not with
    ``cut_reply``: the input and the target hold it).
    With ``max_turns`` only the last turns are kept (see `truncate_turns`). With
    ``cut_reply`` (response mode) the final bot reply is cut off and kept as the
    sample's target, its rating in metadata (``reference_rating``); with ``labelled``
    (the `empathy_response` task) each input message opens with who speaks, and the
    metadata carries ``labelled_input: True`` (`dialogs.LABELLED_INPUT_KEY`). Every sample keeps
    the human rating on 1-5 (None when unrated) and the record's own metadata; the raw
    rating and its scale where the scale is not 1-5 or several raters rated the dialog
    (``human_ratings``).
    """
    turns = record.turns
    if not ends_with_bot(turns):
        raise ValueError(f"dialog {record.id!r} does not end with a bot turn")
    if cut_reply and (prompt_cot is not None or judge_text):
        raise ValueError("a judge-mode input needs the bot reply: not with cut_reply")
    turns, left_out = truncate_turns(turns, max_turns)
    metadata: dict[str, Any] = {HUMAN_KEY: None, **record.metadata}
    if record.rating is not None:
        metadata[HUMAN_KEY] = normalise_rating(record.rating, record.scale)
    if HUMAN_RATINGS_KEY in record.metadata or (
        record.rating is not None and record.scale != RUBRIC_SCALE
    ):
        # the raw rating and its scale where they say more than human_rating: every
        # Inspect copy of the metadata (state, summary, log) carries them
        metadata[HUMAN_RAW_KEY] = record.rating
        metadata[HUMAN_SCALE_KEY] = record.scale
    if left_out:
        metadata[LEFT_OUT_KEY] = left_out
    human = metadata[HUMAN_KEY]
    target = f"{human:g}" if human is not None else ""
    if judge_text:
        metadata[REPLY_WORDS_KEY] = reply_words(turns[-1].content)
        metadata[JUDGE_DIALOG_KEY] = True
        return _sample(record.id, render_dialog(turns), target, metadata)
    if prompt_cot is not None:
        metadata[REPLY_WORDS_KEY] = reply_words(turns[-1].content)
        metadata[JUDGE_PROMPT_KEY] = True
        prompt = render_prompt(render_dialog(turns), prompt_cot, prompt_rubric)
        return _sample(record.id, prompt, target, metadata)
    if cut_reply:
        # response mode: no ``transcript`` (the input and the target hold the dialog; the
        # Score's ``judged_dialog`` is what the grader saw), one copy fewer of the dialog
        # in every sample, state and summary Inspect keeps to the end. The original reply
        # is the target (Inspect's place for a reference answer, shown beside the input;
        # in metadata Inspect would re-wrap it in every summary it builds). The human
        # rating belongs to that reply, not to the one the model will write: keep it for
        # reference, out of the agreement metrics
        metadata[REFERENCE_RATING_KEY] = human
        metadata[HUMAN_KEY] = None
        target = turns[-1].content
        turns = turns[:-1]
        if not turns:
            raise ValueError(f"dialog {record.id!r} has no user turn before the reply")
        if labelled:
            metadata[LABELLED_INPUT_KEY] = True
            messages = [turn_message(t, True, i == 0) for i, t in enumerate(turns)]
            return _sample(record.id, messages, target, metadata)
    else:
        # the dialog as the judge would see it
        metadata = {TRANSCRIPT_KEY: render_dialog(turns), **metadata}
    return _sample(record.id, [turn_message(turn) for turn in turns], target, metadata)
