"""Solvers: the rubric prompt and generation for judge mode; the grader check and
system prompt for response mode."""

from __future__ import annotations

import traceback
from pathlib import Path

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    ModelOutput,
    get_model,
    model_roles,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ._util.compat import PrerequisiteError
from ._util.file_kind import file_problem
from .dataset._samples import message_id
from .dialogs import (
    JUDGE_DIALOG_KEY,
    JUDGE_PROMPT_KEY,
    LABELLED_INPUT_KEY,
    RENDER_NOTES_KEY,
    TRANSCRIPT_KEY,
    ends_with_bot,
    unlabelled_text,
)
from .errors import OptionError
from .judge._geval import DEFAULT_COMPLETIONS, Method
from .judge._judge_call import PRECISION, SamplingLedger, ask_judge
from .judge._rubric import check_rubric_for, render_dialog, render_prompt, turns_from_messages
from .scorer import missing_grader_message


@solver
def empathy_prompt(cot: bool = False, rubric: str | None = None) -> Solver:
    """Replace the dialog with the rubric prompt that asks the judge to rate its last reply.

    The seed rubric is emitted verbatim with only ``{{Dialog}}`` replaced by the
    dialog as ``USER: ...`` / ``BOT: ...`` lines (`render_dialog`). The sample's
    metadata gets ``judge_prompt: True`` and, unless present, the rendered dialog
    as ``transcript``. The `empathy` task's default input needs no swap: its
    samples hold the dialog as text and `judge_generate` sends this prompt.

    Args:
      cot: Use the variant that asks for brief reasoning first and the score last.
      rubric: A rubric variant (a bundled name or a file, `_rubric.check_rubric_for`)
        instead of the seed.
    """
    _check_rubric(rubric, cot)  # a bad rubric is a one-line error before any model call

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        turns, notes = turns_from_messages(state.messages)
        if not ends_with_bot(turns):
            raise ValueError(
                f"sample {state.sample_id!r}: the dialog must end with a bot reply to rate"
            )
        dialog = render_dialog(turns)
        state.messages = [ChatMessageUser(content=render_prompt(dialog, cot, rubric))]
        state.metadata.setdefault(TRANSCRIPT_KEY, dialog)
        state.metadata[JUDGE_PROMPT_KEY] = True
        if notes:
            state.metadata[RENDER_NOTES_KEY] = notes
        return state

    return solve


@solver
def judge_generate(
    method: Method = "auto",
    completions: int = DEFAULT_COMPLETIONS,
    cot: bool = False,
    precision: float = PRECISION,
    rubric: str | None = None,
) -> Solver:
    """Judge mode's ``generate()``: ask the judge as its service accepts, and keep a judge
    that answered as final.

    A sample whose input is the dialog as ``USER:`` / ``BOT:`` lines (``judge_dialog`` in
    its metadata, the `empathy` task's default) is sent as the rubric prompt with that
    dialog in its slot (``cot`` and ``rubric`` pick the variant, as in `empathy_prompt`);
    its messages stay the conversation and the judge's answer, and the transcript's model
    call holds the prompt. Any other sample's messages are sent as they are.

    The request fits the judge's service (`_judge_call.ask_judge`): no logprobs where
    it has none, ``samples`` completions in calls it accepts, an output bound it
    accepts with room for reasoning it cannot skip; a documented refusal of an option
    the plugin chose is learnt once and the call sent again without it. A provider
    answer that Inspect cannot read as a completion because it holds none (an HTTP 200
    with ``choices: []`` or ``message: null``) becomes an output with no completion,
    which the scorer leaves unscored with the reason, instead of a sample error that
    ``eval-retry`` would send to the judge again. Every other exception (transport and
    API errors after Inspect's retries, a broken installation) stays an error.
    """

    _check_rubric(rubric, cot)  # a bad rubric is a one-line error before any model call
    ledgers: dict[str, SamplingLedger] = {}  # each judge's sequential draws in this run

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        prompt = state.messages
        if (state.metadata or {}).get(JUDGE_DIALOG_KEY):
            if not isinstance(state.input, str):
                raise ValueError(
                    f"sample {state.sample_id!r}: judge_dialog samples hold the dialog as "
                    "USER:/BOT: text, not messages"
                )
            prompt = _with_rubric(state, render_prompt(state.input, cot, rubric))
        try:
            ledger = ledgers.setdefault(str(model), SamplingLedger())
            output, _ = await ask_judge(model, prompt, method, completions, cot, precision, ledger)
        except (IndexError, AttributeError) as ex:
            if not answered_without_completion(ex):
                raise
            output = ModelOutput(
                model=str(state.model),
                choices=[],
                error=f"the judge answered with no completion ({type(ex).__name__}: {ex})",
            )
        state.output = output
        if output.choices:
            state.messages.append(output.message)
        return state

    return solve


