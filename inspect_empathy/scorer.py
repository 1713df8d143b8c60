"""The empathy scorer: G-Eval scoring of a chatbot's last reply with the seed rubric."""

from __future__ import annotations

import logging
import math
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    Model,
    ModelOutput,
    ModelRole,
    get_model,
    model_roles,
)
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import collect, warn_once

from ._util import summary  # registers the end-of-task scoring summary (enabled when used)
from ._util.compat import PrerequisiteError, active_model
from ._util.usage import score_judge
from .dialogs import JUDGE_DIALOG_KEY, JUDGE_PROMPT_KEY, ends_with_bot
from .errors import OptionError
from .judge._geval import (
    DEFAULT_COMPLETIONS,
    MIN_PARSED,
    SAMPLING_KEY,
    Judgement,
    Method,
    check_method,
    judge_output,
)
from .judge._judge_call import (
    PRECISION,
    JudgeRequest,
    SamplingLedger,
    ask_judge,
    complete_choices,
    judge_request,
)
from .judge._rubric import (
    Turn,
    check_rubric_for,
    dialog_in_prompt,
    last_bot_turn,
    render_dialog,
    render_prompt,
    turns_from_messages,
)
from .judge._score_text import SCORES
from .stats.alt_metric import alt_test_metric
from .stats.consistency import self_consistency
from .stats.conversation import conversation_metrics
from .stats.metrics import (
    GROUP_KEY,
    UNCALIBRATED_KEY,
    empathy_headline,
    group_metrics,
    human_agreement,
    human_ceiling,
    judge_agreement,
    judge_means,
    level_shares,
)

Aggregate = Literal["mean", "median"]
LowMass = Literal["keep", "unscored"]
JudgeSpec = str | Model | None
"""One judge: a model name, a Model, or None for the model under evaluation."""

logger = logging.getLogger(__name__)


