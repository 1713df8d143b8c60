"""Issue 49.5: README's response-mode demo (`empathy_baseline/length` as the chatbot,
`empathy_baseline/lexicon` grading) gives replies that differ, so its scores spread."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval

from inspect_empathy.tasks import empathy_response


def test_the_stand_in_chatbots_replies_and_scores_differ(tmp_path: Path) -> None:
    [log] = eval(empathy_response(), model="empathy_baseline/length",
                 model_roles={"grader": "empathy_baseline/lexicon"}, limit=30,
                 log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "success" and log.results is not None
    replies = {s.output.completion for s in log.samples or []}
    scores = {round(float(s.scores["empathy_scorer"].value), 3) for s in log.samples or []}
    assert len(replies) >= 4 and len(scores) >= 4
    assert log.results.scores[0].metrics["stderr"].value > 0.05
