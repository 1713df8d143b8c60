"""inspect-empathy: the G-Eval empathy rubric as an Inspect AI task, scorer and metrics.

The public API: the tasks (``empathy``, ``empathy_response``), the scorer, solver,
epoch reducer and metrics to add to your own tasks, the dataset loader, the
comparison of judges and the errors. The task, solver, scorer and reducer sit at the top,
where Inspect keeps them; the rest lives in one package per concept:

- ``judge/``: how a judge is asked and its answer read (rubric, one verdict or none, providers,
  G-Eval, the request, the offline baselines);
- ``dataset/``: dialogs and datasets (loaders, samples, per-turn expansion), over the
  records of ``dialogs.py``;
- ``stats/``: the statistics of agreement (metrics, human ceiling, calibration, alt-test,
  self-consistency);
- ``compare/``: comparing judges from their logs (tables, report, PPI, published ratings);
- ``cli/``: the ``inspect-empathy`` command line;
- ``_util/``: plumbing (Inspect internals, file kinds, a judge's usage, the end-of-task summary);
- ``notebook.py``: `score_dialogs`, dialogs scored into a pandas DataFrame;
- ``dialogs.py``, ``errors.py``: the dialog records and the public exceptions, below them all.

Names are imported on first use: Inspect imports the plugin (``inspect_empathy._registry``)
at every start, also for unrelated tasks, and ``inspect-empathy --help`` should not wait
for Inspect, so importing this package loads nothing but this file and `_moved` (the module
paths of the flat 0.1 layout, still importable).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import _moved

_moved.install()

if TYPE_CHECKING:
    from .compare import CompareError, compare_judges, compare_logs, write_report
    from .dataset import load_dialogs, skipped_summary
    from .errors import DatasetError, OptionError
    from .notebook import score_dialogs
    from .reducer import empathy_mean
    from .scorer import empathy_scorer
    from .solver import empathy_prompt
    from .stats._agreement import agreement
    from .stats.metrics import (
        group_metrics,
        human_agreement,
        human_ceiling,
        judge_agreement,
        judge_means,
        level_shares,
        scoring_counts,
        share_at_least,
    )
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
    "human_agreement": "stats.metrics",
    "human_ceiling": "stats.metrics",
    "judge_agreement": "stats.metrics",
    "judge_means": "stats.metrics",
    "level_shares": "stats.metrics",
    "scoring_counts": "stats.metrics",
    "group_metrics": "stats.metrics",
    "share_at_least": "stats.metrics",
    "agreement": "stats._agreement",
    # notebooks: dialogs scored into a DataFrame
    "score_dialogs": "notebook",
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
    "score_dialogs",
    "scoring_counts",
    "share_at_least",
    "skipped_summary",
    "write_report",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        if name in _moved.MOVED:  # a module of the flat 0.1 layout: the module, moved
            return importlib.import_module(f".{name}", __name__)
        # AttributeError lets ``from inspect_empathy import dialogs`` import the submodule
        raise AttributeError(f"module 'inspect_empathy' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