@scorer(
    metrics=[
        empathy_headline(),  # the headline first (somers_d_all with ratings, else mean)
        human_agreement(),
        level_shares(),
        judge_agreement(),
        judge_means(),
        group_metrics(),
        human_ceiling(),
        self_consistency(),
        alt_test_metric(),
        conversation_metrics(),
    ]
)
def empathy_scorer(
    method: Method = "auto",
    completions: int | None = None,
    cot: bool = False,
    model: str | Model | list[str | Model] | None = None,
    model_role: str | ModelRole | dict[str, Any] = "grader",
    aggregate: Aggregate = "mean",
    from_output: bool = False,
    low_mass: LowMass = "keep",
    min_parsed: float = MIN_PARSED,
    group_by: str | None = None,
    calibration: str | None = None,
    samples: int | None = None,
    precision: float = PRECISION,
    rubric: str | None = None,
    threshold: float | None = None,
) -> Scorer:
    """Rate the last assistant reply for empathetical responding, 1-5, G-Eval style.

    Works on any task: the conversation is taken from ``state.messages`` (user
    and assistant text; system messages, tool calls and tool results are left
    out, with notes saying where) and the final assistant message is the reply.
    Its metrics (mean, agreement with human ratings, level shares, panel
    agreement, scoring counts and, with ``group_by``, per-group figures) belong
    to this scorer only, so it can join any task's other scorers.

    Args:
      method: ``logprobs`` (probability-weighted score from the score token's
        top logprobs), ``samples`` (mean of the scores in ``completions`` sampled
        completions), ``parse`` (the integer the judge wrote) or ``auto``
        (logprobs when the judge returns them, else parse, announced once in
        the terminal).
      completions: Number of sampled completions per reply for the ``samples``
        method (default 20).
      cot: Use the rubric variant that asks for brief reasoning before the score.
      model: Judge model, or a list of models for a panel (a comma-separated
        string also makes a panel). Takes precedence over ``model_role``.
      model_role: Role whose bound model(s) judge (``--model-role grader=...``;
        several models bound to the role make a panel). Without a binding the
        model under evaluation judges (flagged ``self_graded`` in the score's
        metadata), unless the role is ``ModelRole(name, required=True)``, in
        which case scoring fails with a clear message.
      aggregate: How a panel's scores combine: ``mean`` or ``median``.
      from_output: Score the judgement already in ``state.output`` (judge mode:
        the model under evaluation is the judge) instead of asking a grader.
      low_mass: ``keep`` (default) or ``unscored``: what becomes of a logprobs
        score whose score tokens held less than half the probability (always
        counted in the ``low_mass`` metric).
      min_parsed: For ``samples``: the share of the requested completions that must
        hold a valid score (default 0.5); below it the reply is unscored.
      group_by: Sample metadata field (e.g. ``emotion``) to report the mean,
        stderr and share >= 4 of each group by.
      calibration: A calibration file (``inspect-empathy calibrate``): each score
        is mapped onto the human scale with it; the uncalibrated score stays in
        the Score's metadata (``uncalibrated``), with the map (``calibration``).
      samples: Deprecated alias of ``completions`` (warns once; an error when it
        disagrees with ``completions``).
      precision: For ``samples`` on a judge that returns fewer than ``completions``
        answers a call: answers are drawn in rounds until one more would cut the
        posterior variance of the weighted score by less than this squared (default
        0.065), at most 6 calls a dialog on average over the run; 0 draws all.
      rubric: A rubric variant instead of the seed: a bundled name (``no_steps``,
        ``anchored``) or a file with one ``{{Dialog}}`` slot, checked at once; its
        name and content hash go into each Score's metadata (``rubric``).
      threshold: A pass mark (1-5) for suites that gate on samples: each Score's metadata
        gets ``passed`` (its value rounded half up is at least ``threshold``, as the
        ``share_ge_4`` metric counts; an unscored reply fails) and ``threshold``, and its
        explanation opens with ``pass``/``fail``. The value stays the score.
    """
    n = check_options(method, completions, samples, low_mass, min_parsed)
    check_threshold(threshold)
    summary.activate()  # the end-of-task summary runs once a task has this scorer
    check_precision(precision)
    if aggregate not in ("mean", "median"):
        raise ValueError(f"aggregate must be 'mean' or 'median', not {aggregate!r}")
    role = _as_role(model_role)
    explicit = _explicit_judges(model)
    options = JudgeOptions(method, n, cot, low_mass, float(min_parsed), float(precision))
    try:
        used = check_rubric_for(rubric, cot).identity()
    except ValueError as ex:
        raise OptionError(str(ex)) from None
    identity = used if rubric else None
    calibrate = calibrator(calibration, used)  # the rubric's name and content hash

    async def score(state: TaskState, target: Target) -> Score:
        return gate(calibrate(await judge(state), str(state.model)), threshold)

    async def judge(state: TaskState) -> Score:
        metadata = state.metadata or {}
        # the human rating stays in the sample's metadata only (metrics and compare read it
        # there): one copy per sample, not one more in every Score Inspect keeps to the end
        context: dict[str, Any] = {"rubric": identity} if identity else {}
        if group_by:
            group = metadata.get(group_by)
            context[GROUP_KEY] = {group_by: "(missing)" if group is None else str(group)}
        if from_output:
            judgement = await _judge_own_output(state, options)
            return to_score(judgement, context, rated=rated_reply(state, cot, rubric))
        if metadata.get(JUDGE_PROMPT_KEY) or metadata.get(JUDGE_DIALOG_KEY):
            return Score.unscored(
                reason="no_response",
                explanation=(
                    "the sample is a judge-mode sample (the judge's answer to the empathy "
                    "rubric is its output): score it with empathy_scorer(from_output=True)"
                ),
                metadata=context,
            )
        turns, notes, problem = reply_dialog(state.messages)
        if problem is not None:
            return Score.unscored(
                reason="no_response", explanation=problem, metadata={**context, "notes": notes}
            )
        if notes:
            transcript().info(
                {"empathy_scorer": "left out of the dialog given to the grader", "notes": notes},
                source="empathy_scorer",
            )
        dialog = render_dialog(turns)
        prompt: list[ChatMessage] = [ChatMessageUser(content=render_prompt(dialog, cot, rubric))]
        judges = explicit if explicit is not None else role_judges(role)
        context["judged_dialog"] = dialog
        if notes:
            context["notes"] = notes
        if len(judges) == 1 and judges[0] is None:
            context["self_graded"] = True
            _warn_self_graded(role.name)
        # the Score's answer is the reply graded (model_graded_qa's convention: the sample
        # list shows it), the grader's words are in its metadata and explanation
        reply = turns[-1].content
        if len(judges) == 1:
            # one grader: awaited directly (collect() would add a task group and a span,
            # two more events in every sample's transcript)
            name, judgement = await _judge_with(judges[0], prompt, options)
            return to_score(judgement, {**context, "grader": name}, graded=reply)
        judgements = await collect(*[_judge_with(judge, prompt, options) for judge in judges])
        judgements = _unique_names(judgements)
        return panel_score(judgements, aggregate, context, state.epoch, graded=reply)

    return score


