"""Generic JSON formats: ``jsonl`` (one dialog per line) and ``json`` (a list of dialogs).

Each dialog is ``{"id", "turns": [{"role", "content"}], "rating", "scale", "metadata"}``
or OpenAI-style ``{"id", "messages": [...], ...}``. Mapping keys: ``roles`` (label ->
user or bot), ``scale`` (the default scale of ``rating``; a record's own
``scale`` wins), ``trailing_user`` (``cut``: cut user turns after the last bot
reply, counted; default ``error``) and ``unescape`` (``empathetic_dialogues``:
``_comma_`` back to ``,``). ``layout: turns`` reads one turn per line instead
(`turns`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..._util.read import ReadError, json_text
from ...dialogs import (
    RUBRIC_SCALE,
    TRAILING_KEY,
    DialogRecord,
    Scale,
    Turn,
    add_turn,
    end_with_bot,
)
from ...errors import DatasetError
from ._files import json_lines, read_text
from ._options import TextOptions, check_keys
from ._problems import BAD_JSON, BAD_VALUE, MISSING_FIELD, LoadReport, Located, RecordProblem
from ._ratings import parse_rating, parse_scale, rater_metadata
from ._roles import DEFAULT_ROLES, parse_role, role_map
from ._text import check_data_metadata, record_id_text

KEYS = ("roles", "scale", "trailing_user", "unescape", "ratings", "rater_aggregate")
ID_TYPES = (str, int)
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
    obj: Any,
    roles: Mapping[str, str] = DEFAULT_ROLES,
    scale: Scale = RUBRIC_SCALE,
    text: TextOptions | None = None,
) -> DialogRecord:
    """A dialog record from one JSON object, or a RecordProblem saying what is wrong."""
    if not isinstance(obj, dict):
        raise RecordProblem(BAD_VALUE, f"expected a JSON object, got {type(obj).__name__}")
    record_id = record_id_text(obj.get("id"))
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
        if text is not None and text.unescape is not None:
            content = text.unescape(content)
        if isinstance(label, str) and label.lower() in SKIPPED_ROLES:
            system.append(content)
            continue
        role = parse_role(label, roles)
        if not content:
            raise RecordProblem(BAD_VALUE, f"turn {index} has empty content")
        add_turn(turns, role, content)
    cut = end_with_bot(turns, text is not None and text.cut_trailing_user)
    if "scale" in obj:
        try:
            scale = parse_scale(obj["scale"])
        except DatasetError as ex:
            raise RecordProblem(BAD_VALUE, f"bad scale {obj['scale']!r}") from ex
    raters = text.raters if text is not None else None
    rating = obj.get("rating")
    present: dict[str, float] | None = None
    if raters is not None:
        if rating is not None:
            raise RecordProblem(
                BAD_VALUE, "has a 'rating' field while ratings: [...] names the raters' fields"
            )
        rating, present, absent = raters.combine(obj, scale)
    elif rating is not None:
        rating = parse_rating(rating, scale)
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = {}
    elif not isinstance(metadata, dict):
        raise RecordProblem(BAD_VALUE, "metadata must be an object")
    else:
        check_data_metadata(metadata)
        metadata = dict(metadata)
    if system:
        metadata["system_messages"] = system
    if present is not None:
        rater_metadata(metadata, present, absent)
    if cut:
        metadata[TRAILING_KEY] = cut
    return DialogRecord(record_id, turns, rating, scale, metadata)


def json_options(
    mapping: Mapping[str, Any], format: str
) -> tuple[Mapping[str, str], Scale, TextOptions]:
    check_keys(format, mapping, KEYS)
    roles = role_map(mapping.get("roles"))
    scale = parse_scale(mapping["scale"]) if mapping.get("scale") is not None else RUBRIC_SCALE
    return roles, scale, TextOptions.from_mapping(mapping)


def load_jsonl(path: Path, report: LoadReport, **mapping: Any) -> Iterator[Located]:
    """Records from a JSONL file, one dialog per line; a bad line is reported with its line
    number (``layout: turns`` is read by `turns.load_turns`)."""
    roles, scale, options = json_options(mapping, "jsonl")
    for where, obj in json_lines(path, report):
        try:
            record = record_from_object(obj, roles, scale, options)
        except RecordProblem as ex:
            report.problem(where, ex.kind, ex.detail)
            continue
        options.count(report, record)
        yield where, record
    options.summarise(report)


def parse_json_file(path: Path, report: LoadReport) -> Any:
    """A JSON file's content, or None with a bad-JSON problem (line and column)."""
    text = read_text(path)
    try:  # the one JSON reader (`_util.read`): no key twice, no NaN
        return json_text(text, path)
    except ReadError as ex:
        if not ex.line:  # not a syntax error at a place: a key twice, NaN, too deep
            raise DatasetError(str(ex)) from None
        report.problem(f"{path}:{ex.line}", BAD_JSON, ex.problem)
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
    roles, scale, options = json_options(mapping, "json")
    if data is None:
        data = parse_json_file(path, report)
        if data is None:
            return
    yield from records_from_objects(
        json_items(data, path), report, str(path), roles, scale, options
    )


def records_from_objects(
    items: Iterable[Any],
    report: LoadReport,
    origin: str,
    roles: Mapping[str, str] = DEFAULT_ROLES,
    scale: Scale = RUBRIC_SCALE,
    options: TextOptions | None = None,
) -> Iterator[Located]:
    """Records from JSON-like objects (a file's list, or rows from the hub)."""
    options = options or TextOptions()
    for number, obj in enumerate(items, start=1):
        where = f"{origin}: record {number}"
        if isinstance(obj, dict) and isinstance(obj.get("id"), str | int):
            where += f" (id {obj['id']!r})"
        try:
            record = record_from_object(obj, roles, scale, options)
        except RecordProblem as ex:
            report.problem(where, ex.kind, ex.detail)
            continue
        options.count(report, record)
        yield where, record
    options.summarise(report)
