"""Judge panels: several graders, each judge's score kept, mean or median, Krippendorff's alpha."""

import math
import statistics
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from inspect_ai import Task, eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    Logprob,
    Logprobs,
    ModelOutput,
    ModelUsage,
    TopLogprob,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from inspect_empathy import empathy_response, empathy_scorer, load_dialogs

FIXTURE = Path(__file__).parent / "fixtures" / "response" / "dialogs.jsonl"
LEXICON = "empathy_baseline/lexicon"
LENGTH = "empathy_baseline/length"
USAGE = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)


@solver
def keep_reply() -> Solver:
    """Leave the dialog as it is: the scorer grades the reply already in it."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return state

    return solve


def metrics(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    return {name: m.value for name, m in log.results.scores[0].metrics.items()}


def rounded(value: float) -> float:
    return float(min(5, max(1, math.floor(value + 0.5))))


def judge_values(log: EvalLog, names: list[str]) -> dict[str, list[float]]:
    return {
        name: [s.scores["empathy_scorer"].metadata["judges"][name]["value"] for s in log.samples]
        for name in names
    }


def test_two_judge_panel_shows_each_judge_the_mean_and_alpha(tmp_path: Path) -> None:
    task = Task(
        dataset=load_dialogs(FIXTURE),
        solver=keep_reply(),
        scorer=empathy_scorer(model=[LEXICON, LENGTH]),
    )
    [log] = eval(task, model=LEXICON, log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    for sample in log.samples:
        score = sample.scores["empathy_scorer"]
        judges = score.metadata["judges"]
        assert list(judges) == [LEXICON, LENGTH]
        for result in judges.values():
            assert result["method"] == "logprobs" and 1 <= result["value"] <= 5
        assert score.metadata["aggregate"] == "mean"
        assert score.value == pytest.approx(statistics.fmean(j["value"] for j in judges.values()))
    values = judge_values(log, [LEXICON, LENGTH])
    assert values[LEXICON] != values[LENGTH]  # the two floors disagree: a real panel
    expected_alpha = krippendorff.alpha(
        reliability_data=np.array([[rounded(v) for v in row] for row in values.values()]),
        level_of_measurement="ordinal",
        value_domain=[1, 2, 3, 4, 5],
    )
    results = metrics(log)
    assert results["judge_alpha"] == pytest.approx(expected_alpha)
    for name, scores in values.items():
        assert results[f"judge_mean({name})"] == pytest.approx(statistics.fmean(scores))
    panel = [float(s.scores["empathy_scorer"].value) for s in log.samples]
    assert results["mean"] == pytest.approx(statistics.fmean(panel))
    assert "spearman" in results  # the fixture's reference ratings still count in judge-style use


def test_panel_from_several_models_bound_to_the_grader_role(tmp_path: Path) -> None:
    [log] = eval(
        empathy_response(dataset=str(FIXTURE)),
        model=LENGTH, model_roles={"grader": [LEXICON, LENGTH]},
        log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    assert log.status == "success"
    results = metrics(log)
    assert {f"judge_mean({LEXICON})", f"judge_mean({LENGTH})", "judge_alpha"} <= set(results)
    for sample in log.samples:
        score = sample.scores["empathy_scorer"]
        judges = score.metadata["judges"]
        assert set(judges) == {LEXICON, LENGTH}
        both = judges[LEXICON]["value"] + judges[LENGTH]["value"]
        assert score.value == pytest.approx(both / 2)


def test_median_panel_and_the_same_model_twice(tmp_path: Path) -> None:
    task = Task(
        dataset=load_dialogs(FIXTURE),
        solver=keep_reply(),
        scorer=empathy_scorer(model=[LEXICON, LENGTH, LEXICON], aggregate="median"),
    )
    [log] = eval(task, model=LEXICON, log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    for sample in log.samples:
        score = sample.scores["empathy_scorer"]
        judges = score.metadata["judges"]
        assert list(judges) == [LEXICON, LENGTH, f"{LEXICON}#2"]
        assert score.value == pytest.approx(statistics.median(j["value"] for j in judges.values()))
        assert "panel median" in score.explanation


def mock_grader(text: str, top: dict[str, float] | None = None) -> ModelOutput:
    logprobs = None
    if top is not None:
        token = Logprob(
            token=text,
            logprob=math.log(top[text]),
            top_logprobs=[TopLogprob(token=t, logprob=math.log(p)) for t, p in top.items()],
        )
        logprobs = Logprobs(content=[token])
    return ModelOutput(
        model="mockllm/model",
        choices=[
            ChatCompletionChoice(
                message=ChatMessageAssistant(content=text), stop_reason="stop", logprobs=logprobs
            )
        ],
        usage=USAGE,
    )


def test_a_judge_that_fails_withholds_its_vote(tmp_path: Path) -> None:
    good = get_model(
        "mockllm/model", custom_outputs=[mock_grader("4", {"4": 0.5, "5": 0.5})], memoize=False
    )
    bad = get_model(
        "mockllm/model", custom_outputs=[mock_grader("I'd rather not rate this.")], memoize=False
    )
    task = Task(
        dataset=load_dialogs(FIXTURE)[:1],
        solver=keep_reply(),
        scorer=empathy_scorer(model=[good, bad]),
    )
    [log] = eval(task, model=LEXICON, log_dir=str(tmp_path), display="none")
    score = log.samples[0].scores["empathy_scorer"]
    judges = score.metadata["judges"]
    assert list(judges) == ["mockllm/model", "mockllm/model#2"]
    assert judges["mockllm/model"]["value"] == pytest.approx(4.5)
    assert judges["mockllm/model#2"]["value"] is None
    assert "no score" in judges["mockllm/model#2"]["unscored_reason"]
    assert score.value == pytest.approx(4.5)


def test_panel_bound_to_the_grader_role(tmp_path: Path) -> None:
    # two models bound to the role, as `--model-role grader=a,b` binds them
    [log] = eval(
        "inspect_empathy/empathy_response", task_args={"dataset": str(FIXTURE)},
        model=LEXICON, model_roles={"grader": [LEXICON, LENGTH]},
        log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    path = log.location
    log = read_eval_log(str(path))
    results = metrics(log)
    assert {f"judge_mean({LEXICON})", f"judge_mean({LENGTH})"} <= set(results)
    judges = log.samples[0].scores["empathy_scorer"].metadata["judges"]
    assert set(judges) == {LEXICON, LENGTH}
