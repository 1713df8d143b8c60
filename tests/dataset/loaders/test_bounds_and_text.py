"""Loader faults (issue 25, items 7 and 11): EPITOME files that disagree, a spec reading
outside its folder, control characters, lines too long to read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from loader_helpers import FIXTURES, load_error

from inspect_empathy import DatasetError, load_dialogs
from inspect_empathy.dataset._dataset import skipped_summary
from inspect_empathy.dataset.loaders import _files

TURNS = [{"role": "user", "content": "I feel low."}, {"role": "bot", "content": "I'm sorry."}]


# --- 7. EPITOME files that disagree on a pair's text ---------------------------------------


def test_epitome_files_that_disagree_on_the_response_are_an_error(tmp_path: Path) -> None:
    for source in (FIXTURES / "epitome").iterdir():
        (tmp_path / source.name).write_bytes(source.read_bytes())
    explorations = tmp_path / "explorations-reddit.csv"
    text = explorations.read_text("utf-8")
    explorations.write_text(
        text.replace("I'm so sorry. That sounds", "I'm not sorry. That sounds", 1), "utf-8"
    )
    message = load_error(tmp_path)
    assert "1 invalid record(s) (conflicting rows: 1)" in message
    assert "pair (sp_id 'ab12cd', rp_id 'ef34gh'): the rows disagree on response_post" in message
    assert f"at {tmp_path / 'emotional-reactions-reddit.csv'}:2" in message
    assert f"at {explorations}:2" in message
    kept = load_dialogs(tmp_path, on_invalid="skip")
    assert "epitome-ab12cd-ef34gh" not in [s.id for s in kept]


def test_epitome_files_as_published_agree_but_for_whitespace_and_a_scrubbed_reddit(
    tmp_path: Path,
) -> None:
    """The emotional-reactions file as published differs from the other two in whitespace
    (640 rows) and lacks the words reddit / subreddit (36 texts): the same post, not a
    conflict. The text is the first file's."""
    for source in (FIXTURES / "epitome").iterdir():
        (tmp_path / source.name).write_bytes(source.read_bytes())
    for name in ("interpretations-reddit.csv", "explorations-reddit.csv"):
        other = tmp_path / name
        text = other.read_text("utf-8")
        text = text.replace("I'm so sorry. That sounds", "I'm so  sorry.\tThat sounds Reddit", 1)
        text = text.replace("Nobody remembered", "Nobody on my subreddits remembered")
        other.write_text(text, "utf-8")
    reactions = tmp_path / "emotional-reactions-reddit.csv"
    reactions.write_text(
        reactions.read_text("utf-8").replace("Nobody remembered", "Nobody on mys remembered"),
        "utf-8",
    )
    samples = {s.id: s for s in load_dialogs(tmp_path)}
    assert len(samples) == 3
    first = samples["epitome-ab12cd-ef34gh"]
    assert first.input[-1].text == "I'm so sorry. That sounds really discouraging."
    assert samples["epitome-mn78op-qr90st"].input[0].text == "Nobody on mys remembered my birthday."
    # anything else is still a conflict
    other = tmp_path / "interpretations-reddit.csv"
    other.write_text(other.read_text("utf-8").replace("useless.", "useful.", 1), "utf-8")
    assert "the rows disagree on seeker_post" in load_error(tmp_path)


# --- 7. a spec whose path leaves its folder --------------------------------------------------


