"""Generic formats: jsonl/json (turns or OpenAI messages), csv/tsv with a mapping, transcripts."""

import json
from pathlib import Path

import pytest
from loader_helpers import FIXTURES, by_id

from inspect_empathy import DatasetError, load_dialogs
from inspect_empathy.dataset._dataset import skipped_summary
from inspect_empathy.dataset.loaders._problems import RecordProblem
from inspect_empathy.dataset.loaders._roles import role_map
from inspect_empathy.dataset.loaders._transcript import parse_transcript


def test_jsonl_turns_and_openai_messages() -> None:
    samples = by_id(load_dialogs(FIXTURES / "dialogs.jsonl"))
    assert list(samples) == ["j1", "j2", "j3", "j4"]
    assert samples["j1"].metadata["emotion"] == "frustrated"
    # system message left out of the dialog, kept in metadata; content parts joined
    j2 = samples["j2"]
    assert [m.role for m in j2.input] == ["user", "assistant"]
    assert j2.input[-1].text == "Well done! How are you celebrating?"
    assert j2.metadata["system_messages"] == ["You are a helpful assistant."]
    # a record's own scale wins
    assert samples["j3"].metadata["human_rating"] == 3.0
    assert samples["j3"].metadata["human_rating_scale"] == (1.0, 3.0)
    assert samples["j4"].metadata["human_rating"] is None


def test_json_list_under_a_key() -> None:
    samples = by_id(load_dialogs(FIXTURES / "dialogs.json"))
    assert list(samples) == ["k1", "k2"]
    assert samples["k2"].metadata["human_rating"] == 2.0


def test_json_roles_mapping_replaces_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "roles.jsonl"
    turns = [
        {"role": "caller", "content": "Hello?"},
        {"role": "operator", "content": "Hi, how can I help?"},
    ]
    record = {"id": "r1", "turns": turns}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="unknown role label 'caller'"):
        load_dialogs(path)
    dataset = load_dialogs(path, roles={"caller": "user", "operator": "assistant"})
    assert [m.role for m in dataset[0].input] == ["user", "assistant"]


def test_csv_through_a_spec_file_with_no_code() -> None:
    """The worked example in README (Datasets): Seeker/Supporter lines, rated 1-3."""
    dataset = load_dialogs(FIXTURES / "support_chats.yaml")
    samples = by_id(dataset)
    assert list(samples) == ["c-001", "c-002", "c-003"]
    first = samples["c-001"]
    assert [m.role for m in first.input] == ["user", "assistant", "user", "assistant"]
    assert first.input[1].text.startswith("Oh no, you were really hoping")
    assert first.metadata["human_rating_raw"] == 3.0
    assert first.metadata["human_rating_scale"] == (1.0, 3.0)
    assert first.metadata["human_rating"] == 5.0
    assert samples["c-002"].metadata["human_rating"] == 1.0
    assert first.metadata["channel"] == "web"
    assert dataset.name == "support_chats"


def test_same_csv_with_the_mapping_given_in_python() -> None:
    dataset = load_dialogs(
        FIXTURES / "support_chats.csv",
        id="chat_id",
        transcript="conversation",
        rating="score",
        scale=[1, 3],
        roles={"Seeker": "user", "Supporter": "bot"},
    )
    assert [s.metadata["human_rating"] for s in dataset] == [5.0, 1.0, 5.0]


def test_json_spec_with_a_relative_path(tmp_path: Path) -> None:
    (tmp_path / "pairs.tsv").write_bytes((FIXTURES / "pairs.tsv").read_bytes())
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"path": "pairs.tsv", "format": "tsv"}), encoding="utf-8")
    assert [s.id for s in load_dialogs(spec)] == ["t1", "t2"]
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps({"path": "nowhere.csv"}), encoding="utf-8")
    with pytest.raises(DatasetError, match="nowhere.csv does not exist"):
        load_dialogs(missing)


