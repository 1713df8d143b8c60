"""Named corpora on fixtures written in their real formats (invented text), and the hub."""

import json
import sys
import types
from pathlib import Path

import pytest
from loader_helpers import FIXTURES, by_id, load_error

from inspect_empathy import DatasetError, load_dialogs
from inspect_empathy.dataset._dataset import skipped_summary
from inspect_empathy.dataset.loaders import infer_format
from inspect_empathy.dataset.loaders._problems import LoadReport, RecordProblem
from inspect_empathy.dataset.loaders.empathetic_dialogues import (
    parse_selfeval,
    records_from_utterances,
)
from inspect_empathy.dataset.loaders.ieval import parse_chat_log
from inspect_empathy.dialogs import HUMAN_RATINGS_KEY, rater_ratings


@pytest.mark.parametrize(
    ("name", "expected"),
    [("empathetic_exchanges.csv", "empathetic_exchanges"), ("ieval.json", "ieval"),
     ("esconv.json", "esconv"), ("epitome", "epitome"),
     ("epitome/interpretations-reddit.csv", "epitome"),
     ("empathetic_dialogues.csv", "empathetic_dialogues"), ("support_chats.csv", "csv"),
     ("pairs.tsv", "tsv"), ("dialogs.jsonl", "jsonl"), ("dialogs.json", "json"),
     ("transcripts.txt", "transcript"), ("support_chats.yaml", "spec")],
)  # fmt: skip
def test_formats_are_inferred_from_the_files(name: str, expected: str) -> None:
    assert infer_format(FIXTURES / name)[0] == expected


def test_empathetic_exchanges_one_sample_per_exchange() -> None:
    samples = by_id(load_dialogs(FIXTURES / "empathetic_exchanges.csv"))
    assert list(samples) == [
        "ee-hit:901_conv:1801-1",
        "ee-hit:901_conv:1801-2",
        "ee-hit:902_conv:1803-1",
    ]
    second = samples["ee-hit:901_conv:1801-2"]
    # the dialog up to exchange 2; the label is exchange 2's empathy
    assert [m.role for m in second.input] == ["user", "assistant"] * 2
    assert second.input[2].text == "The big roundabout near the station, honestly."
    assert second.metadata["human_rating"] == 5.0
    assert second.metadata["situation"].startswith("My driving test is tomorrow, and")
    assert second.metadata["emotion"] == "anxious"
    assert second.metadata["rating_scope"] == "reply"
    assert "s_negative" not in second.metadata


def test_empathetic_exchanges_missing_earlier_exchange_is_invalid(tmp_path: Path) -> None:
    lines = (FIXTURES / "empathetic_exchanges.csv").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "ee.csv"
    path.write_text("\n".join([lines[0], lines[2]]) + "\n", encoding="utf-8")  # exchange 2 only
    with pytest.raises(DatasetError, match="exchange 1 of conversation 'hit:901_conv:1801'"):
        load_dialogs(path)


def test_ieval_one_sample_per_bot_conversation() -> None:
    samples = by_id(load_dialogs(FIXTURES / "ieval.json"))
    assert list(samples) == [
        "ieval-0-pos-pink",
        "ieval-0-pos-green",
        "ieval-0-neg-pink",
        "ieval-0-neg-green",
    ]
    pink = samples["ieval-0-pos-pink"]
    assert pink.metadata["human_rating"] == 4.5  # mean of EU 5 and ER 4
    assert pink.metadata["rating_scope"] == "conversation"
    assert pink.metadata["EU"] == 5.0 and pink.metadata["ER"] == 4.0
    assert pink.metadata["emotion"] == "excited"
    assert len(pink.input) == 6
    # a line without "- " continues the message before it
    assert samples["ieval-0-pos-green"].input[2].text == "Aren't you happy for me?\nSeriously."


def test_ieval_single_label() -> None:
    dataset = load_dialogs(FIXTURES / "ieval.json", label="EU")
    assert by_id(dataset)["ieval-0-pos-pink"].metadata["human_rating"] == 5.0


def test_ieval_has_one_rater_per_conversation() -> None:
    # EU and ER are two questions to the one participant, not two raters: no rater ratings,
    # so no human ceiling is computed from them, and `ratings:` is refused with the reason.
    pink = by_id(load_dialogs(FIXTURES / "ieval.json"))["ieval-0-pos-pink"]
    assert HUMAN_RATINGS_KEY not in pink.metadata
    assert rater_ratings(pink.metadata, pink.id) is None
    with pytest.raises(DatasetError, match="rated by one person"):
        load_dialogs(FIXTURES / "ieval.json", ratings=["EU", "ER"])