PASSED_KEY = "passed"
"""Score metadata key (``empathy_scorer(threshold=...)``): whether the sample passed."""


def check_threshold(threshold: float | None) -> None:
    """Refuse a pass mark that is not a number on the rubric's 1-5 scale (`OptionError`)."""
    if threshold is None:
        return
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not (1 <= threshold <= 5)
    ):
        raise OptionError(f"threshold must be a number from 1 to 5, not {threshold!r}")


def passes(value: Any, threshold: float) -> bool:
    """Whether a score passes ``threshold``: scored, and rounded half up (as the metrics'
    ``share_ge_4`` counts) at least ``threshold``."""
    if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
        return False
    return math.floor(float(value) + 0.5) >= threshold


def gate(score: Score, threshold: float | None) -> Score:
    """``score`` with its pass or fail (`passes`) in its metadata (``passed``,
    ``threshold``) and at the start of its explanation; as it is without a threshold."""
    if threshold is None:
        return score
    passed = passes(score.value, threshold)
    word = "pass" if passed else "fail"
    explanation = f"{word} (threshold {threshold:g}); {score.explanation or ''}".rstrip("; ")
    metadata = {**(score.metadata or {}), PASSED_KEY: passed, "threshold": threshold}
    return score.model_copy(update={"metadata": metadata, "explanation": explanation})


def completions_option(completions: int | None, samples: int | None, prefix: str = "") -> int:
    """The number of completions for the ``samples`` method, from ``completions`` or its
    deprecated alias ``samples`` (which warns once, naming ``completions``).

    Both given with different values is an `OptionError`; neither gives
    `DEFAULT_COMPLETIONS`. ``prefix`` leads the messages (``-T ``).
    """
    if samples is None:
        n = DEFAULT_COMPLETIONS if completions is None else completions
        # refused whatever the method: a count no method can use is a mistake
        if isinstance(n, bool) or not isinstance(n, int):
            raise OptionError(f"{prefix}completions must be a whole number, not {n!r}")
        if n < 1:
            raise OptionError(f"{prefix}completions must be at least 1, not {n!r}")
        return n
    if completions is not None and completions != samples:
        raise OptionError(
            f"{prefix}completions={completions!r} and {prefix}samples={samples!r} disagree: "
            "samples is the old name of completions; give completions only"
        )
    if prefix not in _deprecation_said:
        _deprecation_said.add(prefix)
        logger.warning(
            f"{prefix}samples is deprecated: use {prefix}completions instead (the number of "
            "sampled completions per dialog for method=samples); samples will be removed."
        )
    return samples


_deprecation_said: set[str] = set()
"""The prefixes whose ``samples`` deprecation warning was given (once per process)."""


def check_options(
    method: str,
    completions: int | None,
    samples: int | None,
    low_mass: str,
    min_parsed: float,
    prefix: str = "",
) -> int:
    """Refuse bad scoring options with one plain line (`OptionError`, a ValueError that
    ``inspect eval`` prints without a traceback); ``prefix`` leads the message (``-T ``).

    Returns the number of completions (`completions_option`: ``completions`` or its
    deprecated alias ``samples``)."""
    n = completions_option(completions, samples, prefix)
    try:
        check_method(method, n)
    except ValueError as ex:
        raise OptionError(f"{prefix}{ex}") from None
    if low_mass not in ("keep", "unscored"):
        raise OptionError(f"{prefix}low_mass must be 'keep' or 'unscored', not {low_mass!r}")
    if isinstance(min_parsed, bool) or not 0.0 <= float(min_parsed) <= 1.0:
        raise OptionError(f"{prefix}min_parsed must be between 0 and 1, not {min_parsed!r}")
    return n


