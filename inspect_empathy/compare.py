"""Compare judge models: agreement with humans, paired significance, bias, plots.

Reads Inspect logs of the ``empathy`` task (or any task scored by
``empathy_scorer``) with ``inspect_ai.analysis`` and joins the judges' scores
on dataset and sample id::

    from inspect_empathy import compare_judges

    table = compare_judges(["logs/judges"])  # one row per judge, best first

``compare_logs`` returns everything (per-judge table, pairwise differences,
bias diagnostics, the joined samples) and ``write_report`` writes it as CSV,
Markdown, PNG plots and one HTML page; ``inspect-empathy compare`` does both.
"""

from __future__ import annotations

import json
import math
import os
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from inspect_ai.log import EvalLog, EvalSampleSummary, list_eval_logs

from .dialogs import reply_words
from .metrics import HUMAN_KEY

if TYPE_CHECKING:
    import pandas as pd
    from inspect_ai.analysis import Column

# pandas, scipy, matplotlib and inspect_ai.analysis are imported where they are used, so
# that importing inspect_empathy (which Inspect does to register the task) stays fast.

SCORER = "empathy_scorer"
"""Name of the scorer whose scores are compared."""

LogSource = str | os.PathLike[str]

DEFAULT_RESAMPLES = 2000
"""Bootstrap resamples for confidence intervals and p-values."""


class CompareError(ValueError):
    """The logs could not be compared (none found, none scored by the empathy scorer)."""


@dataclass
class JudgeComparison:
    """Everything ``compare_logs`` found. All tables are pandas DataFrames."""

    judges: pd.DataFrame
    """One row per judge, ranked by Spearman with the human ratings (best first)."""
    pairs: pd.DataFrame
    """One row per pair of judges: Spearman difference with paired bootstrap CI, alpha."""
    length_bias: pd.DataFrame
    """Spearman of score against reply length (words), per judge and for the humans."""
    histograms: pd.DataFrame
    """Share of scores at each level 1-5 per judge and for the humans."""
    emotions: pd.DataFrame
    """Per emotion and judge breakdown (empty without ``emotion`` metadata)."""
    samples: pd.DataFrame
    """One row per judge and dialog: score, human rating, reply length, tokens, ..."""
    alpha: float
    """Ordinal Krippendorff's alpha over all judges (NaN with fewer than two)."""
    logs: pd.DataFrame
    """One row per log read: path, judge, model, dataset, status, samples."""
    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def judge_names(self) -> list[str]:
        """Judges in rank order."""
        return list(self.judges["judge"]) if not self.judges.empty else []

    @property
    def has_human(self) -> bool:
        """Whether any dialog has a human rating."""
        return bool(self.samples["human"].notna().any())


# --- reading logs -------------------------------------------------------------------------


def find_logs(sources: Iterable[LogSource]) -> list[str]:
    """Log files named by ``sources``: log files, folders and eval-set folders (recursive)."""
    found: list[str] = []
    for source in sources:
        path = Path(source)
        if path.is_dir():
            names = [info.name for info in list_eval_logs(str(path), recursive=True)]
            found.extend(sorted(names))
        elif path.is_file():
            found.append(str(path.resolve()))
        else:
            raise CompareError(f"{source}: no such log file or folder")
    unique = list(dict.fromkeys(found))
    if not unique:
        shown = ", ".join(str(s) for s in sources)
        raise CompareError(f"no Inspect logs (.eval or .json) found in {shown}")
    return unique


def _empathy_score(summary: EvalSampleSummary) -> Any:
    for name, score in (summary.scores or {}).items():
        if name == SCORER or name.endswith("/" + SCORER):
            return score
    return None


