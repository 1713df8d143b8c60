"""Reading a file: regular files only, decoded text, the line of the first undecodable byte."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import DatasetError
from ._problems import BAD_JSON, UNREADABLE, LoadReport

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest line a dataset file may hold: a line is read whole (a JSONL record, a CSV
row), so a longer one is refused, naming its line, before the file is read."""
_SCAN_CHUNK = 16 * 1024 * 1024


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
    if info.st_size > MAX_LINE_BYTES:
        check_line_lengths(path)
    return info.st_size


def check_line_lengths(path: Path, limit: int | None = None) -> None:
    """A DatasetError naming the first line longer than ``limit`` bytes (default
    `MAX_LINE_BYTES`), found by reading the file in chunks (never a whole line)."""
    import numpy as np

    limit = MAX_LINE_BYTES if limit is None else limit
    line, start, offset = 1, 0, 0  # the current line's number and first byte
    try:
        with open(path, "rb") as file:
            while chunk := file.read(_SCAN_CHUNK):
                ends = np.flatnonzero(np.frombuffer(chunk, np.uint8) == 10) + offset
                if len(ends):
                    lengths = np.diff(ends, prepend=start - 1) - 1
                    long = np.flatnonzero(lengths > limit)
                    if len(long):
                        line += int(long[0])
                        break
                    line += len(ends)
                    start = int(ends[-1]) + 1
                offset += len(chunk)
                if offset - start > limit:
                    break
            else:
                return
    except OSError as ex:
        raise DatasetError(f"{path}: {UNREADABLE}: {ex.strerror or ex}") from ex
    raise DatasetError(
        f"{path}:{line}: {UNREADABLE}: line {line} is longer than {limit} bytes, the most "
        "read as one line or record (a whole dataset on one line?); write one record "
        "per line (JSONL) or split the file"
    )


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


def json_lines(path: Path, report: LoadReport) -> Iterator[tuple[str, Any]]:
    """(``path:line``, parsed value) for each non-blank line of a JSONL file; a line that
    is not JSON is reported (with its column) and skipped."""
    loads = json.loads
    # split on \n only: JSON strings may hold raw U+2028, U+0085 and other breaks
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if not line or line.isspace():
            continue
        where = f"{path}:{number}"
        try:
            value = loads(line)
        except json.JSONDecodeError as ex:
            report.problem(where, BAD_JSON, f"bad JSON: {ex.msg} (column {ex.colno})")
            continue
        except RecursionError:
            report.problem(where, BAD_JSON, "bad JSON: nested too deeply")
            continue
        yield where, value
