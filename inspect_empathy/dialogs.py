"""The record model: dialog turns and records, the sample metadata keys, and the rules
every dialog follows (same-side turns joined, the last turn the bot's).

Every dataset source is mapped onto `DialogRecord`. Loaders, rendering (`_rubric`),
samples (`_samples`), the scorer and the metrics import from here; this module imports
neither rendering nor Inspect.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Scale = tuple[float, float]
"""A rating scale: (min, max)."""

RUBRIC_SCALE: Scale = (1.0, 5.0)
"""The rubric's own scale, onto which every human rating is mapped."""

_WORD = re.compile(r"\w+(?:'\w+)?")

HUMAN_KEY = "human_rating"
"""Sample (and score) metadata key: the human rating mapped onto 1-5."""

HUMAN_RATINGS_KEY = "human_ratings"
"""Sample metadata key: each rater's raw rating by rater name (several raters)."""

HUMAN_SCALE_KEY = "human_rating_scale"
"""Sample metadata key: the raw ratings' scale ``(low, high)``, the record's own tuple
(one per file, not a list per sample); a list once read back from a log. Set with
``human_rating_raw`` where the data's scale is not 1-5 or the dialog has several raters."""

CONVERSATION_KEY = "conversation"
"""Sample metadata key of a per-turn sample (`dataset.per_turn`): the conversation's id."""
CONVERSATION_TURNS_KEY = "conversation_turns"
"""Sample metadata key of a per-turn sample: how many bot turns its conversation has."""
CONVERSATION_RATING_KEY = "conversation_rating"
"""Sample metadata key of a per-turn sample: the conversation's human rating on 1-5."""

LEFT_OUT_KEY = "turns_left_out"
"""Sample metadata key: how many earlier turns ``max_turns`` left out."""

JUDGE_PROMPT_KEY = "judge_prompt"
"""Sample metadata key, True on judge-mode samples whose messages are the rubric prompt
(the sample input itself with ``-T input=prompt``, or the `empathy_prompt` solver's swap),
not a conversation."""

LABELLED_INPUT_KEY = "labelled_input"
"""Sample metadata key, True on response-mode samples whose input messages open with who
speaks (`labelled_text`): the viewer shows an input as its messages' text alone, so the
sample header's INPUT says ``USER:`` / ``BOT:`` as judge mode's does. The reply solver sends
the messages without the labels (`unlabelled_text`)."""

INPUT_LABELS = {"user": "USER: ", "assistant": "BOT: "}
"""The label each chat role's message opens with in a labelled input."""


def labelled_text(role: str, content: str, first: bool) -> str:
    """A message's text in a labelled input: its label, and before it a line break unless it
    is the first message (the viewer joins an input's messages with a space, so each turn
    gets a line of its own)."""
    return ("" if first else "\n") + INPUT_LABELS[role] + content


def unlabelled_text(role: str, text: str) -> str:
    """A labelled input message's own text (`labelled_text` undone); other text as it is."""
    label = INPUT_LABELS.get(role)
    if label is not None:
        for prefix in (label, "\n" + label):
            if text.startswith(prefix):
                return text[len(prefix) :]
    return text


JUDGE_DIALOG_KEY = "judge_dialog"
"""Sample metadata key, True on judge-mode samples whose input is the dialog as ``USER:`` /
``BOT:`` lines (`_rubric.render_dialog`; the `empathy` task's default): `judge_generate`
puts it into the rubric prompt it sends, so the viewer opens on the conversation."""

HUMAN_RAW_KEY = "human_rating_raw"
"""Sample metadata key: the human rating as given, on its own scale (where that scale is not
1-5, or the dialog has several raters; on 1-5 it is ``human_rating`` itself)."""

RATING_SCOPE_KEY = "rating_scope"
"""Sample metadata key of the named corpora: what the human rating rates, ``reply`` (the last
reply, as the rubric does) or ``conversation`` (the whole dialog)."""

