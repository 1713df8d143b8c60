"""The seed rubric and the rendering of dialogs into it."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path

from inspect_ai.model import ChatMessage

from .._util.file_kind import file_problem
from ..dialogs import Turn, merge_consecutive

PLACEHOLDER = "{{Dialog}}"
"""The only slot in the seed rubric."""

SCORE_ONLY_FORM = "Evaluation Form (return score ONLY):"
"""Closing line of the seed rubric; the CoT variant swaps only this line."""

ROLE_LABELS: dict[str, str] = {"user": "USER", "bot": "BOT"}
CONTINUATION_INDENT = "    "


SEED = "seed"
"""The name of the seed rubric, the default and the reference every variant is measured by."""

MAX_RUBRIC_BYTES = 64 * 1024


class RubricError(ValueError):
    """A rubric file the scorer cannot use (one line naming the file and the problem)."""


@dataclass(frozen=True)
class Rubric:
    """A rubric prompt with one ``{{Dialog}}`` slot, and its identity for the log."""

    name: str
    """``seed``, a bundled variant's name, or the file's name."""
    text: str
    sha256: str
    source: str
    """Where it came from: ``bundled`` or the file's path."""

    def identity(self) -> dict[str, str]:
        """What the log records of it: name, content hash (first 16 hex digits), source."""
        return {"name": self.name, "sha256": self.sha256[:16], "source": self.source}


def rubric_label(identity: object) -> str:
    """A rubric's short label from its logged identity: ``seed``, or ``name:`` and the
    first 8 hex digits of its content hash (two files of one name are two rubrics)."""
    if isinstance(identity, dict) and identity.get("name"):
        name = str(identity["name"])
        return name if name == SEED else f"{name}:{str(identity.get('sha256', ''))[:8]}"
    return SEED


def _bundled(name: str) -> str:
    return files(__package__).joinpath(f"prompts/{name}").read_text("utf-8")


def bundled_rubrics() -> dict[str, str]:
    """The bundled rubric variants by name (``seed`` first), as their file names."""
    variants = files(__package__).joinpath("prompts/variants")
    names = sorted(p.name for p in variants.iterdir() if p.name.endswith(".txt"))
    return {SEED: "empathy.txt", **{n.removesuffix(".txt"): f"variants/{n}" for n in names}}


_DASH = r"(?:-|–|—|to|and)"
_SCALE_FORMS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(form, re.IGNORECASE)
    for form in (
        # (1-5), (0 to 10)
        rf"\(\s*(\d+)\s*{_DASH}\s*(\d+)\s*\)",
        # a scale from 1 to 5, a Scale of 1-10, a scale between 1 and 5
        rf"\bscale\s+(?:from|of|between)\s+(\d+)\s*{_DASH}\s*(\d+)",
        # a 1-10 scale, a 1 to 10 point scale
        rf"\b(\d+)\s*{_DASH}\s*(\d+)(?:\s*-?\s*points?)?\s+scale",
        # score it from 0 to 10, rate it between 1 and 7
        rf"\b(?:score|rate|rating|grade)\w*\b[^.\n]{{0,30}}?\b(?:from|between)\s+(\d+)\s*"
        rf"{_DASH}\s*(\d+)\b",
        # a 10-point scale
        r"\b()(\d+)\s*-?\s*points?\s+scale",
        # a score out of 10
        r"\b(?:score|rate|rating|grade)\w*\b[^.\n]{0,30}?()\bout\s+of\s+(\d+)\b",
    )
)
"""The forms in which a rubric asks for a score on a scale, whatever their case: ``(1-5)``,
``a scale from 1 to 5``, ``a scale of 1-10``, ``a 1-10 scale``, ``score it from 0 to 10``,
``a 10-point scale``, ``a score out of 10`` (the last two name only the top: 1 is taken as
the bottom)."""


def rubric_scales(text: str) -> list[tuple[int, int, str]]:
    """Every scale ``text`` asks for a score on: (bottom, top, the words that ask)."""
    found = []
    for form in _SCALE_FORMS:
        for match in form.finditer(text):
            low, high = match.group(1), match.group(2)
            found.append((int(low) if low else 1, int(high), " ".join(match.group().split())))
    return found


