"""Inspect entry point: importing this registers the plugin's tasks, scorers and models."""

# ruff: noqa: F401

from inspect_ai.model import ModelAPI, modelapi

from .reducer import empathy_mean
from .scorer import empathy_scorer
from .solver import empathy_prompt
from .tasks import empathy, empathy_response


@modelapi(name="empathy_baseline")
def empathy_baseline() -> type[ModelAPI]:
    """Offline baseline judges (``empathy_baseline/lexicon``, ``empathy_baseline/length``)."""
    from .judge.baseline import EmpathyBaselineAPI

    return EmpathyBaselineAPI