def _check_rubric(rubric: str | None, cot: bool) -> None:
    """Refuse a rubric (or its ``cot`` form) in one plain line (`OptionError`)."""
    try:
        check_rubric_for(rubric, cot)
    except ValueError as ex:
        raise OptionError(str(ex)) from None


def _with_rubric(state: TaskState, rubric_prompt: str) -> list[ChatMessage]:
    """The state's messages with the user message holding the sample's dialog input replaced
    by the rubric prompt: what another solver put beside it (a system message) is sent too."""
    messages = list(state.messages)
    for index, message in enumerate(messages):
        if message.role == "user" and message.text == state.input:
            messages[index] = ChatMessageUser(content=rubric_prompt, id=message_id())
            return messages
    raise ValueError(
        f"sample {state.sample_id!r}: no user message holds the dialog input any more "
        "(a solver before judge_generate replaced it), so there is no dialog to rate"
    )


def answered_without_completion(ex: BaseException) -> bool:
    """True for the errors Inspect's providers raise on a response with no completion:
    indexing an empty ``choices`` list or reading a ``null`` message, while reading
    the response (the innermost frame is in ``inspect_ai/model``)."""
    empty = isinstance(ex, IndexError) and "list index out of range" in str(ex)
    null = isinstance(ex, AttributeError) and "'NoneType' object has no attribute" in str(ex)
    if not (empty or null):
        return False
    frames = traceback.extract_tb(ex.__traceback__)
    return bool(frames) and "inspect_ai/model/" in frames[-1].filename.replace("\\", "/")


@solver
def require_grader(role: str = "grader", hint: str | None = None) -> Solver:
    """Fail the sample before the model replies when no model is bound to ``role``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if model_roles().get(role) in (None, []):
            raise PrerequisiteError(missing_grader_message(role, hint))
        return state

    return solve


@solver
def graded_generate(role: str = "grader", hint: str | None = None, required: bool = True) -> Solver:
    """Response mode's ``generate()``: fail the sample before the model replies when no
    model is bound to ``role`` (as `require_grader`; not unless ``required``), then
    generate, a labelled input's messages sent without their labels
    (`dialogs.LABELLED_INPUT_KEY`): the model replies to the dialog as it was. One solver,
    so one span in each sample's transcript instead of two."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if required and model_roles().get(role) in (None, []):
            raise PrerequisiteError(missing_grader_message(role, hint))
        if (state.metadata or {}).get(LABELLED_INPUT_KEY):
            state.messages = [_unlabelled(message) for message in state.messages]
        return await generate(state)

    return solve


def _unlabelled(message: ChatMessage) -> ChatMessage:
    """A message of a labelled input without its label (others as they are)."""
    if message.role not in ("user", "assistant") or not isinstance(message.content, str):
        return message
    text = unlabelled_text(message.role, message.content)
    if text == message.content:
        return message
    return message.model_copy(update={"content": text})


@solver
def reply_system_prompt(prompt: str) -> Solver:
    """Put a system prompt (text, or a text file's content) before the dialog, verbatim."""
    content = _text_or_file(prompt)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        position = 0
        while position < len(state.messages) and state.messages[position].role == "system":
            position += 1
        state.messages.insert(position, ChatMessageSystem(content=content))
        return state

    return solve


def _text_or_file(text: str) -> str:
    """The content of ``text`` read as a file path if such a file exists, else ``text``."""
    if "\n" in text or len(text) > 1024:
        return text
    info, problem = file_problem(Path(text).expanduser())
    if info is None and problem.startswith("is "):
        # a FIFO would hang, a folder or device is no prompt: not taken as the prompt's text
        raise OptionError(f"system_prompt {text!r}: {problem}")
    try:
        path = Path(text).expanduser()
        return path.read_text(encoding="utf-8") if path.is_file() else text
    except (OSError, ValueError):
        return text
