"""Judge mode end to end: the CLI with the baseline judge, eval() with mock logprobs."""

import json
import math
from pathlib import Path

import pytest
from inspect_ai import eval
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

from inspect_empathy import empathy
from inspect_empathy.dialogs import JUDGE_DIALOG_KEY, JUDGE_PROMPT_KEY
from inspect_empathy.judge._rubric import render_prompt


def sent_prompts(log: EvalLog) -> dict[str, list[list[str]]]:
    """Each sample's model calls, as the text of the messages each call sent."""
    log = read_eval_log(log.location, resolve_attachments=True)
    return {
        str(sample.id): [
            [m.text for m in event.input] for event in sample.events if event.event == "model"
        ]
        for sample in log.samples or []
    }


AGREEMENT = ["spearman", "kendall", "pearson", "mae", "rmse", "qwk", "exact", "within_one"]


def write_dialogs(path: Path, ratings: list[int | None]) -> Path:
    lines = []
    for i, rating in enumerate(ratings):
        record = {
            "id": f"d{i}",
            "turns": [
                {"role": "user", "content": f"I lost my job today ({i})."},
                {
                    "role": "assistant",
                    "content": "That sounds really hard. How are you holding up?",
                },
            ],
        }
        if rating is not None:
            record["rating"] = rating
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def judge_output(top: dict[str, float], text: str | None = None) -> ModelOutput:
    token = text if text is not None else max(top, key=lambda t: top[t])
    content = [
        Logprob(
            token=token,
            logprob=math.log(top.get(token, 1e-9)),
            top_logprobs=[TopLogprob(token=t, logprob=math.log(p)) for t, p in top.items()],
        )
    ]
    return ModelOutput(
        model="mockllm/model",
        choices=[
            ChatCompletionChoice(
                message=ChatMessageAssistant(content=token),
                logprobs=Logprobs(content=content),
                stop_reason="stop",
            )
        ],
        usage=ModelUsage(input_tokens=500, output_tokens=1, total_tokens=501),
    )


