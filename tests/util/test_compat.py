"""The Inspect internals in `_util.compat`: fail loudly here when Inspect moves or changes one."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import Generate, Solver, TaskState, solver

from inspect_empathy._util.compat import PrerequisiteError, active_model


def test_prerequisite_error_is_an_exception_with_its_message() -> None:
    error = PrerequisiteError("plain message")
    assert isinstance(error, Exception)
    assert "plain message" in str(error)


def test_active_model_is_the_model_under_evaluation(tmp_path: Path) -> None:
    # an earlier eval in this process may leave its model active: each run sees its own
    seen: list[str] = []

    @solver
    def look() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            model = active_model()
            seen.append(str(model) if model is not None else "none")
            return state

        return solve

    task = Task(dataset=[Sample(input="hi")], solver=[look()])
    for model in ("empathy_baseline/lexicon", "empathy_baseline/length"):
        eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert seen == ["empathy_baseline/lexicon", "empathy_baseline/length"]


def test_loading_tasks_is_true_only_while_inspect_constructs_tasks_by_name(
    tmp_path: Path,
) -> None:
    from inspect_ai import task

    from inspect_empathy._util.compat import loading_tasks

    seen: list[bool] = []

    @task
    def probe_task() -> Task:
        seen.append(loading_tasks())
        return Task(dataset=[Sample(input="hi")])

    assert loading_tasks() is False
    probe_task()  # built in Python
    eval("probe_task", model="empathy_baseline/length", log_dir=str(tmp_path), display="none")
    assert seen == [False, True]
