"""Issue 48: the same hostile inputs through every registered reader (`_util.read.READERS`):
each is refused with one `ReadError` line naming the file, never read whole, never a hang."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from inspect_empathy._util.read import READERS, ReadError

BOMB_YAML = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{b}: &{b} [{', '.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)


def _write(data: bytes, name: str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = folder / name
        path.write_bytes(data)
        return path

    return make


def _fifo(folder: Path) -> Path:
    path = folder / "pipe"
    os.mkfifo(path)
    return path


def _inflating(folder: Path) -> Path:
    path = folder / "bomb.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/worksheets/sheet1.xml", b" " * 3000)
    return path


ANY: dict[str, Callable[[Path], Path]] = {
    "a FIFO": _fifo,
    "a folder": lambda folder: folder,
    "a missing file": lambda folder: folder / "nowhere",
    "bytes that are not UTF-8": _write(b"a: 1\n\xff\xfe\n", "bytes"),
    "a file over the bound": _write(b"[" + b"1," * 600 + b"1]", "big"),
}
"""Hostile to every reader."""

OWN: dict[str, dict[str, Callable[[Path], Path]]] = {
    "json": {
        "a key given twice": _write(b'{"a": 1, "a": 2}', "twice"),
        "nesting too deep to read": _write(b"[" * 900, "deep"),
        "NaN": _write(b'{"offset": NaN}', "nan"),
        "text that is no document": _write(b'{"a": [1, 2}', "broken"),
    },
    "yaml": {
        "an alias bomb": _write(BOMB_YAML.encode()[:990], "bomb"),
        "a tag that builds an object": _write(b"a: !!python/object/apply:os.system [ls]", "tag"),
        "a key given twice": _write(b"a: 1\nb: 2\na: 3\n", "twice"),
        "text that is no document": _write(b"a: [1, 2\n", "broken"),
    },
    "csv": {
        "a row longer than the header": _write(b"id,rating\nd1,4,5\n", "long.csv"),
        "a row shorter than the header": _write(b"id,rating,note\nd1,4\n", "short.csv"),
        "a broken quote": _write(b'id,rating\n"d1,4\n', "quote.csv"),
    },
    "xlsx": {
        "a workbook that inflates past the bound": _inflating,
        "a file that is no workbook": _write(b"id,rating\n", "no.xlsx"),
    },
}
"""Hostile to the reader of one kind."""

CASES = [(kind, case) for kind in sorted(READERS) for case in [*ANY, *OWN[kind]]]


@pytest.mark.parametrize(("kind", "case"), CASES)
def test_every_reader_refuses_every_hostile_input_in_one_line(
    kind: str, case: str, tmp_path: Path
) -> None:
    path = {**ANY, **OWN[kind]}[case](tmp_path)
    with pytest.raises(ReadError) as raised:
        READERS[kind](path, max_bytes=1000)
    message = str(raised.value)
    assert "\n" not in message and str(path) in message and len(message) < 300 + len(str(path))


def test_every_reader_kind_has_its_own_hostile_inputs() -> None:
    assert set(OWN) == set(READERS)
