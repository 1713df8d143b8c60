"""``esconv``: ESConv and FailedESConv (``ESConv.json`` / ``FailedESConv.json``).

A JSON list of support conversations: ``dialog`` turns by the help seeker
(``speaker``/``seeker``/``usr``) and the supporter (``listener``/``supporter``/``sys``),
and the seeker's end-of-chat survey in ``survey_score.seeker`` (strings, 1-5).

- ``unit: conversation`` (default): one sample per conversation with a survey
  ``empathy`` score; the dialog is cut after the supporter's last reply (trailing
  seeker turns are dropped, counted in ``seeker_turns_cut``). Conversations
  without the score are left out and counted in the load summary. Sample ids:
  ``esconv-<index in the file>``.
- ``unit: star``: one sample per feedback star. A star (1-5) sits on the seeker turn
  that follows the replies it rates; the dialog is cut just before that turn, and
  before any seeker turns directly in front of it, so it ends with the rated
  replies. Sample ids: ``esconv-<index>-t<turn index of the star>``. An empty star
  (``""`` or null) is an unrated turn, context only, like an empty rating cell in
  ``layout: turns``: it gives no sample and is counted (``excluded`` and a note naming
  where).

A turn with empty content is left out of its dialog and counted in a load note naming the
conversation and turn (the generic loaders refuse one; a published corpus that holds one
must still load).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...dialogs import RATING_SCOPE_KEY, DialogRecord, Turn, add_turn, ends_with_bot
from ...errors import DatasetError
from ._options import check_keys
from ._problems import (
    BAD_VALUE,
    EMPTY_DIALOG,
    MISSING_FIELD,
    NO_BOT_REPLY,
    LoadReport,
    Located,
    RecordProblem,
)
from ._ratings import parse_rating
from ._roles import parse_role
from .jsonl import parse_json_file

FORMAT = "esconv"
KEYS = ("unit",)
UNITS = ("conversation", "star")
ROLES = {"speaker": "user", "seeker": "user", "usr": "user",
         "listener": "bot", "supporter": "bot", "sys": "bot"}  # fmt: skip
SCALE = (1.0, 5.0)
NO_SCORE = "no seeker empathy score"
EMPTY_STAR = "empty feedback star"
SHOWN = 5
"""How many places (empty stars, empty turns) a load note names before it gives a count."""


def looks_like(data: Any) -> bool:
    """A parsed JSON document in ESConv's shape."""
    return (
        isinstance(data, list)
        and bool(data)
        and isinstance(data[0], dict)
        and "dialog" in data[0]
        and ("survey_score" in data[0] or "emotion_type" in data[0])
    )


def load_esconv(
    path: Path | str, report: LoadReport, data: Any = None, **mapping: Any
) -> Iterator[Located]:
    """Samples from an ESConv JSON file (conversation scores, or feedback stars)."""
    check_keys(FORMAT, mapping, KEYS)
    unit = str(mapping.get("unit", "conversation"))
    if unit not in UNITS:
        raise DatasetError(f"esconv: unit must be one of {', '.join(UNITS)}, not {unit!r}")
    if data is None:
        data = parse_json_file(Path(path), report)
        if data is None:
            return
    if not isinstance(data, list):
        raise DatasetError(f"{path}: not an ESConv file: expected a JSON list of conversations")
    empty_stars: list[str] = []
    empty_turns: list[str] = []
    for index, conversation in enumerate(data):
        where = f"{path}: conversation {index}"
        try:
            steps, context = _steps(conversation)
        except RecordProblem as ex:
            report.problem(where, ex.kind, ex.detail)
            continue
        empty_turns += [f"conversation {index} turn {t}" for t, _, text, _ in steps if not text]
        if unit == "conversation":
            try:
                record = _conversation_record(index, steps, context, report)
            except RecordProblem as ex:
                report.problem(where, ex.kind, ex.detail)
                continue
            if record is not None:
                yield where, record
        else:
            yield from _star_records(index, steps, context, report, where, empty_stars)
    if empty_turns:
        report.note(
            f"{path}: {len(empty_turns)} turn(s) with empty content left out of their dialogs: "
            + _places(empty_turns)
        )
    if empty_stars:
        report.exclude(EMPTY_STAR, len(empty_stars))
        report.note(
            f"{path}: {len(empty_stars)} empty feedback star(s) read as unrated turns, no "
            "sample: " + _places(empty_stars)
        )


def _places(places: list[str]) -> str:
    """The first `SHOWN` places, and how many more."""
    more = len(places) - SHOWN
    return ", ".join(places[:SHOWN]) + (f" and {more} more" if more > 0 else "")


