"""Hostile or careless input: nothing forged, nothing lost, one plain error (issue 14, 1-5)."""

import json
import os
import threading
from pathlib import Path

import pytest

from inspect_empathy import DatasetError, load_dialogs
from inspect_empathy.dataset._dataset import skipped_summary
from inspect_empathy.dialogs import RESERVED_METADATA, SAMPLE_KEYS

TURNS = [{"role": "user", "content": "I feel low."}, {"role": "bot", "content": "I'm sorry."}]


def jsonl(path: Path, *records: object, raw: str = "") -> Path:
    lines = [json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n" + raw, encoding="utf-8")
    return path


def error(source: object, **kwargs: object) -> str:
    with pytest.raises(DatasetError) as info:
        load_dialogs(source, **kwargs)  # type: ignore[arg-type]
    return str(info.value)


# --- 1. forged human ratings ---------------------------------------------------------


def test_the_reserved_keys_cover_everything_record_to_sample_sets() -> None:
    from inspect_empathy.dataset._samples import record_to_sample
    from inspect_empathy.dialogs import DialogRecord, Turn

    record = DialogRecord("a", [Turn("user", "x " * 20), Turn("bot", "y")], 3.0)
    keys = set(record_to_sample(record, max_turns=1).metadata)
    keys |= set(record_to_sample(record, cut_reply=True).metadata)
    keys |= set(record_to_sample(record, prompt_cot=False).metadata)
    assert keys <= SAMPLE_KEYS <= RESERVED_METADATA


@pytest.mark.parametrize("key", sorted(RESERVED_METADATA))
def test_jsonl_metadata_cannot_set_a_reserved_key(tmp_path: Path, key: str) -> None:
    path = jsonl(tmp_path / "forged.jsonl", {"id": "ok", "turns": TURNS},
                 {"id": "forged", "turns": TURNS, "metadata": {key: 99}})  # fmt: skip
    message = error(path)
    assert f"forged.jsonl:2: metadata sets the reserved key(s) '{key}'" in message
    assert "(reserved metadata key: 1)" in message
    assert [s.id for s in load_dialogs(path, on_invalid="skip")] == ["ok"]


def test_a_forged_rating_never_reaches_the_metrics(tmp_path: Path) -> None:
    forged = {"id": "forged", "turns": TURNS, "metadata": {"human_rating": "high"}}
    path = jsonl(tmp_path / "forged.jsonl", {"id": "unrated", "turns": TURNS}, forged)
    dataset = load_dialogs(path, on_invalid="skip")
    assert [(s.id, s.metadata["human_rating"]) for s in dataset] == [("unrated", None)]
    assert skipped_summary(dataset)["skipped"] == {"reserved metadata key": 1}


def test_csv_column_named_like_a_reserved_key_is_an_error_at_the_header(tmp_path: Path) -> None:
    path = tmp_path / "forged.csv"
    path.write_text('id,transcript,human_rating\na,"User: hi\nBot: hello",99\n', "utf-8")
    message = error(path)
    assert "forged.csv:1: reserved metadata key: column(s) 'human_rating'" in message
    # keeping other columns only is the way out
    assert load_dialogs(path, metadata=[])[0].metadata["human_rating"] is None


def test_transcript_header_cannot_set_a_reserved_key(tmp_path: Path) -> None:
    path = tmp_path / "forged.txt"
    path.write_text("# id: a\n# human_rating_raw: 5\nUser: hi\nBot: hello\n", "utf-8")
    assert "forged.txt:1: a '# key: value' header line sets the reserved key(s)" in error(path)


def test_turn_layout_cannot_set_a_reserved_key(tmp_path: Path) -> None:
    path = tmp_path / "turns.csv"
    path.write_text("dialog,speaker,text,rating,transcript\nd,user,hi,,x\nd,bot,yo,3,y\n", "utf-8")
    assert "turns.csv:1: reserved metadata key: column(s) 'transcript'" in error(
        path, layout="turns"
    )


# --- 2. every string that reaches the log; JSONL ids ----------------------------------


@pytest.mark.parametrize(
    ("record", "detail"),
    [
        ({"id": "a\ud800", "turns": TURNS}, "the id holds invalid Unicode"),
        ({"id": "a", "turns": TURNS, "metadata": {"note": "x\udfff"}},
         "metadata.note holds invalid Unicode"),
        ({"id": "a", "turns": TURNS, "metadata": {"k\ud800": "x"}},
         "a key in metadata holds invalid Unicode"),
        ({"id": "a", "turns": TURNS, "metadata": {"tags": ["ok", {"deep": "\ud801"}]}},
         "metadata.tags[1].deep holds invalid Unicode"),
        ({"id": "a", "turns": [TURNS[0], {"role": "bot", "content": "\udc00"}]},
         "turn 2 holds invalid Unicode"),
    ],
)  # fmt: skip
def test_lone_surrogates_anywhere_are_invalid(tmp_path: Path, record: dict, detail: str) -> None:
    path = jsonl(tmp_path / "bad.jsonl", {"id": "ok", "turns": TURNS}, record)
    assert f"bad.jsonl:2: {detail}" in error(path)
    assert [s.id for s in load_dialogs(path, on_invalid="skip")] == ["ok"]


def test_lone_surrogate_in_a_speaker_label_of_the_turn_layout(tmp_path: Path) -> None:
    rated = {"dialog": "d", "speaker": "p\ud800", "text": "I'm sorry.", "rating": 4}
    path = jsonl(tmp_path / "peer.jsonl", {"dialog": "d", "speaker": "p1", "text": "Hi."}, rated)
    assert "peer.jsonl:2: metadata.speaker holds invalid Unicode" in error(
        path, layout="turns", peer=True
    )


@pytest.mark.parametrize(
    ("value", "detail"),
    [({"a": 1}, "id must be text or a number, not an object"),
     ([1, 2], "id must be text or a number, not a list"),
     (True, "id must be text or a number, not true/false"),
     ("", "id is blank"), ("   ", "id is blank")],
)  # fmt: skip
def test_jsonl_ids_that_are_objects_lists_or_blank(tmp_path: Path, value, detail: str) -> None:
    bad = {"id": value, "turns": TURNS}
    path = jsonl(tmp_path / "ids.jsonl", {"id": "ok", "turns": TURNS}, bad)
    assert f"ids.jsonl:2: {detail}" in error(path)


def test_numeric_jsonl_ids_still_load(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "ids.jsonl", {"id": 7, "turns": TURNS})
    assert load_dialogs(path)[0].id == "7"


# --- 3. plain errors instead of tracebacks ---------------------------------------------


def test_deeply_nested_jsonl_line_is_a_problem_even_with_skip(tmp_path: Path) -> None:
    deep = "[" * 200_000 + "]" * 200_000
    path = jsonl(tmp_path / "deep.jsonl", {"id": "ok", "turns": TURNS}, raw=deep + "\n")
    assert "deep.jsonl:2: bad JSON: nested too deeply" in error(path)
    assert [s.id for s in load_dialogs(path, on_invalid="skip")] == ["ok"]


def test_deeply_nested_json_file_is_a_plain_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    for on_invalid in ("fail", "skip"):
        assert "deep.json: bad JSON: nested too deeply" in error(path, on_invalid=on_invalid)


def test_metadata_nesting_is_bounded(tmp_path: Path) -> None:
    nested: object = "x"
    for _ in range(40):
        nested = {"k": nested}
    path = jsonl(tmp_path / "nest.jsonl", {"id": "a", "turns": TURNS, "metadata": nested})
    assert "nest.jsonl:1: metadata.k" in error(path)
    assert "nests deeper than 32 levels" in error(path)


@pytest.mark.parametrize("key", ["name", "format", "path"])
def test_spec_values_that_are_not_text_are_plain_errors(tmp_path: Path, key: str) -> None:
    jsonl(tmp_path / "chats.jsonl", {"id": "a", "turns": TURNS})
    spec = {"path": "chats.jsonl", "name": "chats", key: 2024}
    (tmp_path / "spec.yaml").write_text(
        "\n".join(f"{k}: {v}" for k, v in spec.items()), encoding="utf-8"
    )
    message = error(tmp_path / "spec.yaml")
    assert f"spec.yaml: spec key '{key}' must be text, not int 2024" in message


def test_spec_name_with_a_lone_surrogate_is_a_plain_error(tmp_path: Path) -> None:
    jsonl(tmp_path / "chats.jsonl", {"id": "a", "turns": TURNS})
    spec = tmp_path / "spec.json"
    spec.write_text('{"path": "chats.jsonl", "name": "x\\ud800"}', encoding="utf-8")
    assert "spec.json: spec key 'name' holds invalid Unicode" in error(spec)


def test_non_utf8_csv_is_reported_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "late.csv"
    rows = "".join(f'r{i},"User: hi\nBot: hello number {i}",3\n' for i in range(1, 4000))
    data = ("id,transcript,rating\n" + rows).encode("utf-8") + b'bad,"User: caf\xe9\nBot: ok",3\n'
    path.write_bytes(data)
    line = data.count(b"\n", 0, data.index(b"\xe9")) + 1
    assert line > 7000
    assert f"late.csv:{line}: unreadable file: not UTF-8 text" in error(path)


def _finishes(function, seconds: float = 20.0) -> BaseException | None:
    """Run ``function`` in a daemon thread; the exception it raised, failing on a hang."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            function()
            outcome.append(None)
        except BaseException as ex:  # noqa: BLE001 - handed back to the test
            outcome.append(ex)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"still running after {seconds} s (hang)"
    return outcome[0]


@pytest.mark.parametrize("format", [None, "jsonl", "csv", "transcript"])
def test_dev_zero_is_refused_unread(format: str | None) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    raised = _finishes(lambda: load_dialogs("/dev/zero", format=format))
    assert isinstance(raised, DatasetError)
    assert "/dev/zero: unreadable file: is a character device, not a regular file" in str(raised)


@pytest.mark.parametrize("name", ["pipe.csv", "pipe.jsonl", "pipe.json", "pipe.yaml", "pipe"])
def test_fifo_is_refused_without_hanging(tmp_path: Path, name: str) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    raised = _finishes(lambda: load_dialogs(fifo))
    assert isinstance(raised, DatasetError)
    assert f"{name}: unreadable file: is a FIFO (named pipe), not a regular file" in str(raised)
    # also when a spec points at it
    (tmp_path / "spec.yaml").write_text(f"path: {name}\nformat: csv\n", encoding="utf-8")
    raised = _finishes(lambda: load_dialogs(tmp_path / "spec.yaml"))
    assert isinstance(raised, DatasetError) and "not a regular file" in str(raised)


# --- 4. YAML alias bomb ------------------------------------------------------------------


def test_yaml_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    lines = ["path: chats.jsonl", 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 12):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    spec = tmp_path / "bomb.yaml"
    spec.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert spec.stat().st_size < 2000
    raised = _finishes(lambda: load_dialogs(spec), seconds=30)  # a hang guard, not a timing
    assert isinstance(raised, DatasetError)
    assert "bomb.yaml:3: bad YAML: aliases (*name) are not allowed" in str(raised)


def test_deeply_nested_yaml_spec_is_a_plain_error(tmp_path: Path) -> None:
    spec = tmp_path / "deep.yaml"
    spec.write_text("path: chats.jsonl\nx: " + "[" * 50_000 + "]" * 50_000 + "\n", "utf-8")
    raised = _finishes(lambda: load_dialogs(spec), seconds=60)
    assert isinstance(raised, DatasetError)
    assert "deep.yaml" in str(raised)


def test_oversized_spec_is_refused_unread(tmp_path: Path) -> None:
    spec = tmp_path / "huge.yaml"
    spec.write_text("path: chats.jsonl\nnote: '" + "x" * 300_000 + "'\n", encoding="utf-8")
    assert "huge.yaml: unreadable file: " in error(spec)
    assert "more than the 262144 allowed here" in error(spec)


# --- 5. silent CSV handling -------------------------------------------------------------


def test_repeated_header_column_is_an_error_with_the_line(tmp_path: Path) -> None:
    path = tmp_path / "twice.csv"
    path.write_text('id,transcript,rating,rating\na,"User: hi\nBot: hello",3,1\n', "utf-8")
    detail = "bad CSV: column 'rating' appears twice in the header (columns 3 and 4)"
    assert f"twice.csv:1: {detail}" in error(path)


def test_extra_cells_beyond_the_header_are_a_problem_with_the_line(tmp_path: Path) -> None:
    path = tmp_path / "extra.csv"
    path.write_text(
        'id,transcript,rating\na,"User: hi\nBot: hello",3\nb,"User: hi\nBot: yo",2,oops\n',
        encoding="utf-8",
    )
    assert "extra.csv:4: row has 4 cells, the header 3: cells beyond it" in error(path)
    assert [s.id for s in load_dialogs(path, on_invalid="skip")] == ["a"]


# --- one path rule: resolved once, after symlinks, inside the folder, nothing expanded ------

EPITOME = Path(__file__).parents[2] / "fixtures" / "loaders" / "epitome"


def epitome_leading_outside(folder: Path, outside: Path) -> str:
    """``folder`` as a copy of the EPITOME fixture whose one member is a symlink to its copy in
    ``outside``; that member's name."""
    folder.mkdir()
    outside.mkdir()
    for member in EPITOME.iterdir():
        (folder / member.name).write_bytes(member.read_bytes())
    name = "explorations-reddit.csv"
    (outside / name).write_bytes((EPITOME / name).read_bytes())
    (folder / name).unlink()
    (folder / name).symlink_to(outside / name)
    return name


def test_an_epitome_folder_member_that_leads_outside_is_refused(tmp_path: Path) -> None:
    """A member of a dataset folder that is a symlink out of it is not read, not even with
    ``on_invalid=skip`` (it was read: its line 3 was named in the error)."""
    folder, outside = tmp_path / "corpus", tmp_path / "elsewhere"
    name = epitome_leading_outside(folder, outside)
    for on_invalid in ("fail", "skip"):
        message = error(folder, on_invalid=on_invalid)
        assert f"explorations {name!r} reads {(outside / name).resolve()}, outside the folder" in (
            message
        )
    (folder / name).unlink()
    (folder / name).write_bytes((EPITOME / name).read_bytes())
    assert len(load_dialogs(folder)) > 0  # the same files inside the folder load


def test_a_folder_member_leading_outside_is_named_by_the_spec_that_named_the_folder(
    tmp_path: Path,
) -> None:
    """Issue 48.12: under a spec (``path: data``), the refusal names the spec first, not only
    the folder it pointed at."""
    folder, outside = tmp_path / "data", tmp_path / "elsewhere"
    epitome_leading_outside(folder, outside)
    spec = tmp_path / "ep.yaml"
    spec.write_text("path: data\nformat: epitome\n", encoding="utf-8")
    message = error(spec)
    assert message.startswith(f"{spec} (path {folder}): "), message
    assert "outside the folder" in message


def test_a_spec_expands_no_variable_it_does_not_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    jsonl(home / "x.jsonl", {"id": "a", "turns": TURNS})
    monkeypatch.setenv("HOME", str(home))
    spec = tmp_path / "specs" / "s.yaml"
    spec.parent.mkdir()
    spec.write_text("path: ${HOME}/x.jsonl\n", "utf-8")
    assert "names the environment variable HOME, which the spec does not list" in error(spec)
    spec.write_text("path: ~/x.jsonl\n", "utf-8")
    assert "'~/x.jsonl' is not expanded (no ~, no $NAME)" in error(spec)
    spec.write_text("path: x.jsonl\nemotional_reactions: ${HOME}/x.jsonl\n", "utf-8")
    assert "emotional_reactions '${HOME}/x.jsonl' is not expanded" in error(spec)
    spec.write_text("path: ${HOME}/x.jsonl\nenvironment: [HOME]\n", "utf-8")
    dataset = load_dialogs(spec)  # the spec says so: the variable's folder is read
    assert [s.id for s in dataset] == ["a"]
    assert f"path ${{HOME}} read from {(home / 'x.jsonl').resolve()}" in (
        skipped_summary(dataset)["notes"][0]  # type: ignore[index]
    )
    spec.write_text("path: ${HOME}/x.jsonl\nenvironment: HOME; rm\n", "utf-8")
    assert "spec key 'environment' lists the environment variables" in error(spec)


def test_a_rater_file_that_leads_outside_the_folder_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "study", tmp_path / "elsewhere"
    root.mkdir()
    outside.mkdir()
    (root / "d.csv").write_text("id,context,response\na,I feel low,That sounds hard\n", "utf-8")
    (root / "r1.csv").write_text("id,level\na,1\n", "utf-8")
    (outside / "r2.csv").write_text("id,level\na,2\n", "utf-8")
    (root / "r2.csv").symlink_to(outside / "r2.csv")
    spec = root / "raters.yaml"
    spec.write_text(
        "format: raters\npath: .\nid: [id]\ndimension: level\nscale: [0, 2]\n"
        "dialogs: {file: d.csv, context: context, response: response}\n"
        "raters: {one: r1.csv, two: r2.csv}\n",
        "utf-8",
    )
    assert f"'r2.csv' reads {(outside / 'r2.csv').resolve()}, outside the folder" in error(spec)


# --- a spec's name is one line of plain text -------------------------------------------------


@pytest.mark.parametrize("name", ["x\x1b]0;pwned\x07", "a\x1b[31mred", "tab\there", "csi\x9b2J"])
def test_a_spec_name_with_a_control_character_is_refused(tmp_path: Path, name: str) -> None:
    """A terminal escape in ``name:`` would reach the terminal raw through Inspect's display
    (an OSC sequence changes the window title); ids and turns are refused alike."""
    jsonl(tmp_path / "d.jsonl", {"id": "a", "turns": TURNS})
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps({"path": "d.jsonl", "name": name}), "utf-8")
    bad = next(c for c in name if ord(c) < 32 or 127 <= ord(c) < 160)
    assert f"spec key 'name' holds the control character U+{ord(bad):04X}" in error(spec)
    spec.write_text(json.dumps({"path": "d.jsonl", "name": "plain name"}), "utf-8")
    assert load_dialogs(spec).name == "plain name"