def check_precision(precision: float, prefix: str = "") -> None:
    """Refuse a sequential-sampling precision that is not a number >= 0 (`OptionError`)."""
    if (
        isinstance(precision, bool)
        or not isinstance(precision, int | float)
        or not (math.isfinite(precision) and precision >= 0)
    ):
        raise OptionError(
            f"{prefix}precision must be a number >= 0 (sampling stops once one more answer would "
            f"cut the weighted score's posterior variance by less than its square; 0 draws "
            f"every completion), not {precision!r}"
        )


def resolve_calibration(path: str | None) -> tuple[Any, dict[str, Any] | None]:
    """The `Calibration` a run applies and its provenance: the file's map, or under
    ``eval-retry`` the original run's (ValueError naming the file if bad). Without a
    file nothing is loaded (the calibration module imports pandas, which a judge-mode
    run does not otherwise need)."""
    if path is None:
        return None, None
    from .stats.calibration import resolve

    return resolve(path)


def calibrator(
    path: str | None, rubric: str | dict[str, str] | None = None
) -> Callable[[Score, str], Score]:
    """A function that maps a Score onto the human scale with the calibration file at
    ``path`` (unscored Scores pass through), or leaves Scores as they are.

    A file fitted under another rubric than ``rubric`` (the run's rubric identity: name and
    content hash; `calibration.same_rubric`) is refused here (`OptionError`); one
    fitted on another judge's scores when it maps one (`CalibrationError`: the sample errors,
    naming both): the judge is the Score's ``grader``, a panel, or ``model`` (judge mode's
    judge, the model under evaluation)."""
    calibration, provenance = resolve_calibration(path)
    if calibration is None:
        return lambda score, model: score
    try:
        calibration.check_identity(None, rubric, f"calibration file {path}")
    except ValueError as ex:
        raise OptionError(str(ex)) from None
    digest = (provenance or {}).get("sha256", "")[:12]
    label = f"{Path(str(path)).name} ({calibration.method}, n={calibration.n}, sha256 {digest})"

    def calibrate(score: Score, model: str) -> Score:
        value = score.value
        if not isinstance(value, int | float) or math.isnan(value):
            return score
        judge = score_judge(score.metadata, model)  # as compare and calibrate name it
        calibration.check_identity(judge, None, f"calibration file {path}")
        mapped = calibration.apply(float(value))
        metadata = {**(score.metadata or {}), UNCALIBRATED_KEY: value, "calibration": label}
        explanation = f"calibrated {value:.3f} → {mapped:.3f} ({calibration.method}); "
        return score.model_copy(
            update={
                "value": mapped,
                "metadata": metadata,
                "explanation": explanation + (score.explanation or ""),
            }
        )

    return calibrate


@dataclass(frozen=True)
class JudgeOptions:
    """How a judge's answer is asked for and read (the scorer's G-Eval options)."""

    method: Method
    completions: int
    cot: bool
    low_mass: LowMass
    min_parsed: float
    precision: float = PRECISION
    ledgers: dict[str, SamplingLedger] = field(default_factory=dict, compare=False)
    """Each judge's sequential draws in this scorer's run (`_judge_call.SamplingLedger`)."""


_announced: set[str] = set()


def announce_fallback(judge: str, judgement: Judgement, request: JudgeRequest) -> None:
    """Say once per judge, in the terminal, that ``auto`` fell back to parsing (unless
    the request already said that this judge gives no logprobs)."""
    reason = judgement.details.get("logprobs_unavailable")
    if not reason or request.no_logprobs or judge in _announced:
        return
    _announced.add(judge)
    logger.warning(
        f"empathy_scorer (method=auto): {judge} gave no usable logprobs ({reason}); its "
        "scores fall back to the parsed whole number (counted as parse when the task ends)."
    )


