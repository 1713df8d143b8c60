"""Issue 48: the same hostile inputs through every registered reader (`_util.read.READERS`):
each is refused with one `ReadError` line naming the file, never read whole, never a hang."""

from __future__ import annotations

import os
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


HOSTILE: dict[str, Callable[[Path], Path]] = {
    "a FIFO": _fifo,
    "a folder": lambda folder: folder,
    "a missing file": lambda folder: folder / "nowhere",
    "bytes that are not UTF-8": _write(b"a: 1\n\xff\xfe\n", "bytes"),
    "a key given twice": _write(b'{"a": 1, "a": 2}', "twice"),
    "nesting too deep to read": _write(b"[" * 200_000, "deep"),
    "an alias bomb": _write(BOMB_YAML.encode(), "bomb"),
    "a tag that builds an object": _write(b"a: !!python/object/apply:os.system [ls]", "tag"),
    "NaN": _write(b'{"offset": NaN}', "nan"),
    "text that is no document": _write(b'{"a": [1, 2}', "broken"),
}


@pytest.mark.parametrize("kind", sorted(READERS))
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_every_reader_refuses_every_hostile_input_in_one_line(
    kind: str, case: str, tmp_path: Path
) -> None:
    path = HOSTILE[case](tmp_path)
    try:
        value = READERS[kind](path)
    except ReadError as ex:
        message = str(ex)
        assert "\n" not in message and str(path) in message and len(message) < 300
        return
    # a document another kind reads as plain text: only where it holds nothing hostile
    assert kind == "yaml" and case in ("a key given twice", "NaN"), (kind, case, value)


def test_an_oversized_file_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"[" + b"1," * 600 + b"1]")
    for kind, reader in READERS.items():
        with pytest.raises(ReadError, match=r"bytes, more than the 1000 read here"):
            reader(path, 1000)  # type: ignore[call-arg]
        assert kind