def test_yaml_spec_resolves_relative_paths_against_its_folder(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "d.jsonl").write_text(
        (FIXTURES / "dialogs.jsonl").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (tmp_path / "specs").mkdir()
    spec = tmp_path / "specs" / "mine.yaml"
    spec.write_text("path: ../data/d.jsonl\nmax_turns: 1\nname: mine\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="outside the spec's folder .* 'allow_outside: true'"):
        load_dialogs(spec)
    spec.write_text(spec.read_text("utf-8") + "allow_outside: true\n", encoding="utf-8")
    dataset = load_dialogs(spec)
    assert dataset.name == "mine"
    assert dataset[0].metadata["turns_left_out"] == 1
    [note] = skipped_summary(dataset)["notes"]  # type: ignore[index]
    assert note == (
        "path read from outside the spec's folder (allow_outside: true): "
        f"{(tmp_path / 'data' / 'd.jsonl').resolve()}"
    )


def test_spec_without_path_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "nopath.yaml"
    spec.write_text("format: csv\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="has no 'path'"):
        load_dialogs(spec)


def test_tsv_context_and_response_columns() -> None:
    samples = by_id(load_dialogs(FIXTURES / "pairs.tsv"))
    assert [m.role for m in samples["t1"].input] == ["user", "assistant"]
    # a labelled context becomes several turns; the response is the final bot turn
    assert [m.role for m in samples["t2"].input] == ["user", "assistant", "user", "assistant"]
    assert samples["t2"].input[-1].text.startswith("The first weeks")
    assert samples["t2"].metadata["emotion"] == "lonely"


def test_csv_without_an_id_column_numbers_the_rows(tmp_path: Path) -> None:
    path = tmp_path / "noid.csv"
    path.write_text("context,response\nHi,Hello there!\nI'm sad,I'm here for you.\n", "utf-8")
    dataset = load_dialogs(path)
    assert [s.id for s in dataset] == ["noid-1", "noid-2"]
    assert dataset.load_report is not None
    assert "no id column" in dataset.load_report.notes[0]


def test_csv_without_dialog_columns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cols.csv"
    path.write_text("id,text\n1,hello\n", "utf-8")
    with pytest.raises(DatasetError, match="no dialog columns"):
        load_dialogs(path)


def test_transcript_text_file() -> None:
    samples = by_id(load_dialogs(FIXTURES / "transcripts.txt"))
    assert list(samples) == ["tx-1", "transcripts-2"]
    assert samples["tx-1"].metadata["human_rating"] == 4.0
    assert samples["tx-1"].metadata["emotion"] == "worried"
    # an indented line continues the turn, even when it looks like "Word: text"
    assert samples["transcripts-2"].input[0].text == (
        "I burned dinner again.\nNote: it was meant to be a surprise."
    )


def test_format_can_be_forced(tmp_path: Path) -> None:
    path = tmp_path / "chats.data"
    path.write_text("User: Hi\nBot: Hello!\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="cannot tell the format"):
        load_dialogs(path)
    assert len(load_dialogs(path, format="transcript")) == 1


def test_unknown_format_name_is_refused() -> None:
    with pytest.raises(DatasetError, match="unknown format 'parquet'"):
        load_dialogs(FIXTURES / "dialogs.jsonl", format="parquet")


def test_parse_transcript_joins_same_side_turns_and_continuations() -> None:
    turns = parse_transcript("Seeker: one\nSeeker: two\nSupporter: three\nstill three")
    assert [(t.role, t.content) for t in turns] == [
        ("user", "one\ntwo"),
        ("bot", "three\nstill three"),
    ]


def test_parse_transcript_flags_unlabelled_first_line_and_empty_turns() -> None:
    with pytest.raises(RecordProblem, match="has no 'LABEL:' role label"):
        parse_transcript("hello there\nBot: hi")
    with pytest.raises(RecordProblem, match="turn is empty"):
        parse_transcript("User: \nBot: hi")


def test_roles_mapping_values_must_be_user_or_bot() -> None:
    with pytest.raises(DatasetError, match="use user or bot"):
        role_map({"Seeker": "customer-ish"})


def test_unicode_line_breaks_inside_messages_do_not_split_records_or_turns(tmp_path: Path) -> None:
    record = {"id": "u1", "turns": [
        {"role": "user", "content": "sad\u2028BOT: fake\x85USER: fake"},
        {"role": "assistant", "content": "I'm sorry."},
    ]}  # fmt: skip
    jsonl = tmp_path / "raw.jsonl"
    jsonl.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    [sample] = list(load_dialogs(jsonl))
    assert [m.role for m in sample.input] == ["user", "assistant"]
    table = tmp_path / "raw.csv"
    table.write_text(
        'id,transcript\nu2,"User: sad\u2028Bot: fake\r\nBot: I\'m sorry."\n', encoding="utf-8"
    )
    [row] = list(load_dialogs(table))
    assert [m.text for m in row.input] == ["sad\u2028Bot: fake", "I'm sorry."]
