"""Variants of the ``empathy`` task, to attribute its overhead over the bare task.

Each variant changes one thing; ``overhead_breakdown.py`` runs them against the bare
task and the real ``empathy`` task. They are measurement tools, not proposed API.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from inspect_empathy import load_dialogs
from inspect_empathy._geval import method_config
from inspect_empathy._rubric import render_dialog, render_prompt, turns_from_messages
from inspect_empathy.scorer import empathy_scorer
from inspect_empathy.solver import empathy_prompt


@solver
def prompt_and_generate(keep_transcript: bool = True) -> Solver:
    """``empathy_prompt`` and ``generate`` in one solver (one span, one state event)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        turns, _ = turns_from_messages(state.messages)
        dialog = render_dialog(turns)
        state.messages = [ChatMessageUser(content=render_prompt(dialog))]
        if keep_transcript:
            state.metadata.setdefault("transcript", dialog)
        return await generate(state)

    return solve


def _without_transcript(dataset: Any) -> MemoryDataset:
    samples = []
    for sample in dataset:
        metadata = dict(sample.metadata or {})
        metadata.pop("transcript", None)
        samples.append(sample.model_copy(update={"metadata": metadata}))
    return MemoryDataset(samples)


def _prerendered(dataset: Any, keep_transcript: bool = True) -> MemoryDataset:
    samples = []
    for sample in dataset:
        turns, _ = turns_from_messages(sample.input)  # type: ignore[arg-type]
        prompt = render_prompt(render_dialog(turns))
        metadata = dict(sample.metadata or {})
        if not keep_transcript:
            metadata.pop("transcript", None)
        samples.append(Sample(id=sample.id, input=prompt, metadata=metadata))
    return MemoryDataset(samples)


@task
def one_solver(dataset: str) -> Task:
    """empathy with prompt + generate merged into one solver."""
    return Task(
        dataset=load_dialogs(dataset),
        solver=prompt_and_generate(),
        scorer=empathy_scorer(from_output=True),
        config=method_config("auto"),
    )


@task
def no_transcript(dataset: str) -> Task:
    """empathy without the ``transcript`` copy of the dialog in sample metadata."""
    return Task(
        dataset=_without_transcript(load_dialogs(dataset)),
        solver=[empathy_prompt(), generate()],
        scorer=empathy_scorer(from_output=True),
        config=method_config("auto"),
    )


@task
def one_solver_no_transcript(dataset: str) -> Task:
    """Both changes: one solver and no ``transcript`` metadata."""
    return Task(
        dataset=_without_transcript(load_dialogs(dataset)),
        solver=prompt_and_generate(keep_transcript=False),
        scorer=empathy_scorer(from_output=True),
        config=method_config("auto"),
    )


@task
def prerendered(dataset: str) -> Task:
    """Rubric prompt rendered at load time, plain ``generate()``, the plugin's scorer."""
    return Task(
        dataset=_prerendered(load_dialogs(dataset)),
        solver=generate(),
        scorer=empathy_scorer(from_output=True),
        config=method_config("auto"),
    )


@task
def prerendered_no_transcript(dataset: str) -> Task:
    """Prompt rendered at load time and no ``transcript`` metadata (the proposed fix)."""
    return Task(
        dataset=_prerendered(load_dialogs(dataset), keep_transcript=False),
        solver=generate(),
        scorer=empathy_scorer(from_output=True),
        config=method_config("auto"),
    )


VARIANTS = {
    "one_solver": one_solver,
    "no_transcript": no_transcript,
    "one_solver_no_transcript": one_solver_no_transcript,
    "prerendered": prerendered,
    "prerendered_no_transcript": prerendered_no_transcript,
}
