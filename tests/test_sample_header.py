"""Issue 49.8: the viewer's sample header shows INPUT and ANSWER clamped to three lines, so
judge mode's Score ``answer`` leads with the reply rated (the INPUT's last ``BOT:`` turn,
cut off in a long dialog), then the judge's words; in ``samples`` mode the words are the
count of each score over all the draws, not one draw's text."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval

from inspect_empathy import empathy, empathy_response

DIALOGS = Path(__file__).parent / "fixtures" / "viewer" / "dialogs.jsonl"
JUDGE = "empathy_baseline/lexicon"


def last_replies() -> dict[str, str]:
    records = [json.loads(line) for line in DIALOGS.read_text("utf-8").splitlines() if line]
    return {r["id"]: r["turns"][-1]["content"] for r in records}


@pytest.mark.parametrize(
    "args",
    [{}, {"input": "prompt"}, {"input": "dialog", "cot": True}],
    ids=["conversation", "prompt", "dialog-cot"],
)
def test_the_answer_leads_with_the_reply_rated(args: dict[str, Any], tmp_path: Path) -> None:
    [log] = eval(empathy(dataset=str(DIALOGS), **args), model=JUDGE, limit=2,
                 log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "success", log.error
    replies = last_replies()
    for sample in log.samples or []:
        score = sample.scores["empathy_scorer"]  # type: ignore[index]
        words = sample.output.completion
        assert score.answer == f"BOT: {replies[str(sample.id)]}\n\njudge: {words}"
        assert score.metadata["grader_answer"] == words  # what compare reads


def test_samples_mode_answer_counts_every_draw(tmp_path: Path) -> None:
    [log] = eval(empathy(dataset=str(DIALOGS), method="samples", completions=6), model=JUDGE,
                 limit=2, log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "success", log.error
    for sample in log.samples or []:
        score = sample.scores["empathy_scorer"]  # type: ignore[index]
        drawn = score.metadata["scores"]
        summary = score.answer.rsplit("judge: ", 1)[1]
        counts = {int(k): int(n) for k, n in re.findall(r"(\d) ×(\d+)", summary)}
        assert counts == {k: drawn.count(k) for k in set(drawn)} and sum(counts.values()) == 6
        assert summary == score.metadata["grader_answer"]


def dialogs() -> dict[str, list[dict[str, str]]]:
    records = [json.loads(line) for line in DIALOGS.read_text("utf-8").splitlines() if line]
    return {r["id"]: r["turns"] for r in records}


@pytest.mark.parametrize("self_grading", [False, True], ids=["grader", "self-grading"])
def test_response_mode_input_says_who_said_what(self_grading: bool, tmp_path: Path) -> None:
    """The viewer shows an input as its messages' text joined by a space (its
    ``inputString``): response mode's messages open with ``USER:`` / ``BOT:``, each turn on
    a line of its own, while the chatbot gets the dialog as it was, without the labels."""
    from inspect_empathy.compare.logs import dialog_content

    roles = {} if self_grading else {"grader": JUDGE}
    [log] = eval(empathy_response(dataset=str(DIALOGS), self_grading=self_grading),
                 model="empathy_baseline/length", model_roles=roles, limit=4,
                 log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "success", log.error
    every = dialogs()
    for sample in log.samples or []:
        turns = every[str(sample.id)][:-1]  # the reply is the model's to write
        shown = " ".join(message.text for message in sample.input)  # as the viewer joins them
        labels = {"user": "USER", "assistant": "BOT"}
        assert [line.strip() for line in shown.split("\n")] == [
            f"{labels[t['role']]}: {t['content']}" for t in turns
        ]
        [call] = [e for e in sample.events if e.event == "model"][:1]
        assert [(m.role, m.text) for m in call.input] == [(t["role"], t["content"]) for t in turns]
        unlabelled = [{"role": t["role"], "content": t["content"]} for t in turns]
        assert dialog_content(sample.input, True) == dialog_content(unlabelled)
