"""Shared validation for the loaders: problems, roles, ratings, scales, file reading."""

from __future__ import annotations

import math
import os
import re
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._rubric import Turn
from ..dialogs import HUMAN_RATINGS_KEY, DialogRecord, Scale
from ..errors import DatasetError

# Problem kinds: the key is stable (tests, summaries), the label reads well in a log.
UNREADABLE = "unreadable file"
BAD_JSON = "bad JSON"
MISSING_FIELD = "missing field"
EMPTY_DIALOG = "empty dialog"
NO_BOT_REPLY = "dialog does not end with a bot turn"
UNKNOWN_ROLE = "unknown role label"
NOT_NUMERIC = "rating not numeric"
OUT_OF_SCALE = "rating outside the scale"
DUPLICATE_ID = "duplicate id"
BAD_VALUE = "bad value"
RESERVED_KEY = "reserved metadata key"
BAD_TEXT = "invalid Unicode"

RESERVED_METADATA = frozenset(
    {
        "human_rating",
        "human_rating_raw",
        "human_rating_scale",
        "human_ratings",
        "transcript",
        "reference_reply",
        "reference_rating",
        "turns_left_out",
        "reply_words",
        "judge_prompt",
        "trailing_user_turns_cut",
        "raters_missing",
    }
)
"""Sample metadata keys the plugin sets; data can never set them (a clash is a problem).

`SAMPLE_KEYS` are set by ``dialogs.record_to_sample``; ``human_ratings``,
``raters_missing`` and ``trailing_user_turns_cut`` by the loaders.
"""
SAMPLE_KEYS = RESERVED_METADATA - {"human_ratings", "raters_missing", "trailing_user_turns_cut"}

METADATA_DEPTH = 32
"""How deeply metadata values may nest (deeper JSON is refused, not recursed into)."""

PROBLEM_LIMIT = 20
"""How many problems an error message lists before it gives only a count."""

USER_LABELS = frozenset({"user", "human", "seeker", "speaker", "customer", "client", "usr"})
BOT_LABELS = frozenset(
    {"assistant", "bot", "ai", "chatbot", "supporter", "listener", "agent", "sys", "model"}
)
DEFAULT_ROLES: dict[str, str] = {
    **{label: "user" for label in USER_LABELS},
    **{label: "bot" for label in BOT_LABELS},
}
"""Role labels known without a ``roles`` mapping (matched case-insensitively)."""