@pytest.mark.parametrize("kind", ["parent", "absolute", "symlink"])
def test_a_spec_reads_outside_its_folder_only_when_it_says_so(tmp_path: Path, kind: str) -> None:
    data = tmp_path / "elsewhere" / "d.jsonl"
    data.parent.mkdir()
    data.write_text(json.dumps({"id": "a", "turns": TURNS}) + "\n", "utf-8")
    folder = tmp_path / "specs" / "deep"
    folder.mkdir(parents=True)
    target = {"parent": "../../elsewhere/d.jsonl", "absolute": str(data), "symlink": "link.jsonl"}
    if kind == "symlink":
        (folder / "link.jsonl").symlink_to(data)
    spec = folder / "spec.yaml"
    spec.write_text(f"path: {target[kind]}\n", "utf-8")
    message = load_error(spec)
    assert message.startswith(f"{spec}: path '{target[kind]}' reads {data.resolve()}, outside")
    assert "add 'allow_outside: true' to the spec" in message
    spec.write_text(f"path: {target[kind]}\nallow_outside: true\n", "utf-8")
    dataset = load_dialogs(spec)
    assert [s.id for s in dataset] == ["a"]
    assert str(data.resolve()) in skipped_summary(dataset)["notes"][0]  # type: ignore[index]


def test_allow_outside_must_be_true_or_false(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("path: d.jsonl\nallow_outside: yes please\n", "utf-8")
    with pytest.raises(DatasetError, match="'allow_outside' must be true or false"):
        load_dialogs(spec)


# --- 7. control characters ---------------------------------------------------------------------


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x0c", "\x7f\x08"])
def test_control_characters_in_jsonl_turns_are_refused(tmp_path: Path, char: str) -> None:
    bad = {"id": "b", "turns": [TURNS[0], {"role": "bot", "content": f"So{char}rry"}]}
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ({"id": "a", "turns": TURNS}, bad)), "utf-8")
    shown = f"U+{ord(char[-1]):04X}"
    assert f"d.jsonl:2: turn 2 holds the control character {shown} at character " in (
        load_error(path)
    )
    assert [s.id for s in load_dialogs(path, on_invalid="skip")] == ["a"]


def test_tab_newline_and_carriage_return_stay(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    turns = [TURNS[0], {"role": "bot", "content": "a\tb\r\nc"}]
    path.write_text(json.dumps({"id": "a", "turns": turns}) + "\n", "utf-8")
    assert load_dialogs(path)[0].input[-1].text == "a\tb\r\nc"


@pytest.mark.parametrize("where", ["transcript", "id"])
def test_control_characters_in_a_csv_are_refused(tmp_path: Path, where: str) -> None:
    path = tmp_path / "d.csv"
    cell = {
        "transcript": ("x", '"User: hi\nBot: hel\x00lo"'),
        "id": ("x\x1by", '"User: hi\nBot: yo"'),
    }
    ident, transcript = cell[where]
    path.write_text(f'id,transcript\nok,"User: a\nBot: b"\n{ident},{transcript}\n', "utf-8")
    message = load_error(path)
    assert "(control character: 1)" in message
    assert ("turn 2 holds" if where == "transcript" else "the id holds") in message


# --- 11. lines too long to read ------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [7, 1 << 20])
def test_a_line_over_the_limit_is_named_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(_files, "MAX_LINE_BYTES", 200)
    monkeypatch.setattr(_files, "_SCAN_CHUNK", chunk)
    record = json.dumps({"id": "a", "turns": TURNS})
    path = tmp_path / "d.jsonl"
    long = json.dumps({"id": "b", "turns": [TURNS[0], {"role": "bot", "content": "x" * 300}]})
    path.write_text(f"{record}\n{record}\n{long}\n", "utf-8")
    message = load_error(path)
    assert message == (
        f"{path}:3: unreadable file: line 3 is longer than 200 bytes, the most read as one "
        "line or record (a whole dataset on one line?); write one record per line (JSONL) "
        "or split the file"
    )
    one_line = tmp_path / "one.json"
    one_line.write_text(json.dumps([{"id": str(i), "turns": TURNS} for i in range(9)]), "utf-8")
    assert f"{one_line}:1: unreadable file: line 1 is longer than 200" in load_error(one_line)
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join([record[:190]] * 3), "utf-8")  # over 200 bytes, short lines
    _files.check_line_lengths(short)
