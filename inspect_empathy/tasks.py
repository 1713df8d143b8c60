"""Inspect tasks: the empathy rubric in judge mode and in response mode."""

from __future__ import annotations

from typing import Any, Literal

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import Dataset
from inspect_ai.log import HeadlineMetric
from inspect_ai.model import ModelRole, model_roles
from inspect_ai.solver import Solver
from inspect_ai.viewer import TaskSamplesColumn, TaskSamplesView, ViewerConfig

from ._util.compat import PrerequisiteError, active_model, loading_tasks
from .dataset._dataset import DatasetError, OnInvalid, load_dialogs, skipped_summary
from .dataset.per_turn import CONVERSATION_RATING_KEY
from .errors import OptionError
from .judge._geval import MIN_PARSED, Method
from .judge._judge_call import PRECISION
from .judge._rubric import check_rubric_for
from .reducer import empathy_mean
from .scorer import (
    Aggregate,
    LowMass,
    check_options,
    check_precision,
    empathy_scorer,
    missing_grader_message,
    resolve_calibration,
)
from .solver import empathy_prompt, graded_generate, judge_generate, reply_system_prompt

HEADLINE_METRIC = "somers_d_all"
"""Judge mode's headline metric when the dataset has human ratings: Somers' D of the
judge's scores on the human ratings over every rated dialog of the run, each dialog the
judge left unscored counted as ordered against people (`metrics.coverage_agreement`), so
the viewer's log list ranks judges by agreement and a judge cannot climb it by skipping
hard dialogs (without ratings, the mean)."""


def refuse_unknown(name: str, task_fn: Any, unknown: dict[str, Any]) -> None:
    """Refuse, in one line, a task argument the task does not take (``-T metod=samples``):
    Inspect passes every ``-T`` argument to a task that takes ``**kwargs`` and, to others,
    drops the unknown ones with a warning and runs on the defaults."""
    if not unknown:
        return
    import difflib
    import inspect

    valid = [
        p.name for p in inspect.signature(task_fn).parameters.values()
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    ]  # fmt: skip
    wrong = sorted(unknown)
    close = [m for w in wrong for m in difflib.get_close_matches(w, valid, n=1)]
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise OptionError(
        f"-T {', '.join(wrong)}: not an argument of {name}{hint}; it takes "
        + ", ".join(valid)
    )


CONVERSATION_HEADLINE = "conv_spearman"
"""The headline of a per-turn judge run whose ratings belong to whole conversations
(``rating_scope: conversation``): Spearman of each conversation's mean turn score with its
rating (`stats.conversation`), so the log list shows agreement, not the mean."""


def _judge_view(show_input: bool) -> ViewerConfig:
    return ViewerConfig(
        task_samples_view=TaskSamplesView(
            name="judge mode",
            columns=[
                TaskSamplesColumn(id="sampleId"),
                TaskSamplesColumn(id="input", visible=show_input),
                TaskSamplesColumn(id="target"),
                TaskSamplesColumn(id="answer"),
                TaskSamplesColumn.score("empathy_scorer"),
                TaskSamplesColumn(id="error"),
                TaskSamplesColumn(id="sampleStatus", visible=False),
            ],
            multiline=False,
        )
    )


JUDGE_VIEW = _judge_view(show_input=True)
"""The viewer's sample list for judge mode: the id, the conversation (the input: the dialog
as ``USER:``/``BOT:`` lines), the human rating (target), the answer (the reply rated,
then the judge's words: `scorer.rated_answer`), its score
(empty where the judge left the dialog unscored) and the error of a sample that failed.
The viewer's status column is hidden: its green tick means "ran without error" and marks an
unscored sample just as it marks a scored one (``Columns`` shows it again)."""

PROMPT_VIEW = _judge_view(show_input=False)
"""`JUDGE_VIEW` for ``-T input=prompt``: every input opens with the same rubric, so the
input column is hidden."""


