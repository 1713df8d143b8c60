"""One call for notebooks: score dialogs with a judge and get a pandas DataFrame.

`score_dialogs` runs the `empathy` task (judge mode) with Inspect's ``eval()`` and reads the
log back with ``inspect_ai.analysis.samples_df``: the log is an ordinary Inspect log (open
it in ``inspect view``), the frame one row per dialog.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

SCORER = "empathy_scorer"

COLUMNS = (
    "id", "score", "distribution", "method", "unscored_reason", "human_rating", "passed",
    "answer", "explanation", "log",
)  # fmt: skip
"""The frame's columns (``passed`` only with a ``threshold``)."""


def score_dialogs(
    dialogs: str | Path | Iterable[Mapping[str, Any]],
    model: str = "empathy_baseline/lexicon",
    *,
    threshold: float | None = None,
    log_dir: str | None = None,
    limit: int | None = None,
    display: str = "none",
    **task_args: Any,
) -> pd.DataFrame:
    """Score dialogs with a judge and return one row per dialog.

    Args:
      dialogs: A dataset the `empathy` task reads (a bundled name, a dialog file or folder,
        ``hf:OWNER/NAME``, a YAML/JSON spec), or dialog records as dicts
        (``{"id": ..., "turns": [{"role": "user"|"assistant", "content": ...}], "rating": ...}``).
      model: The judge (``openai/gpt-4o``, ...; the offline floor by default).
      threshold: A pass mark 1-5: adds a ``passed`` column (the score rounded half up is at
        least it, as `empathy_scorer(threshold=...)` marks each sample; unscored fails).
      log_dir: Where Inspect writes the log (Inspect's default, ``./logs``, if None).
      limit: Score only the first ``limit`` dialogs.
      display: Inspect's display (``none`` in a notebook; ``full``, ``rich``, ``plain``).
      **task_args: Arguments of the `empathy` task (``method``, ``completions``, ``cot``,
        ``rubric``, ``calibration``, ...).

    Returns:
      A DataFrame with ``id``, ``score`` (NaN where unscored), ``distribution`` (the
      judge's probability of each level, a dict), ``method``, ``unscored_reason``,
      ``human_rating`` (1-5, NaN when unrated), ``passed`` (with ``threshold``),
      ``answer`` (the reply rated, then the judge's words), ``explanation`` and ``log``
      (the log file, for ``inspect view``).
    """
    from inspect_ai import eval as inspect_eval
    from inspect_ai.analysis import SampleScores, SampleSummary, samples_df

    from .errors import OptionError
    from .scorer import check_threshold, passes
    from .tasks import empathy

    check_threshold(threshold)
    if not isinstance(model, str):
        raise OptionError(f"model must be a model name, not {model!r}")
    with tempfile.TemporaryDirectory(prefix="inspect-empathy-") as folder:
        source = _dataset(dialogs, Path(folder))
        task = empathy(dataset=source, **task_args)
        logs = inspect_eval(
            task, model=model, log_dir=log_dir, limit=limit, display=display  # type: ignore[arg-type]
        )
    [log] = logs
    if log.status != "success":
        raise RuntimeError(f"the run did not finish ({log.status}): {log.error}")
    frame = samples_df(log.location, columns=[*SampleSummary, *SampleScores], quiet=True)
    return _tidy(frame, log.location, threshold, passes)


def _dataset(dialogs: str | Path | Iterable[Mapping[str, Any]], folder: Path) -> str:
    """The `empathy` task's ``dataset`` for ``dialogs``: records are written to a JSONL file
    in ``folder``."""
    if isinstance(dialogs, str | Path):
        return str(dialogs)
    path = folder / "dialogs.jsonl"
    lines = [json.dumps(dict(record), ensure_ascii=False) for record in dialogs]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _objects(values: Iterable[Any]) -> pd.Series:
    """A column of Python objects as they are (dicts, None), not Arrow structs."""
    import pandas as pd

    return pd.Series(list(values), dtype=object)


def _tidy(frame: pd.DataFrame, log: str, threshold: float | None, passes: Any) -> pd.DataFrame:
    import pandas as pd

    def meta(value: Any) -> dict[str, Any]:
        if isinstance(value, str):
            value = json.loads(value)
        return value if isinstance(value, dict) else {}

    def column(name: str) -> list[Any]:
        return frame[name].tolist() if name in frame else [None] * len(frame)

    def number(value: Any) -> float:
        try:
            return float(value) if value is not None else float("nan")
        except (TypeError, ValueError):
            return float("nan")

    metadata = [meta(m) for m in column(f"score_{SCORER}_metadata")]
    out = pd.DataFrame(
        {
            "id": [str(i) for i in frame["id"].tolist()],
            "score": [number(v) for v in column(f"score_{SCORER}")],
            "distribution": _objects(m.get("distribution") for m in metadata),
            "method": [m.get("method") for m in metadata],
            "unscored_reason": _objects(m.get("unscored_reason") for m in metadata),
            "human_rating": [number(v) for v in column("metadata_human_rating")],
            "answer": column(f"score_{SCORER}_answer"),
            "explanation": column(f"score_{SCORER}_explanation"),
            "log": log,
        }
    )
    if threshold is not None:
        out["passed"] = [passes(v, threshold) for v in out["score"]]
    return out[[c for c in COLUMNS if c in out]].reset_index(drop=True)
