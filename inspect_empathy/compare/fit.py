"""``inspect-empathy calibrate``: fit a calibration map on labelled judge-mode logs.

The logs are read as the comparison reads them (``logs.read_logs``: the empathy
scorer's scores, the human rating of each sample); a dialog's scores are averaged over
its epochs and over the logs that judged it (one dialog, one point: ``n`` counts
dialogs), and every dialog of the chosen judge with a score and a human rating is used.
A log scored with a calibration file is fitted on its raw scores (``uncalibrated``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..stats.calibration import Calibration, fit_calibration
from .checks import unfinished_reason
from .comparison import CALIBRATION_METHODS, DEFAULT_CALIBRATION, CompareError, LogSource
from .logs import JUDGE_MODE, display_path, find_logs, read_logs


class CalibrateError(ValueError):
    """The logs cannot be calibrated on (unreadable, unlabelled, several judges, ...)."""


def calibrate_logs(
    logs: Sequence[LogSource] | LogSource,
    method: str = DEFAULT_CALIBRATION,
    judge: str | None = None,
) -> tuple[Calibration, str]:
    """The map fitted on the labelled samples of one judge in ``logs``, and that judge.

    ``judge`` picks the judge model when the logs hold several. The map's
    ``fitted_on`` lists the log file names it was fitted on. CalibrateError (one
    line) for: a path that is no log, an unreadable or unscored log, a
    response-mode log, several judges without ``judge``, an unknown ``judge``,
    or no scored sample with a human rating.
    """
    if method not in CALIBRATION_METHODS:
        raise CalibrateError(
            f"--method must be one of {', '.join(CALIBRATION_METHODS)}, not {method!r}"
        )
    sources = [logs] if isinstance(logs, str | Path) else list(logs)
    try:
        paths = find_logs(sources)
    except CompareError as ex:
        raise CalibrateError(str(ex)) from None
    headers, all_rows, notes = read_logs(paths)
    if notes:
        raise CalibrateError(notes[0].replace(": skipped (", ": cannot calibrate on it (", 1))
    pairs: dict[str, dict[tuple[str, str], list[tuple[float, float, str]]]] = {}
    rubrics: dict[str, dict[str, str]] = {}
    for header, rows in zip(headers, all_rows, strict=True):
        if header["status"] != "success" and header["held"] < header["expected"]:
            why = unfinished_reason(
                header["status"], header["held"], header["expected"], header["log"]
            )
            raise CalibrateError(f"{header['log']}: cannot calibrate on it ({why})")
        if header["mode"] != JUDGE_MODE:
            raise CalibrateError(
                f"{header['log']}: a response-mode log (the human ratings belong to the "
                "dataset's replies, not the model's): calibrate on judge-mode logs"
            )
        name = Path(display_path(header["log"])).name
        for row in rows.records():
            per_judge = pairs.setdefault(row["judge_model"], {})
            # one dialog (its id and content) is one point, however many logs judged it
            per_judge.setdefault((row["id"], row["content"]), []).append(
                (row["uncalibrated"], row["human"], name)
            )
            rubrics.setdefault(row["judge_model"], {})[str(header.get("rubric"))] = name
    judges = sorted(pairs)
    if judge is None:
        if len(judges) > 1:
            raise CalibrateError(
                f"the logs hold {len(judges)} judges ({', '.join(judges)}): pick one with --judge"
            )
        judge = judges[0]
    elif judge not in pairs:
        raise CalibrateError(f"no judge {judge!r} in the logs (found: {', '.join(judges)})")
    if len(rubrics[judge]) > 1:
        shown = ", ".join(f"{r} ({log})" for r, log in rubrics[judge].items())
        raise CalibrateError(
            f"{judge}: the logs were run with different rubrics ({shown}): a map is fitted "
            "for one rubric; calibrate on the logs of one"
        )
    scores, ratings, used = [], [], []
    for values in pairs[judge].values():
        scored = [s for s, _, _ in values if not math.isnan(s)]
        human = next((h for _, h, _ in values if not math.isnan(h)), math.nan)
        if not scored or math.isnan(human):
            continue
        scores.append(sum(scored) / len(scored))
        ratings.append(human)
        used.extend(name for s, _, name in values if not math.isnan(s))
    if not scores:
        shown = ", ".join(Path(display_path(h["log"])).name for h in headers)
        raise CalibrateError(
            f"no labelled samples: no sample of {judge} has both a score and a human rating "
            f"in {shown} (calibrate on judge-mode logs of a rated dataset)"
        )
    try:
        fitted = fit_calibration(
            scores, ratings, method=method, fitted_on=list(dict.fromkeys(used))  # type: ignore[arg-type]
        )
    except ValueError as ex:  # the map cannot keep the judge's order, or no pairs
        raise CalibrateError(f"{judge} in {', '.join(dict.fromkeys(used))}: {ex}") from None
    (rubric,) = rubrics[judge]
    return replace(fitted, judge=judge, rubric=rubric), judge
