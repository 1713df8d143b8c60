"""The readers: one per file kind, used by every path that reads that kind.

- JSON (`json_text`): no key given twice in one object, no ``NaN`` / ``Infinity``.
- YAML (`yaml_text`): the safe loader; no aliases (``*name``: a few nested ones expand
  into gigabytes), no tags (``!!python/...``, ``!!binary``), no key given twice.
- CSV/TSV (`csv_table`): one delimiter rule (`delimiter_of`); a row whose cell count is
  not the header's is refused, naming its line, never read by position.
- xlsx (`xlsx_table`): bounded inflated size and rows; the sheet named, else the first
  visible one, named in the note.
- Any file (`file_bytes`): a regular file (`file_kind.file_problem`) of at most the
  given size, refused unread otherwise.

`READERS` registers each reader of a whole file by kind, so one test runs the same
hostile inputs through all of them. A refusal is a `ReadError` (a ValueError): one line
naming the file, the line where known, and the problem; a value is never printed whole.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .file_kind import file_problem

__all__ = ["READERS", "ReadError", "Table", "csv_table", "delimiter_of", "file_bytes",
           "json_file", "json_text", "table_file", "xlsx_table", "yaml_file",
           "yaml_text"]  # fmt: skip

MAX_BYTES = 16 * 1024 * 1024
"""The largest JSON or YAML file a reader takes unless its caller bounds it tighter."""


class ReadError(ValueError):
    """A file its reader refuses: ``file``, ``line`` (0: not known) and the ``problem``."""

    def __init__(self, file: str | os.PathLike[str], problem: str, line: int = 0) -> None:
        self.file, self.line, self.problem = str(file), line, problem
        super().__init__(f"{self.file}:{line}: {problem}" if line else f"{self.file}: {problem}")


def short(value: Any, limit: int = 60) -> str:
    """``repr`` of a value cut to ``limit`` characters (a message never holds it whole)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def file_bytes(path: str | os.PathLike[str], max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (checked before opening)."""
    info, problem = file_problem(path)
    if info is None:
        raise ReadError(path, problem)
    if info.st_size > max_bytes:
        raise ReadError(path, f"{info.st_size} bytes, more than the {max_bytes} read here: "
                              "refused unread")  # fmt: skip
    try:
        data = Path(path).read_bytes()
    except OSError as ex:
        raise ReadError(path, f"cannot be read ({ex.strerror or ex})") from None
    if len(data) > max_bytes:  # it grew since
        raise ReadError(path, f"more than the {max_bytes} bytes read here: refused")
    return data


def _text(path: str | os.PathLike[str], max_bytes: int) -> str:
    data = file_bytes(path, max_bytes)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as ex:
        line = data.count(b"\n", 0, ex.start) + 1
        raise ReadError(path, f"not UTF-8 text (byte {ex.start}: {ex.reason})", line) from None


# --------------------------------------------------------------------------- JSON


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def json_text(text: str, file: str | os.PathLike[str]) -> Any:
    """The JSON document ``text`` (from ``file``): ReadError for bad JSON, a key given
    twice in one object, ``NaN`` or ``Infinity``, or nesting too deep to read."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen:
                raise _Twice(f"key {key!r} given twice in one object ({short(seen[key])}, "
                             f"then {short(value)}): keep one")  # fmt: skip
            seen[key] = value
        return seen

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=_refuse_constant)
    except json.JSONDecodeError as ex:
        raise ReadError(file, f"bad JSON: {ex.msg} (column {ex.colno})", ex.lineno) from None
    except _Twice as ex:
        raise ReadError(file, f"bad JSON: {ex}") from None
    except RecursionError:
        raise ReadError(file, "bad JSON: nested too deeply to read") from None
    except ValueError as ex:  # NaN, Infinity
        raise ReadError(file, f"bad JSON: {ex}") from None


class _Twice(Exception):
    """A key given twice (raised inside a parser, turned into a ReadError)."""