def _score_value(summary: EvalSampleSummary) -> float | None:
    score = _empathy_score(summary)
    if score is None:
        return None
    try:
        value = float(score.value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _score_method(summary: EvalSampleSummary) -> str | None:
    score = _empathy_score(summary)
    method = (score.metadata or {}).get("method") if score is not None else None
    return str(method) if method is not None else None


def _human(summary: EvalSampleSummary) -> float | None:
    score = _empathy_score(summary)
    for source in (summary.metadata, score.metadata if score is not None else None):
        value = (source or {}).get(HUMAN_KEY)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if math.isfinite(value):
                return float(value)
    return None


def _reply_words(summary: EvalSampleSummary) -> int | None:
    """Words in the dialog's last bot reply (the one judged), if the input ends with one."""
    if isinstance(summary.input, str):
        # -T input=prompt: the dialog is inside the rubric prompt; its loader counted
        words = (summary.metadata or {}).get("reply_words")
        return int(words) if isinstance(words, int | float) else None
    for message in reversed(summary.input):
        if message.role == "assistant":
            return reply_words(message.text)
        if message.role == "user":
            return None
    return None


def _emotion(summary: EvalSampleSummary) -> str | None:
    value = (summary.metadata or {}).get("emotion")
    return str(value) if value not in (None, "") else None


def _tokens(summary: EvalSampleSummary) -> int:
    return sum(usage.total_tokens for usage in (summary.model_usage or {}).values())


def sample_columns() -> list[Column]:
    """Columns read from each sample summary (no full sample is loaded)."""
    from inspect_ai.analysis import SampleColumn

    return [
        SampleColumn("id", path="id", required=True, type=str),
        SampleColumn("epoch", path="epoch", required=True),
        SampleColumn("score", path=_score_value, type=float),
        SampleColumn("method", path=_score_method, type=str),
        SampleColumn("human", path=_human, type=float),
        SampleColumn("reply_words", path=_reply_words, type=float),
        SampleColumn("emotion", path=_emotion, type=str),
        SampleColumn("tokens", path=_tokens, type=float),
        SampleColumn("error", path="error", default=""),
    ]


def _model_name(config: Any) -> str:
    if isinstance(config, list):
        return "panel(" + ", ".join(_model_name(c) for c in config) + ")"
    return str(getattr(config, "model", config))


def _scorer_spec(log: EvalLog) -> Any:
    for scorer in log.eval.scorers or []:
        if scorer.name == SCORER or scorer.name.endswith("/" + SCORER):
            return scorer
    return None


def _judge_model(log: EvalLog) -> str:
    """The model that judged: the model under evaluation in judge mode, else the grader."""
    scorer = _scorer_spec(log)
    options = (scorer.options or {}) if scorer is not None else {}
    if options.get("from_output") or (log.eval.metadata or {}).get("mode") == "judge":
        return log.eval.model
    if options.get("model"):
        return _model_name(options["model"])
    role = options.get("model_role", "grader")
    bound = (log.eval.model_roles or {}).get(role)
    if bound:
        return _model_name(bound)
    return log.eval.model


def _cot(log: EvalLog) -> bool:
    scorer = _scorer_spec(log)
    return bool(((scorer.options or {}) if scorer is not None else {}).get("cot"))


def eval_columns() -> list[Column]:
    """Columns read from each log header."""
    from inspect_ai.analysis import EvalColumn

    return [
        EvalColumn("eval_id", path="eval.eval_id", required=True),
        EvalColumn("log", path=lambda log: log.location, required=True),
        EvalColumn("task_id", path="eval.task_id", required=True),
        EvalColumn("created", path="eval.created", required=True),
        EvalColumn("status", path="status", required=True),
        EvalColumn("task", path="eval.task", required=True),
        EvalColumn("model", path=_judge_model, type=str),
        EvalColumn("cot", path=_cot, type=bool),
        EvalColumn("has_scorer", path=lambda log: _scorer_spec(log) is not None, type=bool),
        EvalColumn("dataset", path=lambda log: log.eval.dataset.name or log.eval.dataset.location),
    ]


def _read_log(path: str) -> tuple[pd.Series, pd.DataFrame | None]:
    """A log's header row, and its samples when the empathy scorer scored it (else None)."""
    from inspect_ai.analysis import evals_df, samples_df

    with warnings.catch_warnings():
        # inspect_ai.analysis itself triggers a pandas deprecation warning (drop_duplicates)
        warnings.filterwarnings("ignore", message=".*inplace keyword.*")
        header = evals_df(path, columns=eval_columns(), quiet=True).iloc[0]
        if not bool(header["has_scorer"]):
            return header, None
        samples = samples_df(path, columns=sample_columns(), quiet=True)
    return header, samples


def _as_float(column: pd.Series) -> pd.Series:
    import pandas as pd

    return pd.to_numeric(column.astype(object), errors="coerce").astype(float)


def _as_text(column: pd.Series) -> pd.Series:
    values = column.astype(object)
    return values.where(values.notna() & (values != ""), None)


def load_scores(
    logs: Sequence[LogSource] | LogSource, progress: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Read logs into one row per judge and dialog, plus one row per log and warnings.

    Epochs are averaged per dialog. Logs without the empathy scorer are
    skipped with a warning; of several logs with the same judge on the same
    dataset, a rerun of the same task (eval-set retry) replaces the older log,
    while separate runs are kept as separate judges (``#2``, ``#3``).
    """
    import pandas as pd
    from tqdm.auto import tqdm

    sources = [logs] if isinstance(logs, str | os.PathLike) else list(logs)
    paths = find_logs(sources)
    headers: list[pd.Series] = []
    frames: list[pd.DataFrame] = []
    notes: list[str] = []
    bar = tqdm(paths, desc="reading logs", unit="log", disable=not progress, file=sys.stderr)
    for path in bar:
        header, samples = _read_log(path)
        if samples is None:
            notes.append(f"{path}: skipped (not scored by {SCORER})")
            continue
        headers.append(header)
        frames.append(
            samples.drop(columns=["log"], errors="ignore").assign(eval_id=header["eval_id"])
        )
    if not headers:
        raise CompareError(f"none of the {len(paths)} log(s) was scored by {SCORER}")
    info = pd.DataFrame(headers).reset_index(drop=True)
    info = _label_judges(_drop_retried(info, notes))
    raw = pd.concat(frames, ignore_index=True)
    raw = raw[raw["eval_id"].isin(info["eval_id"])]
    merged = raw.merge(
        info[["eval_id", "log", "judge", "model", "dataset"]], on="eval_id", how="left"
    )
    for column in ("score", "human", "reply_words", "tokens"):
        merged[column] = _as_float(merged[column])
    for column in ("id", "method", "emotion", "judge", "model", "dataset", "log"):
        merged[column] = _as_text(merged[column])
    samples = _per_dialog(merged)
    info["samples"] = info["judge"].map(samples.groupby("judge").size()).fillna(0).astype(int)
    columns = ["judge", "model", "dataset", "task", "status", "cot", "samples", "created", "log"]
    return samples, info[columns], notes


def _drop_retried(info: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """Keep the newest log of each task id (eval-set retries), preferring complete ones."""
    info = info.assign(_ok=info["status"].astype(str).eq("success"))
    info = info.sort_values(["_ok", "created"], ascending=[False, False])
    keep = ~info.duplicated("task_id", keep="first")
    for path in info.loc[~keep, "log"]:
        notes.append(f"{path}: skipped (superseded by a newer log of the same task)")
    return info[keep].drop(columns="_ok").sort_values("created").reset_index(drop=True)


def _label_judges(info: pd.DataFrame) -> pd.DataFrame:
    """A unique judge label per log: the model, with cot / run number where needed."""
    info = info.copy()
    info["model"] = info["model"].astype(str)
    info["judge"] = info["model"]
    cot_models = info.groupby("model")["cot"].nunique()
    mixed = info["model"].map(cot_models) > 1
    info.loc[mixed, "judge"] = info.loc[mixed, "model"] + info.loc[mixed, "cot"].map(
        {True: " [cot]", False: ""}
    )
    run = info.groupby(["judge", "dataset"]).cumcount()
    info.loc[run > 0, "judge"] = info.loc[run > 0, "judge"] + " #" + (run[run > 0] + 1).astype(str)
    return info


def _per_dialog(merged: pd.DataFrame) -> pd.DataFrame:
    """Average epochs: one row per judge and dialog (dataset, id)."""
    grouped = merged.groupby(["judge", "dataset", "id"], sort=False, dropna=False)
    samples = grouped.agg(
        model=("model", "first"),
        score=("score", "mean"),
        method=("method", _first),
        human=("human", "first"),
        reply_words=("reply_words", "first"),
        emotion=("emotion", _first),
        tokens=("tokens", "mean"),
        epochs=("epoch", "size"),
        error=("error", _first),
        log=("log", "first"),
    ).reset_index()
    return samples


def _first(values: pd.Series) -> Any:
    present = values.dropna()
    present = present[present.astype(str) != ""]
    return present.iloc[0] if len(present) else None


# --- comparing ----------------------------------------------------------------------------


def compare_logs(
    logs: Sequence[LogSource] | LogSource,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    progress: bool = False,
) -> JudgeComparison:
    """Compare the judges in ``logs`` (files, folders, eval-set folders).

    Args:
      logs: Log files and/or folders holding them.
      resamples: Bootstrap resamples for CIs and p-values (0 to skip them).
      seed: Seed of the bootstrap.
      progress: Show a progress bar while reading logs.
    """
    from . import _compare_stats as cs

    samples, info, notes = load_scores(logs, progress=progress)
    judges_table = cs.judge_table(samples, resamples, seed)
    names = list(judges_table["judge"])
    return JudgeComparison(
        judges=judges_table,
        pairs=cs.pair_table(samples, names, resamples, seed),
        length_bias=cs.length_bias(samples, names, resamples, seed),
        histograms=cs.histogram_table(samples, names),
        emotions=cs.emotion_table(samples, names),
        samples=samples,
        alpha=cs.overall_alpha(samples, names),
        logs=info,
        resamples=resamples,
        seed=seed,
        warnings=notes,
    )


def compare_judges(
    logs: Sequence[LogSource] | LogSource,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    progress: bool = False,
) -> pd.DataFrame:
    """One row per judge in ``logs``, ranked by Spearman with the human ratings.

    Columns: rank, judge, model, method, samples, scored, unscored, n_human,
    spearman (with spearman_low / spearman_high, a 95% bootstrap CI), kendall,
    pearson, mae, rmse, qwk, exact, within_one, mean_score, tokens_per_sample,
    length_spearman (score vs reply length), share_3_4 and logs. Use
    ``compare_logs`` for the pairwise differences and bias diagnostics too.
    """
    return compare_logs(logs, resamples=resamples, seed=seed, progress=progress).judges


def samples_wide(comparison: JudgeComparison) -> pd.DataFrame:
    """Joined dialogs: human rating, reply length, emotion and one score column per judge."""
    from . import _compare_stats as cs

    samples = comparison.samples
    wide = cs.wide_scores(samples, comparison.judge_names)
    extra = samples.groupby(["dataset", "id"]).agg(
        human=("human", "first"), reply_words=("reply_words", "first"), emotion=("emotion", _first)
    )
    return extra.join(wide, how="outer").reset_index()


def to_jsonable(value: Any) -> Any:
    """NaN-free, JSON-ready copy of a scalar (for summaries)."""
    if isinstance(value, float | np.floating):
        return None if not math.isfinite(float(value)) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def summary(comparison: JudgeComparison) -> dict[str, Any]:
    """A JSON-ready summary: judges, pairs, alpha and warnings."""

    def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
        return [
            {k: to_jsonable(v) for k, v in row.items()} for row in frame.to_dict(orient="records")
        ]

    return {
        "judges": records(comparison.judges),
        "pairs": records(comparison.pairs),
        "alpha": to_jsonable(comparison.alpha),
        "resamples": comparison.resamples,
        "seed": comparison.seed,
        "warnings": comparison.warnings,
    }


def write_summary(comparison: JudgeComparison, path: Path) -> Path:
    """Write ``summary(comparison)`` as JSON."""
    path.write_text(json.dumps(summary(comparison), indent=2), encoding="utf-8")
    return path


def write_report(
    comparison: JudgeComparison, out: LogSource, plots: bool = True
) -> dict[str, Path]:
    """Write CSV, Markdown, PNG plots and an HTML report into ``out``; returns the files."""
    from ._compare_report import write_all

    return write_all(comparison, Path(out), plots=plots)
