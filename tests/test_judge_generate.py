"""judge_generate: only a response with no completion becomes an unscored answer."""

from __future__ import annotations

from typing import Any

import pytest
from inspect_ai.model import ChatMessageUser, ModelName
from inspect_ai.solver import TaskState

from inspect_empathy.solver import answered_without_completion, judge_generate


def state() -> TaskState:
    return TaskState(
        model=ModelName("openai/gpt-4o-mini"),
        sample_id="s",
        epoch=1,
        input="hi",
        messages=[ChatMessageUser(content="hi")],
    )


def raising(ex: BaseException, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A judge whose call raises ``ex`` (judge_generate asks the judge itself)."""

    async def ask(*args: Any, **kwargs: Any) -> Any:
        raise ex

    monkeypatch.setattr("inspect_empathy.solver.get_model", lambda: "openai/gpt-4o-mini")
    monkeypatch.setattr("inspect_empathy.solver.ask_judge", ask)

    async def generate(state: TaskState, **kwargs: Any) -> TaskState:
        raise AssertionError("judge_generate asks the judge itself")

    return generate


@pytest.mark.parametrize(
    "ex",
    [
        TypeError("Cannot instantiate typing.Union"),
        KeyError("choices"),
        IndexError("list index out of range"),  # raised here, not while reading a response
        AttributeError("'NoneType' object has no attribute 'content'"),
    ],
)
async def test_other_errors_stay_errors(
    ex: BaseException, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(type(ex)):
        await judge_generate()(state(), raising(ex, monkeypatch))


def test_only_errors_raised_in_inspects_model_code_count() -> None:
    try:
        [][0]
    except IndexError as ex:
        assert not answered_without_completion(ex)
