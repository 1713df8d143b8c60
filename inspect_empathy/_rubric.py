"""The seed rubric and the rendering of dialogs into it."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from inspect_ai.model import ChatMessage

from .dialogs import Turn, merge_consecutive

PLACEHOLDER = "{{Dialog}}"
"""The only slot in the seed rubric."""

SCORE_ONLY_FORM = "Evaluation Form (return score ONLY):"
"""Closing line of the seed rubric; the CoT variant swaps only this line."""

ROLE_LABELS: dict[str, str] = {"user": "USER", "bot": "BOT"}
CONTINUATION_INDENT = "    "


@cache
def rubric_template(cot: bool = False) -> str:
    """The rubric prompt: the seed verbatim, or its chain-of-thought variant."""
    seed = files("inspect_empathy").joinpath("prompts/empathy.txt").read_text("utf-8")
    if not cot:
        return seed
    if seed.count(SCORE_ONLY_FORM) != 1:
        raise RuntimeError("seed rubric does not end with the score-only form")
    cot_form = files("inspect_empathy").joinpath("prompts/empathy_cot.txt").read_text("utf-8")
    return seed.replace(SCORE_ONLY_FORM, cot_form)


def render_turn(turn: Turn) -> str:
    """Render one turn as a ``USER:``/``BOT:`` line.

    Continuation lines are indented so that content cannot start a line that
    looks like a new turn (or like the rubric's own headings).
    """
    # splitlines() knows every line boundary (\r, \v, \f, \x85, \u2028, ...)
    first, *rest = turn.content.strip().splitlines() or [""]
    body = "\n".join([first, *(CONTINUATION_INDENT + line.rstrip() for line in rest)])
    return f"{ROLE_LABELS[turn.role]}: {body}"


def render_dialog(turns: list[Turn]) -> str:
    """Render a dialog as ``USER: ...`` / ``BOT: ...`` lines, one turn per line.

    The one rendering of a dialog: the judge-mode sample input, the
    `empathy_prompt` solver and the scorer all call it. Consecutive turns of one
    speaker are joined first (`merge_consecutive`), so a record and the chat
    messages made from it render alike.
    """
    return "\n".join(render_turn(turn) for turn in merge_consecutive(turns))


def render_prompt(dialog: str, cot: bool = False) -> str:
    """Put a rendered dialog into the rubric; the substitution is literal and single."""
    before, sep, after = rubric_template(cot).partition(PLACEHOLDER)
    if not sep:
        raise RuntimeError("rubric template has no {{Dialog}} slot")
    return before + dialog + after


def turns_from_messages(messages: list[ChatMessage]) -> tuple[list[Turn], list[str]]:
    """Dialog turns from chat messages, with notes on what was left out.

    User and assistant text become turns. System messages, tool calls and tool
    results are not part of what the user saw: they are left out and a note
    says where.
    """
    turns: list[Turn] = []
    notes: list[str] = []
    for index, message in enumerate(messages):
        if message.role == "system":
            notes.append(f"message {index}: system message left out")
        elif message.role == "tool":
            notes.append(f"message {index}: tool result left out")
        elif message.role == "user":
            turns.append(Turn("user", message.text))
        elif message.role == "assistant":
            if message.tool_calls:
                notes.append(f"message {index}: {len(message.tool_calls)} tool call(s) left out")
            if message.text.strip():
                turns.append(Turn("bot", message.text))
    return merge_consecutive(turns), notes