def json_file(path: str | os.PathLike[str], max_bytes: int = MAX_BYTES) -> Any:
    """The JSON document in a file (`file_bytes`, `json_text`)."""
    return json_text(_text(path, max_bytes), path)


# --------------------------------------------------------------------------- YAML


def yaml_text(text: str, file: str | os.PathLike[str]) -> Any:
    """The YAML document ``text`` (from ``file``) read with the safe loader: ReadError
    for bad YAML, an alias, a tag, or a key given twice in one mapping (both lines)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                raise _Refused("aliases (*name) are not allowed", event.start_mark.line + 1)
            tag = getattr(event, "tag", None)
            if tag is not None:
                raise _Refused(f"tags ({short(tag, 40)}) are not allowed",
                               event.start_mark.line + 1)  # fmt: skip
            return super().compose_node(parent, index)

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
        lines: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = lines.get(key)
            except TypeError:  # an unhashable key ({[1]: x})
                raise _Refused("a mapping key must be a plain value", line) from None
            if first is not None:
                raise _Refused(f"key {short(key)} given twice (line {first} and line {line}): "
                               "keep one", line)  # fmt: skip
            lines[key] = line
        return loader.construct_mapping(node, deep=True)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    try:
        return yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass
    except _Refused as ex:
        raise ReadError(file, f"bad YAML: {ex.args[0]}", ex.args[1]) from None
    except yaml.MarkedYAMLError as ex:
        mark = ex.problem_mark or ex.context_mark
        raise ReadError(file, f"bad YAML: {ex.problem or ex.context}",
                        mark.line + 1 if mark is not None else 0) from None  # fmt: skip
    except RecursionError:
        raise ReadError(file, "bad YAML: nested too deeply to read") from None
    except (yaml.YAMLError, ValueError) as ex:
        raise ReadError(file, f"bad YAML: {short(str(ex), 120)}") from None


class _Refused(Exception):
    """(problem, line) of a YAML document refused while it is composed."""


def yaml_file(path: str | os.PathLike[str], max_bytes: int = MAX_BYTES) -> Any:
    """The YAML document in a file (`file_bytes`, `yaml_text`)."""
    return yaml_text(_text(path, max_bytes), path)


# --------------------------------------------------------------------------- tables


@dataclass
class Table:
    """A table file's header (stripped) and rows (cells as read: text, or a workbook's
    numbers), each row's line (CSV) or row number (workbook), and the sheet read."""

    header: list[str]
    rows: list[list[Any]]
    numbers: list[int]
    sheet: str = ""
    note: str = ""
    """What was read, for the load's notes (a workbook's sheet, hidden ones passed over)."""


MAX_TABLE_BYTES = 256 * 1024 * 1024
"""The largest CSV file, and the most a workbook's parts may inflate to, read as a table."""
MAX_TABLE_ROWS = 2_000_000
"""The most rows a workbook sheet read as a table may hold."""


_BACKSLASH = ' (a quote escaped with a backslash? write it doubled: "")'


def delimiter_of(header_line: str, suffix: str) -> str:
    """The one delimiter rule: a tab for ``.tsv``; else ``;`` when the header line read
    with ``;`` (quotes respected) has more cells than read with ``,``, else ``,``."""
    if suffix == ".tsv":
        return "\t"
    cells = {d: len(next(csv.reader([header_line], delimiter=d), [])) for d in (",", ";")}
    return ";" if cells[";"] > cells[","] else ","


