"""Checks on what reaches the log: valid Unicode, metadata depth, reserved metadata
keys, record ids as text."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...dialogs import RESERVED_METADATA, DialogRecord, dialog_id
from ._problems import (
    BAD_TEXT,
    BAD_VALUE,
    CONTROL_CHARACTER,
    RESERVED_KEY,
    RecordProblem,
)

METADATA_DEPTH = 32
"""How deeply metadata values may nest (deeper JSON is refused, not recursed into)."""


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


CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
"""C0 control characters other than tab, newline and carriage return: NUL, escape
(terminal colour codes), form feed, ...: no dialog needs them, and they reach the prompt."""
CONTROL_BYTES = re.compile(b"[\x00-\x08\x0b\x0c\x0e-\x1f]")
"""`CONTROL` in UTF-8 bytes (a UTF-8 file holds one only where its text does)."""
JSON_CONTROL_BYTES = re.compile(rb"\\(?:u00[01][0-9a-fA-F]|[bf])|[\x00-\x08\x0b\x0c\x0e-\x1f]")
"""Where a JSON file may put a control character in a string: an escape (``\u001b``,
``\f``, ``\b``; raw ones are bad JSON). An escaped backslash before ``b`` also matches:
the records are then checked one by one, which finds nothing."""


def control_problem(text: str, what: str) -> RecordProblem | None:
    """A RecordProblem naming the first C0 control character in ``text``, or None."""
    found = CONTROL.search(text)
    if found is None:
        return None
    char = found.group()
    return RecordProblem(
        CONTROL_CHARACTER,
        f"{what} holds the control character U+{ord(char):04X} at character "
        f"{found.start() + 1}: remove it (only tab, newline and carriage return may appear)",
    )


def check_turn_controls(record: DialogRecord) -> None:
    """Refuse C0 control characters (`CONTROL`) in the id and the turns."""
    problem = control_problem(record.id, "the id")
    if problem is not None:
        raise problem
    for index, turn in enumerate(record.turns, start=1):
        problem = control_problem(turn.content, f"turn {index}")
        if problem is not None:
            raise problem


def check_record_text(record: DialogRecord) -> None:
    """Every string of a record that reaches the log must encode as UTF-8, metadata not nest deep.

    Checks the id, each turn, and every metadata key and value (iteratively, at most
    `METADATA_DEPTH` levels deep); raises a RecordProblem naming the first bad place.
    Control characters are checked apart (`check_turn_controls`).
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
                raise RecordProblem(BAD_VALUE, f"{name} nests deeper than {METADATA_DEPTH} levels")
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
    """A record id as text, by the one id rule (`dialogs.dialog_id`)."""
    return dialog_id(value, name)
