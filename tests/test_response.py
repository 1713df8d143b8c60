"""Response mode and the empathy scorer on tasks that know nothing of this project."""

import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, read_eval_log, resolve_sample_attachments
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Logprob,
    Logprobs,
    ModelOutput,
    ModelUsage,
    TopLogprob,
    get_model,
)
from inspect_ai.scorer import match
from inspect_ai.solver import generate, system_message, use_tools
from inspect_ai.tool import ToolCall, tool

from inspect_empathy import DatasetError, empathy_response, empathy_scorer
from inspect_empathy.judge._rubric import render_prompt
from inspect_empathy.scorer import reply_dialog

FIXTURE = Path(__file__).parent / "fixtures" / "response" / "dialogs.jsonl"
MISSING_GRADER = "No model is bound to the 'grader' role"
LEXICON_REPLY = "That sounds really hard"
USAGE = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)


def metrics(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    return {name: m.value for name, m in log.results.scores[0].metrics.items()}


def run_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "INSPECT_LOG_DIR": str(tmp_path)}
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "INSPECT_EVAL_MODEL"):
        env.pop(key, None)
    return subprocess.run(
        [
            sys.executable, "-m", "inspect_ai", "eval", "inspect_empathy/empathy_response",
            "-T", f"dataset={FIXTURE}", "--display", "plain", "--log-dir", str(tmp_path), *args,
        ],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip


def test_response_mode_runs_offline_with_a_bound_grader(tmp_path: Path) -> None:
    # by its registered name with a role binding, as the command line runs it (README's
    # commands run it there: tests/test_readme.py)
    [log] = eval(
        "inspect_empathy/empathy_response", task_args={"dataset": str(FIXTURE)},
        model="empathy_baseline/lexicon", model_roles={"grader": "empathy_baseline/lexicon"},
        log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    log = read_eval_log(log.location)
    assert log.status == "success"
    assert log.eval.model_roles is not None and "grader" in log.eval.model_roles
    assert len(log.samples) == 6
    for sample in log.samples:
        score = sample.scores["empathy_scorer"]
        assert 1 <= float(score.value) <= 5
        # the reply graded is the one the model wrote, not the dataset's reference reply
        dialog = score.metadata["judged_dialog"]
        assert dialog.splitlines()[-1].startswith(f"BOT: {LEXICON_REPLY}")
        assert sample.target and sample.target not in dialog  # the reference reply
        assert score.metadata["grader"] == "empathy_baseline/lexicon"
        assert "self_graded" not in score.metadata
    values = metrics(log)
    for name in ["mean", "stderr", *(f"share_{k}" for k in range(1, 6)), "share_ge_4"]:
        assert name in values, name
    assert "spearman" not in values  # the reference rating is not the new reply's rating


@pytest.mark.slow
def test_cli_response_mode_refuses_without_a_grader(tmp_path: Path) -> None:
    run = run_cli(tmp_path, "--model", "empathy_baseline/lexicon")
    assert run.returncode != 0
    output = " ".join((run.stdout + run.stderr).split())
    assert MISSING_GRADER in output
    assert "biased" in output and "self_grading=true" in output
    assert not list(tmp_path.glob("*.eval"))  # refused before anything ran


def test_self_grading_is_allowed_when_asked_for(tmp_path: Path) -> None:
    # by name, with the task argument as the command line passes it (a string)
    [log] = eval(
        "inspect_empathy/empathy_response",
        task_args={"dataset": str(FIXTURE), "self_grading": "true"},
        model="empathy_baseline/lexicon", log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    log = read_eval_log(log.location)
    assert log.status == "success"
    score = log.samples[0].scores["empathy_scorer"]
    assert score.metadata["self_graded"] is True


def test_task_object_without_grader_fails_before_the_model_replies(tmp_path: Path) -> None:
    # a Task built outside eval() cannot see the roles yet: each sample checks first
    task = empathy_response(dataset=str(FIXTURE))
    [log] = eval(task, model="empathy_baseline/lexicon", log_dir=str(tmp_path), display="none")
    assert log.status == "error"
    assert log.error is not None and MISSING_GRADER in log.error.message
    assert not log.stats.model_usage  # no reply was generated, nothing was graded


def test_task_by_name_without_grader_refuses_at_construction(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=MISSING_GRADER):
        eval(
            "inspect_empathy/empathy_response", task_args={"dataset": str(FIXTURE)},
            model="empathy_baseline/lexicon", log_dir=str(tmp_path), display="none",
        )  # fmt: skip
    assert not list(tmp_path.glob("*.eval"))


def test_task_built_in_python_after_an_eval_set_waits_for_its_roles(tmp_path: Path) -> None:
    # eval_set() leaves its last model active after it returns; a response task built in
    # Python afterwards must not read that run's (empty) roles as its own
    from inspect_ai import eval_set

    from inspect_empathy import empathy

    ok, _ = eval_set(
        empathy(dataset=str(FIXTURE)), model=["empathy_baseline/lexicon"],
        log_dir=str(tmp_path / "set"), display="none",
    )  # fmt: skip
    assert ok
    task = empathy_response(dataset=str(FIXTURE))  # no grader bound yet: no error here
    [log] = eval(
        task, model="empathy_baseline/length", model_roles={"grader": "empathy_baseline/lexicon"},
        log_dir=str(tmp_path / "response"), display="none",
    )  # fmt: skip
    assert log.status == "success"


def test_samples_end_with_the_user_turn_and_keep_the_reference(tmp_path: Path) -> None:
    dataset = empathy_response(dataset=str(FIXTURE), self_grading=True).dataset
    first = dataset[0]
    assert isinstance(first.input, list) and first.input[-1].role == "user"
    assert first.target.startswith("I'm so sorry")  # the dataset's reply, for reference
    assert "reference_reply" not in first.metadata
    assert first.metadata["reference_rating"] == 5.0
    assert first.metadata["human_rating"] is None


def test_system_prompt_goes_to_the_model_verbatim_and_not_to_the_grader(tmp_path: Path) -> None:
    prompt = 'Be warm. {"braces": "stay"} }'
    [log] = eval(
        empathy_response(dataset=str(FIXTURE), system_prompt=prompt),
        model="empathy_baseline/lexicon", model_roles={"grader": "empathy_baseline/length"},
        log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    assert log.status == "success"
    sample = log.samples[0]
    assert isinstance(sample.messages[0], ChatMessageSystem)
    assert sample.messages[0].text == prompt
    score = sample.scores["empathy_scorer"]
    assert "message 0: system message left out" in score.metadata["notes"]
    assert "Be warm" not in score.metadata["judged_dialog"]
    assert score.metadata["grader"] == "empathy_baseline/length"


def test_system_prompt_can_be_a_file(tmp_path: Path) -> None:
    path = tmp_path / "system.txt"
    path.write_text("You are a caring listener.", encoding="utf-8")
    [log] = eval(
        empathy_response(dataset=str(FIXTURE), system_prompt=str(path), self_grading=True),
        model="empathy_baseline/lexicon", limit=1, log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    assert log.samples[0].messages[0].text == "You are a caring listener."


def test_group_by_reports_metrics_for_each_group(tmp_path: Path) -> None:
    [log] = eval(
        empathy_response(dataset=str(FIXTURE), group_by="emotion"),
        model="empathy_baseline/length", model_roles={"grader": "empathy_baseline/lexicon"},
        log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    assert log.status == "success"
    values = metrics(log)
    by_group: dict[str, list[float]] = {}
    for sample in log.samples:
        value = float(sample.scores["empathy_scorer"].value)
        by_group.setdefault(sample.metadata["emotion"], []).append(value)
    assert set(by_group) == {"grief", "frustration", "anxiety", "pride", "anger"}
    for group, scores in by_group.items():
        assert values[f"mean(emotion={group})"] == pytest.approx(statistics.fmean(scores))
        share = sum(math.floor(v + 0.5) >= 4 for v in scores) / len(scores)
        assert values[f"share_ge_4(emotion={group})"] == pytest.approx(share)
        assert f"stderr(emotion={group})" in values
    assert len(by_group["grief"]) == 2
    everything = [v for scores in by_group.values() for v in scores]
    assert values["mean"] == pytest.approx(statistics.fmean(everything))


def test_group_by_a_field_some_samples_lack_is_refused_up_front(tmp_path: Path) -> None:
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    del record["metadata"]["emotion"]
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(record)]) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"1 of 2 samples have no 'emotion'.*resp-02"):
        empathy_response(dataset=str(path), group_by="emotion", self_grading=True)


def test_level_shares_match_the_sample_scores(tmp_path: Path) -> None:
    [log] = eval(
        empathy_response(dataset=str(FIXTURE)),
        model="empathy_baseline/lexicon", model_roles={"grader": "empathy_baseline/lexicon"},
        log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    values = metrics(log)
    scores = [float(s.scores["empathy_scorer"].value) for s in log.samples]
    rounded = [min(5, max(1, math.floor(v + 0.5))) for v in scores]
    for level in range(1, 6):
        assert values[f"share_{level}"] == pytest.approx(rounded.count(level) / len(scores))
    assert values["share_ge_4"] == pytest.approx(sum(r >= 4 for r in rounded) / len(scores))
    assert values["stderr"] == pytest.approx(statistics.stdev(scores) / math.sqrt(len(scores)))


# --- the scorer in a task that knows nothing of this project -------------------------------


@tool
def lookup_pet_advice():
    async def execute(topic: str) -> str:
        """Look up advice on a pet topic.

        Args:
          topic: The topic to look up.
        """
        return "TOOL RESULT: grief resources for pet owners"

    return execute


def with_usage(output: ModelOutput) -> ModelOutput:
    output.usage = USAGE
    return output


def grader_output(top: dict[str, float]) -> ModelOutput:
    token = max(top, key=lambda t: top[t])
    logprob = Logprob(
        token=token,
        logprob=math.log(top[token]),
        top_logprobs=[TopLogprob(token=t, logprob=math.log(p)) for t, p in top.items()],
    )
    return ModelOutput(
        model="mockllm/model",
        choices=[
            ChatCompletionChoice(
                message=ChatMessageAssistant(content=token),
                stop_reason="stop",
                logprobs=Logprobs(content=[logprob]),
            )
        ],
        usage=USAGE,
    )


FINAL_REPLY = (
    "I'm so sorry about Biscuit. Fourteen years is a lifetime together. How are you doing?"
)


def test_scorer_added_to_an_unrelated_task_grades_the_final_reply(tmp_path: Path) -> None:
    evaluated = get_model(
        "mockllm/model",
        custom_outputs=[
            with_usage(
                ModelOutput.for_tool_call(
                    "mockllm/model", "lookup_pet_advice", {"topic": "losing a dog"}
                )
            ),
            with_usage(ModelOutput.from_content("mockllm/model", FINAL_REPLY)),
        ],
        memoize=False,
    )
    grader = get_model(
        "mockllm/model",
        custom_outputs=[grader_output({"4": 0.6, "5": 0.3, "3": 0.1})],
        memoize=False,
    )
    task = Task(
        dataset=[
            Sample(
                input="My dog Biscuit died yesterday. We had him for fourteen years.",
                target="sorry",
            )
        ],
        solver=[
            system_message("You are a support assistant. Keep answers short."),
            use_tools(lookup_pet_advice()),
            generate(),
        ],
        scorer=[match(location="any", ignore_case=True), empathy_scorer()],
    )
    [log] = eval(
        task, model=evaluated, model_roles={"grader": grader}, log_dir=str(tmp_path),
        display="none",
    )  # fmt: skip
    assert log.status == "success", log.error
    sample = resolve_sample_attachments(log.samples[0])
    roles = [m.role for m in sample.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert sample.scores["match"].value == "C"
    score = sample.scores["empathy_scorer"]
    assert score.value == pytest.approx(4 * 0.6 + 5 * 0.3 + 3 * 0.1)
    assert score.metadata["method"] == "logprobs"
    assert score.metadata["judged_dialog"] == (
        f"USER: My dog Biscuit died yesterday. We had him for fourteen years.\nBOT: {FINAL_REPLY}"
    )
    assert score.metadata["notes"] == [
        "message 0: system message left out",
        "message 2: 1 tool call(s) left out",
        "message 2: text before tool call(s) left out",
        "message 3: tool result left out",
    ]
    # the grader saw exactly the rubric with that dialog
    grader_events = [e for e in sample.events if e.event == "model" and e.role == "grader"]
    assert len(grader_events) == 1
    assert grader_events[0].input[-1].text == render_prompt(score.metadata["judged_dialog"])
    info = [e for e in sample.events if e.event == "info" and e.source == "empathy_scorer"]
    assert info and info[0].data["notes"] == score.metadata["notes"]
    names = {s.name for s in log.results.scores}
    assert names == {"match", "empathy_scorer"}


def test_scorer_without_a_grader_on_an_unrelated_task_flags_self_grading(tmp_path: Path) -> None:
    task = Task(
        dataset=[Sample(input="I feel lonely since I moved to a new city.")],
        solver=generate(),
        scorer=empathy_scorer(),
    )
    [log] = eval(task, model="empathy_baseline/lexicon", log_dir=str(tmp_path), display="none")
    score = log.samples[0].scores["empathy_scorer"]
    assert score.metadata["self_graded"] is True
    assert score.metadata["grader"] == "empathy_baseline/lexicon"
    assert 1 <= float(score.value) <= 5


def test_required_role_without_binding_fails_the_sample(tmp_path: Path) -> None:
    from inspect_ai.model import ModelRole

    task = Task(
        dataset=[Sample(input="I feel lonely since I moved to a new city.")],
        solver=generate(),
        scorer=empathy_scorer(model_role=ModelRole("grader", required=True)),
    )
    [log] = eval(task, model="empathy_baseline/lexicon", log_dir=str(tmp_path), display="none")
    assert log.status == "error"
    assert log.error is not None and MISSING_GRADER in log.error.message


def assistant_with_tool_call(text: str = "") -> ChatMessageAssistant:
    call = ToolCall(id="c1", function="lookup", arguments={})
    return ChatMessageAssistant(content=text, tool_calls=[call])


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([ChatMessageUser(content="hi")], "no assistant reply"),
        (
            [
                ChatMessageUser(content="my exam went badly"),
                ChatMessageAssistant(content="Let me look something up."),
                assistant_with_tool_call(),
                ChatMessageTool(content="result", tool_call_id="c1", function="lookup"),
            ],
            "no text (only tool calls)",
        ),
        (
            [
                ChatMessageUser(content="my exam went badly"),
                ChatMessageAssistant(content="Sorry to hear that."),
                ChatMessageUser(content="are you there?"),
            ],
            "user spoke after the last assistant reply",
        ),
    ],
)
def test_conversations_without_a_gradable_reply(messages: list, problem: str) -> None:
    _, _, found = reply_dialog(messages)
    assert found is not None and problem in found


def test_a_user_quoting_the_rubric_is_still_graded(tmp_path: Path) -> None:
    """Judge-mode samples are recognised by what the task put there, not by text a
    user can type: a user message that quotes the rubric leaves the reply gradable."""
    quoted = render_prompt("USER: hi\nBOT: hello")
    messages = [ChatMessageUser(content=quoted), ChatMessageAssistant(content="That is a lot.")]
    assert reply_dialog(messages)[2] is None
    task = Task(
        dataset=[Sample(input=messages, id="quoted")],
        solver=[],
        scorer=empathy_scorer(model="empathy_baseline/lexicon"),
    )
    [log] = eval(task, model="empathy_baseline/length", log_dir=str(tmp_path), display="none")
    [sample] = log.samples or []
    value = sample.scores["empathy_scorer"].value  # type: ignore[index]
    assert isinstance(value, float) and 1.0 <= value <= 5.0


def test_the_reply_is_the_final_message_not_the_steps_before_it() -> None:
    messages = [
        ChatMessageSystem(content="sys"),
        ChatMessageUser(content="my exam went badly"),
        assistant_with_tool_call("Let me check something first."),
        ChatMessageTool(content="result", tool_call_id="c1", function="lookup"),
        ChatMessageAssistant(content="That sounds disappointing. How do you feel?"),
    ]
    turns, notes, problem = reply_dialog(messages)
    assert problem is None
    assert [(t.role, t.content) for t in turns] == [
        ("user", "my exam went badly"),
        ("bot", "That sounds disappointing. How do you feel?"),
    ]
    assert "message 2: text before tool call(s) left out" in notes
    assert len(notes) == 4


def test_earlier_exchanges_keep_their_text() -> None:
    messages = [
        ChatMessageUser(content="hi"),
        assistant_with_tool_call("Hello! Checking your account."),
        ChatMessageTool(content="ok", tool_call_id="c1", function="lookup"),
        ChatMessageUser(content="my exam went badly"),
        ChatMessageAssistant(content="I'm sorry. Want to talk about it?"),
    ]
    turns, _, problem = reply_dialog(messages)
    assert problem is None
    assert [t.content for t in turns] == [
        "hi",
        "Hello! Checking your account.",
        "my exam went badly",
        "I'm sorry. Want to talk about it?",
    ]


def test_unscored_when_there_is_no_reply(tmp_path: Path) -> None:
    from inspect_ai.solver import Generate, TaskState, solver

    @solver
    def no_reply():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            return state

        return solve

    task = Task(
        dataset=[Sample(input="I feel lonely.")], solver=no_reply(), scorer=empathy_scorer()
    )
    [log] = eval(
        task, model="empathy_baseline/lexicon", model_roles={"grader": "empathy_baseline/lexicon"},
        log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    score = log.samples[0].scores["empathy_scorer"]
    assert math.isnan(float(score.value))
    assert "no assistant reply" in score.explanation
    assert log.results.scores[0].unscored_samples == 1