Step = tuple[int, str, str, Any]
"""(turn index in the file, role, content, feedback star: None without one, ``EMPTY`` for
an empty one)."""

EMPTY: Any = object()
"""The feedback star of a turn whose ``feedback`` is present but empty (``""`` or null)."""


def _steps(conversation: Any) -> tuple[list[Step], dict[str, Any]]:
    if not isinstance(conversation, dict):
        raise RecordProblem(BAD_VALUE, "conversation is not an object")
    dialog = conversation.get("dialog")
    if dialog is None:
        raise RecordProblem(MISSING_FIELD, "missing field 'dialog'")
    if not isinstance(dialog, list) or not dialog:
        raise RecordProblem(EMPTY_DIALOG, "empty dialog")
    steps: list[Step] = []
    for index, turn in enumerate(dialog):
        if not isinstance(turn, dict) or "speaker" not in turn:
            raise RecordProblem(MISSING_FIELD, f"turn {index}: missing field 'speaker'")
        try:
            role = parse_role(turn["speaker"], ROLES)
        except RecordProblem as ex:
            raise RecordProblem(ex.kind, f"turn {index}: {ex.detail}") from None
        content = turn.get("content", turn.get("text"))
        if not isinstance(content, str):
            raise RecordProblem(MISSING_FIELD, f"turn {index}: missing field 'content'")
        annotation = turn.get("annotation") or {}
        star = annotation.get("feedback") if isinstance(annotation, dict) else None
        if isinstance(annotation, dict) and "feedback" in annotation:
            if star is None or (isinstance(star, str) and not star.strip()):
                star = EMPTY
        steps.append((index, role, content.strip(), star))
    context = {
        key: conversation[key]
        for key in ("emotion_type", "problem_type", "experience_type", "situation")
        if conversation.get(key) is not None
    }
    survey = conversation.get("survey_score")
    seeker = survey.get("seeker") if isinstance(survey, dict) else None
    context["survey"] = dict(seeker) if isinstance(seeker, dict) else {}
    return steps, context


def _turns(steps: list[Step]) -> tuple[list[Turn], int]:
    """Turns up to the last supporter reply, and how many seeker turns came after it."""
    end = len(steps)
    while end and steps[end - 1][1] != "bot":
        end -= 1
    turns: list[Turn] = []
    for _, role, content, _ in steps[:end]:
        if content:  # an empty turn is left out (counted by load_esconv)
            add_turn(turns, role, content)
    return turns, len(steps) - end


def _metadata(context: dict[str, Any], scope: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {RATING_SCOPE_KEY: scope}
    if "emotion_type" in context:
        metadata["emotion"] = context["emotion_type"]
    for key in ("problem_type", "experience_type", "situation"):
        if key in context:
            metadata[key] = context[key]
    metadata["survey"] = context["survey"]
    return metadata


def _conversation_record(
    index: int,
    steps: list[Step],
    context: dict[str, Any],
    report: LoadReport,
) -> DialogRecord | None:
    raw = context["survey"].get("empathy")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        report.exclude(NO_SCORE)
        return None
    rating = parse_rating(raw, SCALE, "survey empathy")
    turns, cut = _turns(steps)
    if not ends_with_bot(turns):
        raise RecordProblem(NO_BOT_REPLY, "no supporter turn in the dialog")
    metadata = _metadata(context, "conversation")
    metadata["seeker_turns_cut"] = cut
    return DialogRecord(f"esconv-{index}", turns, rating, SCALE, metadata)


def _star_records(
    index: int,
    steps: list[Step],
    context: dict[str, Any],
    report: LoadReport,
    where: str,
    empty_stars: list[str],
) -> Iterator[Located]:
    for position, (turn_index, role, _, star) in enumerate(steps):
        if star is None:
            continue
        if star is EMPTY:  # an unrated turn: counted by the caller, context for later stars
            empty_stars.append(f"conversation {index} turn {turn_index}")
            continue
        star_where = f"{where} turn {turn_index}"
        try:
            if role != "user":
                raise RecordProblem(BAD_VALUE, "feedback star on a supporter turn")
            rating = parse_rating(star, SCALE, "feedback star")
            turns, seeker_cut = _turns(steps[:position])
            if not ends_with_bot(turns):
                raise RecordProblem(NO_BOT_REPLY, "no supporter reply before the feedback star")
        except RecordProblem as ex:
            report.problem(star_where, ex.kind, ex.detail)
            continue
        metadata = _metadata(context, "replies before the star")
        metadata["star_turn"] = turn_index
        metadata["seeker_turns_cut"] = seeker_cut
        yield star_where, DialogRecord(f"esconv-{index}-t{turn_index}", turns, rating, SCALE,
                                       metadata)  # fmt: skip
