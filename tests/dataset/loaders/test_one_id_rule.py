"""Issue 48.7, one id rule everywhere (`dialogs.dialog_id`): NFC, surrounding space stripped,
whole numbers as their digits, a float id refused. Two ids equal under the rule are a
duplicate, named with both places; a rater file joins to the dialogs by the same rule."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from loader_helpers import load_error
from published_files import IDS, corpus

from inspect_empathy import load_dialogs
from inspect_empathy.dialogs import RecordProblem, dialog_id

NFC = unicodedata.normalize("NFC", "café")
NFD = unicodedata.normalize("NFD", "café")
TURNS = [{"role": "user", "content": "hi"}, {"role": "bot", "content": "hello"}]


def _jsonl(path: Path, ids: list[object]) -> Path:
    lines = [json.dumps({"id": i, "turns": TURNS, "rating": 3}) for i in ids]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_rule() -> None:
    assert NFC != NFD and dialog_id(NFD) == dialog_id(NFC) == NFC
    assert dialog_id(" d2 ") == dialog_id("d2\t") == "d2"
    assert dialog_id(7) == "7" and dialog_id("7.0") == "7.0"
    for bad in (7.0, 7.5, True, None, "  ", {"a": 1}, [1]):
        with pytest.raises(RecordProblem):
            dialog_id(bad)


@pytest.mark.parametrize(("first", "second"), [(NFC, NFD), ("d2", "d2 "), (" d2", "d2")])
def test_jsonl_ids_a_person_cannot_tell_apart_are_a_duplicate_named_with_both_lines(
    tmp_path: Path, first: str, second: str
) -> None:
    path = _jsonl(tmp_path / "ids.jsonl", [first, "other", second])
    message = load_error(path)
    shown = dialog_id(first)
    assert f"{path}:3: duplicate id {shown!r} (first at {path}:1)" in message


def test_jsonl_float_id_is_refused_not_a_second_dialog(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "ids.jsonl", [7, 7.0])
    message = load_error(path)
    assert f"{path}:2: " in message and "id 7.0 is a number with a decimal point" in message
    dataset = load_dialogs(path, on_invalid="skip")
    assert [s.id for s in dataset] == ["7"]


@pytest.mark.parametrize("arrow", [True, False])
def test_csv_ids_in_nfc_and_nfd_are_a_duplicate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arrow: bool
) -> None:
    if not arrow:  # the rows checked one by one: every id cell held as a Python string
        from inspect_empathy.dataset.loaders import _column_records

        monkeypatch.setattr(_column_records, "TRIMMED", "^$")
    path = tmp_path / "ids.csv"
    path.write_text(
        "id,transcript,rating\n"
        f'{NFC},"User: hi\nBot: hello",3\n'
        f'x,"User: hi\nBot: hello",3\n'
        f'{NFD},"User: hi\nBot: hello",3\n',
        encoding="utf-8",
    )
    message = load_error(path, format="csv", scale=[1, 5])
    assert f"{path}:6: duplicate id {NFC!r} (first at {path}:2)" in message


def test_turn_layout_dialog_ids_follow_the_rule(tmp_path: Path) -> None:
    path = tmp_path / "turns.jsonl"
    rows = [{"dialog": NFC, "speaker": "user", "text": "hi"},
            {"dialog": NFD + " ", "speaker": "bot", "text": "hello", "rating": 3}]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    dataset = load_dialogs(path, layout="turns", dialog="dialog", speaker="speaker",
                           text="text", rating="rating")  # fmt: skip
    assert [s.id for s in dataset] == [f"{NFC}-2"]  # one dialog: its turns joined


def test_a_rater_file_joins_ids_by_the_same_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "published"
    monkeypatch.setenv("TOY_ROOT", str(root))
    spec = corpus(root)
    dialogs = root / "original_data" / "dialogs.csv"
    text = dialogs.read_text(encoding="utf-8")
    dialogs.write_text(text.replace("s1,r1,", f"{NFC},r1,"), encoding="utf-8")
    for rater in ("expert1", "expert2", "expert3"):
        file = root / "annotations" / "toy" / f"{rater}_ratings.csv"
        file.write_text(file.read_text(encoding="utf-8").replace("s1,r1,", f"{NFD} ,r1,"),
                        encoding="utf-8")  # fmt: skip
    dataset = load_dialogs(spec)
    first = {s.id: s for s in dataset}[f"{NFC}/r1"]
    assert set(first.metadata["human_ratings"]) == {"expert1", "expert2", "expert3"}
    assert len(dataset) == len(IDS)