class RecordProblem(Exception):
    """One invalid record, raised while mapping it and collected by the loader."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Problem:
    """Where a record is (file and line or record number), the kind and what is wrong."""

    where: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.where}: {self.detail}"


class LoadReport:
    """What a load found: problems (invalid records), exclusions by design, notes."""

    def __init__(self, source: str, format: str) -> None:
        self.source = source
        self.format = format
        self.problems: list[Problem] = []
        self.excluded: Counter[str] = Counter()
        self.adjusted: Counter[str] = Counter()
        self.notes: list[str] = []
        self.loaded = 0
        self.skipped = False

    def problem(self, where: str, kind: str, detail: str) -> None:
        self.problems.append(Problem(where, kind, detail))

    def exclude(self, reason: str, count: int = 1) -> None:
        """Count records left out on purpose (no label, repeated row), never invalid ones."""
        self.excluded[reason] += count

    def adjust(self, what: str, count: int = 1) -> None:
        """Count records loaded with a change asked for (e.g. trailing user turns cut)."""
        self.adjusted[what] += count

    def note(self, text: str) -> None:
        self.notes.append(text)

    def error_message(self, limit: int = PROBLEM_LIMIT) -> str:
        """The first ``limit`` problems and how many there were, one per line."""
        head = f"{self.source}: {len(self.problems)} invalid record(s)"
        counts = Counter(p.kind for p in self.problems)
        kinds = ", ".join(f"{kind}: {n}" for kind, n in counts.most_common())
        shown = "\n".join(f"  - {p}" for p in self.problems[:limit])
        more = len(self.problems) - limit
        tail = f"\n  ... and {more} more" if more > 0 else ""
        hint = "\nFix these records, or load only the valid ones with on_invalid=skip."
        return f"{head} ({kinds})\n{shown}{tail}{hint}"

    def summary(self) -> dict[str, Any]:
        """Counts for the eval log: loaded, skipped by reason, excluded by reason, notes."""
        skipped = Counter(p.kind for p in self.problems) if self.skipped else Counter()
        return {
            "source": self.source,
            "format": self.format,
            "loaded": self.loaded,
            "skipped": dict(skipped.most_common()),
            "skipped_total": sum(skipped.values()),
            "skipped_examples": [str(p) for p in self.problems[:PROBLEM_LIMIT]]
            if self.skipped
            else [],
            "excluded": dict(self.excluded.most_common()),
            "adjusted": dict(self.adjusted.most_common()),
            "notes": list(self.notes),
        }


# --- reading ---------------------------------------------------------------


def check_regular_file(path: Path, max_bytes: int | None = None) -> int:
    """The size of a regular file; a DatasetError for anything else (checked before opening).

    Devices (``/dev/zero``), FIFOs and sockets are refused without being opened: reading
    them could hang or never end.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError as ex:
        raise DatasetError(f"{path}: no such file") from ex
    except OSError as ex:
        raise DatasetError(f"{path}: {UNREADABLE}: {ex.strerror or ex}") from ex
    if stat.S_ISDIR(info.st_mode):
        raise DatasetError(f"{path}: is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise DatasetError(f"{path}: {UNREADABLE}: not a regular file (a device, FIFO or socket)")
    if max_bytes is not None and info.st_size > max_bytes:
        raise DatasetError(
            f"{path}: {UNREADABLE}: {info.st_size} bytes, more than the {max_bytes} allowed here"
        )
    return info.st_size


def undecodable_line(path: Path, encoding: str = "utf-8-sig") -> str:
    """``path:line: ...`` for the first byte that does not decode, or "" if all decode."""
    data = path.read_bytes()
    try:
        data.decode(encoding)
    except UnicodeDecodeError as ex:
        line = data.count(b"\n", 0, ex.start) + 1
        name = "UTF-8" if encoding.replace("-", "").lower().startswith("utf8") else encoding
        return f"{path}:{line}: {UNREADABLE}: not {name} text (byte {ex.start}: {ex.reason})"
    return ""


def read_text(path: Path, encoding: str = "utf-8-sig") -> str:
    """A regular file's text (UTF-8, BOM dropped) or a DatasetError saying why it cannot be read."""
    check_regular_file(path)
    try:
        data = path.read_bytes()
        return data.decode(encoding)
    except LookupError as ex:
        raise DatasetError(f"{path}: unknown encoding {encoding!r}") from ex
    except FileNotFoundError as ex:
        raise DatasetError(f"{path}: no such file") from ex
    except IsADirectoryError as ex:
        raise DatasetError(f"{path}: is a folder, not a file") from ex
    except UnicodeDecodeError as ex:
        raise DatasetError(undecodable_line(path, encoding)) from ex
    except OSError as ex:
        raise DatasetError(f"{path}: {UNREADABLE}: {ex.strerror or ex}") from ex


# --- roles ------------------------------------------------------------------


def role_map(roles: Mapping[str, str] | None) -> dict[str, str]:
    """Label -> ``user``/``bot`` (lower-cased labels); defaults when ``roles`` is None.

    A ``roles`` mapping replaces the defaults: only its labels are accepted.
    Values may be ``user``/``bot`` or any default label (``assistant``, ``human``).
    """
    if roles is None:
        return DEFAULT_ROLES
    if not isinstance(roles, Mapping) or not roles:
        raise DatasetError(f"roles must map labels to user or bot, got {roles!r}")
    mapped: dict[str, str] = {}
    for label, role in roles.items():
        target = DEFAULT_ROLES.get(str(role).strip().lower())
        if target is None:
            raise DatasetError(f"roles: {label!r} maps to {role!r}; use user or bot")
        mapped[str(label).strip().lower()] = target
    return mapped


def parse_role(label: Any, roles: Mapping[str, str] = DEFAULT_ROLES) -> str:
    """``user`` or ``bot`` for a role label, or a RecordProblem for an unknown one."""
    role = roles.get(str(label).strip().lower())
    if role is None:
        known = ", ".join(sorted(roles))
        raise RecordProblem(UNKNOWN_ROLE, f"unknown role label {label!r} (known: {known})")
    return role


def add_turn(turns: list[Turn], role: str, content: str) -> None:
    """Append a turn, joining it to the previous one when the same side speaks again."""
    if turns and turns[-1].role == role:
        turns[-1] = Turn(role, turns[-1].content + "\n" + content)  # type: ignore[arg-type]
    else:
        turns.append(Turn(role, content))  # type: ignore[arg-type]


# --- transcripts -------------------------------------------------------------


def split_lines(text: str) -> list[str]:
    """Lines split on \\n, \\r\\n and \\r only.

    Not `str.splitlines`: it also breaks on U+2028, U+0085, form feeds and more,
    which can sit inside a message, and a break there could start a fake
    ``BOT:`` turn. The judge's renderer still indents any such break.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


_LABEL = re.compile(r"[A-Za-z][\w .'&/-]{0,31}")


def _is_label(head: str) -> bool:
    """Whether text before a line's first colon reads as a speaker label (1-3 words)."""
    head = head.strip()
    return bool(_LABEL.fullmatch(head)) and len(head.split()) <= 3


def _close(turns: list[Turn], role: str, label: str, first: str, more: list[str] | None) -> None:
    """Append the turn being read (joined to the previous one when the same side spoke)."""
    content = (first if more is None else "\n".join([first, *more])).strip()
    if not content:
        raise RecordProblem(BAD_VALUE, f"a {label.strip()}: turn is empty")
    if turns and turns[-1].role == role:
        content = turns.pop().content + "\n" + content
    turns.append(Turn(role, content))  # type: ignore[arg-type]


def _known_lines(text: str, cache: Mapping[str, str]) -> list[Turn] | None:
    """The turns of a transcript whose every line opens a turn with a label seen before.

    The common shape, read without the checks of the full parser; None for anything
    else (a new label, a continuation or blank line, an empty turn, a carriage return),
    which `parse_transcript` then reads line by line: same turns, same errors.
    """
    if "\r" in text:
        return None
    turns: list[Turn] = []
    last = ""
    for line in text.split("\n"):
        head, sep, rest = line.partition(":")
        role = cache.get(head) if sep else None
        if role is None:
            return None
        content = rest.strip()
        if not content:
            return None
        if role == last:
            content = turns.pop().content + "\n" + content
        turns.append(Turn(role, content))  # type: ignore[arg-type]
        last = role
    return turns


def parse_transcript(
    text: str,
    roles: Mapping[str, str] = DEFAULT_ROLES,
    cache: dict[str, str] | None = None,
    seen: list[str] | None = None,
) -> list[Turn]:
    """Turns from ``LABEL: text`` lines.

    A line whose label (1-3 words and a colon, after any leading whitespace) is a
    role in ``roles`` opens a turn, so ``"Seeker: ...\n Supporter: ..."`` (turns
    joined with ``"\n "``) reads as two turns. An unindented label that is not
    in ``roles`` makes the record invalid (unknown role label); other lines, and
    indented ``Word:`` lines that are no role, continue the current turn.
    Consecutive turns of the same side are joined. ``cache`` (raw label -> role)
    saves normalising the same labels again across many records; ``seen``
    collects the labels that opened turns (for error messages).
    """
    if cache is None:
        cache = {}
    elif seen is None:
        fast = _known_lines(text, cache)
        if fast is not None:
            return fast
    turns: list[Turn] = []
    role = label = first = ""
    more: list[str] | None = None
    for line in split_lines(text):
        head, sep, rest = line.partition(":")
        found = cache.get(head) if sep else None
        if found is None and sep and len(head) <= 40:
            start = line[:1]
            if start.isalpha():
                found = roles.get(head.strip().lower())
                if found is not None:
                    cache[head] = found
                elif _is_label(head):
                    parse_role(head, roles)  # raises: unknown role label
            elif start.isspace() and head.strip()[:1].isalpha():
                found = roles.get(head.strip().lower())
                if found is not None:
                    cache[head] = found
                elif seen is not None and _is_label(head):
                    other = f"{head.strip()} (indented, not a role)"
                    if other not in seen:
                        seen.append(other)
        if found is not None:
            if role:
                _close(turns, role, label, first, more)
            role, label, first, more = found, head, rest, None
            if seen is not None and head.strip() not in seen:
                seen.append(head.strip())
        elif role:
            if more is None:
                more = [line.strip()]
            else:
                more.append(line.strip())
        elif line.strip():
            raise RecordProblem(
                UNKNOWN_ROLE, f"line {line.strip()[:40]!r} has no 'LABEL:' role label"
            )
    if role:
        _close(turns, role, label, first, more)
    return turns


# --- ratings and scales ----------------------------------------------------------


def parse_scale(value: Any, where: str = "scale") -> Scale:
    """A (min, max) scale from ``[1, 3]``, ``"1-3"``, ``"1,3"`` or ``"1..3"``."""
    low: Any
    high: Any
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(-?[\d.]+)\s*(?:-|,|\.\.|to|:)\s*(-?[\d.]+)\s*", value)
        if not match:
            raise DatasetError(f"{where}: {value!r} is not a scale like 1-5 or [1, 5]")
        low, high = match.groups()
    elif isinstance(value, Mapping) and {"min", "max"} <= set(value):
        low, high = value["min"], value["max"]
    elif isinstance(value, list | tuple) and len(value) == 2:
        low, high = value
    else:
        raise DatasetError(f"{where}: {value!r} is not a scale like 1-5 or [1, 5]")
    try:
        scale = (float(low), float(high))
    except (TypeError, ValueError) as ex:
        raise DatasetError(f"{where}: {value!r} is not a scale like 1-5 or [1, 5]") from ex
    if not (math.isfinite(scale[0]) and math.isfinite(scale[1]) and scale[1] > scale[0]):
        raise DatasetError(f"{where}: {value!r} needs a finite min below its max")
    return scale


def parse_rating(value: Any, scale: Scale, name: str = "rating") -> float:
    """A rating as a float on ``scale``; numeric strings are accepted."""
    if isinstance(value, bool) or value is None:
        raise RecordProblem(NOT_NUMERIC, f"{name} {value!r} is not a number")
    if isinstance(value, int | float):
        rating = float(value)
    else:
        try:
            rating = float(str(value).strip())
        except ValueError:
            raise RecordProblem(NOT_NUMERIC, f"{name} {value!r} is not a number") from None
    if not math.isfinite(rating):
        raise RecordProblem(NOT_NUMERIC, f"{name} {value!r} is not a number")
    if rating < scale[0] or rating > scale[1]:
        raise RecordProblem(
            OUT_OF_SCALE, f"{name} {value!r} is outside the scale {scale[0]:g}-{scale[1]:g}"
        )
    return rating


# --- mapping keys -------------------------------------------------------------


def check_keys(format: str, mapping: Mapping[str, Any], allowed: Iterable[str]) -> None:
    """Refuse mapping keys a format does not know (a typo would be silently ignored)."""
    allowed = set(allowed)
    unknown = sorted(set(mapping) - allowed)
    if unknown:
        accepted = ", ".join(sorted(allowed)) or "none"
        raise DatasetError(
            f"format {format!r} does not take {', '.join(unknown)} (it takes: {accepted})"
        )


Located = tuple[str, DialogRecord]
"""A record with where it came from (``file:line`` or ``file: record N``)."""


# --- metadata and text that reach the log ------------------------------------------


def check_data_metadata(metadata: Mapping[str, Any], what: str = "metadata") -> None:
    """Refuse data that would set a reserved metadata key (`RESERVED_METADATA`)."""
    clash = sorted(str(key) for key in metadata if key in RESERVED_METADATA)
    if clash:
        raise RecordProblem(
            RESERVED_KEY,
            f"{what} sets the reserved key(s) {', '.join(map(repr, clash))}, which only "
            "the plugin may set (rename the field)",
        )


_SURROGATE = re.compile("[\ud800-\udfff]")


def _bad_text(text: str) -> bool:
    """Whether text holds a lone surrogate (JSON "\\ud800"), which no log or API can encode."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def check_record_text(record: DialogRecord) -> None:
    """Every string of a record that reaches the log must encode as UTF-8, metadata not nest deep.

    Checks the id, each turn, and every metadata key and value (iteratively, at most
    `METADATA_DEPTH` levels deep); raises a RecordProblem naming the first bad place.
    """
    if _bad_text(record.id):
        raise RecordProblem(BAD_TEXT, "the id holds invalid Unicode (a lone surrogate)")
    for index, turn in enumerate(record.turns, start=1):
        if _bad_text(turn.content):
            raise RecordProblem(
                BAD_TEXT, f"turn {index} holds invalid Unicode (a lone surrogate escape)"
            )
    if not record.metadata:
        return
    stack: list[tuple[str, Any, int]] = [("metadata", record.metadata, 1)]
    while stack:
        name, value, depth = stack.pop()
        if isinstance(value, str):
            if _bad_text(value):
                raise RecordProblem(
                    BAD_TEXT, f"{name} holds invalid Unicode (a lone surrogate escape)"
                )
        elif isinstance(value, dict | list | tuple):
            if depth > METADATA_DEPTH:
                raise RecordProblem(
                    BAD_VALUE, f"{name} nests deeper than {METADATA_DEPTH} levels"
                )
            if isinstance(value, dict):
                for key, item in value.items():
                    label = f"{name}.{key}" if isinstance(key, str) else f"{name}[{key!r}]"
                    if isinstance(key, str) and _bad_text(key):
                        raise RecordProblem(
                            BAD_TEXT, f"a key in {name} holds invalid Unicode (a lone surrogate)"
                        )
                    stack.append((label, item, depth + 1))
            else:
                stack.extend((f"{name}[{i}]", item, depth + 1) for i, item in enumerate(value))


def record_id_text(value: Any, name: str = "id") -> str:
    """A record id as text: a non-blank string or a number; objects, lists, blanks are invalid."""
    if value is None:
        raise RecordProblem(MISSING_FIELD, f"missing field {name!r}")
    if isinstance(value, str):
        if not value.strip():
            raise RecordProblem(MISSING_FIELD, f"{name} is blank")
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return str(value)
    kind = {dict: "an object", list: "a list", bool: "true/false"}.get(type(value), repr(value))
    raise RecordProblem(BAD_VALUE, f"{name} must be text or a number, not {kind}")


# --- dialog endings and text options ---------------------------------------------------

TRAILING_USER = ("error", "cut")
TRAILING_KEY = "trailing_user_turns_cut"
"""Sample metadata key: how many trailing user turns ``trailing_user: cut`` cut."""
TRAILING_COUNT = "dialogs with trailing user turns cut"
UNESCAPES = {"empathetic_dialogues": "empathetic_dialogues", "ed": "empathetic_dialogues"}


def unescape_empathetic_dialogues(text: str) -> str:
    """EmpatheticDialogues' ``_comma_`` back to ``,``."""
    return text.replace("_comma_", ",")


@dataclass
class TextOptions:
    """Spec keys on a dialog's text that every generic format takes.

    ``trailing_user: cut`` cuts user turns after the last bot reply (kept in
    metadata as `TRAILING_KEY`, counted in the load summary); ``unescape:
    empathetic_dialogues`` turns ``_comma_`` back into ``,`` in every turn.
    """

    cut_trailing_user: bool = False
    unescape: Callable[[str], str] | None = None
    cut: int = 0
    raters_missing: Counter[str] | None = None
    raters: Raters | None = None

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> TextOptions:
        value = mapping.get("unescape")
        unescape = None
        if value is not None and str(value).strip().lower() not in ("", "none"):
            if UNESCAPES.get(str(value).strip().lower()) is None:
                raise DatasetError(f"unescape must be 'empathetic_dialogues', not {value!r}")
            unescape = unescape_empathetic_dialogues
        return cls(
            parse_trailing_user(mapping.get("trailing_user")),
            unescape,
            raters=Raters.from_mapping(mapping),
        )

    def count(self, report: LoadReport, record: DialogRecord) -> None:
        """Count a loaded record whose trailing user turns were cut, or that misses raters."""
        if self.cut_trailing_user and record.metadata.get(TRAILING_KEY):
            self.cut += 1
        missing = record.metadata.get("raters_missing") if record.metadata else None
        if missing:
            if self.raters_missing is None:
                self.raters_missing = Counter()
            self.raters_missing["*"] += 1
            self.raters_missing.update(missing)

    def summarise(self, report: LoadReport) -> None:
        if self.cut:
            report.adjust(TRAILING_COUNT, self.cut)
        if self.raters_missing:
            report.adjust("dialogs with some raters missing", self.raters_missing.pop("*"))
            for name, count in self.raters_missing.most_common():
                report.note(f"rater {name!r}: no rating for {count} dialog(s)")


def parse_trailing_user(value: Any) -> bool:
    """Whether ``trailing_user`` asks to cut trailing user turns (``cut``) or not (``error``)."""
    if value is None:
        return False
    text = str(value).strip().lower()
    if text not in TRAILING_USER:
        raise DatasetError(f"trailing_user must be 'error' or 'cut', not {value!r}")
    return text == "cut"


def end_with_bot(turns: list[Turn], cut: bool, labels: Iterable[str] = ()) -> int:
    """Check a dialog ends with a bot turn, cutting trailing user turns when ``cut``.

    Returns how many user turns were cut (``turns`` is shortened in place); raises a
    RecordProblem when the dialog is empty, has no bot turn at all (naming the labels
    seen, when there are any) or ends with the user and ``cut`` is off.
    """
    if not turns:
        raise RecordProblem(EMPTY_DIALOG, "empty dialog")
    if turns[-1].role == "bot":
        return 0
    seen = list(dict.fromkeys(label.strip() for label in labels))
    if not any(turn.role == "bot" for turn in turns):
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
    count = 0
    while turns[-1].role != "bot":
        turns.pop()
        count += 1
    return count


# --- several raters ------------------------------------------------------------------

"""Sample metadata key: each rater's rating (raw, on the record's scale), by rater name."""
MISSING_RATERS_KEY = "raters_missing"
"""Sample metadata key: the raters with no rating for this dialog."""
AGGREGATES = ("median", "mean")
SOME_MISSING = "dialogs with some raters missing"


@dataclass(frozen=True)
class Raters:
    """The ``ratings: [col_a, col_b]`` and ``rater_aggregate`` spec keys."""

    names: tuple[str, ...]
    aggregate: str = "median"

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> Raters | None:
        """None without ``ratings``; a DatasetError for a bad list or aggregate."""
        value = mapping.get("ratings")
        how = str(mapping.get("rater_aggregate") or "median").strip().lower()
        if value is None:
            if mapping.get("rater_aggregate") is not None:
                raise DatasetError("rater_aggregate needs ratings: [column, column, ...]")
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple) or not value:
            raise DatasetError(f"ratings must list the raters' columns, not {value!r}")
        names = tuple(str(name) for name in value)
        if len(set(names)) != len(names):
            raise DatasetError(f"ratings lists a column twice: {list(names)}")
        if mapping.get("rating") is not None:
            raise DatasetError("give either rating (one column) or ratings (several), not both")
        if how not in AGGREGATES:
            raise DatasetError(f"rater_aggregate must be 'median' or 'mean', not {how!r}")
        return cls(names, how)

    def combine(
        self, values: Mapping[str, Any], scale: Scale
    ) -> tuple[float | None, dict[str, float], list[str]]:
        """(aggregate or None, present ratings by rater, missing raters) for one dialog.

        A rater is missing when the value is None or an empty cell; any other value must
        be a number on ``scale`` (a RecordProblem names the rater otherwise).
        """
        present: dict[str, float] = {}
        missing: list[str] = []
        for name in self.names:
            raw = values.get(name)
            if raw is None or (isinstance(raw, str) and not raw.strip()):
                missing.append(name)
            else:
                present[name] = parse_rating(raw, scale, f"rating {name!r}")
        if not present:
            return None, present, missing
        ratings = sorted(present.values())
        if self.aggregate == "mean":
            return sum(ratings) / len(ratings), present, missing
        middle = len(ratings) // 2
        if len(ratings) % 2:
            return ratings[middle], present, missing
        return (ratings[middle - 1] + ratings[middle]) / 2, present, missing


def rater_metadata(
    metadata: dict[str, Any], present: dict[str, float], missing: list[str]
) -> None:
    """Put each rater's rating (and who is missing, if anyone) into sample metadata."""
    metadata[HUMAN_RATINGS_KEY] = present
    if missing:
        metadata[MISSING_RATERS_KEY] = missing
