"""Compare judge models: agreement with humans, paired significance, bias, plots.

Reads Inspect logs scored by ``empathy_scorer`` (judge mode, response mode,
re-scored logs, panels) and joins the judges' scores on the dialogs they share::

    from inspect_empathy.compare import compare_judges

    table = compare_judges(["logs/judges"])  # one row per judge, best first

``compare_logs`` returns everything (per-judge table, pairwise differences,
bias diagnostics, the joined samples) and ``write_report`` writes it as CSV,
Markdown, PNG plots and one HTML page; ``inspect-empathy compare`` does both.

The package depends one way: ``comparison`` (types) <- ``logs`` (reading) <-
``stats`` (its statistics) <- ``ceiling`` (the human ceiling and cross-fitted
calibration, from ``inspect_empathy.stats``) <- ``tables`` (the comparison
tables) <- ``plots`` / ``report``; ``fit`` (``inspect-empathy calibrate``) reads
logs with ``logs``. This module only forwards to them, importing each on first use so
that ``import inspect_empathy`` does not load pandas, scipy or matplotlib.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .comparison import (
    CALIBRATION_METHODS,
    DEFAULT_CALIBRATION,
    DEFAULT_RESAMPLES,
    SCORER,
    CompareError,
    JudgeComparison,
    LogSource,
)

if TYPE_CHECKING:
    import pandas as pd

    from .logs import LoadedScores

__all__ = [
    "CALIBRATION_METHODS",
    "DEFAULT_CALIBRATION",
    "DEFAULT_RESAMPLES",
    "SCORER",
    "CompareError",
    "JudgeComparison",
    "compare_judges",
    "compare_logs",
    "find_logs",
    "load_scores",
    "samples_wide",
    "summary",
    "write_report",
]


def find_logs(sources: Sequence[LogSource]) -> list[str]:
    """Log files named by ``sources``: log files, folders and eval-set folders (recursive)."""
    from .logs import find_logs as find

    return find(sources)


def load_scores(
    logs: Sequence[LogSource] | LogSource, progress: bool = False, dataset: str | None = None
) -> LoadedScores:
    """Read logs into one row per judge and dialog (see ``logs.load_scores``)."""
    from .logs import load_scores as load

    return load(logs, progress=progress, dataset=dataset)


def compare_logs(
    logs: Sequence[LogSource] | LogSource,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    progress: bool = False,
    dataset: str | None = None,
    calibration_method: str = DEFAULT_CALIBRATION,
    published: Sequence[LogSource] = (),
    alt_epsilon: float = 0.2,
    prices: LogSource | None = None,
) -> JudgeComparison:
    """Compare the judges in ``logs`` (files, folders, eval-set folders).

    Args:
      logs: Log files and/or folders holding them.
      resamples: Bootstrap resamples for CIs and p-values (0 to skip them).
      seed: Base seed of the bootstrap (each judge and pair derives its own from its names).
      progress: Show progress bars while reading logs and bootstrapping.
      dataset: Which dialogs to compare when the logs cover several datasets: a dataset
        name or content fingerprint prefix (default: the dialogs with the most judges).
      calibration_method: The map of the cross-fitted ``mae_calibrated`` /
        ``qwk_calibrated`` columns: ``shift`` (default), ``linear`` or ``isotonic``.
      published: ``format: raters`` spec files whose published judges join the logs'
        dialogs by id (``compare.published``); with no logs, compared on their own.
      alt_epsilon: The alternative-annotator test's margin epsilon (``alttest``;
        default 0.2, the paper's default for expert raters).
      prices: A price file in Inspect's ``--model-cost-config`` format (YAML or JSON: model
        -> price per million input, output and cache tokens, optionally ``reasoning``;
        ``compare.prices``) for ``cost_per_dialog``; without one, the cost Inspect recorded
        in the logs is used where there is one. CompareError (one line naming the file) on
        a malformed file, a model priced twice, or a compared judge model it does not price.
    """
    if not 0 <= alt_epsilon < 1:
        raise CompareError(f"alt-test epsilon must be in [0, 1), not {alt_epsilon!r}")
    if calibration_method not in CALIBRATION_METHODS:
        raise CompareError(
            f"calibration method must be one of {', '.join(CALIBRATION_METHODS)}, "
            f"not {calibration_method!r}"
        )
    from .tables import build_comparison

    price_table = None
    if prices is not None:
        from .prices import load_prices

        price_table = load_prices(prices)
    sources = [logs] if isinstance(logs, str | os.PathLike) else list(logs)
    loaded = load_scores(sources, progress=progress, dataset=dataset) if sources else None
    if published:
        from .published import add_published

        loaded = add_published(loaded, published)
    if loaded is None:
        raise CompareError("nothing to compare: give logs or published specs")
    return build_comparison(
        loaded,
        resamples=resamples,
        seed=seed,
        progress=progress,
        calibration_method=calibration_method,
        alt_epsilon=alt_epsilon,
        prices=price_table,
    )


def compare_judges(
    logs: Sequence[LogSource] | LogSource,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    progress: bool = False,
    dataset: str | None = None,
    calibration_method: str = DEFAULT_CALIBRATION,
) -> pd.DataFrame:
    """One row per judge in ``logs``, ranked by the headline ``somers_d_all`` (what the
    viewer's log list shows: over every rated dialog, an unscored one counted against the
    judge), with its 95% interval.

    Spearman and the other agreement columns use the dialogs every judge scored and humans
    rated (``n_common``); ``coverage`` (scored / dialogs) stands beside them and
    ``low_coverage`` flags a judge that scored fewer dialogs than the best
    covered one. Errored samples (infrastructure) and unscored ones (the judge
    answered without a usable score) are separate columns. Baselines
    (``empathy_baseline/*``) have ``baseline`` set: floors, not contenders. Use
    ``compare_logs`` for the pairwise tests and bias diagnostics too. Beside the raw
    ``mae`` / ``qwk``, ``mae_calibrated`` / ``qwk_calibrated`` are cross-fitted with
    ``calibration_method``; with several raters, ``vs_rest_spearman`` / ``vs_rest_qwk``
    read each judge on the human ceiling's footing.
    """
    return compare_logs(
        logs,
        resamples=resamples,
        seed=seed,
        progress=progress,
        dataset=dataset,
        calibration_method=calibration_method,
    ).judges


def samples_wide(comparison: JudgeComparison) -> pd.DataFrame:
    """Joined dialogs: human rating, reply length, emotion and one score column per judge."""
    from .tables import samples_wide as wide

    return wide(comparison)


def summary(comparison: JudgeComparison) -> dict[str, Any]:
    """A JSON-ready summary: judges, pairs, alpha and warnings."""
    from .report import summary as make

    return make(comparison)


def write_report(
    comparison: JudgeComparison, out: LogSource, plots: bool = True
) -> dict[str, Path]:
    """Write CSV, Markdown, PNG plots and an HTML report into ``out``; returns the files.

    The files are written into a hidden sibling and swapped in as ``out`` whole, so
    ``out`` never mixes two comparisons (``folder.write_folder``). CompareError (one
    line, ``out`` left as it was) when ``out`` is a file, holds other files, or
    cannot be written. A plot that fails is left out with a warning.
    """
    from .report import write_all

    return write_all(comparison, Path(out), plots=plots)