def test_ieval_chat_log_ending_with_the_user_is_invalid(tmp_path: Path) -> None:
    assert [t.role for t in parse_chat_log("- hi\n- hello\n- bye")] == ["user", "bot", "user"]
    text = (FIXTURES / "ieval.json").read_text(encoding="utf-8")
    path = tmp_path / "ieval.json"
    path.write_text(text.replace("\\n- All that waiting will make it even better.", ""), "utf-8")
    with pytest.raises(DatasetError, match="task 0 positive Pink: dialog does not end with a bot"):
        load_dialogs(path)


def _ieval_side(bots: tuple[str, ...] = ("Pink", "Green"), **conversation: object) -> dict:
    """One side of an iEval task with the named bots, each a short rated chat."""
    chat = {"chat_log": "- I passed my driving test!\n- Well done, how do you feel?",
            "EU": 4, "ER": 5, **conversation}  # fmt: skip
    return {"conv_id": "hit:1_conv:2", "emotion": "proud", "prompt": "I passed.",
            **{bot: dict(chat) for bot in bots}}  # fmt: skip


def _ieval_file(tmp_path: Path, *tasks: dict) -> Path:
    path = tmp_path / "ieval.json"
    path.write_text(json.dumps(list(tasks)), encoding="utf-8")
    return path


def test_ieval_task_missing_one_of_the_files_bots_is_invalid(tmp_path: Path) -> None:
    # the file's bots are those its tasks hold: a side without one is a problem, not
    # silently one sample fewer
    path = _ieval_file(tmp_path, {"part": 0, "positive": _ieval_side(),
                                  "negative": _ieval_side(("Pink",))})  # fmt: skip
    message = load_error(path)
    assert "1 invalid record(s) (missing field: 1)" in message
    assert (
        "ieval.json: task 0 negative Green: missing field 'Green': no Green bot conversation "
        "(the file's bots: Pink, Green)"
    ) in message
    dataset = load_dialogs(path, on_invalid="skip")
    assert [s.id for s in dataset] == ["ieval-0-pos-pink", "ieval-0-pos-green", "ieval-0-neg-pink"]
    summary = skipped_summary(dataset)
    assert summary is not None and summary["skipped"] == {"missing field": 1}
    # bots other than the published four are named in the notes
    assert any("the tasks hold the bots Pink, Green" in note for note in summary["notes"])


def test_ieval_bot_that_is_not_an_object_is_invalid(tmp_path: Path) -> None:
    negative = _ieval_side()
    negative["Green"] = "no conversation"
    path = _ieval_file(tmp_path, {"part": 0, "positive": _ieval_side(), "negative": negative})
    assert "task 0 negative Green: 'Green' is not a bot conversation object" in load_error(path)


def test_ieval_empty_chat_log_turn_is_invalid(tmp_path: Path) -> None:
    with pytest.raises(RecordProblem, match="turn 2 has empty content"):
        parse_chat_log("- hi\n- \n- bye\n- ok")
    side = _ieval_side(chat_log="- I passed my driving test!\n- \n- I did.\n- Great.")
    path = _ieval_file(tmp_path, {"part": 0, "positive": side, "negative": _ieval_side()})
    message = load_error(path)
    assert "2 invalid record(s) (bad value: 2)" in message
    assert "ieval.json: task 0 positive Pink: turn 2 has empty content" in message


def test_ieval_single_label_needs_only_that_rating(tmp_path: Path) -> None:
    positive = _ieval_side()
    positive["Pink"]["EU"] = None
    path = _ieval_file(tmp_path, {"part": 0, "positive": positive, "negative": _ieval_side()})
    dataset = load_dialogs(path, label="ER")
    pink = by_id(dataset)["ieval-0-pos-pink"]
    assert pink.metadata["human_rating"] == 5.0
    assert "EU" not in pink.metadata and pink.metadata["ER"] == 5.0
    summary = skipped_summary(dataset)
    assert summary is not None
    assert (
        "1 conversation(s) without an EU rating loaded (label ER needs only ER)"
        in (summary["notes"])
    )
    # the mean and the label EU need the missing rating
    assert "task 0 positive Pink: missing field 'EU'" in load_error(path)
    assert "task 0 positive Pink: missing field 'EU'" in load_error(path, label="EU")
    # a rating present is still checked
    positive["Pink"]["EU"] = 6
    path = _ieval_file(tmp_path, {"part": 0, "positive": positive, "negative": _ieval_side()})
    assert "EU 6 is outside the scale 1-5" in load_error(path, label="ER")