def metrics(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    return {name: m.value for name, m in log.results.scores[0].metrics.items()}


def test_run_by_name_with_baseline_judge_writes_agreement_metrics(tmp_path: Path) -> None:
    # by its registered name, as the command line runs it (README's commands run it there:
    # tests/test_readme.py)
    [log] = eval(
        "inspect_empathy/empathy", model="empathy_baseline/lexicon", limit=40,
        log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    assert log.status == "success"
    log = read_eval_log(log.location)
    values = metrics(log)
    for name in AGREEMENT:
        assert name in values and math.isfinite(values[name]), name
    from inspect_empathy._util.summary import summary_lines

    assert "n_human" not in values  # a count: the end-of-task line says it
    assert "40 of 40 samples scored (logprobs 40), 40 with human ratings" in summary_lines(log)[0]
    assert values["spearman"] > 0  # the lexicon floor does track the reference ratings
    sample = log.samples[0]
    assert sample.scores["empathy_scorer"].metadata["method"] == "logprobs"


def test_eval_with_mock_logprobs_scores_the_weighted_value(tmp_path: Path) -> None:
    dataset = write_dialogs(tmp_path / "d.jsonl", [4, 5])
    outputs = [judge_output({"4": 0.6, "5": 0.3, "3": 0.1}), judge_output({"5": 0.9, "4": 0.1})]
    model = get_model("mockllm/model", custom_outputs=outputs)
    [log] = eval(empathy(dataset=str(dataset)), model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    values = {s.id: s.scores["empathy_scorer"].value for s in log.samples}
    assert values == {"d0": pytest.approx(4.2), "d1": pytest.approx(4.9)}
    score = log.samples[0].scores["empathy_scorer"]
    assert score.metadata["distribution"] == {"1": 0, "2": 0, "3": 0.1, "4": 0.6, "5": 0.3}
    # what the Score keeps (Inspect holds every Score to the end of the run): no copy of
    # the human rating, which is the sample's, and no `parsed` (the answer shows it); the
    # judge's words, which the answer shows after the reply rated, for compare
    assert set(score.metadata) == {"method", "distribution", "score_token_mass", "grader_answer"}
    assert log.samples[0].metadata["human_rating"] == 4.0
    assert metrics(log)["mae"] == pytest.approx((0.2 + 0.1) / 2)
    # the judge saw the rubric with the dialog, as one user message; the sample's input
    # and messages are the conversation and the judge's answer
    [[prompt]] = sent_prompts(log)["d0"]
    assert prompt.startswith("You will be given one dialog")
    assert "USER: I lost my job today (0).\nBOT: That sounds really hard." in prompt
    sample = log.samples[0]
    assert sample.input == "USER: I lost my job today (0).\nBOT: That sounds really hard. " + (
        "How are you holding up?"
    )
    assert [(m.role, m.text) for m in sample.messages] == [
        ("user", sample.input), ("assistant", "4"),
    ]  # fmt: skip


def test_unscorable_output_is_unscored_and_counted(tmp_path: Path) -> None:
    dataset = write_dialogs(tmp_path / "d.jsonl", [4, 2, 3])
    outputs = [
        judge_output({"4": 1.0}),
        judge_output({"7": 1.0}),
        judge_output({"x": 1.0}, text="I would rather not rate this."),
    ]
    model = get_model("mockllm/model", custom_outputs=outputs)
    [log] = eval(empathy(dataset=str(dataset)), model=model, log_dir=str(tmp_path), display="none")
    assert log.results is not None
    result = log.results.scores[0]
    assert (result.scored_samples, result.unscored_samples) == (1, 2)
    reasons = {s.id: s.scores["empathy_scorer"].explanation for s in log.samples}
    assert "outside 1-5" in reasons["d1"] and "no score" in reasons["d2"]
    assert metrics(log)["mean"] == pytest.approx(4.0)


def test_dataset_without_ratings_shows_only_judge_metrics(tmp_path: Path) -> None:
    dataset = write_dialogs(tmp_path / "d.jsonl", [None, None])
    [log] = eval(
        empathy(dataset=str(dataset)), model="empathy_baseline/lexicon", log_dir=str(tmp_path),
        display="none",
    )  # fmt: skip
    values = metrics(log)
    assert "mean" in values
    assert not set(AGREEMENT) & set(values)
    assert all(math.isfinite(v) for v in values.values())


@pytest.mark.parametrize("method", ["samples", "parse", "logprobs"])
def test_every_method_runs_offline_with_the_baseline(tmp_path: Path, method: str) -> None:
    [log] = eval(
        empathy(method=method, completions=5), model="empathy_baseline/lexicon", limit=10,
        log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    assert log.status == "success"
    score = log.samples[0].scores["empathy_scorer"]
    assert score.metadata["method"] == method
    if method == "samples":
        assert score.metadata["n_parsed"] == 5
        assert len(log.samples[0].output.choices) == 5
    if method == "parse":
        assert float(score.value).is_integer()


def test_cot_variant_scores_from_the_last_line(tmp_path: Path) -> None:
    [log] = eval(
        empathy(cot=True), model="empathy_baseline/lexicon", limit=5, log_dir=str(tmp_path),
        display="none",
    )  # fmt: skip
    sample = log.samples[0]
    [[prompt]] = sent_prompts(log)[str(sample.id)]
    assert "Score: N" in prompt and prompt == render_prompt(str(sample.input), True)
    assert sample.output.completion.splitlines()[-1].startswith("Score: ")
    assert sample.scores["empathy_scorer"].metadata["method"] == "logprobs"


@pytest.mark.parametrize("cot", [False, True])
def test_every_input_sends_the_same_prompts(tmp_path: Path, cot: bool) -> None:
    kwargs = dict(model="empathy_baseline/lexicon", limit=40, log_dir=str(tmp_path), display="none")
    [dialog_log] = eval(empathy(cot=cot, input="dialog"), **kwargs)
    [prompt_log] = eval(empathy(cot=cot, input="prompt"), **kwargs)
    [default_log] = eval(empathy(cot=cot), **kwargs)
    logs = (default_log, prompt_log, dialog_log)
    assert all(log.status == "success" for log in logs)
    assert [log.eval.metadata["input"] for log in logs] == ["conversation", "prompt", "dialog"]
    sent = [sent_prompts(log) for log in logs]
    assert len(sent[0]) == 40 and sent[0] == sent[1] == sent[2]
    by_id = [{s.id: s for s in log.samples} for log in logs]
    for sample in default_log.samples:
        prompt, dialog = by_id[1][sample.id], by_id[2][sample.id]
        assert isinstance(sample.input, str) and sample.input.startswith("USER: ")
        assert sent[0][str(sample.id)] == [[render_prompt(sample.input, cot)]]
        assert prompt.input == render_prompt(sample.input, cot)
        assert not isinstance(dialog.input, str)
        for other in (prompt, dialog):
            assert sample.scores["empathy_scorer"].value == other.scores["empathy_scorer"].value
            assert sample.metadata["human_rating"] == other.metadata["human_rating"]
            assert other.metadata[JUDGE_PROMPT_KEY] is True  # dialog: the solver's swap
        assert sample.metadata[JUDGE_DIALOG_KEY] is True
        assert JUDGE_PROMPT_KEY not in sample.metadata
        assert "transcript" not in sample.metadata and "transcript" not in prompt.metadata
    assert metrics(default_log) == metrics(prompt_log) == metrics(dialog_log)


def test_default_judge_mode_is_generate_alone_on_the_conversation(tmp_path: Path) -> None:
    [log] = eval(
        empathy(), model="empathy_baseline/lexicon", limit=3, log_dir=str(tmp_path),
        display="none",
    )  # fmt: skip
    assert [step.solver for step in log.plan.steps] == ["inspect_empathy/judge_generate"]
    sample = log.samples[0]
    assert sample.messages[0].role == "user" and sample.messages[0].text == sample.input
    assert sample.input.startswith("USER: ") and "\nBOT: " in sample.input
    assert "Evaluation Form" not in sample.input
    assert set(sample.metadata) >= {"human_rating", "reply_words", JUDGE_DIALOG_KEY}
    # the bundled ratings are on 1-5: no raw rating or scale repeating human_rating
    assert not {"human_rating_raw", "human_rating_scale"} & set(sample.metadata)
    assert "transcript" not in sample.metadata
    # the sample list shows id, the conversation, human rating, answer and score
    view = log.eval.viewer.task_samples_view  # type: ignore[union-attr]
    assert [(c.id, c.visible) for c in view.columns][:5] == [  # type: ignore[union-attr]
        ("sampleId", True), ("input", True), ("target", True), ("answer", True),
        ("score__empathy_scorer__empathy_scorer", True),
    ]  # fmt: skip
    [prompt_log] = eval(
        empathy(input="prompt"), model="empathy_baseline/lexicon", limit=1,
        log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    # with the rubric as input every input opens alike: the column is hidden
    view = prompt_log.eval.viewer.task_samples_view  # type: ignore[union-attr]
    assert ("input", False) in [(c.id, c.visible) for c in view.columns]  # type: ignore[union-attr]


def test_headline_metric_is_somers_d_all_with_human_ratings(tmp_path: Path) -> None:
    [log] = eval(
        empathy(), model="empathy_baseline/lexicon", limit=20, log_dir=str(tmp_path),
        display="none",
    )  # fmt: skip
    assert log.eval.headline_metric is not None
    assert log.eval.headline_metric.metric == "somers_d_all"
    assert log.results is not None and log.results.headline is not None
    assert log.results.headline.metric == "somers_d_all"
    assert log.results.headline.scorer == "empathy_scorer"


def test_no_headline_declared_without_human_ratings(tmp_path: Path) -> None:
    dataset = write_dialogs(tmp_path / "d.jsonl", [None, None])
    task = empathy(dataset=str(dataset))
    assert task.headline_metric is None  # Inspect's default (the mean), and no warning


@pytest.mark.parametrize("input", ["conversation", "prompt"])
def test_samples_top_up_resends_exactly_the_prompt_the_judge_got(
    tmp_path: Path, input: str
) -> None:
    dataset = write_dialogs(tmp_path / "d.jsonl", [4, 2])
    # mockllm ignores num_choices: one choice per call, so the judge is asked twice more
    outputs = [judge_output({k: 1.0}) for k in "435423"]
    model = get_model("mockllm/model", custom_outputs=outputs)
    [log] = eval(
        empathy(dataset=str(dataset), method="samples", completions=3, input=input),
        model=model, log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    assert log.status == "success"
    log = read_eval_log(log.location, resolve_attachments=True)
    for sample in log.samples:
        calls = [e for e in sample.events if e.event == "model"]
        assert len(calls) == 3
        prompt = sample.input if input == "prompt" else render_prompt(str(sample.input))
        for call in calls:
            assert [(m.role, m.text) for m in call.input] == [("user", prompt)]
        assert sample.scores["empathy_scorer"].metadata["n_parsed"] == 3
    # the two samples' calls interleave: together they drew the six scores above
    values = [s.scores["empathy_scorer"].value for s in log.samples]
    assert sum(3 * v for v in values) == pytest.approx(4 + 3 + 5 + 4 + 2 + 3)


def test_unknown_input_is_refused() -> None:
    with pytest.raises(Exception, match="input must be 'conversation', 'prompt' or 'dialog'"):
        empathy(input="chat")  # type: ignore[arg-type]


JUDGE_PATH_MODULES = [
    "tasks.py", "solver.py", "dialogs.py", "dataset/__init__.py", "dataset/_dataset.py",
    "judge/baseline.py", "judge/_rubric.py", "_registry.py",
]  # fmt: skip


@pytest.mark.parametrize("module", JUDGE_PATH_MODULES)
def test_judge_mode_modules_import_no_numpy_scipy_pandas_at_module_level(module: str) -> None:
    # Inspect imports every installed plugin at start-up; numpy, scipy and pandas are
    # imported where the metrics and the comparison use them, not on this path
    import ast

    from test_layers import imported_from

    import inspect_empathy

    tree = ast.parse((Path(inspect_empathy.__file__).parent / module).read_text("utf-8"))
    heavy = {"numpy", "scipy", "pandas"}
    found = []
    for node in tree.body:  # module level only
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in heavy]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and (node.module or "").split(".")[0] in heavy:
                found.append(node.module)
            target = imported_from(Path(module).parent.parts, node)
            if node.level and target in ("stats.metrics", "compare"):
                found.append(target)  # both import numpy at module level
    assert found == [], found


def test_a_system_message_before_judge_generate_is_sent_with_the_rubric(tmp_path: Path) -> None:
    from inspect_ai import task_with
    from inspect_ai.solver import system_message

    from inspect_empathy.solver import judge_generate

    dataset = write_dialogs(tmp_path / "d.jsonl", [4])
    strict = task_with(
        empathy(dataset=str(dataset)), solver=[system_message("Be strict."), judge_generate()]
    )
    [log] = eval(strict, model="empathy_baseline/lexicon", log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    [sample] = log.samples
    [[system, prompt]] = sent_prompts(log)[str(sample.id)]
    assert system == "Be strict." and prompt == render_prompt(str(sample.input))
    assert sample.scores["empathy_scorer"].value is not None


def test_judge_generate_refuses_when_the_dialog_input_was_replaced(tmp_path: Path) -> None:
    from inspect_ai import task_with
    from inspect_ai.model import ChatMessageUser
    from inspect_ai.solver import Generate, Solver, TaskState, solver

    from inspect_empathy.solver import judge_generate

    @solver
    def replace() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.messages = [ChatMessageUser(content="something else")]
            return state

        return solve

    dataset = write_dialogs(tmp_path / "d.jsonl", [4])
    task = task_with(empathy(dataset=str(dataset)), solver=[replace(), judge_generate()])
    [log] = eval(task, model="empathy_baseline/lexicon", log_dir=str(tmp_path), display="none")
    assert log.status == "error" and log.error is not None
    assert "no user message holds the dialog input" in log.error.message