@task
def empathy(
    dataset: str = "default",
    method: Method = "auto",
    completions: int | None = None,
    cot: bool = False,
    shuffle: bool = False,
    format: str | None = None,
    on_invalid: OnInvalid | None = None,
    max_turns: int | None = None,
    input: Literal["conversation", "prompt", "dialog"] = "conversation",
    low_mass: LowMass = "keep",
    min_parsed: float = MIN_PARSED,
    calibration: str | None = None,
    samples: int | None = None,
    precision: float = PRECISION,
    rubric: str | None = None,
    per_turn: bool = False,
    **unknown: Any,
) -> Task:
    """Judge mode: the model under evaluation rates each dialog's last bot reply (1-5).

    Args:
      dataset: Bundled dataset name, a dialog file or folder, ``hf:OWNER/NAME``,
        or a YAML/JSON dataset spec file.
      method: G-Eval scoring: ``auto``, ``logprobs``, ``samples`` or ``parse``.
      completions: Sampled completions per dialog for ``method=samples`` (default 20).
      cot: Ask for brief reasoning before the score.
      shuffle: Shuffle the samples.
      format: The dataset's format where it cannot be inferred (``jsonl``, ``csv``,
        ``transcript``, ``empathetic_exchanges``, ``ieval``, ``esconv``, ...).
      on_invalid: ``fail`` (default) on any invalid record, before any model call,
        or ``skip`` them and record the counts in the log (``metadata.dataset``).
      max_turns: Keep only the last N turns of each dialog (with a marker).
      input: ``conversation`` (default): each sample's input is the dialog as
        ``USER:``/``BOT:`` lines, and `judge_generate` sends the rubric prompt with it
        in the slot: the viewer opens a sample on the conversation, at the per-sample
        cost of a bare Inspect task. ``prompt``: the input is the rubric prompt itself,
        for ``generate()`` alone. ``dialog``: the input is the dialog as chat messages
        and the `empathy_prompt` solver swaps in the same prompt (about 1.2x the CPU,
        see docs/performance.md). All three send the judge the same prompt.
      low_mass: ``keep`` or ``unscored``: logprobs scores whose score tokens held
        under half the probability (always counted in the ``low_mass`` metric).
      min_parsed: ``samples``: least share of the completions that must hold a score.
      calibration: A calibration file (``inspect-empathy calibrate``) that maps
        the judge's scores onto the human scale (raw scores kept beside them).
      samples: Deprecated alias of ``completions`` (warns once).
      precision: ``samples`` on a judge that returns fewer than ``completions`` answers
        a call: draw until one more answer would cut the weighted score's posterior
        variance by less than this squared (default 0.065; 0 draws all ``completions``).
      rubric: A rubric variant instead of the seed (the reference): a bundled name
        (``no_steps``, ``anchored``) or a file with one ``{{Dialog}}`` slot; checked
        before any model call; its name and content hash go into the log.
      per_turn: One sample per bot turn of each dialog, the dialog up to that turn
        (ids ``<dialog>#t<k>``; ``max_turns`` applies to each), with metrics per
        conversation (`per_turn.conversation_metrics`).
    """
    refuse_unknown("empathy", empathy, unknown)
    n = check_options(method, completions, samples, low_mass, min_parsed, prefix="-T ")
    check_precision(precision, prefix="-T ")
    identity = rubric_identity(rubric, cot)
    provenance = calibration_provenance(calibration, identity)
    if input not in ("conversation", "prompt", "dialog"):
        raise PrerequisiteError(
            f"input must be 'conversation', 'prompt' or 'dialog', not {input!r}"
        )
    data = load_dialogs(
        dataset, format, shuffle=shuffle, on_invalid=on_invalid, max_turns=max_turns
    )
    if per_turn:
        data = data.per_turn()
    summary = skipped_summary(data)
    check_retry_inputs(summary, identity, provenance, "empathy")
    rated = any(record.rating is not None for record in data.records)
    headline = HeadlineMetric(metric=HEADLINE_METRIC) if rated else None
    if not rated and per_turn and any(
        CONVERSATION_RATING_KEY in record.metadata for record in data.records
    ):
        # rated per conversation (iEval, EmpatheticDialogues): agreement at that level
        headline = HeadlineMetric(scorer="empathy_scorer", metric=CONVERSATION_HEADLINE)
    asking = judge_generate(
        method=method, completions=n, cot=cot, precision=precision, rubric=rubric
    )
    dataset: Dataset = data
    solvers: list[Solver] = [asking]
    if input == "conversation":
        dataset = data.as_judge_dialogs()
    elif input == "prompt":
        dataset = data.as_prompts(cot, rubric)
    else:
        solvers = [empathy_prompt(cot=cot, rubric=rubric), asking]
    return Task(
        dataset=dataset,
        solver=solvers,
        scorer=empathy_scorer(
            method=method,
            completions=n,
            cot=cot,
            from_output=True,
            low_mass=low_mass,
            min_parsed=min_parsed,
            calibration=calibration,
            precision=precision,
            rubric=rubric,  # the map's rubric is checked against the run's
        ),
        epochs=Epochs(1, empathy_mean()),
        headline_metric=headline,
        setup=calibration_setup(calibration, provenance),
        version=task_version(provenance, summary, identity),
        viewer={"conversation": JUDGE_VIEW, "prompt": PROMPT_VIEW}.get(input),
        metadata={
            "mode": "judge",
            "method": method,
            "completions": n,
            "cot": cot,
            "rubric": identity,
            "per_turn": per_turn,
            "input": input,
            "dataset": summary,
            "calibration": provenance,
        },
    )


