"""Issue 48: JSONL lines are read by the one JSON reader (`_util.read.json_text`): a key given
twice in one record (the last value would win silently) is refused naming file and line, as
NaN is; the dialog layout and the turn layout alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from loader_helpers import load_error

GOOD = '{"id": "a", "turns": [{"role": "user", "content": "hi"}, {"role": "bot", "content": "yo"}], "rating": 2}'  # noqa: E501
TWICE = '{"id": "b", "turns": [{"role": "user", "content": "hi"}, {"role": "bot", "content": "yo"}], "rating": 1, "rating": 5}'  # noqa: E501
NAN = '{"id": "c", "turns": [{"role": "user", "content": "hi"}, {"role": "bot", "content": "yo"}], "rating": NaN}'  # noqa: E501


@pytest.mark.parametrize(
    ("line", "said"),
    [(TWICE, "key 'rating' given twice in one object (1, then 5)"), (NAN, "NaN")],
)
def test_a_dialog_line_read_twice_or_with_nan_is_refused(
    tmp_path: Path, line: str, said: str
) -> None:
    path = tmp_path / "dialogs.jsonl"
    path.write_text(f"{GOOD}\n{line}\n", encoding="utf-8")
    message = load_error(path)
    assert f"{path}:2: bad JSON: " in message and said in message


def test_a_turn_line_with_a_key_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "turns.jsonl"
    path.write_text(
        '{"dialog": "d1", "speaker": "user", "text": "hi"}\n'
        '{"dialog": "d1", "speaker": "bot", "text": "yo", "speaker": "user"}\n',
        encoding="utf-8",
    )
    message = load_error(path, layout="turns", dialog="dialog", speaker="speaker", text="text")
    assert f"{path}:2: bad JSON: key 'speaker' given twice" in message
