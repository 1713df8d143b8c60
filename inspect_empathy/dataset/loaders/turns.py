"""``layout: turns``: one row (CSV/TSV) or line (JSONL) per turn, grouped into dialogs.

Mapping keys:

- ``dialog``: the dialog id column (default ``dialog``).
- ``order``: the turn order column (numbers; default: file order within each dialog).
- ``speaker``: the speaker column (default ``speaker``), read with ``roles``.
- ``text``: the turn's text column (default ``text``).
- ``rating``: the column rating some turns (default ``rating``); an empty cell is an
  unrated turn, which is context only.
- ``peer``: ``true`` when two people talk and nobody is a bot: each rated turn's
  speaker plays the bot and every other speaker the user.
- ``roles``, ``scale``, ``metadata`` (columns copied from the rated turn's row; default
  all other columns), ``unescape``, and for CSV/TSV the dialect keys.

Every rated bot turn (every rated turn with ``peer``) becomes one sample whose dialog
ends with that turn, id ``<dialog>-<order>`` (``order``: the order cell, or the turn's
position in its dialog from 1). A rated turn that opens its dialog has nothing to
answer: it is excluded and counted.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...dialogs import RESERVED_METADATA, RUBRIC_SCALE, DialogRecord, Turn, add_turn, id_text
from ...errors import DatasetError
from ._files import json_lines
from ._options import TextOptions, check_keys
from ._problems import (
    BAD_VALUE,
    MISSING_FIELD,
    RESERVED_KEY,
    LoadReport,
    Located,
    RecordProblem,
)
from ._ratings import Raters, parse_rating, parse_scale, rater_metadata
from ._roles import DEFAULT_ROLES, parse_role, role_map
from ._text import record_id_text
from .tabular import Dialect, csv_rows, extra_cells, header_columns

LAYOUTS = ("dialogs", "turns")
COLUMN_KEYS = ("dialog", "order", "speaker", "text", "rating")
KEYS = (*COLUMN_KEYS, "ratings", "rater_aggregate", "roles", "scale", "peer", "metadata",
        "unescape")  # fmt: skip
LAYOUT_METADATA = ("dialog_id", "turn", "speaker")
"""Metadata keys the turn layout sets on each sample."""
RATED_OPENER = "rated turn opens its dialog (nothing to answer)"
NO_RATED_TURN = "dialogs without a rated turn"


# one turn as read: (where, dialog id, order text, speaker, text, rating, metadata); the
# rating is the cell's text, or with ``ratings`` a dict of each rater's cell
Row = tuple[str, str, str, str, str, Any, dict[str, Any]]


def _rated(cell: Any) -> bool:
    if isinstance(cell, dict):
        return any(str(value).strip() for value in cell.values())
    return bool(cell.strip())


def parse_layout(value: Any) -> str:
    """``dialogs`` (one dialog per row, the default) or ``turns``."""
    text = str(value).strip().lower()
    if text not in LAYOUTS:
        raise DatasetError(f"layout must be 'dialogs' or 'turns', not {value!r}")
    return text


def _flag(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1"):
        return True
    if text in ("false", "no", "0", "none", ""):
        return False
    raise DatasetError(f"{name} must be true or false, not {value!r}")


def _csv_rows(
    path: Path, report: LoadReport, format: str, mapping: dict[str, Any], broken: set[str]
) -> Iterator[Row]:
    dialect = Dialect.from_mapping(mapping, format)
    rows = csv_rows(path, report, dialect)
    first = next(rows, None)
    if first is None:
        return
    header_where = f"{path}:{first[0]}"
    columns = header_columns(first[1], header_where)
    raters = Raters.from_mapping(mapping)
    names = _column_names(mapping, columns, header_where, raters)
    index = {key: columns[name] for key, name in names.items() if name is not None}
    meta = _meta_columns(mapping, list(columns), names, header_where)
    meta_index = [(name, columns[name]) for name in meta]
    width = len(first[1])
    d, s, t = index["dialog"], index["speaker"], index["text"]
    o, r = index.get("order"), index.get("rating")
    rater_index = [(name, columns[name]) for name in raters.names] if raters else []
    needed = max([*index.values(), *(i for _, i in rater_index)]) + 1
    for line, values in rows:
        where = f"{path}:{line}"
        if len(values) > width or len(values) < needed:
            if len(values) > width:
                problem = extra_cells(values, width)
                report.problem(where, problem.kind, problem.detail)
            else:
                report.problem(where, MISSING_FIELD, f"row has {len(values)} cells, needs {needed}")
            if d < len(values):
                broken.add(id_text(values[d]))  # its dialog would miss a turn
            continue
        metadata = {n: values[i] for n, i in meta_index if i < len(values) and values[i]}
        if rater_index:
            rating: Any = {name: values[i] for name, i in rater_index}
        else:
            rating = values[r] if r is not None else ""
        yield (where, values[d], values[o] if o is not None else "", values[s], values[t],
               rating, metadata)  # fmt: skip


def _jsonl_rows(
    path: Path, report: LoadReport, mapping: dict[str, Any], broken: set[str]
) -> Iterator[Row]:
    names: dict[str, str | None] | None = None
    raters = Raters.from_mapping(mapping)
    meta_keys: list[str] | None = mapping.get("metadata")
    if isinstance(meta_keys, str):
        meta_keys = [meta_keys]
    for where, obj in json_lines(path, report):
        if not isinstance(obj, dict):
            report.problem(where, BAD_VALUE, f"expected a JSON object, got {type(obj).__name__}")
            continue
        if names is None:
            names = {key: str(mapping.get(key) or key) for key in COLUMN_KEYS}
            if mapping.get("order") is None:
                names["order"] = None
            if raters is not None:
                names["rating"] = None
        try:
            values: dict[str, Any] = {
                key: _json_cell(obj, name, key) for key, name in names.items() if name
            }
            used = {name for name in names.values() if name}
            if raters is not None:
                values["rating"] = {n: _json_cell(obj, n, "rating") for n in raters.names}
                used.update(raters.names)
            keys = meta_keys if meta_keys is not None else [k for k in obj if k not in used]
            metadata = {k: obj[k] for k in keys if obj.get(k) is not None}
            clash = [k for k in metadata if k in RESERVED_METADATA or k in LAYOUT_METADATA]
            if clash:
                raise RecordProblem(
                    RESERVED_KEY,
                    f"field(s) {', '.join(map(repr, clash))} would set metadata keys only "
                    "the plugin sets (rename them, or list the fields to keep with metadata)",
                )
        except RecordProblem as ex:
            report.problem(where, ex.kind, ex.detail)
            dialog = obj.get(names.get("dialog") or "dialog")
            if isinstance(dialog, str | int) and not isinstance(dialog, bool):
                broken.add(id_text(str(dialog)))  # its dialog would miss a turn
            continue
        yield (where, values["dialog"], values.get("order", ""), values["speaker"],
               values["text"], values.get("rating", ""), metadata)  # fmt: skip


def _json_cell(obj: Mapping[str, Any], name: str, key: str) -> str:
    value = obj.get(name)
    if value is None:
        if key in ("order", "rating"):
            return ""
        raise RecordProblem(MISSING_FIELD, f"missing field {name!r}")
    if key == "dialog":
        return record_id_text(value, name)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RecordProblem(BAD_VALUE, f"{name} must be text or a number, not {value!r}")
    return str(value)


def _column_names(
    mapping: Mapping[str, Any], columns: Mapping[str, int], where: str, raters: Raters | None
) -> dict[str, str | None]:
    names: dict[str, str | None] = {}
    if raters is not None:
        absent = [name for name in raters.names if name not in columns]
        if absent:
            raise DatasetError(
                f"{where}: ratings column(s) {', '.join(map(repr, absent))} not in the header"
            )
    for key in COLUMN_KEYS:
        if key == "rating" and raters is not None:
            names[key] = None
            continue
        name = mapping.get(key)
        if name is None:
            default = key
            if key == "order" or (key == "rating" and default not in columns):
                names[key] = None
                continue
            name = default
        if str(name) not in columns:
            raise DatasetError(
                f"{where}: {key} column {name!r} is not in the header "
                f"({', '.join(repr(c) for c in columns)})"
            )
        names[key] = str(name)
    return names


def _meta_columns(
    mapping: Mapping[str, Any], header: list[str], names: Mapping[str, str | None], where: str
) -> list[str]:
    wanted = mapping.get("metadata")
    used = {name for name in names.values() if name} | set(mapping.get("ratings") or ())
    if wanted is None:
        meta = [n for n in header if n and n not in used]
    else:
        meta = [wanted] if isinstance(wanted, str) else [str(n) for n in wanted]
        missing = [n for n in meta if n not in header]
        if missing:
            raise DatasetError(f"{where}: metadata columns not in the header: {missing}")
    clash = [n for n in meta if n in RESERVED_METADATA or n in LAYOUT_METADATA]
    if clash:
        raise DatasetError(
            f"{where}: {RESERVED_KEY}: column(s) {', '.join(map(repr, clash))} would be "
            "copied into metadata under a key only the plugin sets; rename them, or list the "
            "columns to keep with metadata: [...]"
        )
    return meta


def _order_key(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise RecordProblem(BAD_VALUE, f"turn order {text!r} is not a number") from None
    if not math.isfinite(value):
        raise RecordProblem(BAD_VALUE, f"turn order {text!r} is not a number")
    return value


def load_turns(
    path: Path, report: LoadReport, format: str = "csv", **mapping: Any
) -> Iterator[Located]:
    """Samples from a turn-per-row file: one per rated bot turn (see the module doc)."""
    check_keys(f"{format} (layout: turns)", mapping,
               (*KEYS, *(("delimiter", "quotechar", "escapechar", "na_values", "encoding")
                         if format in ("csv", "tsv") else ())))  # fmt: skip
    peer = _flag(mapping.get("peer", False), "peer")
    roles = role_map(mapping.get("roles")) if mapping.get("roles") else DEFAULT_ROLES
    scale = parse_scale(mapping["scale"]) if mapping.get("scale") is not None else RUBRIC_SCALE
    text_options = TextOptions.from_mapping(mapping)
    unescape, raters = text_options.unescape, text_options.raters
    mapping = dict(mapping)
    broken: set[str] = set()
    if format == "jsonl":
        rows = _jsonl_rows(path, report, mapping, broken)
    else:
        rows = _csv_rows(path, report, format, mapping, broken)

    dialogs: dict[str, list[Row]] = {}
    for row in rows:
        where, dialog = row[0], id_text(row[1])
        if not dialog:
            report.problem(where, MISSING_FIELD, "missing dialog id (empty cell)")
            continue
        if not row[4].strip():
            report.problem(where, MISSING_FIELD, "missing field 'text' (empty turn)")
            broken.add(dialog)
        if not row[3].strip():
            report.problem(where, MISSING_FIELD, "missing speaker (empty cell)")
            broken.add(dialog)
        dialogs.setdefault(dialog, []).append(row)

    openers = unrated_dialogs = 0
    for dialog, turns in dialogs.items():
        if dialog in broken:
            continue
        try:
            ordered = _ordered(turns)
            labelled = [(row, "bot" if peer else _role(row, roles)) for row in ordered]
        except _RowProblem as ex:
            report.problem(ex.where, ex.kind, ex.detail)
            continue
        has_order = bool(ordered and ordered[0][2].strip())
        rated = [i for i, (row, _) in enumerate(labelled) if _rated(row[5])]
        if not rated:
            unrated_dialogs += 1
            continue
        speakers = {labelled[i][0][3].strip() for i in rated} if peer else {None}
        for speaker in speakers:
            merged: list[Turn] = []
            for position, (row, role) in enumerate(labelled):
                if peer:
                    role = "bot" if row[3].strip() == speaker else "user"
                content = row[4].strip()
                if unescape is not None:
                    content = unescape(content)
                add_turn(merged, role, content)
                if not _rated(row[5]) or (peer and role != "bot"):
                    continue
                where = row[0]
                if role != "bot":
                    report.problem(
                        where, BAD_VALUE,
                        f"rating on a user turn (speaker {row[3].strip()!r}); only bot "
                        "turns are rated (peer: true makes each rated speaker the bot)",
                    )  # fmt: skip
                    continue
                if len(merged) < 2:
                    openers += 1
                    continue
                metadata: dict[str, Any] = dict(row[6])
                try:
                    if raters is not None:
                        rating, present, absent = raters.combine(row[5], scale)
                        rater_metadata(metadata, present, absent)
                    else:
                        rating = parse_rating(row[5].strip(), scale)
                except RecordProblem as ex:
                    report.problem(where, ex.kind, ex.detail)
                    continue
                order = row[2].strip() if has_order else str(position + 1)
                metadata.update(dialog_id=dialog, turn=order)
                if peer:
                    metadata["speaker"] = row[3].strip()
                record = DialogRecord(f"{dialog}-{order}", list(merged), rating, scale, metadata)
                text_options.count(report, record)
                yield where, record
    text_options.summarise(report)
    if openers:
        report.exclude(RATED_OPENER, openers)
    if unrated_dialogs:
        report.exclude(NO_RATED_TURN, unrated_dialogs)


class _RowProblem(Exception):
    def __init__(self, where: str, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.where, self.kind, self.detail = where, kind, detail


def _role(row: Row, roles: Mapping[str, str]) -> str:
    try:
        return parse_role(row[3], roles)
    except RecordProblem as ex:
        raise _RowProblem(row[0], ex.kind, ex.detail) from None


def _ordered(turns: list[Row]) -> list[Row]:
    """A dialog's turns in order: by the order column when it is filled, else as read."""
    if not turns[0][2].strip():
        blank = next((row for row in turns if row[2].strip()), None)
        if blank is not None:
            raise _RowProblem(turns[0][0], MISSING_FIELD, "missing turn order (empty cell)")
        return turns
    keyed: list[tuple[float, Row]] = []
    seen: dict[float, str] = {}
    for row in turns:
        try:
            if not row[2].strip():
                raise RecordProblem(MISSING_FIELD, "missing turn order (empty cell)")
            key = _order_key(row[2].strip())
        except RecordProblem as ex:
            raise _RowProblem(row[0], ex.kind, ex.detail) from None
        if key in seen:
            raise _RowProblem(
                row[0], BAD_VALUE, f"turn order {row[2].strip()!r} repeats (first at {seen[key]})"
            )
        seen[key] = row[0]
        keyed.append((key, row))
    keyed.sort(key=lambda item: item[0])
    return [row for _, row in keyed]
