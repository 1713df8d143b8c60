"""Solvers: the rubric prompt for judge mode (``-T input=dialog``)."""

from __future__ import annotations

from inspect_ai.model import ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ._rubric import render_dialog, render_prompt, turns_from_messages
from .dialogs import JUDGE_PROMPT_KEY


@solver
def empathy_prompt(cot: bool = False) -> Solver:
    """Replace the dialog with the rubric prompt that asks the judge to rate its last reply.

    The seed rubric is emitted verbatim with only ``{{Dialog}}`` replaced by the
    dialog as ``USER: ...`` / ``BOT: ...`` lines (`render_dialog`). The sample's
    metadata gets ``judge_prompt: True`` and, unless present, the rendered dialog
    as ``transcript``. The `empathy` task's default input needs no solver: its
    samples already are this prompt.

    Args:
      cot: Use the variant that asks for brief reasoning first and the score last.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        turns, notes = turns_from_messages(state.messages)
        if not turns or turns[-1].role != "bot":
            raise ValueError(
                f"sample {state.sample_id!r}: the dialog must end with a bot reply to rate"
            )
        dialog = render_dialog(turns)
        state.messages = [ChatMessageUser(content=render_prompt(dialog, cot))]
        state.metadata.setdefault("transcript", dialog)
        state.metadata[JUDGE_PROMPT_KEY] = True
        if notes:
            state.metadata["render_notes"] = notes
        return state

    return solve