def _as_role(model_role: str | ModelRole | dict[str, Any]) -> ModelRole:
    """A model role from its name, itself, or its serialised form (a re-scored log's args)."""
    if isinstance(model_role, ModelRole):
        return model_role
    if isinstance(model_role, str):
        return ModelRole(model_role)
    return ModelRole.model_validate(model_role)


def missing_grader_message(role: str, hint: str | None = None) -> str:
    """Why a task refuses to run without a grader, and how to bind one."""
    message = (
        f"No model is bound to the '{role}' role. The reply would be graded by the model "
        "that wrote it, and a model grading its own replies is biased. Bind a grader with "
        f"--model-role {role}=<model> (several comma-separated models make a panel), or "
        f"model_roles={{'{role}': ...}} in Python."
    )
    return message + (f" {hint}" if hint else "")


def _explicit_judges(model: str | Model | list[str | Model] | None) -> list[JudgeSpec] | None:
    """Judges given to the scorer itself (``model=``), or None to use the role."""
    if model is None:
        return None
    if isinstance(model, str):
        names = [m.strip() for m in model.split(",") if m.strip()]
        if not names:
            raise ValueError("model must name at least one judge")
        return list(names)
    if isinstance(model, list | tuple):
        if not model:
            raise ValueError("model must name at least one judge")
        return list(model)
    return [model]


def role_judges(role: ModelRole) -> list[JudgeSpec]:
    """The models bound to a role (None = the model under evaluation judges).

    Raises `PrerequisiteError` when the role is required and nothing is bound.
    """
    bound = model_roles().get(role.name)
    if isinstance(bound, list) and bound:
        return list(bound)
    if bound is not None and not isinstance(bound, list):
        return [bound]
    if role.required:
        raise PrerequisiteError(missing_grader_message(role.name))
    return [None]


def _warn_self_graded(role: str) -> None:
    warn_once(
        logger,
        f"empathy_scorer: no model is bound to the '{role}' role, so the model under "
        f"evaluation grades its own replies (biased). Bind one with --model-role {role}=<model>.",
    )


def _unique_names(judgements: list[tuple[str, Judgement]]) -> list[tuple[str, Judgement]]:
    """Make judge names unique (the same model may sit twice on a panel, e.g. two configs)."""
    seen: dict[str, int] = {}
    unique: list[tuple[str, Judgement]] = []
    for name, judgement in judgements:
        seen[name] = seen.get(name, 0) + 1
        unique.append((name if seen[name] == 1 else f"{name}#{seen[name]}", judgement))
    return unique


def reply_dialog(messages: list[ChatMessage]) -> tuple[list[Turn], list[str], str | None]:
    """The dialog to grade, notes on what was left out, and why it cannot be graded (if so).

    The reply is the final assistant message's text. A conversation without an
    assistant reply, one whose final assistant message has no text (tool calls
    only), and one where the user spoke after the last reply cannot be graded.
    """
    messages, step_notes = _drop_intermediate_steps(messages)
    turns, notes = turns_from_messages(messages)
    notes = sorted(notes + step_notes, key=_note_order)
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=None)
    if last is None:
        return turns, notes, "the conversation has no assistant reply to rate"
    if not messages[last].text.strip():
        return turns, notes, "the final assistant message has no text (only tool calls) to rate"
    if any(m.role == "user" for m in messages[last + 1 :]):
        return turns, notes, "the user spoke after the last assistant reply: no reply to rate"
    if not ends_with_bot(turns):
        return turns, notes, "the conversation does not end with an assistant reply to rate"
    return turns, notes, None


def _drop_intermediate_steps(messages: list[ChatMessage]) -> tuple[list[ChatMessage], list[str]]:
    """Blank the text of tool-calling assistant messages after the last user message.

    Text that accompanies a tool call on the way to the reply ("Let me look that
    up") is a step, not the reply: the final assistant message is the reply.
    Indices are kept, so notes still point at the original messages.
    """
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    kept: list[ChatMessage] = []
    notes: list[str] = []
    final = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=None)
    for index, message in enumerate(messages):
        if (
            index > last_user
            and index != final
            and isinstance(message, ChatMessageAssistant)
            and message.tool_calls
            and message.text.strip()
        ):
            notes.append(f"message {index}: text before tool call(s) left out")
            message = message.model_copy(update={"content": ""})
        kept.append(message)
    return kept, notes