def test_ieval_repeated_part_names_both_tasks_apart(tmp_path: Path) -> None:
    task = {"part": 0, "positive": _ieval_side(), "negative": _ieval_side()}
    path = _ieval_file(tmp_path, task, task)
    message = load_error(path)
    assert (
        f"{path}: task 0 (list index 1) positive Pink: duplicate id 'ieval-0-pos-pink' "
        f"(first at {path}: task 0 positive Pink)"
    ) in message


def test_esconv_conversation_scores() -> None:
    dataset = load_dialogs(FIXTURES / "esconv.json")
    samples = by_id(dataset)
    assert list(samples) == ["esconv-0", "esconv-2"]
    first = samples["esconv-0"]
    assert first.metadata["human_rating"] == 4.0
    assert first.metadata["rating_scope"] == "conversation"
    assert first.metadata["seeker_turns_cut"] == 1  # the closing "Bye."
    assert first.input[-1].text == "Any time. Good luck!"
    assert first.input[2].text == "My contract ends next month.\nAnd I have nothing lined up."
    # the conversation without a survey empathy score is counted, not silently dropped
    summary = skipped_summary(dataset)
    assert summary is not None and summary["excluded"] == {"no seeker empathy score": 1}


def test_esconv_one_sample_per_feedback_star() -> None:
    samples = by_id(load_dialogs(FIXTURES / "esconv.json", unit="star"))
    assert list(samples) == ["esconv-0-t6", "esconv-0-t9", "esconv-1-t2"]
    star = samples["esconv-0-t6"]
    # cut just before the star's turn: ends with the two replies it rates
    assert star.input[-1].text == (
        "That uncertainty sounds stressful.\nHave you started applying anywhere?"
    )
    assert star.metadata["human_rating"] == 5.0
    assert star.metadata["star_turn"] == 6
    # a star after another seeker turn rates the replies before that turn
    late = samples["esconv-0-t9"]
    assert late.input[-1].text.startswith("Replies often take a few weeks")
    assert late.metadata["seeker_turns_cut"] == 1


@pytest.mark.parametrize("unit", ["conversation", "star"])
def test_esconv_turn_with_empty_content_is_left_out_and_noted(tmp_path: Path, unit: str) -> None:
    text = (FIXTURES / "esconv.json").read_text(encoding="utf-8")
    path = tmp_path / "esconv.json"
    path.write_text(text.replace('"Hello! What is on your mind today?"', '" \\n"'), "utf-8")
    dataset = load_dialogs(path, unit=unit)
    assert len(dataset) == len(load_dialogs(FIXTURES / "esconv.json", unit=unit))
    texts = [m.text for s in dataset for m in s.input]
    assert "Hello! What is on your mind today?" not in texts and "" not in texts
    summary = skipped_summary(dataset)
    assert summary is not None
    assert f"{path}: 1 turn(s) with empty content left out of their dialogs: conversation 0 " \
        "turn 1" in summary["notes"]


@pytest.mark.parametrize("empty", ['""', "null"])
def test_esconv_empty_feedback_star_is_an_unrated_turn_counted(tmp_path: Path, empty: str) -> None:
    text = (FIXTURES / "esconv.json").read_text(encoding="utf-8")
    path = tmp_path / "esconv.json"
    path.write_text(text.replace('{"feedback": "5"}', f'{{"feedback": {empty}}}'), "utf-8")
    dataset = load_dialogs(path, unit="star")
    # the later star still rates its replies, with the unrated turn as context
    assert [s.id for s in dataset] == ["esconv-0-t9", "esconv-1-t2"]
    assert "A few places, no replies yet." in [m.text for m in by_id(dataset)["esconv-0-t9"].input]
    summary = skipped_summary(dataset)
    assert summary is not None and summary["excluded"] == {"empty feedback star": 1}
    assert summary["notes"] == [
        f"{path}: 1 empty feedback star(s) read as unrated turns, no sample: conversation 0 turn 6"
    ]


