"""Shared validation for the loaders: problems, roles, ratings, scales, file reading."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._rubric import Turn
from ..dialogs import DialogRecord, Scale

try:  # Inspect prints a PrerequisiteError's message without a traceback
    from inspect_ai._util.error import PrerequisiteError as _PlainError
except ImportError:  # pragma: no cover - older or newer Inspect layouts
    _PlainError = Exception  # type: ignore[misc,assignment]

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


class DatasetError(_PlainError, ValueError):  # type: ignore[misc]
    """A dataset could not be loaded; the message lists every problem found.

    A subclass of Inspect's ``PrerequisiteError`` so that ``inspect eval``
    prints the message plainly, without a traceback, and exits non-zero.
    """

    def __init__(self, message: str) -> None:
        Exception.__init__(self, message)
        # Inspect prints ``message`` through rich: keep brackets in paths and
        # record text from being read as markup
        self.message = _escape_markup(f"Dataset error: {message}")

    def __str__(self) -> str:
        return str(self.args[0])


def _escape_markup(text: str) -> str:
    try:
        from rich.markup import escape
    except ImportError:  # pragma: no cover
        return text
    return escape(text)


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
        self.notes: list[str] = []
        self.loaded = 0
        self.skipped = False

    def problem(self, where: str, kind: str, detail: str) -> None:
        self.problems.append(Problem(where, kind, detail))

    def exclude(self, reason: str, count: int = 1) -> None:
        """Count records left out on purpose (no label, repeated row), never invalid ones."""
        self.excluded[reason] += count

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
            "notes": list(self.notes),
        }


# --- reading ---------------------------------------------------------------


def read_text(path: Path) -> str:
    """A file's text (UTF-8, BOM dropped) or a DatasetError saying why it cannot be read."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as ex:
        raise DatasetError(f"{path}: no such file") from ex
    except IsADirectoryError as ex:
        raise DatasetError(f"{path}: is a folder, not a file") from ex
    except UnicodeDecodeError as ex:
        line = ex.object.count(b"\n", 0, ex.start) + 1
        raise DatasetError(
            f"{path}:{line}: {UNREADABLE}: not UTF-8 text (byte {ex.start}: {ex.reason})"
        ) from ex
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


def finish_turns(turns: list[Turn]) -> list[Turn]:
    """Check a parsed dialog: not empty, ends with a bot turn; raise RecordProblem if not."""
    if not turns:
        raise RecordProblem(EMPTY_DIALOG, "empty dialog")
    if turns[-1].role != "bot":
        raise RecordProblem(NO_BOT_REPLY, "dialog does not end with a bot turn")
    return turns


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


def parse_transcript(
    text: str, roles: Mapping[str, str] = DEFAULT_ROLES, cache: dict[str, str] | None = None
) -> list[Turn]:
    """Turns from ``LABEL: text`` lines.

    A line that starts (unindented) with a label of 1-3 words and a colon opens a
    turn; the label must be in ``roles``, else the record is invalid (unknown role
    label). Other lines, and every indented line, continue the current turn.
    Consecutive turns of the same side are joined. ``cache`` (raw label -> role)
    saves normalising the same labels again across many records.
    """
    if cache is None:
        cache = {}
    turns: list[Turn] = []
    role = label = first = ""
    more: list[str] | None = None
    for line in split_lines(text):
        head, sep, rest = line.partition(":")
        found = cache.get(head) if sep else None
        if found is None and sep and line[:1].isalpha() and len(head) <= 40:
            found = roles.get(head.strip().lower())
            if found is not None:
                cache[head] = found
            elif _is_label(head):
                parse_role(head, roles)  # raises: unknown role label
        if found is not None:
            if role:
                _close(turns, role, label, first, more)
            role, label, first, more = found, head, rest, None
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