TRANSCRIPT_KEY = "transcript"
"""Sample metadata key: the dialog rendered as the judge sees it (chat-message samples)."""

RENDER_NOTES_KEY = "render_notes"
"""Sample metadata key: what rendering the messages as a dialog left out or changed."""

REFERENCE_REPLY_KEY = "reference_reply"
"""Reserved sample metadata key: response mode's reference reply (the dataset's own bot
reply, cut off the input) before task version 1.3.0, which made it the sample's target.
Data may still not set it, so that a log's ``reference_reply`` always means that reply."""

REFERENCE_RATING_KEY = "reference_rating"
"""Sample metadata key (response mode): the human rating of the reference reply, on 1-5."""

REPLY_WORDS_KEY = "reply_words"
"""Sample metadata key (judge mode): the judged reply's length in words."""

TRAILING_KEY = "trailing_user_turns_cut"
"""Sample metadata key: how many trailing user turns ``trailing_user: cut`` cut."""

MISSING_RATERS_KEY = "raters_missing"
"""Sample metadata key: the raters with no rating for this dialog."""

LOADER_KEYS = frozenset({HUMAN_RATINGS_KEY, MISSING_RATERS_KEY, TRAILING_KEY})
"""Reserved keys the loaders set on a record's metadata."""

SAMPLE_KEYS = frozenset({HUMAN_KEY, HUMAN_RAW_KEY, HUMAN_SCALE_KEY, TRANSCRIPT_KEY,
                         REFERENCE_REPLY_KEY, REFERENCE_RATING_KEY, LEFT_OUT_KEY,
                         REPLY_WORDS_KEY, JUDGE_PROMPT_KEY, JUDGE_DIALOG_KEY,
                         RENDER_NOTES_KEY})  # fmt: skip
"""Reserved keys set when a record becomes a sample (`_samples.record_to_sample`) or by the
`empathy_prompt` solver."""

RESERVED_METADATA = SAMPLE_KEYS | LOADER_KEYS
"""Sample metadata keys the plugin sets; data can never set them (a clash is a problem)."""

# problem kinds of the dialog rules: the key is stable (tests, summaries)
EMPTY_DIALOG = "empty dialog"
NO_BOT_REPLY = "dialog does not end with a bot turn"