def test_esconv_unit_must_be_known() -> None:
    with pytest.raises(DatasetError, match="unit must be one of"):
        load_dialogs(FIXTURES / "esconv.json", unit="turn")


def test_epitome_joined_on_pairs_with_the_sum_by_default() -> None:
    dataset = load_dialogs(FIXTURES / "epitome")
    samples = by_id(dataset)
    assert list(samples) == [
        "epitome-ab12cd-ef34gh",
        "epitome-ab12cd-ij56kl",
        "epitome-mn78op-qr90st",
    ]
    first = samples["epitome-ab12cd-ef34gh"]
    assert first.metadata["levels"] == {
        "emotional_reactions": 2.0,
        "interpretations": 1.0,
        "explorations": 0.0,
    }
    assert first.metadata["human_rating_raw"] == 3.0
    assert first.metadata["human_rating_scale"] == (0.0, 6.0)
    assert first.metadata["human_rating"] == 3.0
    assert [m.role for m in first.input] == ["user", "assistant"]
    # a pair on two rows with levels 1 and 2 for emotional reactions: their mean
    repeated = samples["epitome-mn78op-qr90st"]
    assert repeated.metadata["levels"]["emotional_reactions"] == 1.5
    assert repeated.metadata["repeated_rows"] == 2
    assert skipped_summary(dataset)["excluded"] == {  # type: ignore[index]
        "repeated (sp_id, rp_id) row folded into one sample": 1
    }


@pytest.mark.parametrize(("line", "at"), [(3, 3), (5, 5)])
def test_epitome_bad_level_is_reported_at_its_own_row(tmp_path: Path, line: int, at: int) -> None:
    # the level is in the interpretations file (line 5: the second row of a repeated pair);
    # the problem names that row, not the emotional-reactions row the sample's text is from
    for name in ("emotional-reactions-reddit.csv", "explorations-reddit.csv"):
        (tmp_path / name).write_bytes((FIXTURES / "epitome" / name).read_bytes())
    lines = (FIXTURES / "epitome" / "interpretations-reddit.csv").read_text("utf-8").splitlines()
    cells = lines[line - 1].rsplit(",", 2)
    lines[line - 1] = ",".join([cells[0], "3", cells[2]])
    (tmp_path / "interpretations-reddit.csv").write_text("\n".join(lines) + "\n", "utf-8")
    message = load_error(tmp_path)
    assert "1 invalid record(s) (rating outside the scale: 1)" in message
    assert (
        f"interpretations-reddit.csv:{at}: interpretations level '3' is outside the scale 0-2"
    ) in message
    assert "emotional-reactions-reddit.csv" not in message


def test_epitome_one_dimension_from_one_file() -> None:
    dataset = load_dialogs(FIXTURES / "epitome" / "explorations-reddit.csv", dimension="ex")
    sample = by_id(dataset)["epitome-ab12cd-ij56kl"]
    assert sample.metadata["human_rating_scale"] == (0.0, 2.0)
    assert sample.metadata["human_rating"] == 3.0  # level 1 of 0-2


def test_epitome_sum_needs_all_three_files(tmp_path: Path) -> None:
    only = tmp_path / "explorations-reddit.csv"
    only.write_bytes((FIXTURES / "epitome" / "explorations-reddit.csv").read_bytes())
    with pytest.raises(DatasetError, match="EPITOME file\\(s\\) not found"):
        load_dialogs(only)


def test_empathetic_dialogues_conversations_with_selfeval() -> None:
    samples = by_id(load_dialogs(FIXTURES / "empathetic_dialogues.csv"))
    assert list(samples) == ["ed-hit:5_conv:10", "ed-hit:6_conv:12"]
    proud = samples["ed-hit:5_conv:10"]
    assert proud.metadata["human_rating"] == 4.5  # raters' empathy 5 and 4
    assert proud.input[1].text == "That's a big milestone, you must be so proud."
    assert proud.metadata["situation"] == "My daughter learned to ride a bike, all by herself."
    # ends with the listener's last reply; the speaker's closing line is cut
    afraid = samples["ed-hit:6_conv:12"]
    assert afraid.input[-1].text == "Probably nothing."
    assert afraid.metadata["speaker_turns_cut"] == 1


def test_empathetic_dialogues_rater_option() -> None:
    samples = by_id(load_dialogs(FIXTURES / "empathetic_dialogues.csv", rater="second"))
    assert samples["ed-hit:5_conv:10"].metadata["human_rating"] == 4.0


