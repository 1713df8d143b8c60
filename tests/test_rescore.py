"""Re-scoring logs that already exist: `inspect score` and Inspect's `score()`."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import Task, eval, score
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, system_message

from inspect_empathy import empathy, empathy_response, empathy_scorer

FIXTURE = Path(__file__).parent / "fixtures" / "response" / "dialogs.jsonl"
LEXICON = "empathy_baseline/lexicon"
LENGTH = "empathy_baseline/length"


def unrelated_log(log_dir: Path) -> Path:
    """A log from a task that knows nothing of this project, written by the baseline model."""
    task = Task(
        dataset=[
            Sample(id="exam", input="I failed my exam and I feel stupid.", target="sorry"),
            Sample(id="move", input="My best friend is moving abroad next month.", target="miss"),
        ],
        solver=[system_message("Answer in two sentences."), generate()],
        scorer=includes(),
    )
    [log] = eval(task, model=LENGTH, log_dir=str(log_dir), display="none")
    assert log.status == "success"
    return Path(log.location)


def inspect_score(log: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "INSPECT_EVAL_MODEL"):
        env.pop(key, None)
    return subprocess.run(
        [
            sys.executable, "-m", "inspect_ai", "score", str(log),
            "--scorer", "inspect_empathy/empathy_scorer",
            "--action", "append", "--overwrite", "--display", "plain", *args,
        ],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip


def scorer_names(log: EvalLog) -> list[str]:
    assert log.results is not None
    return [s.name for s in log.results.scores]


@pytest.mark.slow
def test_inspect_score_appends_empathy_scores_to_an_existing_log(tmp_path: Path) -> None:
    path = unrelated_log(tmp_path)
    before = read_eval_log(str(path))
    assert scorer_names(before) == ["includes"]

    run = inspect_score(path, "--model-role", f"grader={LEXICON}")
    assert run.returncode == 0, run.stderr + run.stdout

    after = read_eval_log(str(path))
    assert scorer_names(after) == ["includes", "empathy_scorer"]
    metrics = after.results.scores[1].metrics
    assert {"mean", "stderr", "share_ge_4"} <= set(metrics)
    for old, new in zip(before.samples, after.samples, strict=True):
        assert new.scores["includes"] == old.scores["includes"]  # kept, not replaced
        empathy_score = new.scores["empathy_scorer"]
        assert 1 <= float(empathy_score.value) <= 5
        assert empathy_score.metadata["grader"] == LEXICON
        assert "message 0: system message left out" in empathy_score.metadata["notes"]
        reply = old.output.completion
        assert empathy_score.metadata["judged_dialog"].endswith(f"BOT: {reply}")
    assert metrics["mean"].value == pytest.approx(
        sum(float(s.scores["empathy_scorer"].value) for s in after.samples) / 2
    )


@pytest.mark.slow
def test_inspect_score_with_a_panel_given_as_a_scorer_argument(tmp_path: Path) -> None:
    path = unrelated_log(tmp_path)
    run = inspect_score(path, "-S", f"model={LEXICON},{LENGTH}")
    assert run.returncode == 0, run.stderr + run.stdout
    after = read_eval_log(str(path))
    judges = after.samples[0].scores["empathy_scorer"].metadata["judges"]
    assert list(judges) == [LEXICON, LENGTH]
    assert f"judge_mean({LENGTH})" in after.results.scores[1].metrics


def test_score_api_regrades_a_response_log_with_another_grader(tmp_path: Path) -> None:
    [log] = eval(
        empathy_response(dataset=str(FIXTURE)), model=LEXICON,
        model_roles={"grader": LEXICON}, log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    rescored = score(
        log, empathy_scorer(), model_roles={"grader": LENGTH}, action="append", display="none"
    )
    names = scorer_names(rescored)
    assert names[0] == "empathy_scorer" and len(names) == 2
    new_name = names[1]
    for sample in rescored.samples:
        first = sample.scores["empathy_scorer"]
        second = sample.scores[new_name]
        assert first.metadata["grader"] == LEXICON and second.metadata["grader"] == LENGTH
        assert first.metadata["judged_dialog"] == second.metadata["judged_dialog"]


def test_rescoring_a_judge_mode_log_says_why_it_cannot_grade(tmp_path: Path) -> None:
    [log] = eval(
        empathy(dataset=str(FIXTURE)), model=LEXICON, log_dir=str(tmp_path), display="none"
    )
    rescored = score(
        log, empathy_scorer(), model_roles={"grader": LENGTH}, action="append", display="none"
    )
    new_name = scorer_names(rescored)[1]
    assert rescored.results.scores[1].unscored_samples == len(rescored.samples)
    explanation = rescored.samples[0].scores[new_name].explanation
    assert "judge-mode sample" in explanation and "from_output=True" in explanation
