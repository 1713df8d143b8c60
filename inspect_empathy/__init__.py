"""inspect-empathy: the G-Eval empathy rubric as an Inspect AI task, scorer and metrics.

The public API: the tasks (``empathy``, ``empathy_response``), the scorer, solver,
epoch reducer and metrics to add to your own tasks, the dataset loader, the
comparison of judges and the errors. Everything else lives in the modules that hold
it (``inspect_empathy._rubric``, ``inspect_empathy.dialogs``, ...).

Names are imported on first use: Inspect imports the plugin (``inspect_empathy._registry``)
at every start, also for unrelated tasks, and ``inspect-empathy --help`` should not wait
for Inspect, so importing this package loads nothing but this file.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._stats import agreement
    from .compare import CompareError, compare_judges, compare_logs, write_report
    from .dataset import load_dialogs, skipped_summary
    from .errors import DatasetError, OptionError
    from .metrics import (
        group_metrics,
        human_agreement,
        human_ceiling,
        judge_agreement,
        judge_means,
        level_shares,
        scoring_counts,
        share_at_least,
    )
    from .reducer import empathy_mean
    from .scorer import empathy_scorer
    from .solver import empathy_prompt
    from .tasks import empathy, empathy_response

_EXPORTS: dict[str, str] = {
    # tasks
    "empathy": "tasks",
    "empathy_response": "tasks",
    # scorer, solver, epoch reducer
    "empathy_scorer": "scorer",
    "empathy_prompt": "solver",
    "empathy_mean": "reducer",
    # metrics for your own suites
    "human_agreement": "metrics",
    "human_ceiling": "metrics",
    "judge_agreement": "metrics",
    "judge_means": "metrics",
    "level_shares": "metrics",
    "scoring_counts": "metrics",
    "group_metrics": "metrics",
    "share_at_least": "metrics",
    "agreement": "_stats",
    # datasets
    "load_dialogs": "dataset",
    "skipped_summary": "dataset",
    # comparing judges
    "compare_judges": "compare",
    "compare_logs": "compare",
    "write_report": "compare",
    # errors
    "CompareError": "compare",
    "DatasetError": "errors",
    "OptionError": "errors",
}

__all__ = [
    "CompareError",
    "DatasetError",
    "OptionError",
    "agreement",
    "compare_judges",
    "compare_logs",
    "empathy",
    "empathy_mean",
    "empathy_prompt",
    "empathy_response",
    "empathy_scorer",
    "group_metrics",
    "human_agreement",
    "human_ceiling",
    "judge_agreement",
    "judge_means",
    "level_shares",
    "load_dialogs",
    "scoring_counts",
    "share_at_least",
    "skipped_summary",
    "write_report",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        # AttributeError lets ``from inspect_empathy import humans`` import the submodule
        raise AttributeError(f"module 'inspect_empathy' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
