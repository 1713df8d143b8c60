"""The writers: every file a command writes goes through here.

A file is written aside in its folder and renamed over its place (whole or not at all),
never over a file the same command read (`check_not_input`); a text cell bound for a
spreadsheet or a Markdown table is neutralised and escaped (`neutralise`, `markdown_cell`).
"""

from __future__ import annotations

import os
import re
import secrets
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "FORMULA_PREFIXES",
    "WriteRefused",
    "check_not_input",
    "markdown_cell",
    "neutralise",
    "write_text",
]


class WriteRefused(ValueError):
    """A file a command was asked to write over one of its own inputs (one line)."""


def _same(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


def check_not_input(
    path: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]], what: str
) -> None:
    """WriteRefused (naming ``what``, the path and the input) when ``path`` is one of the
    files the command read (``inputs``), through any link or spelling of its name."""
    target = Path(path)
    for source in inputs:
        if _same(target, Path(source)):
            raise WriteRefused(
                f"{what} {path} is {source}, one of the files this command reads: "
                "name another file (nothing was written)"
            )


def write_text(
    path: str | os.PathLike[str],
    text: str,
    inputs: Iterable[str | os.PathLike[str]] = (),
    what: str = "output",
) -> Path:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all: written aside in the same
    folder, then renamed over ``path``; refused (`check_not_input`) over an input."""
    target = Path(path)
    check_not_input(target, inputs, what)
    aside = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        with open(aside, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        os.replace(aside, target)
    finally:
        aside.unlink(missing_ok=True)
    return target


FORMULA_PREFIXES = ("=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20")
"""Cell starts that spreadsheets run as a formula (CSV injection), full-width forms too."""


def _control(char: str) -> bool:
    return unicodedata.category(char) == "Cc"


def neutralise(value: Any) -> Any:
    """A text cell that a spreadsheet could run as a formula, prefixed with ``'``.

    That is a cell starting with a control character (tab, CR, NUL, ...) or with
    ``=``, ``+``, ``-`` or ``@`` once leading whitespace and control characters are
    skipped. Anything but text is returned as it is.
    """
    if not isinstance(value, str) or not value:
        return value
    rest = value.lstrip()
    while rest and (_control(rest[0]) or rest[0].isspace()):
        rest = rest[1:]
    if _control(value[0]) or rest.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


_NUMBER = re.compile(r"[-+]?(\d[\d.]*([eE][-+]?\d+)?|nan|inf)( \[[-+\d.e, ]*\])?", re.I)
"""A number as a table writes it, with its interval (``-0.958 [-1.000, -0.917]``)."""


def markdown_cell(value: Any) -> str:
    """A Markdown table cell: text neutralised (a number written as text kept, ``-0.12``),
    ``|`` and ``\\`` escaped, line breaks as spaces (a cell never splits the table nor
    starts a new row)."""
    bare = value.strip() if isinstance(value, str) else None
    plain = bare is None or bare in ("", "-") or _NUMBER.fullmatch(bare)
    text = str(value if plain else neutralise(value))
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    return " ".join(text.splitlines()) if text.splitlines() else text
