"""Validation: every kind of invalid record is caught, listed, and never dropped silently."""

import json
from pathlib import Path

import pytest
from loader_helpers import FIXTURES, load_error

from inspect_empathy import DatasetError, load_dialogs
from inspect_empathy.dataset._dataset import skipped_summary

INVALID = FIXTURES / "invalid"


def fail_message(name: str, **kwargs) -> str:
    return load_error(INVALID / name, **kwargs)


def test_unreadable_file_is_reported_with_its_line() -> None:
    message = fail_message("not_utf8.jsonl")
    assert "not_utf8.jsonl:2: unreadable file: not UTF-8 text" in message


def test_missing_file_is_reported() -> None:
    message = fail_message("no_such_file.jsonl")
    assert "no_such_file.jsonl: no such file" in message


def test_bad_json_gives_the_line_number() -> None:
    message = fail_message("bad_json.jsonl")
    assert "1 invalid record(s) (bad JSON: 1)" in message
    assert "bad_json.jsonl:2: bad JSON: Expecting value" in message


def test_bad_json_in_a_json_file_gives_the_line_number(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[\n  {"id": "a",\n  "turns": [}\n]\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"broken.json:3: bad JSON"):
        load_dialogs(path)


def test_missing_fields_are_each_reported() -> None:
    message = fail_message("missing_field.jsonl")
    assert "3 invalid record(s) (missing field: 3)" in message
    assert "missing_field.jsonl:2: missing field 'id'" in message
    assert "missing_field.jsonl:3: missing field 'turns' (or 'messages')" in message
    assert "missing_field.jsonl:4: turn 1: missing field 'content'" in message


def test_empty_dialog() -> None:
    message = fail_message("empty_dialog.jsonl")
    assert "empty_dialog.jsonl:2: empty dialog" in message


def test_dialog_not_ending_with_a_bot_turn() -> None:
    message = fail_message("no_bot_reply.jsonl")
    assert "no_bot_reply.jsonl:2: dialog does not end with a bot turn" in message


def test_unknown_role_label_in_json() -> None:
    message = fail_message("unknown_role.jsonl")
    assert "unknown_role.jsonl:2: unknown role label 'narrator'" in message


def test_unknown_role_label_in_a_csv_transcript() -> None:
    message = fail_message("unknown_role.csv", roles={"Seeker": "user", "Supporter": "bot"})
    # the CSV row of record c2 starts on line 4 (record c1 spans lines 2-3)
    assert "unknown_role.csv:4: unknown role label 'Therapist' (known: seeker, supporter)" in (
        message
    )


def test_rating_not_numeric() -> None:
    message = fail_message("rating_not_numeric.jsonl")
    assert "rating_not_numeric.jsonl:2: rating 'great' is not a number" in message
    assert "rating_not_numeric.jsonl:3: rating True is not a number" in message


def test_rating_outside_the_declared_scale() -> None:
    message = fail_message("rating_out_of_scale.jsonl")
    assert "rating_out_of_scale.jsonl:2: rating 7 is outside the scale 1-5" in message
    assert "rating_out_of_scale.jsonl:3: rating 2 is outside the scale 3-5" in message


def test_csv_ratings_checked_against_the_mapping_scale() -> None:
    message = fail_message("ratings.csv", scale="1-3")
    assert "2 invalid record(s)" in message
    assert "ratings.csv:4: rating 'two' is not a number" in message
    assert "ratings.csv:6: rating '4' is outside the scale 1-3" in message


def test_empty_csv_rating_cell_is_unrated_and_counted() -> None:
    dataset = load_dialogs(INVALID / "ratings.csv", scale="1-3", on_invalid="skip")
    assert [s.id for s in dataset] == ["c1", "c4"]
    assert dataset[1].metadata["human_rating"] is None
    summary = skipped_summary(dataset)
    assert summary is not None
    assert summary["notes"] == ["1 row(s) with an empty rating cell loaded unrated"]
    assert summary["skipped"] == {"rating not numeric": 1, "rating outside the scale": 1}


def test_duplicate_ids() -> None:
    message = fail_message("duplicate_ids.jsonl")
    assert "duplicate_ids.jsonl:3: duplicate id 'ok1' (first at " in message
    assert "duplicate_ids.jsonl:1)" in message


def test_error_lists_the_first_20_problems_and_a_count() -> None:
    message = fail_message("many_problems.jsonl")
    assert message.startswith(f"{INVALID / 'many_problems.jsonl'}: 25 invalid record(s)")
    listed = [line for line in message.splitlines() if line.startswith("  - ")]
    assert len(listed) == 20
    assert "many_problems.jsonl:20: empty dialog" in listed[-1]
    assert "  ... and 5 more" in message
    assert "on_invalid=skip" in message


def test_skip_loads_the_rest_and_counts_reasons(caplog: pytest.LogCaptureFixture) -> None:
    dataset = load_dialogs(INVALID / "missing_field.jsonl", on_invalid="skip")
    assert [s.id for s in dataset] == ["ok1"]
    summary = skipped_summary(dataset)
    assert summary is not None
    assert summary["loaded"] == 1
    assert summary["skipped"] == {"missing field": 3}
    assert summary["skipped_total"] == 3
    assert len(summary["skipped_examples"]) == 3
    assert "skipped 3 invalid record(s)" in caplog.text


def test_skip_keeps_the_first_of_duplicate_ids() -> None:
    dataset = load_dialogs(INVALID / "duplicate_ids.jsonl", on_invalid="skip")
    assert [s.id for s in dataset] == ["ok1", "ok2"]
    assert skipped_summary(dataset)["skipped"] == {"duplicate id": 1}  # type: ignore[index]


def test_skip_with_nothing_valid_still_fails(tmp_path: Path) -> None:
    path = tmp_path / "all_bad.jsonl"
    path.write_text(json.dumps({"id": "a", "turns": []}) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="no dialogs to load"):
        load_dialogs(path, on_invalid="skip")


def test_on_invalid_must_be_fail_or_skip() -> None:
    with pytest.raises(DatasetError, match="on_invalid must be"):
        load_dialogs(INVALID / "duplicate_ids.jsonl", on_invalid="ignore")  # type: ignore[arg-type]


def test_unknown_mapping_key_is_refused() -> None:
    with pytest.raises(DatasetError, match="does not take ratng"):
        load_dialogs(INVALID / "ratings.csv", ratng="score")


def test_mapping_naming_a_missing_column_is_refused() -> None:
    with pytest.raises(DatasetError, match="rating column 'score' is not in the header"):
        load_dialogs(INVALID / "ratings.csv", rating="score")


def test_dataset_error_is_a_value_error_with_a_plain_message() -> None:
    error = DatasetError("x.jsonl:3: [bold]not markup[/bold]")
    assert isinstance(error, ValueError)
    assert str(error) == "x.jsonl:3: [bold]not markup[/bold]"
    # what Inspect prints goes through rich markup: brackets are escaped
    assert "\\[bold]" in str(error.message)


def test_csv_missing_cells_are_missing_fields(tmp_path: Path) -> None:
    path = tmp_path / "short.csv"
    path.write_text(
        "id,context,response,rating\n"
        "a,I'm worried.,That sounds hard.,4\n"
        "b,I'm worried.\n"
        ",I'm worried.,That sounds hard.,4\n"
        "d,,,3\n",
        encoding="utf-8",
    )
    with pytest.raises(DatasetError) as info:
        load_dialogs(path)
    message = str(info.value)
    assert "short.csv:3: missing field(s) 'response', 'rating'" in message
    assert "short.csv:4: missing field 'id' (empty cell)" in message
    assert "short.csv:5: empty dialog" in message


def test_lone_surrogate_escape_is_invalid_before_any_model_call(tmp_path: Path) -> None:
    path = tmp_path / "surrogate.jsonl"
    good = {"id": "ok", "turns": [{"role": "user", "content": "hi"},
                                  {"role": "assistant", "content": "hello"}]}  # fmt: skip
    bad = {**good, "id": "bad", "turns": [{"role": "user", "content": "hi \ud800"},
                                         good["turns"][1]]}  # fmt: skip
    path.write_text(json.dumps(bad) + "\n" + json.dumps(good) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"surrogate.jsonl:1: turn 1 holds invalid Unicode"):
        load_dialogs(path)
    assert [s.id for s in load_dialogs(path, on_invalid="skip")] == ["ok"]