def test_selfeval_must_hold_two_triples() -> None:
    assert parse_selfeval("5|4|5_3|5|5") == (5.0, 3.0)
    with pytest.raises(Exception, match="not two rating triples"):
        parse_selfeval("5|4|5")


def test_hub_rows_map_like_the_csv_files() -> None:
    """The mapping used for ``hf:facebook/empathetic_dialogues`` rows, on in-memory rows."""
    rows = [
        {"conv_id": "hit:1_conv:2", "utterance_idx": 2, "context": "sad", "prompt": "x",
         "speaker_idx": 8, "utterance": "I'm sorry_comma_ that's hard.", "selfeval": "4|4|4_2|3|3",
         "tags": ""},
        {"conv_id": "hit:1_conv:2", "utterance_idx": 1, "context": "sad", "prompt": "x",
         "speaker_idx": 7, "utterance": "My goldfish died.", "selfeval": "4|4|4_2|3|3",
         "tags": ""},
    ]  # fmt: skip
    report = LoadReport("hf:test", "empathetic_dialogues")
    [(where, record)] = list(records_from_utterances(((f"row {i}", r) for i, r in enumerate(rows)),
                                                     report))  # fmt: skip
    assert record.id == "ed-hit:1_conv:2"
    assert [(t.role, t.content) for t in record.turns] == [
        ("user", "My goldfish died."),
        ("bot", "I'm sorry, that's hard."),
    ]
    assert record.rating == 3.0


def test_hub_without_the_datasets_library_says_how_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # import fails
    with pytest.raises(DatasetError, match="pip install datasets"):
        load_dialogs("hf:facebook/empathetic_dialogues")


def test_hub_namespace_package_shadowing_datasets_is_not_mistaken_for_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", types.ModuleType("datasets"))
    with pytest.raises(DatasetError, match="pip install datasets"):
        load_dialogs("hf:facebook/empathetic_dialogues")


def test_hub_dataset_through_a_stand_in_library(monkeypatch) -> None:
    """The hub path end to end, with an in-memory stand-in for ``datasets`` (no network)."""
    calls = []

    def load_dataset(name: str, split: str, revision: str):
        calls.append((name, split, revision))
        return [
            {"id": "h1", "messages": [{"role": "user", "content": "I'm nervous."},
                                      {"role": "assistant", "content": "That's natural."}],
             "rating": 4},
        ]  # fmt: skip

    fake = types.ModuleType("datasets")
    fake.load_dataset = load_dataset  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "datasets", fake)
    dataset = load_dialogs("hf:someone/chats@0a1b2c3", format="jsonl")
    assert calls == [("someone/chats", "train", "0a1b2c3")]
    assert dataset[0].id == "h1"
    assert dataset.location == "hf:someone/chats@0a1b2c3"  # the revision is in the log
    with pytest.raises(DatasetError, match="unknown hub dataset"):
        load_dialogs("hf:someone/chats@0a1b2c3")
    with pytest.raises(DatasetError, match=r"pin a revision .* hf:someone/chats@<commit>"):
        load_dialogs("hf:someone/chats", format="jsonl")
    assert len(calls) == 1  # refused before any download


def test_hub_esconv_reads_the_repository_file(monkeypatch) -> None:
    """``hf:thu-coai/esconv`` fetches ``ESConv.json`` (stand-in download: the fixture)."""
    fetched = []

    def hf_hub_download(repo_id: str, filename: str, repo_type: str, revision: str) -> str:
        fetched.append((repo_id, filename, repo_type, revision))
        return str(FIXTURES / "esconv.json")

    fake_datasets = types.ModuleType("datasets")
    fake_datasets.load_dataset = lambda *a, **k: []  # type: ignore[attr-defined]
    fake_hub = types.ModuleType("huggingface_hub")
    fake_hub.hf_hub_download = hf_hub_download  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "datasets", fake_datasets)
    monkeypatch.setitem(sys.modules, "huggingface_hub", fake_hub)
    dataset = load_dialogs("hf:thu-coai/esconv@v1.0", unit="star")
    assert fetched == [("thu-coai/esconv", "ESConv.json", "dataset", "v1.0")]
    assert [s.id for s in dataset] == ["esconv-0-t6", "esconv-0-t9", "esconv-1-t2"]
