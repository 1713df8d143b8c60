"""Reading a file: regular files only, decoded text, the line of the first undecodable byte."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..._util.file_kind import file_problem
from ..._util.read import ReadError, json_text
from ...errors import DatasetError
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
    info, problem = file_problem(path)
    if info is None:
        if problem in ("no such file", "is a folder, not a file"):
            raise DatasetError(f"{path}: {problem}")
        raise DatasetError(f"{path}: {UNREADABLE}: {problem}")
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
    """(``path:line``, parsed value) for each non-blank line of a JSONL file, each line read
    by the one JSON reader (`_util.read.json_text`): a line that is not JSON, gives a key
    twice in one object or holds ``NaN`` is reported (file and line) and skipped."""
    # split on \n only: JSON strings may hold raw U+2028, U+0085 and other breaks
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if not line or line.isspace():
            continue
        where = f"{path}:{number}"
        try:
            value = json_text(line, path)
        except ReadError as ex:
            report.problem(where, BAD_JSON, ex.problem)
            continue
        yield where, value


_EXPANDED = re.compile(r"\$\{|\$\(|\$[A-Za-z_]")
"""What a shell would expand in a path: ``${NAME}``, ``$NAME``, ``$(...)``."""


def inside_folder(
    folder: Path,
    path: Any,
    where: str,
    key: str = "path",
    allow_outside: bool = False,
    notes: list[str] | None = None,
    place: str = "folder",
) -> Path:
    """The one rule for a path a spec or loader reads: ``path`` (relative to ``folder``,
    or absolute) resolved once, symlinks followed, and returned resolved, so the file
    checked is the file read; it must lie inside ``folder`` (also resolved), unless
    ``allow_outside`` (then each such file is named in ``notes``). ``place`` names the
    folder in messages (``the spec's folder``).

    Nothing is expanded: a path starting with ``~`` or holding ``${NAME}`` is refused (a
    spec expands only the variables it lists, in its ``path``). DatasetError naming
    ``where``, ``key`` and the path otherwise.
    """
    if not isinstance(path, str) or not path.strip():
        raise DatasetError(f"{where}: {key}: a file path is needed, not {path!r}")
    if "\x00" in path:
        raise DatasetError(f"{where}: {key} {path!r} holds a NUL character")
    if path.startswith("~") or _EXPANDED.search(path):
        raise DatasetError(
            f"{where}: {key} {path!r} is not expanded (no ~, no $NAME): write it relative "
            "to the folder, or list the variable under 'environment' in the spec's path"
        )
    candidate = Path(path)
    candidate = candidate if candidate.is_absolute() else folder / candidate
    try:
        real, home = candidate.resolve(), folder.resolve()
    except (OSError, RuntimeError) as ex:  # a symlink loop
        raise DatasetError(f"{where}: {key} {path!r} cannot be resolved ({ex})") from None
    if real == home or real.is_relative_to(home):
        return real
    if not allow_outside:
        raise DatasetError(
            f"{where}: {key} {path!r} reads {real}, outside the {place} {home}; "
            + (
                "a spec reads only files in its folder or below unless it says so: add "
                "'allow_outside: true' to the spec"
                if "spec" in place
                else "only files inside it are read (a symlink out of it too is refused)"
            )
        )
    if notes is not None:
        notes.append(f"{key} read from outside the {place} (allow_outside: true): {real}")
    return real