def rubric_identity(rubric: str | None, cot: bool = False) -> dict[str, str]:
    """The rubric's identity for the log (name, content hash, source), or a one-line
    error naming the file before any model call (with ``cot``, a rubric without the
    closing line the reasoning variant replaces is one too)."""
    try:
        return check_rubric_for(rubric, cot).identity()
    except ValueError as ex:
        raise OptionError(str(ex)) from None


def calibration_provenance(
    path: str | None, rubric: dict[str, str] | None = None
) -> dict[str, Any] | None:
    """The calibration map's provenance for the log (file, sha256, method, n, fitted on),
    or a one-line error naming the file: a map fitted under another rubric than the run's
    identity ``rubric`` (name and content hash) is refused here; under ``eval-retry``,
    the original run's map (`calibration.resolve`)."""
    try:
        calibration, provenance = resolve_calibration(path)
        if calibration is not None and rubric is not None:
            calibration.check_identity(None, rubric, f"calibration file {path}")
    except ValueError as ex:
        raise OptionError(str(ex)) from None
    return provenance


def task_version(
    provenance: dict[str, Any] | None,
    dataset: dict[str, Any] | None = None,
    rubric: dict[str, str] | None = None,
) -> str:
    """`TASK_VERSION` and the content of everything the run read: the dataset's records
    (``+dataset.<hash>``), the rubric (``.rubric.<hash>``) and a calibration map
    (``.calibration.<hash>``), 16 hex digits each.

    Inspect pairs an eval set's tasks with their logs by an identity that holds the
    task's version: a set resumed after one of these files changed finds no log of its
    tasks and stops (its log folder holds a log of another task) rather than judge the
    resumed dialogs on the new file and the others on the old."""
    pins = []
    if dataset and dataset.get("sha256"):
        pins.append(f"dataset.{str(dataset['sha256'])[:16]}")
    if rubric and rubric.get("sha256"):
        pins.append(f"rubric.{rubric['sha256'][:16]}")
    if provenance:
        from .stats.calibration import content_key

        pins.append(f"calibration.{content_key(provenance)}")
    return TASK_VERSION + ("+" + ".".join(pins) if pins else "")


def check_retry_inputs(
    dataset: dict[str, Any] | None,
    rubric: dict[str, str],
    calibration: dict[str, Any] | None = None,
    task: str = "empathy",
) -> None:
    """Under ``eval-retry``, or an eval set run again on its folder: one line naming the
    dataset, rubric or calibration file whose content is not the earlier run's, before any
    model call (the resumed dialogs would be judged on the new file beside the others judged
    on the old; Inspect's own eval-set refusal names no file). An eval set's logs of another
    dataset file, and logs from before the hashes were recorded, are not checked."""
    from ._util.rerun import eval_set_logs_metadata, retried_log_metadata

    recorded = retried_log_metadata()
    if recorded is not None:
        # a retried run's calibration map is the one its log records (`calibration.for_retry`)
        runs, what, maps = [recorded], "eval-retry: {} changed since the run being retried", False
    else:
        folder, runs = eval_set_logs_metadata(task)
        source = (dataset or {}).get("source")
        runs = [r for r in runs if (r.get("dataset") or {}).get("source") == source]
        what, maps = "eval-set: {} changed since the logs in " + folder + " were written", True
    for run in runs:
        pairs = [
            (f"the dataset {(dataset or {}).get('source', '')}",
             (run.get("dataset") or {}).get("sha256"), (dataset or {}).get("sha256")),
            (f"the rubric {rubric.get('source')}",
             (run.get("rubric") or {}).get("sha256"), rubric.get("sha256")),
        ]  # fmt: skip
        was_map = run.get("calibration")
        if maps and (was_map or calibration):
            from .stats.calibration import content_key

            shown = (calibration or {}).get("file") or (was_map or {}).get("file")
            pairs.append((f"the calibration map {shown}",
                          content_key(was_map) if was_map else "none",
                          content_key(calibration) if calibration else "none"))  # fmt: skip
        for name, was, now in pairs:
            if was and now and str(was) != str(now):
                raise OptionError(
                    what.format(name) + f" (content {str(was)[:12]}..., now {str(now)[:12]}...)"
                    ": restore it, or start a new run in a new log folder"
                )


