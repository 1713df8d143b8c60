"""The empathy_prompt solver: one user message, the rubric with the dialog."""

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import TaskState

from inspect_empathy._rubric import rubric_template
from inspect_empathy.solver import empathy_prompt


def state(messages: list) -> TaskState:
    return TaskState(
        model="mockllm/model", sample_id="s1", epoch=1, input=messages, messages=messages,
        metadata={},
    )  # fmt: skip


async def no_generate(state: TaskState, **kwargs: object) -> TaskState:
    raise AssertionError("the prompt solver must not generate")


@pytest.mark.parametrize("cot", [False, True])
async def test_emits_the_rubric_as_the_single_user_message(cot: bool) -> None:
    messages = [
        ChatMessageSystem(content="be nice"),
        ChatMessageUser(content="I miss my brother."),
        ChatMessageAssistant(content="That sounds painful. What do you miss most?"),
    ]
    result = await empathy_prompt(cot=cot)(state(messages), no_generate)
    [message] = result.messages
    assert message.role == "user"
    dialog = "USER: I miss my brother.\nBOT: That sounds painful. What do you miss most?"
    assert message.text == rubric_template(cot).replace("{{Dialog}}", dialog)
    assert result.metadata["transcript"] == dialog
    assert result.metadata["render_notes"] == ["message 0: system message left out"]


async def test_refuses_a_dialog_that_does_not_end_with_a_bot_reply() -> None:
    with pytest.raises(ValueError, match="s1.*must end with a bot reply"):
        await empathy_prompt()(state([ChatMessageUser(content="hello?")]), no_generate)