def _note_order(note: str) -> tuple[int, str]:
    head = note.split(":", 1)[0].removeprefix("message ")
    return (int(head) if head.isdigit() else -1, note)


GRADER_SETTINGS = ("max_tokens", "reasoning_tokens", "reasoning_effort")
"""The generation settings that bound a judge's answer and its reasoning: the command's
(``--max-tokens``, ...) are the model under evaluation's; a grader takes its own from its
role (``--model-role grader='{model: ..., max_tokens: N}'``, Inspect's model config)."""


def _warn_unshared_settings(grader: Model) -> None:
    """Say once per grader, in the terminal, that the command's ``--max-tokens``,
    ``--reasoning-tokens`` or ``--reasoning-effort`` set the model under evaluation's
    generation, not the grader's, and how to give the grader its own."""
    evaluated = active_model()
    if evaluated is None or grader is evaluated:
        return
    theirs = {k: getattr(evaluated.config, k) for k in GRADER_SETTINGS}
    own = {k: getattr(grader.config, k) for k in GRADER_SETTINGS}
    unshared = [k for k in GRADER_SETTINGS if theirs[k] is not None and own[k] is None]
    key = f"{evaluated}|{grader}|{theirs}|{own}"
    if not unshared or key in _unshared_checked:
        return
    _unshared_checked.add(key)
    shown = ", ".join(f"--{k.replace('_', '-')} {theirs[k]}" for k in unshared)
    example = ", ".join(f"{k}: {theirs[k]}" for k in unshared)
    logger.warning(
        f"empathy_scorer: {shown} set the generation of the model under evaluation "
        f"({evaluated}), not of the grader {grader}, which keeps the scorer's bound; give "
        f"the grader its own with --model-role grader='{{model: {grader}, {example}}}'"
    )


_unshared_checked: set[str] = set()
"""(model under evaluation, grader, their settings) already said in this process."""


async def _judge_with(
    judge: JudgeSpec, prompt: list[ChatMessage], options: JudgeOptions
) -> tuple[str, Judgement]:
    model = get_model(judge)
    _warn_unshared_settings(model)
    ledger = options.ledgers.setdefault(str(model), SamplingLedger())
    output, request = await ask_judge(
        model, prompt, options.method, options.completions, options.cot, options.precision, ledger
    )
    judgement = read_judgement(output, request, options)
    announce_fallback(str(model), judgement, request)
    return str(model), judgement


def read_judgement(output: ModelOutput, request: JudgeRequest, options: JudgeOptions) -> Judgement:
    """A judge's output read as its request says (``auto`` parses a judge without logprobs)."""
    return judge_output(
        output,
        options.method,
        options.completions,
        options.low_mass,
        options.min_parsed,
        no_logprobs=request.no_logprobs,
        certain_if_dropped=request.traits.omits_certain_logprobs,
    )


async def _judge_own_output(state: TaskState, options: JudgeOptions) -> Judgement:
    """Judge mode: the model under evaluation already answered the rubric prompt
    (`judge_generate` asked it as its service accepts; another solver's ``generate()``
    may have left fewer completions than ``samples`` needs: they are topped up)."""
    model = get_model()
    request = judge_request(
        model, options.method, options.completions, options.cot, options.precision
    )
    output = state.output
    if (
        options.method == "samples"
        # a judge_dialog sample's messages are the conversation, not the prompt sent:
        # judge_generate drew every answer the service would give
        and not (state.metadata or {}).get(JUDGE_DIALOG_KEY)
        and output.choices
        and len(output.choices) < options.completions
        and SAMPLING_KEY not in (output.metadata or {})  # a sequential draw that stopped
    ):
        output = await complete_choices(model, _prompt_messages(state.messages), output, request)
        state.output = output
    judgement = read_judgement(output, request, options)
    announce_fallback(str(state.model), judgement, request)
    return judgement


