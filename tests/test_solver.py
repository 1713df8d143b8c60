"""The empathy_prompt solver: one user message, the rubric with the dialog."""

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import TaskState

from inspect_empathy.dataset._samples import record_to_sample
from inspect_empathy.dialogs import JUDGE_PROMPT_KEY, DialogRecord
from inspect_empathy.judge._rubric import Turn, rubric_template
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
    assert result.metadata[JUDGE_PROMPT_KEY] is True
    assert result.metadata["render_notes"] == ["message 0: system message left out"]


async def test_refuses_a_dialog_that_does_not_end_with_a_bot_reply() -> None:
    with pytest.raises(ValueError, match="s1.*must end with a bot reply"):
        await empathy_prompt()(state([ChatMessageUser(content="hello?")]), no_generate)


@pytest.mark.parametrize("cot", [False, True])
async def test_swapped_prompt_is_the_judge_prompt_sample_input(cot: bool) -> None:
    # one rendering: the solver (input=dialog) and the default input give the same prompt
    turns = [
        Turn("user", "I lost my job."),
        Turn("user", "And my car broke down.\n\nAll in one day."),
        Turn("bot", "That is a brutal day.\nDo you want to talk about it?"),
    ]
    record = DialogRecord("r1", turns)
    chat = record_to_sample(record)
    result = await empathy_prompt(cot=cot)(state(list(chat.input)), no_generate)
    assert result.messages[0].text == record_to_sample(record, prompt_cot=cot).input
    assert result.metadata["transcript"] == chat.metadata["transcript"]