def csv_table(path: str | os.PathLike[str], max_bytes: int = MAX_TABLE_BYTES) -> Table:
    """A CSV/TSV file as a `Table`: ReadError for a row whose cell count is not the
    header's (naming its line; a row is never read by position), a broken quote, bytes
    that are not UTF-8. Blank rows are skipped; a CR LF inside a cell reads as LF."""
    text = _text(path, max_bytes)
    first = text.split("\n", 1)[0]
    delimiter = delimiter_of(first, Path(path).suffix.lower())
    if csv.field_size_limit() < max_bytes:
        csv.field_size_limit(max_bytes)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    rows: list[list[Any]] = []
    numbers: list[int] = []
    line = 1
    try:
        for values in reader:
            start, line = line, reader.line_num + 1
            if not any(v.strip() for v in values):
                continue
            values = [v.replace("\r\n", "\n") for v in values]
            if header is None:
                header = [v.strip() for v in values]
                continue
            if len(values) != len(header):
                hint = ""
                if any('\\"' in v for v in values):
                    hint = _BACKSLASH
                problem = f"row has {len(values)} cells, the header {len(header)}"
                raise ReadError(path, f"{problem}: not read by position{hint}", start)
            rows.append(values)
            numbers.append(start)
    except csv.Error as ex:
        hint = _BACKSLASH if '\\"' in text else ""
        raise ReadError(path, f"bad CSV: {ex}{hint}", reader.line_num) from None
    if header is None:
        raise ReadError(path, "the file is empty")
    return Table(header, rows, numbers)


def xlsx_table(
    path: str | os.PathLike[str],
    sheet: str | None = None,
    max_bytes: int = MAX_TABLE_BYTES,
    max_rows: int = MAX_TABLE_ROWS,
) -> Table:
    """A workbook's sheet as a `Table`: the sheet named, else the first visible one (the
    note names it, and any hidden sheet passed over). ReadError, before it is opened, for
    a workbook whose parts inflate past ``max_bytes``; for a sheet past ``max_rows``."""
    import zipfile

    file_bytes(path, max_bytes)  # a regular file, not larger than the bound
    try:
        with zipfile.ZipFile(path) as archive:
            inflated = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError) as ex:
        raise ReadError(path, f"unreadable workbook: {ex}") from None
    if inflated > max_bytes:
        raise ReadError(path, f"the workbook inflates to {inflated} bytes, more than the "
                              f"{max_bytes} read here: refused unread")  # fmt: skip
    try:
        import openpyxl
    except ImportError:
        raise ReadError(
            path, "reading .xlsx needs openpyxl (pip install 'inspect-empathy[xlsx]')"
        ) from None
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as ex:  # noqa: BLE001 - any unreadable workbook is named
        raise ReadError(path, f"unreadable workbook: {short(str(ex), 120)}") from None
    try:
        names = list(book.sheetnames)
        hidden = [n for n in names if book[n].sheet_state != "visible"]
        if sheet is not None:
            if sheet not in names:
                raise ReadError(path, f"no sheet {sheet!r} (sheets: {', '.join(names)})")
            name = sheet
        else:
            visible = [n for n in names if n not in hidden]
            if not visible:
                raise ReadError(path, "every sheet is hidden: name one with 'sheet:'")
            name = visible[0]
        rows: list[list[Any]] = []
        for row in book[name].iter_rows(values_only=True):
            if len(rows) > max_rows:
                raise ReadError(path, f"sheet {name!r} has more than {max_rows} rows")
            rows.append(list(row))
    finally:
        book.close()
    note = ""
    if len(names) > 1 or hidden:
        passed = [n for n in hidden if n != name]
        note = f"{Path(path).name}: sheet {name!r} read" + (
            f" (hidden sheet(s) {', '.join(map(repr, passed))} not read)" if passed else ""
        )
    if not rows:
        raise ReadError(path, f"sheet {name!r} is empty")
    header = ["" if v is None else str(v).strip() for v in rows[0]]
    return Table(header, rows[1:], list(range(2, len(rows) + 1)), name, note)


def table_file(path: str | os.PathLike[str], sheet: str | None = None) -> Table:
    """A CSV, TSV or workbook file as a `Table` (`csv_table`, `xlsx_table`)."""
    if Path(path).suffix.lower() in (".xlsx", ".xlsm"):
        return xlsx_table(path, sheet)
    return csv_table(path)


READERS: dict[str, Callable[..., Any]] = {
    "json": json_file, "yaml": yaml_file, "csv": csv_table, "xlsx": xlsx_table,
}  # fmt: skip
"""Every whole-file reader, by kind: each takes the path (and a size bound)."""