def _prompt_messages(messages: list[ChatMessage]) -> list[ChatMessage]:
    """The messages that were sent to the judge: all but the trailing assistant reply."""
    end = len(messages)
    while end > 0 and messages[end - 1].role == "assistant":
        end -= 1
    return list(messages[:end])


_KEYS = {k: str(k) for k in SCORES}
"""The distribution's keys, one string per score for all the Scores of a run (each Score
keeps only its five probabilities, not five more strings)."""


def _distribution(judgement: Judgement) -> dict[str, float] | None:
    if judgement.distribution is None:
        return None
    return {_KEYS[k]: round(p, 6) for k, p in judgement.distribution.items()}


_MARKDOWN = re.compile(r"([\\`*\[\]<>~])|(?<!\w)_|_(?!\w)")


def markdown_text(text: str) -> str:
    """Text that the viewer's Markdown shows as written (special characters escaped)."""
    return _MARKDOWN.sub(lambda m: "\\" + m.group(), text)


def _explain(judgement: Judgement) -> str:
    """A Markdown-safe explanation: arithmetic with ×, free text escaped."""
    if judgement.value is None:
        return f"{judgement.method}: unscored: {markdown_text(judgement.reason or '')}"
    if judgement.method == "logprobs" and judgement.distribution:
        terms = " + ".join(
            f"{p:.3f} × {k}" for k, p in judgement.distribution.items() if p >= 0.0005
        )
        low = ""
        if judgement.details.get("low_mass"):
            low = f" (low mass: score tokens held {judgement.details['score_token_mass']:.1%})"
        if judgement.details.get("short_list"):
            unlisted = judgement.details.get("unlisted_mass", 0.0)
            low += f" (short list: {unlisted:.1%} of the probability unlisted)"
        return f"logprobs: {terms} = {judgement.value:.3f}{low}"
    if judgement.method == "samples":
        scores = judgement.details.get("scores", [])
        n = judgement.details.get("n_requested", len(scores))
        shown = ", ".join(str(k) for k in scores)
        return f"samples: mean of {len(scores)} of {n} scores ({shown}) = {judgement.value:.3f}"
    extra = judgement.details.get("logprobs_unavailable")
    why = f" (logprobs unavailable: {markdown_text(extra)})" if extra else ""
    return f"parse: {judgement.value:g}{why}"


_NOT_KEPT = frozenset({"parsed"})
"""Judgement details a Score leaves out: ``parsed`` is the score the judge wrote, which
the Score's ``answer`` (the judge's text) already shows."""


def judgement_metadata(judgement: Judgement) -> dict[str, Any]:
    """What a Score keeps of one judgement (the judge's text is the Score's answer).

    Inspect keeps every Score until the end of the run (for the metrics and the log's
    sample summaries), so this is what users and the plugin read, nothing more: the
    method, the distribution over 1-5 (the epoch reducer averages it), the reason
    when unscored, and the method's own details (``score_token_mass`` and ``low_mass``
    for logprobs, the scores and counts of ``samples``, ``logprobs_unavailable``).
    """
    return {
        "method": judgement.method,
        "distribution": _distribution(judgement),
        **({"unscored_reason": judgement.reason} if judgement.reason else {}),
        **{k: v for k, v in judgement.details.items() if k not in _NOT_KEPT},
    }


GRADER_ANSWER_KEY = "grader_answer"
"""Score metadata key: the grader's (judge mode: the judge's) own words, where the Score's
``answer`` leads with the reply rated."""


def draws_summary(judgement: Judgement) -> str:
    """``samples``: every draw in one line, the count of each score (``4 ×12, 5 ×8``, then
    ``unread ×N`` for completions that held no score)."""
    scores = [int(k) for k in judgement.details.get("scores", [])]
    counts = {k: scores.count(k) for k in sorted(set(scores))}
    parts = [f"{k} ×{n}" for k, n in counts.items()]
    unread = int(judgement.details.get("n_received", len(scores))) - len(scores)
    if unread > 0:
        parts.append(f"unread ×{unread}")
    return ", ".join(parts) or "no completion"