def check_rubric(text: str, where: str) -> None:
    """Refuse a rubric the scorer cannot read answers to, in one line naming ``where``:
    an empty file, the ``{{Dialog}}`` slot missing or repeated, a scale other than 1-5
    anywhere in it (`rubric_scales`), or no 1-5 scale at all."""
    if not text.strip():
        raise RubricError(f"rubric {where}: the file is empty")
    slots = text.count(PLACEHOLDER)
    if slots != 1:
        what = "has no" if slots == 0 else f"has {slots}"
        raise RubricError(f"rubric {where}: {what} {PLACEHOLDER} placeholder (exactly one needed)")
    scales = rubric_scales(text)
    other = sorted({(a, b, words) for a, b, words in scales if (a, b) != (1, 5)})
    if other:
        shown = ", ".join(f"{a}-{b} ({words!r})" for a, b, words in other)
        raise RubricError(
            f"rubric {where}: asks for a score on {shown}; the scorer reads 1-5 scores only, "
            "so a rubric must ask for 1-5 and no other scale"
        )
    if not scales:
        raise RubricError(
            f"rubric {where}: names no 1-5 scale (e.g. '(1-5)' or 'a scale from 1 to 5'); "
            "the scorer reads 1-5 scores only"
        )


def check_rubric_for(rubric: str | None, cot: bool) -> Rubric:
    """The rubric a task or scorer will send, checked for how it is asked (`load_rubric`;
    with ``cot``, its closing line too, `rubric_template`): a `RubricError` in one line
    when the task is built, not in every sample."""
    used = load_rubric(rubric)
    rubric_template(cot, rubric)
    return used


def load_rubric(rubric: str | None = None) -> Rubric:
    """The rubric a task uses: the seed (None or ``seed``), a bundled variant by name, or a
    file (`check_rubric`; `RubricError` naming the file otherwise). A file is read again
    when it changed (the cache is keyed by its path, inode, size and modification time), so
    one process never keeps a rubric file's first text."""
    name = rubric or SEED
    bundled = bundled_rubrics()
    if name in bundled:
        return _bundled_rubric(name)
    path = Path(name).expanduser()
    info, problem = file_problem(path)
    if info is None and problem == "no such file":
        known = ", ".join(bundled)
        raise RubricError(f"rubric {name!r}: no such file, and not a bundled rubric ({known})")
    if info is None:
        raise RubricError(f"rubric {path}: {problem}")
    if info.st_size > MAX_RUBRIC_BYTES:
        raise RubricError(f"rubric {path}: larger than {MAX_RUBRIC_BYTES} bytes")
    return _file_rubric(str(path), (info.st_ino, info.st_size, info.st_mtime_ns))


@cache
def _bundled_rubric(name: str) -> Rubric:
    return _rubric(name, _bundled(bundled_rubrics()[name]), "bundled")


@cache
def _file_rubric(path: str, stamp: tuple[int, int, int]) -> Rubric:
    """A rubric file's rubric, cached by its path and ``stamp`` (inode, size, mtime)."""
    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as ex:
        raise RubricError(f"rubric {path}: cannot be read as UTF-8 text ({ex})") from None
    return _rubric(Path(path).stem, text, path)


def _rubric(name: str, text: str, source: str) -> Rubric:
    check_rubric(text, repr(name) if source == "bundled" else source)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Rubric(name=name, text=text, sha256=digest, source=source)


def rubric_template(cot: bool = False, rubric: str | None = None) -> str:
    """The rubric prompt: the seed verbatim (or a variant, `load_rubric`), or its
    chain-of-thought form, which swaps only the closing score-only line."""
    return _template(cot, load_rubric(rubric))


@cache
def _template(cot: bool, rubric: Rubric) -> str:
    text = rubric.text
    if not cot:
        return text
    if text.count(SCORE_ONLY_FORM) != 1:
        raise RubricError(
            f"rubric {rubric.source}: cot needs its closing line to be "
            f"{SCORE_ONLY_FORM!r} (once), which the reasoning variant replaces"
        )
    return text.replace(SCORE_ONLY_FORM, _bundled("empathy_cot.txt"))


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


def last_bot_turn(dialog: str) -> str | None:
    """The last ``BOT:`` turn of a dialog rendered by `render_dialog` (its continuation lines
    unindented), or None if it has none: the reply rated."""
    label = f"{ROLE_LABELS['bot']}: "
    lines = dialog.split("\n")
    start = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].startswith(label)), None)
    if start is None:
        return None
    body = [lines[start][len(label) :]]
    for line in lines[start + 1 :]:
        if not line.startswith(CONTINUATION_INDENT):
            break
        body.append(line[len(CONTINUATION_INDENT) :])
    return "\n".join(body)


def dialog_in_prompt(prompt: str, cot: bool = False, rubric: str | None = None) -> str | None:
    """The rendered dialog that `render_prompt` put into ``prompt``, or None if ``prompt`` is
    not this rubric's prompt."""
    before, sep, after = rubric_template(cot, rubric).partition(PLACEHOLDER)
    if sep and prompt.startswith(before) and prompt.endswith(after):
        return prompt[len(before) : len(prompt) - len(after)]
    return None


def render_prompt(dialog: str, cot: bool = False, rubric: str | None = None) -> str:
    """Put a rendered dialog into the rubric; the substitution is literal and single."""
    before, sep, after = rubric_template(cot, rubric).partition(PLACEHOLDER)
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

