"""Every bot turn of a conversation: expansion on each loader with multi-turn data, ratings at
their own level, judge and response mode (the metrics per conversation:
stats/test_conversation.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fake_servers import FakeServer
from inspect_ai import eval

from inspect_empathy.dataset._dataset import load_dialogs
from inspect_empathy.dataset.per_turn import (
    CONVERSATION_KEY,
    CONVERSATION_RATING_KEY,
    TURN_KEY,
    expand_turns,
)
from inspect_empathy.dialogs import HUMAN_KEY, DialogRecord, Turn
from inspect_empathy.judge._rubric import bundled_rubrics, render_prompt
from inspect_empathy.tasks import empathy, empathy_response

FIXTURES = Path(__file__).parents[1] / "fixtures" / "loaders"


def turns(*roles: str) -> list[Turn]:
    return [Turn(role, f"{role} {i}") for i, role in enumerate(roles)]  # type: ignore[arg-type]


def test_one_record_per_bot_reply_each_a_prefix_sharing_the_turns() -> None:
    record = DialogRecord("c", turns("user", "bot", "user", "bot", "bot", "user", "bot"), 4.0)
    expanded = list(expand_turns([record]))
    assert [r.id for r in expanded] == ["c#t1", "c#t2", "c#t3"]
    assert [len(r.turns) for r in expanded] == [2, 5, 7]  # two bot turns in a row: one reply
    assert all(r.turns[i] is record.turns[i] for r in expanded for i in range(len(r.turns)))
    assert [r.rating for r in expanded] == [None, None, 4.0]  # a reply rating: the last turn
    assert [r.metadata[TURN_KEY] for r in expanded] == [1, 2, 3]
    assert {r.metadata[CONVERSATION_KEY] for r in expanded} == {"c"}


def test_a_conversation_rating_goes_to_every_turn_on_1_5() -> None:
    record = DialogRecord("c", turns("user", "bot", "user", "bot"), 7.0, (1.0, 7.0),
                          {"rating_scope": "conversation"})  # fmt: skip
    expanded = list(expand_turns([record]))
    assert [r.rating for r in expanded] == [None, None]
    assert [r.metadata[CONVERSATION_RATING_KEY] for r in expanded] == [5.0, 5.0]


@pytest.mark.parametrize(
    ("source", "format", "scope"),
    [
        ("ieval.json", "ieval", "conversation"),
        ("esconv.json", "esconv", "conversation"),
        ("dialogs.jsonl", None, None),
        ("transcripts.txt", "transcript", None),
        ("support_chats.yaml", None, None),
    ],
)
def test_per_turn_on_each_loader_with_multi_turn_data(
    source: str, format: str | None, scope: str | None
) -> None:
    data = load_dialogs(str(FIXTURES / source), format)
    records = data.records
    expanded = data.per_turn()
    bot_replies = sum(
        sum(1 for i, t in enumerate(r.turns)
            if t.role == "bot" and (i + 1 == len(r.turns) or r.turns[i + 1].role != "bot"))
        for r in records
    )  # fmt: skip
    assert len(expanded) == bot_replies >= len(records)
    for sample in expanded:
        conversation, turn = sample.metadata[CONVERSATION_KEY], sample.metadata[TURN_KEY]
        assert sample.id == f"{conversation}#t{turn}"
        if scope == "conversation":
            assert sample.metadata[HUMAN_KEY] is None  # rated at the conversation's level
    if scope == "conversation":
        assert any(CONVERSATION_RATING_KEY in s.metadata for s in expanded)


def write_conversations(path: Path, n: int = 4) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            record = {
                "id": f"conv{i}",
                "turns": [
                    {"role": "user", "content": "I lost my job this week."},
                    {"role": "assistant", "content": "That is hard news. How are you coping?"},
                    {"role": "user", "content": f"Not well, I feel useless ({i})."},
                    {"role": "assistant", "content": "Feeling useless after that makes sense."},
                ],
                "rating": 3 + i % 3,
            }
            f.write(json.dumps(record) + "\n")
    return path


def test_judge_and_response_mode_run_per_turn_with_max_turns_per_prefix(tmp_path: Path) -> None:
    data = str(write_conversations(tmp_path / "c.jsonl"))
    [log] = eval(empathy(dataset=data, per_turn=True, max_turns=2),
                 model="empathy_baseline/lexicon", log_dir=str(tmp_path / "j"),
                 display="none")  # fmt: skip
    assert log.status == "success" and len(log.samples or []) == 8
    second = next(s for s in log.samples or [] if str(s.id) == "conv0#t2")
    assert "earlier turns left out" in str(second.input)  # max_turns on the prefix
    assert log.results is not None
    from inspect_empathy._util.summary import summary_lines

    [line] = summary_lines(log)  # the last turns' ratings
    assert "8 of 8 samples scored (logprobs 8), 4 with human ratings; 4 conversations" in line
    [resp] = eval(empathy_response(dataset=data, per_turn=True, self_grading=True),
                  model="empathy_baseline/lexicon", log_dir=str(tmp_path / "r"),
                  display="none")  # fmt: skip
    assert resp.status == "success" and len(resp.samples or []) == 8
    assert {str(s.id) for s in resp.samples or []} >= {"conv0#t1", "conv0#t2"}
    assert resp.results is not None
    values = {k: m.value for k, m in resp.results.scores[0].metrics.items()}
    assert math.isfinite(values["conv_mean"]) and "; 4 conversations" in summary_lines(resp)[0]


def test_a_conversation_cut_by_limit_is_noted(tmp_path: Path) -> None:
    data = str(write_conversations(tmp_path / "c.jsonl"))
    [log] = eval(empathy(dataset=data, per_turn=True), model="empathy_baseline/lexicon",
                 log_dir=str(tmp_path / "j"), display="none", limit=3)  # fmt: skip
    assert log.status == "success" and log.results is not None
    from inspect_empathy._util.summary import summary_lines

    [line] = summary_lines(log)  # the end-of-run line says so
    assert "; 2 conversations; conv_partial 1" in line  # conv1 lost t2
    [whole] = eval(empathy(dataset=data, per_turn=True), model="empathy_baseline/lexicon",
                   log_dir=str(tmp_path / "w"), display="none", limit=4)  # fmt: skip
    [line] = summary_lines(whole)
    assert "; 2 conversations" in line and "conv_partial" not in line


@pytest.mark.parametrize("cot", [False, True])
@pytest.mark.parametrize("rubric", sorted(bundled_rubrics()))
def test_each_turns_prompt_starts_with_the_previous_turns_all_but_the_rubrics_tail(
    rubric: str, cot: bool, tmp_path: Path
) -> None:
    """What a service's prompt cache can read: turn k+1's prompt repeats turn k's up to the
    end of its dialog, so only the rubric's text after the dialog is not shared."""
    data = str(write_conversations(tmp_path / "c.jsonl", 2))
    samples = list(load_dialogs(data).per_turn().as_prompts(cot, rubric))
    tail = render_prompt("\x00", cot, rubric).split("\x00")[1]
    for first, second in zip(samples, samples[1:], strict=False):
        if first.metadata[CONVERSATION_KEY] == second.metadata[CONVERSATION_KEY]:  # type: ignore[index]
            text = str(first.input)
            assert str(second.input).startswith(text.removesuffix(tail))


def test_a_claude_judge_of_a_per_turn_run_asks_for_the_prompt_cache_unless_told_not_to(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    """Inspect's Anthropic provider marks every prompt for the cache (``cache_control``) with
    ``cache_prompt`` unset; a user's ``cache_prompt=false`` stops it."""
    data = str(write_conversations(tmp_path / "c.jsonl", 1))
    for config, marked in (({}, True), ({"cache_prompt": False}, False)):
        anthropic_server.clear()
        [log] = eval(empathy(dataset=data, per_turn=True), model="anthropic/claude-haiku-4-5",
                     log_dir=str(tmp_path / str(marked)), display="none", **config)  # fmt: skip
        assert log.status == "success" and anthropic_server.count() == 2
        bodies = [request.body for request in anthropic_server.requests]
        assert all(("cache_control" in json.dumps(body)) is marked for body in bodies)
        if marked:
            assert all(body["cache_control"] == {"type": "ephemeral"} for body in bodies)