def judge_words(judgement: Judgement) -> str:
    """What a judge answered, as a Score shows it: its text, or for ``samples`` the count of
    each score over all its draws (`draws_summary`), not one draw's text."""
    return draws_summary(judgement) if judgement.method == "samples" else judgement.raw


def rated_reply(state: TaskState, cot: bool = False, rubric: str | None = None) -> str | None:
    """Judge mode: the reply the judge rated, the last ``BOT:`` turn of the sample's dialog
    (a ``USER:``/``BOT:`` text input, the rubric prompt, or chat messages), or None when the
    input holds no dialog the plugin made."""
    source = state.input
    if isinstance(source, str):
        dialog = source
        if (state.metadata or {}).get(JUDGE_PROMPT_KEY):
            dialog = dialog_in_prompt(source, cot, rubric) or ""
        return last_bot_turn(dialog)
    turns, _ = turns_from_messages(source)
    return turns[-1].content if turns and turns[-1].role == "bot" else None


def rated_answer(reply: str, words: str) -> str:
    """Judge mode's Score ``answer``: the reply rated first (the viewer's sample header
    shows an answer's first three lines), then the judge's words."""
    return f"BOT: {reply}\n\njudge: {words}"


def to_score(
    judgement: Judgement,
    context: dict[str, Any],
    graded: str | None = None,
    rated: str | None = None,
) -> Score:
    """A Score (or an unscored Score with its reason) for one judgement. ``graded``: the
    reply a grader scored (response mode), which becomes the Score's ``answer`` (Inspect's
    convention: the answer graded); ``rated``: judge mode's reply rated, which leads the
    answer (`rated_answer`). Either way the judge's words (`judge_words`) go to
    ``grader_answer`` in the metadata; with neither the answer is the judge's words."""
    metadata = {**context, **judgement_metadata(judgement)}
    words = judge_words(judgement)
    answer = words
    if graded is not None:
        metadata[GRADER_ANSWER_KEY] = words
        answer = graded
    elif rated is not None:
        metadata[GRADER_ANSWER_KEY] = words
        answer = rated_answer(rated, words)
    if judgement.value is None:
        return Score.unscored(
            reason="grader_failed",
            answer=answer,
            explanation=_explain(judgement),
            metadata=metadata,
        )
    return Score(
        # the exact weighted score (metrics and compare read it); the explanation shows
        # it rounded for reading
        value=judgement.value,
        answer=answer,
        explanation=_explain(judgement),
        metadata=metadata,
    )


def panel_score(
    judgements: list[tuple[str, Judgement]],
    aggregate: Aggregate,
    context: dict[str, Any],
    epoch: int = 1,
    graded: str | None = None,
) -> Score:
    """Combine a panel's judgements: mean (or median) of the judges that scored. The
    answer is the reply graded (``graded``), each judge's words in ``judges`` (``raw``).

    The explanation names the ``epoch``: Inspect's own epoch reducers keep an
    explanation only where every epoch's is the same, so a reduction that kept one
    epoch's per-judge metadata over several epochs shows no explanation, and the
    per-judge metrics (`metrics.judge_means`) withhold their one-epoch figures.
    """
    per_judge = {
        name: judgement_metadata(j) | {"value": j.value, "raw": j.raw} for name, j in judgements
    }
    values = [j.value for _, j in judgements if j.value is not None]
    metadata = {
        **context, "method": "panel", "aggregate": aggregate, "judges": per_judge, "epoch": epoch
    }  # fmt: skip
    explanation = f"(epoch {epoch}) " + "; ".join(
        f"{markdown_text(name)}: {_explain(j)}" for name, j in judgements
    )
    if not values:
        return Score.unscored(
            reason="grader_failed",
            answer=graded,
            explanation="no judge scored: " + explanation,
            metadata=metadata,
        )
    value = statistics.fmean(values) if aggregate == "mean" else statistics.median(values)
    return Score(
        value=float(value),
        answer=graded if graded is not None else " | ".join(j.raw for _, j in judgements),
        explanation=f"panel {aggregate} = {value:.3f}; {explanation}",
        metadata=metadata,
    )
