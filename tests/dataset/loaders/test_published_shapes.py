"""Files as researchers publish them load through spec files with no code (issue 13)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from loader_helpers import FIXTURES, ROOT, load_error

from inspect_empathy import DatasetError, load_dialogs
from inspect_empathy.dataset._dataset import skipped_summary

PUBLISHED = FIXTURES / "published"


def fail_message(name: str, **kwargs) -> str:
    return load_error(PUBLISHED / name, **kwargs)


def roles_and_texts(sample) -> list[tuple[str, str]]:
    return [(message.role, message.text) for message in sample.input]


# --- shape 1: indented transcript column, trailing user turns, _comma_ -----------------


def test_indented_speaker_lines_trailing_user_cut_and_unescape() -> None:
    dataset = load_dialogs(PUBLISHED / "indented.yaml")
    samples = {sample.id: sample for sample in dataset}
    assert list(samples) == ["s1", "s2", "s3"]
    s1 = samples["s1"]
    assert roles_and_texts(s1) == [
        ("user", "I lost my job today, and I don't know what to tell my family."),
        ("assistant", "Oh no, that's a heavy thing to carry home. How are you holding up?"),
        ("user", "Not well. I keep replaying the meeting."),
        ("assistant", "That makes sense. It was a shock, and your mind is still catching up."),
    ]
    assert s1.metadata["trailing_user_turns_cut"] == 1
    assert s1.metadata["human_rating"] == 5.0 and s1.metadata["human_rating_raw"] == 3.0
    assert "trailing_user_turns_cut" not in samples["s2"].metadata
    assert samples["s2"].metadata["human_rating"] == 1.0
    # two seeker lines after the last reply are one (joined) user turn, cut
    assert samples["s3"].metadata["trailing_user_turns_cut"] == 1
    assert samples["s3"].metadata["human_rating"] == 3.0
    assert len(samples["s3"].input) == 2
    summary = skipped_summary(dataset)
    assert summary["loaded"] == 3
    assert summary["adjusted"] == {"dialogs with trailing user turns cut": 2}


def test_trailing_user_turns_are_an_error_by_default_naming_the_line() -> None:
    message = fail_message("indented_trailing_error.yaml")
    assert "2 invalid record(s)" in message
    assert "indented.csv:2: dialog does not end with a bot turn (it ends with the user; " in message
    assert "indented.csv:9: dialog does not end with a bot turn" in message
    assert "trailing_user: cut" in message


def test_no_bot_label_error_lists_the_labels_seen() -> None:
    message = fail_message("indented_no_bot.yaml")
    assert "indented_no_bot.csv:4: dialog does not end with a bot turn: it has no bot turn; " in (
        message
    )
    seen = "no line starts with a bot label; labels seen: Seeker, Helper (indented, not a role)"
    assert seen in message


def test_trailing_user_cut_in_jsonl_and_transcript(tmp_path: Path) -> None:
    jsonl = tmp_path / "chats.jsonl"
    jsonl.write_text(
        '{"id": "a", "turns": [{"role": "user", "content": "Hi_comma_ there"}, '
        '{"role": "bot", "content": "Hello_comma_ you."}, {"role": "user", "content": "Bye"}]}\n',
        encoding="utf-8",
    )
    with pytest.raises(DatasetError, match=r"chats.jsonl:1: dialog does not end with a bot"):
        load_dialogs(jsonl)
    sample = load_dialogs(jsonl, trailing_user="cut", unescape="empathetic_dialogues")[0]
    assert roles_and_texts(sample) == [("user", "Hi, there"), ("assistant", "Hello, you.")]
    assert sample.metadata["trailing_user_turns_cut"] == 1

    text = tmp_path / "chats.txt"
    text.write_text("# id: t1\nUser: Hi_comma_ there\nBot: Hello.\nUser: Thanks\n", "utf-8")
    sample = load_dialogs(text, trailing_user="cut", unescape="ed")[0]
    assert roles_and_texts(sample) == [("user", "Hi, there"), ("assistant", "Hello.")]
    assert sample.metadata["trailing_user_turns_cut"] == 1
    with pytest.raises(DatasetError, match="trailing_user must be 'error' or 'cut'"):
        load_dialogs(text, trailing_user="drop")


def test_an_indented_word_that_is_no_role_still_continues_the_turn(tmp_path: Path) -> None:
    path = tmp_path / "chats.csv"
    path.write_text('id,transcript\na,"User: Note:\n  Step one: breathe.\nBot: Good."\n', "utf-8")
    sample = load_dialogs(path)[0]
    assert roles_and_texts(sample) == [
        ("user", "Note:\nStep one: breathe."),
        ("assistant", "Good."),
    ]


# --- shape 2: peer conversations, one row per turn, backslash quotes, NULL, 0-5 halves --


def test_peer_turns_with_backslash_quotes_nulls_and_half_step_ratings() -> None:
    dataset = load_dialogs(PUBLISHED / "peer_turns.yaml")
    samples = {sample.id: sample for sample in dataset}
    assert list(samples) == ["c1-2", "c1-4", "c2-2", "c3-3"]
    ratings = {key: (s.metadata["human_rating_raw"], s.metadata["human_rating"])
               for key, s in samples.items()}  # fmt: skip
    # 0-5 mapped linearly onto 1-5: 1 + 4 * raw / 5
    assert ratings == {
        "c1-2": (4.5, pytest.approx(4.6)),
        "c1-4": (1.5, pytest.approx(2.2)),
        "c2-2": (5.0, 5.0),
        "c3-3": (3.5, pytest.approx(3.8)),
    }
    assert roles_and_texts(samples["c1-2"]) == [
        ("user", 'I got the job offer "finally" after six months.'),
        ("assistant", 'Six months! You must be so relieved "and" a bit tired.'),
    ]
    assert samples["c1-4"].metadata["speaker"] == "p9"
    assert samples["c1-4"].metadata["annotator_note"] == "topic change"
    # NULL / NA cells are missing: not copied as text
    assert "annotator_note" not in samples["c2-2"].metadata
    # the order column wins over file order; the rated speaker plays the bot
    assert roles_and_texts(samples["c3-3"]) == [
        ("assistant", "Hey, how was your weekend?"),
        ("user", "Nobody came to my birthday."),
        ("assistant", "That sounds really lonely. I'm sorry it went that way."),
    ]
    summary = skipped_summary(dataset)
    assert summary["loaded"] == 4
    assert summary["excluded"] == {"rated turn opens its dialog (nothing to answer)": 1}


def test_backslash_quotes_without_escapechar_point_at_the_line() -> None:
    message = fail_message("peer_turns_no_escapechar.yaml")
    assert "peer_turns.csv:2: bad CSV: ',' expected after '\"'" in message
    assert "set escapechar" in message


def test_malformed_peer_turns_each_name_file_line_and_problem() -> None:
    message = fail_message("peer_turns_bad.yaml")
    assert "peer_turns_bad.csv:3: rating '5.5' is outside the scale 0-5" in message
    assert "peer_turns_bad.csv:5: turn order '1' repeats (first at " in message
    assert "peer_turns_bad.csv:6: row has 6 cells, the header 5: cells beyond it" in message
    assert "peer_turns_bad.csv:9: rating 'four' is not a number" in message


def test_na_values_and_encoding_in_a_one_dialog_per_row_csv(tmp_path: Path) -> None:
    path = tmp_path / "latin.csv"
    path.write_bytes(
        "id,transcript,rating,city\n"
        'a,"User: Ça va mal.\nBot: Je suis désolé.",NA,NULL\n'.encode("latin-1")
    )
    with pytest.raises(DatasetError, match=r"latin.csv:2: unreadable file: not UTF-8 text"):
        load_dialogs(path)
    sample = load_dialogs(path, encoding="latin-1", na_values=["NA", "NULL"])[0]
    assert sample.input[0].text == "Ça va mal."
    assert sample.metadata["human_rating"] is None
    assert "city" not in sample.metadata


# --- shape 3: user-bot conversations, one row per turn ------------------------------------


def test_bot_turns_one_row_per_turn_tsv_and_jsonl() -> None:
    dataset = load_dialogs(PUBLISHED / "bot_turns.yaml")
    samples = {sample.id: sample for sample in dataset}
    assert list(samples) == ["k1-2", "k1-4", "k3-2"]
    assert {k: s.metadata["human_rating"] for k, s in samples.items()} == {
        "k1-2": 4.0, "k1-4": 2.0, "k3-2": 5.0}  # fmt: skip
    assert len(samples["k1-4"].input) == 4
    assert samples["k1-4"].input[-1].text == "Have you tried an app to meet people?"
    assert samples["k1-4"].metadata["dialog_id"] == "k1"
    assert skipped_summary(dataset)["excluded"] == {"dialogs without a rated turn": 1}

    jsonl = load_dialogs(PUBLISHED / "bot_turns_jsonl.yaml")
    assert [(s.id, s.metadata["human_rating"], len(s.input)) for s in jsonl] == [
        ("j1-2", 4.0, 2), ("j1-4", 5.0, 4)]  # fmt: skip


def test_malformed_bot_turns_each_name_file_line_and_problem() -> None:
    message = fail_message("bot_turns_bad.yaml")
    assert "bot_turns_bad.tsv:2: rating on a user turn (speaker 'user')" in message
    assert "bot_turns_bad.tsv:5: unknown role label 'therapist'" in message
    assert "bot_turns_bad.tsv:6: turn order 'one' is not a number" in message


# --- error text verbatim; ids independent of how the loader is called -------------------


@pytest.mark.slow
def test_inspect_eval_prints_file_and_line_verbatim(tmp_path: Path) -> None:
    path = tmp_path / "chats.csv"
    rows = [f'r{i},"User: hi\nBot: hello",3' for i in range(1, 50)]
    rows.append('r50,"User: [bold]hi[/bold] :smile:",3')
    path.write_text("id,transcript,rating\n" + "\n".join(rows) + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "300"}
    result = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "inspect_empathy/empathy",
         "--model", "mockllm/model", "-T", f"dataset={path}", "--log-dir", str(tmp_path / "logs")],
        capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode != 0
    # line 100 of the file: ":100:" must not turn into an emoji, nor brackets into markup
    assert f"{path}:100: dialog does not end with a bot turn" in output, output
    assert "\U0001f4af" not in output
    assert "Traceback" not in output


def test_python_and_spec_give_the_same_sample_ids() -> None:
    # the README's Python example and its YAML example, on the same file
    by_spec = load_dialogs(PUBLISHED / "indented.yaml")
    by_call = load_dialogs(
        str(PUBLISHED / "indented.csv"), format="csv", id="conv_id", transcript="dialog",
        rating="empathy", scale=[1, 3], roles={"Seeker": "user", "Supporter": "bot"},
        trailing_user="cut", unescape="empathetic_dialogues",
    )  # fmt: skip
    assert [s.id for s in by_call] == [s.id for s in by_spec] == ["s1", "s2", "s3"]
    # without an id column: <data file stem>-<row>, never the spec's name
    spec_ids = [s.id for s in load_dialogs(PUBLISHED / "no_id.yaml")]
    call_ids = [s.id for s in load_dialogs(PUBLISHED / "no_id.csv", transcript="conversation",
                                           rating="score", scale=[1, 3])]  # fmt: skip
    assert spec_ids == call_ids == ["no_id-1", "no_id-2"]