def calibration_setup(
    path: str | None,
    provenance: dict[str, Any] | None,
    role: str | None = None,
    self_grading: bool = True,
) -> Solver | None:
    """With a map fitted on a recorded judge: the setup step that stops a sample before
    its first model call when the run's judge is another (`calibration.calibration_judge`);
    refused at once (one line) where Inspect already knows the judge as it builds the task
    (``inspect eval``: judge mode the model, response mode the ``role``'s models)."""
    judge = (provenance or {}).get("judge")
    if path is None or not isinstance(judge, str):
        return None
    from .stats.calibration import calibration_judge, check_judge

    model = active_model()
    if model is not None and loading_tasks():
        try:
            check_judge(path, judge, str(model), role, self_grading)
        except ValueError as ex:
            raise OptionError(str(ex)) from None
    return calibration_judge(path, judge, role, self_grading)


TASK_VERSION = "1.3.0"
"""Both tasks' version (in each log's ``eval.task_version``): 1.1.0 is judge mode's
headline ``somers_d_all`` and the run counts in sample metadata; 1.2.0 judge mode's input,
the conversation (``-T input=conversation``), with the same prompt sent to the judge;
1.3.0 response mode's reference reply as the sample's target (it was metadata
``reference_reply``)."""

GRADER_ROLE = "grader"
SELF_GRADING_HINT = (
    "To let the model under evaluation grade itself anyway, pass -T self_grading=true "
    "(self_grading=True in Python)."
)