class RecordProblem(Exception):
    """One invalid record, raised while mapping it and collected by the loader."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


def id_text(text: str) -> str:
    """A text id cell by the one id rule (`dialog_id`): NFC, surrounding space stripped
    ("" when blank, which `dialog_id` refuses)."""
    return unicodedata.normalize("NFC", text.strip()).strip()


def dialog_id(value: Any, name: str = "id") -> str:
    """The one id rule, for every loader and the rater readers: a dialog id as text.

    Text is put in Unicode NFC and stripped of surrounding space, so ids a person cannot
    tell apart (``café`` composed or decomposed, ``"d2"`` and ``"d2 "``) are one id, and two
    records with it a duplicate. A whole number (an int, as JSON or YAML writes ``7``) is its
    digits. A number read as a float is refused: its written form is lost (``7.0``, ``7.00``
    and ``7e0`` read alike, and ``7`` would read as another id), so it is written as text
    (``"7.0"``) or a whole number. A RecordProblem for a missing, blank, true/false or
    fractional id, an object or a list.
    """
    if value is None:
        raise RecordProblem("missing field", f"missing field {name!r}")
    if isinstance(value, str):
        text = id_text(value)
        if not text:
            raise RecordProblem("missing field", f"{name} is blank")
        return text
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        raise RecordProblem(
            "bad value",
            f"{name} {value!r} is a number with a decimal point or exponent: write the id as "
            f"text ({str(value)!r}) or as a whole number",
        )
    kind = {dict: "an object", list: "a list", bool: "true/false"}.get(type(value), repr(value))
    raise RecordProblem("bad value", f"{name} must be text or a number, not {kind}")


@dataclass(frozen=True)
class Turn:
    """One turn of a dialog: who spoke (``user`` or ``bot``) and what they said."""

    role: Literal["user", "bot"]
    content: str


@dataclass(slots=True)
class DialogRecord:
    """One dialog ending in the bot reply to rate, with its human rating if known.

    ``rating`` is the raw value on ``scale`` (min, max); samples carry it mapped
    linearly onto 1-5, with the raw value and the scale beside it where the scale
    is not 1-5.
    """

    id: str
    turns: list[Turn]
    rating: float | None = None
    scale: Scale = RUBRIC_SCALE
    metadata: dict[str, Any] = field(default_factory=dict)


def add_turn(turns: list[Turn], role: str, content: str) -> None:
    """Append a turn, joining it to the previous one (a newline between) when the same
    side speaks again: the one joining of same-side turns."""
    if turns and turns[-1].role == role:
        turns[-1] = Turn(role, turns[-1].content + "\n" + content)  # type: ignore[arg-type]
    else:
        turns.append(Turn(role, content))  # type: ignore[arg-type]


def merge_consecutive(turns: list[Turn]) -> list[Turn]:
    """Join consecutive turns of the same speaker into one turn."""
    merged: list[Turn] = []
    for turn in turns:
        if merged and merged[-1].role == turn.role:
            add_turn(merged, turn.role, turn.content)
        else:
            merged.append(turn)
    return merged


def bot_end(turns: list[Turn]) -> int:
    """How many turns lead up to the last bot turn (0 when the bot never speaks)."""
    end = len(turns)
    while end and turns[end - 1].role != "bot":
        end -= 1
    return end


def ends_with_bot(turns: list[Turn]) -> bool:
    """Whether a dialog has turns and the last is the bot's: the reply to rate."""
    return bool(turns) and turns[-1].role == "bot"


def end_with_bot(turns: list[Turn], cut: bool, labels: Iterable[str] = ()) -> int:
    """Check a dialog ends with a bot turn, cutting trailing user turns when ``cut``.

    Returns how many user turns were cut (``turns`` is shortened in place); raises a
    RecordProblem when the dialog is empty, has no bot turn at all (naming the labels
    seen, when there are any) or ends with the user and ``cut`` is off.
    """
    if not turns:
        raise RecordProblem(EMPTY_DIALOG, "empty dialog")
    if ends_with_bot(turns):
        return 0
    end = bot_end(turns)
    if not end:
        seen = list(dict.fromkeys(label.strip() for label in labels))
        detail = "dialog does not end with a bot turn: it has no bot turn"
        if seen:
            detail += (
                "; no line starts with a bot label; labels seen: "
                + ", ".join(seen)
                + " (name the bot's label in roles, e.g. roles: {"
                + f"{seen[0]}: user, Helper: bot}})"
            )
        raise RecordProblem(NO_BOT_REPLY, detail)
    if not cut:
        raise RecordProblem(
            NO_BOT_REPLY,
            "dialog does not end with a bot turn (it ends with the user; "
            "trailing_user: cut cuts trailing user turns)",
        )
    count = len(turns) - end
    del turns[end:]
    return count


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


def scored_rater_ratings(
    scores: Iterable[Any],
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Each scored dialog's raters on 1-5 (`rater_ratings`) and the judge's score, by sample
    id, from a metric's ``SampleScore``s; dialogs without a rating, a scale or raters are
    left out. What `metrics.human_ceiling` and `alt_metric.alt_test_metric` read."""
    per_dialog: dict[str, dict[str, float]] = {}
    judge: dict[str, float] = {}
    for s in scores:
        metadata = s.sample_metadata or {}
        if metadata.get(HUMAN_KEY) is None or not metadata.get(HUMAN_SCALE_KEY):
            continue
        present = rater_ratings(metadata, s.sample_id)
        if present is None:
            continue
        per_dialog[str(s.sample_id)] = present
        judge[str(s.sample_id)] = s.score.as_float()
    return per_dialog, judge


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

