"""One line at the end of each task: how the empathy scorer's samples were scored.

Metrics never see unscored samples (Inspect excludes them), so the counts of
unscored samples and their reasons are printed here, when a task ends, for every
task that has an empathy scorer and any unscored, fallback, low-mass or partial sample.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter

from inspect_ai.hooks import Hooks, TaskEnd, hooks
from inspect_ai.log import EvalLog

logger = logging.getLogger("inspect_empathy")

_FLAGS = ("fallback", "low_mass", "partial")
_DETAIL = re.compile(r"\s*(?::\s|\().*$", re.DOTALL)


def _reason_kind(reason: str) -> str:
    """A reason without its specifics (the quoted answer, the numbers)."""
    return _DETAIL.sub("", reason).strip() or reason.strip()


def _unscored_reasons(log: EvalLog, scorer: str) -> Counter[str]:
    reasons: Counter[str] = Counter()
    for sample in log.samples or []:
        score = (sample.scores or {}).get(scorer)
        if score is None or not (isinstance(score.value, float) and math.isnan(score.value)):
            continue
        metadata = score.metadata or {}
        reason = metadata.get("unscored_reason") or score.explanation or "no reason recorded"
        reasons[_reason_kind(str(reason))] += 1
    return reasons


def summary_lines(log: EvalLog) -> list[str]:
    """For each empathy scorer in the log's results with something to report: one line."""
    lines: list[str] = []
    for result in (log.results.scores if log.results else []) or []:
        if not result.name.endswith("empathy_scorer") and result.scorer != "empathy_scorer":
            continue
        metrics = {name: m.value for name, m in result.metrics.items()}
        scored = int(result.scored_samples or metrics.get("scored", 0) or 0)
        unscored = int(result.unscored_samples or 0)
        flags = {f: int(metrics.get(f, 0)) for f in _FLAGS if metrics.get(f)}
        if not unscored and not flags:
            continue
        methods = ", ".join(
            f"{name.removeprefix('by_')} {int(value)}"
            for name, value in metrics.items()
            if name.startswith("by_") and value
        )
        line = f"{result.name}: {scored} of {scored + unscored} samples scored"
        if methods:
            line += f" ({methods})"
        if flags:
            line += "; " + ", ".join(f"{name} {count}" for name, count in flags.items())
        if unscored:
            reasons = _unscored_reasons(log, result.name)
            shown = "; ".join(f"{count} × {reason}" for reason, count in reasons.most_common(3))
            line += f"; {unscored} unscored" + (f": {shown}" if shown else "")
        lines.append(line)
    return lines


@hooks(name="inspect_empathy_summary", description="Scored/unscored counts of empathy scorers.")
class ScoringSummary(Hooks):
    """Prints `summary_lines` when a task ends."""

    async def on_task_end(self, data: TaskEnd) -> None:
        for line in summary_lines(data.log):
            logger.warning(line)