@task
def empathy_response(
    dataset: str = "default",
    system_prompt: str | None = None,
    grader_method: Method = "auto",
    completions: int | None = None,
    cot: bool = False,
    self_grading: bool = False,
    group_by: str | None = None,
    aggregate: Aggregate = "mean",
    shuffle: bool = False,
    format: str | None = None,
    on_invalid: OnInvalid | None = None,
    max_turns: int | None = None,
    low_mass: LowMass = "keep",
    min_parsed: float = MIN_PARSED,
    calibration: str | None = None,
    samples: int | None = None,
    precision: float = PRECISION,
    rubric: str | None = None,
    per_turn: bool = False,
    **unknown: Any,
) -> Task:
    """Response mode: the model under evaluation writes the reply; a grader rates it (1-5).

    Each dialog is cut before its last bot turn: the original reply is the sample's
    target and its human rating stays in metadata as ``reference_rating``. Each input
    message opens with who speaks (``USER:``, ``BOT:``: the viewer shows an input as its
    messages' text alone); the model replies to the messages without the labels.
    The reply is graded with the rubric by the model(s) bound to the ``grader``
    role (``--model-role grader=...``; several make a panel).

    Args:
      dataset: Bundled dataset name, a dialog file or folder, ``hf:OWNER/NAME``,
        or a YAML/JSON dataset spec file (any loader; its last bot turn is cut off).
      system_prompt: System prompt for the model under evaluation (text, or a
        path to a text file).
      grader_method: G-Eval scoring: ``auto``, ``logprobs``, ``samples`` or ``parse``.
      completions: Grader completions per reply for ``grader_method=samples``
        (default 20).
      cot: Ask the grader for brief reasoning before the score.
      self_grading: Allow the model under evaluation to grade its own replies
        when no grader is bound (biased; refused otherwise).
      group_by: Sample metadata field (e.g. ``emotion``) to report metrics by.
      aggregate: How a panel's scores combine: ``mean`` or ``median``.
      shuffle: Shuffle the samples.
      format: The dataset's format where it cannot be inferred (as for ``empathy``).
      on_invalid: ``fail`` (default) on any invalid record, or ``skip`` them (counted in
        the log); a spec file's own ``on_invalid`` applies when this is not given.
      max_turns: Keep only the last N turns of each dialog (with a marker).
      low_mass: ``keep`` or ``unscored``: logprobs scores whose score tokens held
        under half the probability (always counted in the ``low_mass`` metric).
      min_parsed: ``samples``: least share of the completions that must hold a score.
      calibration: A calibration file (``inspect-empathy calibrate``) that maps
        the grader's scores onto the human scale (raw scores kept beside them).
      samples: Deprecated alias of ``completions`` (warns once).
      precision: ``grader_method=samples`` on a grader that returns fewer than
        ``completions`` answers a call: draw until one more answer would cut the
        posterior variance by less than this squared.
      rubric: A rubric variant for the grader instead of the seed (as for ``empathy``).
      per_turn: One sample per bot turn of each dialog: the model replies at every
        point where the bot spoke (as for ``empathy``).
    """
    refuse_unknown("empathy_response", empathy_response, unknown)
    identity = rubric_identity(rubric, cot)
    n = check_options(grader_method, completions, samples, low_mass, min_parsed, prefix="-T ")
    check_precision(precision, prefix="-T ")
    provenance = calibration_provenance(calibration, identity)
    if not self_grading and grader_unbound_now(GRADER_ROLE):
        raise PrerequisiteError(missing_grader_message(GRADER_ROLE, SELF_GRADING_HINT))
    data = load_dialogs(
        dataset,
        format,
        cut_reply=True,
        shuffle=shuffle,
        on_invalid=on_invalid,
        max_turns=max_turns,
    )
    if per_turn:
        data = data.per_turn()
    data = data.labelled_replies()  # the viewer's INPUT says who said what
    summary = skipped_summary(data)
    check_retry_inputs(summary, identity, provenance, "empathy_response")
    if group_by:
        check_group_key(data, group_by)
    solvers: list[Solver] = []
    if system_prompt:
        solvers.append(reply_system_prompt(system_prompt))
    # one solver checks the grader (without self-grading) before the model replies, then
    # generates on the messages without their labels (one span a sample, not two)
    solvers.append(graded_generate(GRADER_ROLE, SELF_GRADING_HINT, required=not self_grading))
    return Task(
        dataset=data,
        solver=solvers,
        scorer=empathy_scorer(
            method=grader_method,
            completions=n,
            cot=cot,
            model_role=ModelRole(GRADER_ROLE, required=not self_grading),
            aggregate=aggregate,
            low_mass=low_mass,
            min_parsed=min_parsed,
            group_by=group_by,
            calibration=calibration,
            precision=precision,
            rubric=rubric,
        ),
        epochs=Epochs(1, empathy_mean()),
        setup=calibration_setup(calibration, provenance, GRADER_ROLE, self_grading),
        version=task_version(provenance, summary, identity),
        metadata={
            "mode": "response",
            "rubric": identity,
            "per_turn": per_turn,
            "grader_method": grader_method,
            "cot": cot,
            "self_grading": self_grading,
            "group_by": group_by,
            "dataset": summary,
            "calibration": provenance,
        },
    )


def grader_unbound_now(role: str) -> bool:
    """True when task construction runs inside ``eval()`` and no model is bound to ``role``.

    ``inspect eval`` (and ``eval()`` given task names) binds model roles before
    it constructs tasks, with the model under evaluation active; a Task built
    outside ``eval()`` cannot know its roles yet (and after ``eval_set()`` the active
    model and roles are the last run's), so `graded_generate` checks again when each
    sample starts.
    """
    return (
        active_model() is not None
        and model_roles().get(role) in (None, [])
        and loading_tasks()
    )


def check_group_key(data: Dataset, key: str) -> None:
    """Every sample must carry ``key`` in its metadata for metrics grouped by it."""
    missing = [str(s.id) for s in data if (s.metadata or {}).get(key) is None]
    if missing:
        shown = ", ".join(missing[:10]) + (
            f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        )
        raise DatasetError(
            f"group_by={key!r}: {len(missing)} of {len(data)} samples have no {key!r} "
            f"metadata ({shown})"
        )
