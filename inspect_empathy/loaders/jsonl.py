"""Generic JSON formats: ``jsonl`` (one dialog per line) and ``json`` (a list of dialogs).

Each dialog is ``{"id", "turns": [{"role", "content"}], "rating", "scale", "metadata"}``
or OpenAI-style ``{"id", "messages": [...], ...}``. Mapping keys: ``roles`` (label ->
user or bot) and ``scale`` (the default scale of ``rating``; a record's own
``scale`` wins).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .._rubric import Turn
from ..dialogs import DialogRecord, Scale
from ._validate import (
    BAD_JSON,
    BAD_VALUE,
    DEFAULT_ROLES,
    EMPTY_DIALOG,
    MISSING_FIELD,
    NO_BOT_REPLY,
    DatasetError,
    LoadReport,
    Located,
    RecordProblem,
    check_keys,
    parse_rating,
    parse_role,
    parse_scale,
    read_text,
    role_map,
)

KEYS = ("roles", "scale")
SKIPPED_ROLES = frozenset({"system", "developer"})
LIST_KEYS = ("dialogs", "data", "records", "samples")


def _content(value: Any, index: int) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # OpenAI content parts
        texts = []
        for part in value:
            if isinstance(part, dict) and part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            elif isinstance(part, str):
                texts.append(part)
            else:
                raise RecordProblem(BAD_VALUE, f"turn {index}: only text content is supported")
        return "\n".join(texts)
    raise RecordProblem(BAD_VALUE, f"turn {index}: content must be text")


def record_from_object(
    obj: Any, roles: Mapping[str, str] = DEFAULT_ROLES, scale: Scale = (1.0, 5.0)
) -> DialogRecord:
    """A dialog record from one JSON object, or a RecordProblem saying what is wrong."""
    if not isinstance(obj, dict):
        raise RecordProblem(BAD_VALUE, f"expected a JSON object, got {type(obj).__name__}")
    record_id = obj.get("id")
    if record_id is None or record_id == "":
        raise RecordProblem(MISSING_FIELD, "missing field 'id'")
    raw_turns = obj.get("turns")
    if raw_turns is None:
        raw_turns = obj.get("messages")
        if raw_turns is None:
            raise RecordProblem(MISSING_FIELD, "missing field 'turns' (or 'messages')")
    if not isinstance(raw_turns, list):
        raise RecordProblem(BAD_VALUE, "'turns' must be a list of {role, content}")
    turns: list[Turn] = []
    system: list[str] = []
    for index, turn in enumerate(raw_turns, start=1):
        if not isinstance(turn, dict):
            raise RecordProblem(BAD_VALUE, f"turn {index} is not an object")
        if "role" not in turn:
            raise RecordProblem(MISSING_FIELD, f"turn {index}: missing field 'role'")
        if "content" not in turn:
            raise RecordProblem(MISSING_FIELD, f"turn {index}: missing field 'content'")
        label = turn["role"]
        content = _content(turn["content"], index).strip()
        if isinstance(label, str) and label.lower() in SKIPPED_ROLES:
            system.append(content)
            continue
        role = parse_role(label, roles)
        if not content:
            raise RecordProblem(BAD_VALUE, f"turn {index} has empty content")
        if turns and turns[-1].role == role:
            turns[-1] = Turn(role, turns[-1].content + "\n" + content)  # type: ignore[arg-type]
        else:
            turns.append(Turn(role, content))  # type: ignore[arg-type]
    if not turns:
        raise RecordProblem(EMPTY_DIALOG, "empty dialog")
    if turns[-1].role != "bot":
        raise RecordProblem(NO_BOT_REPLY, "dialog does not end with a bot turn")
    if "scale" in obj:
        try:
            scale = parse_scale(obj["scale"])
        except DatasetError as ex:
            raise RecordProblem(BAD_VALUE, f"bad scale {obj['scale']!r}") from ex
    rating = obj.get("rating")
    if rating is not None:
        rating = parse_rating(rating, scale)
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = {}
    elif not isinstance(metadata, dict):
        raise RecordProblem(BAD_VALUE, "metadata must be an object")
    else:
        metadata = dict(metadata)
    if system:
        metadata["system_messages"] = system
    return DialogRecord(str(record_id), turns, rating, scale, metadata)


def json_options(mapping: Mapping[str, Any], format: str) -> tuple[Mapping[str, str], Scale]:
    check_keys(format, mapping, KEYS)
    roles = role_map(mapping.get("roles"))
    scale = parse_scale(mapping["scale"]) if mapping.get("scale") is not None else (1.0, 5.0)
    return roles, scale


def load_jsonl(path: Path, report: LoadReport, **mapping: Any) -> Iterator[Located]:
    """Records from a JSONL file; a bad line is reported with its line number."""
    roles, scale = json_options(mapping, "jsonl")
    text = read_text(path)
    loads = json.loads
    # split on \n only: JSON strings may hold raw U+2028, U+0085 and other breaks
    for number, line in enumerate(text.split("\n"), start=1):
        if not line or line.isspace():
            continue
        where = f"{path}:{number}"
        try:
            obj = loads(line)
        except json.JSONDecodeError as ex:
            report.problem(where, BAD_JSON, f"bad JSON: {ex.msg} (column {ex.colno})")
            continue
        try:
            yield where, record_from_object(obj, roles, scale)
        except RecordProblem as ex:
            report.problem(where, ex.kind, ex.detail)


def parse_json_file(path: Path, report: LoadReport) -> Any:
    """A JSON file's content, or None with a bad-JSON problem (line and column)."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as ex:
        report.problem(f"{path}:{ex.lineno}", BAD_JSON, f"bad JSON: {ex.msg} (column {ex.colno})")
        return None


def json_items(data: Any, path: Path | str) -> list[Any]:
    """The list of dialogs in a JSON document (a list, or a list under a known key)."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in LIST_KEYS:
            if isinstance(data.get(key), list):
                return data[key]
    raise DatasetError(
        f"{path}: expected a JSON list of dialogs (or an object with a "
        f"{' / '.join(repr(k) for k in LIST_KEYS)} list)"
    )


def load_json(
    path: Path, report: LoadReport, data: Any = None, **mapping: Any
) -> Iterator[Located]:
    """Records from a JSON file holding a list of dialogs (``data``: already parsed)."""
    roles, scale = json_options(mapping, "json")
    if data is None:
        data = parse_json_file(path, report)
        if data is None:
            return
    yield from records_from_objects(json_items(data, path), report, str(path), roles, scale)


def records_from_objects(
    items: Iterable[Any],
    report: LoadReport,
    origin: str,
    roles: Mapping[str, str] = DEFAULT_ROLES,
    scale: Scale = (1.0, 5.0),
) -> Iterator[Located]:
    """Records from JSON-like objects (a file's list, or rows from the hub)."""
    for number, obj in enumerate(items, start=1):
        where = f"{origin}: record {number}"
        if isinstance(obj, dict) and obj.get("id") is not None:
            where += f" (id {obj['id']!r})"
        try:
            yield where, record_from_object(obj, roles, scale)
        except RecordProblem as ex:
            report.problem(where, ex.kind, ex.detail)
