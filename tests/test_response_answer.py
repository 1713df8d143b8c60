"""Response mode's sample list shows the reply graded: a Score's ``answer`` is the answer
graded (Inspect's ``model_graded_qa`` convention), the grader's words are in its metadata;
compare still reads the grader's words."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval

from inspect_empathy import empathy_response
from inspect_empathy.compare import compare_logs

DATA = Path(__file__).parent / "fixtures" / "compare" / "judges.jsonl"
LEXICON = "empathy_baseline/lexicon"


def test_the_answer_is_the_reply_graded_and_the_grader_words_are_kept(tmp_path: Path) -> None:
    [log] = eval(
        empathy_response(dataset=str(DATA)),
        model="empathy_baseline/length",
        model_roles={"grader": LEXICON},
        log_dir=str(tmp_path / "one"),
        limit=4,
        display="none",
    )
    assert log.status == "success"
    for sample in log.samples or []:
        score = sample.scores["empathy_scorer"]  # type: ignore[index]
        reply = sample.output.completion
        assert reply and score.answer == reply
        assert score.metadata["judged_dialog"].endswith(f"BOT: {reply}")
        grader_words = score.metadata["grader_answer"]
        assert grader_words and grader_words != reply
    answers = compare_logs(tmp_path / "one", resamples=0).samples["answer"]
    for sample, answer in zip(log.samples or [], answers, strict=True):
        grader_words = sample.scores["empathy_scorer"].metadata["grader_answer"]  # type: ignore[index]
        assert answer.startswith(grader_words) and sample.output.completion not in answer


def test_a_panel_answer_is_the_reply_too(tmp_path: Path) -> None:
    [log] = eval(
        empathy_response(dataset=str(DATA)),
        model="empathy_baseline/length",
        model_roles={"grader": [LEXICON, "empathy_baseline/length"]},
        log_dir=str(tmp_path / "panel"),
        limit=2,
        display="none",
    )
    assert log.status == "success"
    for sample in log.samples or []:
        score = sample.scores["empathy_scorer"]  # type: ignore[index]
        assert score.answer == sample.output.completion
        assert all(j["raw"] for j in score.metadata["judges"].values())