# --- an .xlsx rating cell holding a formula with no saved value --------------------------------


def test_an_xlsx_formula_without_a_saved_value_is_named(tmp_path: Path) -> None:
    """A workbook written by a program that does not compute formulas (openpyxl, pandas)
    holds formulas with no cached value: such a rating cell was counted as empty and never
    named, while a date or a boolean beside it was. It is named, with its formula."""
    import datetime

    openpyxl = pytest.importorskip("openpyxl")
    from inspect_empathy.dataset.loaders.raters import read_rated

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["id", "level"])
    cells = (["a", 4], ["b", "=2+2"], ["c", True], ["d", datetime.date(2024, 1, 2)], ["e", None])
    for row in cells:
        sheet.append(row)
    sheet.append(["=CONCAT(\"f\",\"x\")", 3])  # an id formula: an empty id, as before
    book.save(tmp_path / "r.xlsx")
    mapping = {"id": ["id"], "scale": [1, 5], "dimension": "level", "bad_cells": "missing",
               "raters": {"one": "r.xlsx"}}  # fmt: skip
    table = read_rated(tmp_path, mapping)
    bad = {(c.row, c.detail) for s in table.sources for c in s.bad}
    assert (3, "a formula (=2+2) with no saved value: open the workbook in a spreadsheet "
            "program and save it, so that its values are stored") in bad  # fmt: skip
    assert {row for row, _ in bad} == {3, 4, 5, 7}  # the formula, boolean, date, id formula
    assert (7, 'empty id (a formula with no saved value: =CONCAT("f","x"))') in bad
    assert table.raters["one"] == {"a": 4.0}


@pytest.mark.parametrize(
    ("key", "text"),
    [("raters", {"exp\x1b[2Jert": "r.csv"}), ("judges", {"gpt": "g\x07.csv"}), ("note", "a\x9bb")],
)
def test_a_control_character_anywhere_in_a_spec_is_refused(
    tmp_path: Path, key: str, text: object
) -> None:
    """Rater and judge names reach compare's tables and the terminal as names do."""
    jsonl(tmp_path / "d.jsonl", {"id": "a", "turns": TURNS})
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps({"path": "d.jsonl", key: text}), "utf-8")
    assert "holds the control character U+" in error(spec)
    assert f"spec {'value' if key != 'raters' else 'key'} '{key}" in error(spec)


def test_a_dollar_name_in_a_path_is_not_expanded(tmp_path: Path) -> None:
    jsonl(tmp_path / "d.jsonl", {"id": "a", "turns": TURNS})
    spec = tmp_path / "s.yaml"
    spec.write_text("path: d.jsonl\nemotional_reactions: $HOME/er.csv\n", "utf-8")
    assert "emotional_reactions '$HOME/er.csv' is not expanded (no ~, no $NAME)" in error(spec)
