"""Inspect tasks: the empathy rubric in judge mode."""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.solver import generate

from ._geval import DEFAULT_SAMPLES, Method, method_config
from .dataset import load_dialogs
from .scorer import empathy_scorer
from .solver import empathy_prompt


@task
def empathy(
    dataset: str = "default",
    method: Method = "auto",
    samples: int = DEFAULT_SAMPLES,
    cot: bool = False,
    shuffle: bool = False,
) -> Task:
    """Judge mode: the model under evaluation rates each dialog's last bot reply (1-5).

    Args:
      dataset: Bundled dataset name or path to a dialog file.
      method: G-Eval scoring: ``auto``, ``logprobs``, ``samples`` or ``parse``.
      samples: Completions per dialog for ``method=samples``.
      cot: Ask for brief reasoning before the score.
      shuffle: Shuffle the samples.
    """
    return Task(
        dataset=load_dialogs(dataset, shuffle=shuffle),
        solver=[empathy_prompt(cot=cot), generate()],
        scorer=empathy_scorer(method=method, samples=samples, cot=cot, from_output=True),
        config=method_config(method, samples),
        metadata={"mode": "judge", "method": method, "cot": cot},
    )
