"""Calibration: a judge's scores mapped onto the human 1-5 scale by a monotone map.

Three maps, each fitted on (judge score, human rating) pairs:

- ``shift`` (default): ``score + mean(human - judge)``; one parameter, robust at small n.
- ``linear``: least squares ``a + b * score``; a slope of 0 or below is refused (the
  judge ranks opposite to the humans, or not at all), so the map never reverses the order.
- ``isotonic``: the non-decreasing step map of least squares (pool adjacent
  violators), linear between the fitted points and flat beyond them.

A map must keep the judge's scores distinguishable on the 1-5 scale: the calibrated
scores of the judge's lowest and highest scores, ``f(1)`` and ``f(5)`` (clipped to 1-5),
must lie at least `MIN_SPAN` (one level of the scale) apart. A map that squeezes the
judge's whole range into less (a shift beyond 3, a slope under 1/4, an isotonic map whose
levels span under a point; at the limit one value for every dialog) erases the judge: it
cannot put the judge's worst and best dialogs even one level apart. `fit_calibration`,
`Calibration.to_json` and `Calibration.from_json` refuse it (`CalibrationError`, naming
the file).

Every calibrated value is clipped to 1-5. A map judged on the dialogs it was fitted
on flatters itself, so agreement after calibration is measured by cross-fitting
(`cross_fitted`): each dialog's calibrated score comes from a map fitted on other
dialogs only. `fit_calibration` fits one map on all the pairs, to apply to new
scores later (`Calibration.apply`), and `Calibration.to_json` / `Calibration.from_json`
keep it in a file with its provenance.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from inspect_ai.solver import Generate, Solver, TaskState, solver

from .._util.file_kind import file_problem
from .._util.read import ReadError, json_text
from .._util.rerun import retried_log_metadata
from .._util.write import WriteRefused, write_text
from ._agreement import BCA_MAX_N, quadratic_weighted_kappa, round_score, weighted_kappa
from ._resample import batches, percentile_interval, resample_counts
from .humans import bootstrap_ci, qwk_along

Method = Literal["shift", "linear", "isotonic"]
METHODS: tuple[str, ...] = ("shift", "linear", "isotonic")
DEFAULT_METHOD = "shift"
FORMAT = "inspect-empathy-calibration"
VERSION = 1
LEAVE_ONE_OUT_MAX_N = 50
"""Up to this many dialogs, `cross_fitted` leaves one dialog out at a time."""
MAX_FILE_BYTES = 1024 * 1024
"""Largest calibration file read or written: a map is a few numbers (an isotonic map a
knot per level), so anything larger is refused unread rather than copied into logs."""
RECORD_MAP_BYTES = 64 * 1024
"""Largest map copied whole into a log's provenance (`provenance`); beyond it the
provenance keeps the file's hash and a summary."""
FLAT = 1e-9
"""A map whose image of 1-5 is narrower than this sends every score to one value."""
MIN_SPAN = 1.0
"""Least distance between ``f(1)`` and ``f(5)`` of a map (see the module's docstring)."""


class CalibrationError(ValueError):
    """A calibration map that cannot be fitted, written, read or applied (one line)."""


# --------------------------------------------------------------------------- fitting


def _aligned(judge: Any, human: Any) -> Any:
    """``human`` in the order of ``judge`` when both are Series indexed by dialog."""
    if not (isinstance(judge, pd.Series) and isinstance(human, pd.Series)):
        return human
    if judge.index.equals(human.index):
        return human
    for name, series in (("judge scores", judge), ("human ratings", human)):
        if series.index.has_duplicates:
            raise ValueError(f"calibration: dialog ids repeat in the {name}")
    only = [str(i) for i in judge.index.symmetric_difference(human.index)]
    if only:
        shown = ", ".join(only[:5]) + (" ..." if len(only) > 5 else "")
        raise ValueError(
            f"calibration: judge scores and human ratings cover different dialogs: {shown}"
        )
    return human.reindex(judge.index)


def _pairs(judge: Any, human: Any) -> tuple[np.ndarray, np.ndarray]:
    """Judge scores and human ratings as float arrays (Series are paired by dialog id)."""
    human = _aligned(judge, human)
    x = np.asarray(judge, dtype=float)
    y = np.asarray(human, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(
            f"calibration: judge scores {x.shape} and human ratings {y.shape} "
            "must be paired 1-D sequences of the same length"
        )
    for what, values in (("judge score", x), ("human rating", y)):
        bad = np.flatnonzero(np.isfinite(values) & ((values < 1) | (values > 5)))
        if len(bad):
            raise ValueError(
                f"calibration: {what} {values[bad[0]]:g} (position {bad[0]}) "
                "is outside the 1-5 scale"
            )
        infinite = np.flatnonzero(np.isinf(values))
        if len(infinite):
            raise ValueError(f"calibration: {what} at position {infinite[0]} is infinite")
    return x, y


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"calibration method must be one of {', '.join(METHODS)}, not {method!r}")


def _isotonic(x: np.ndarray, y: np.ndarray) -> tuple[list[float], list[float]]:
    """Knots of the least-squares non-decreasing map of ``y`` on ``x`` (ties averaged)."""
    knots, inverse = np.unique(x, return_inverse=True)
    weights = np.bincount(inverse).astype(float)
    means = np.bincount(inverse, weights=y) / weights
    values = pool_adjacent_violators(means, weights)
    # a knot inside a flat run changes nothing (interpolation between equal values)
    keep = np.ones(len(values), dtype=bool)
    keep[1:-1] = (values[1:-1] != values[:-2]) | (values[1:-1] != values[2:])
    return knots[keep].tolist(), values[keep].tolist()


def pool_adjacent_violators(y: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Weighted least-squares non-decreasing fit to ``y`` (in the given order).

    ``scipy.optimize.isotonic_regression`` where scipy has it (1.12+), else the
    classic pool-adjacent-violators pass.
    """
    y = np.asarray(y, dtype=float)
    w = np.ones_like(y) if weights is None else np.asarray(weights, dtype=float)
    try:
        from scipy.optimize import isotonic_regression
    except ImportError:  # scipy < 1.12
        return _pava(y, w)
    return np.asarray(isotonic_regression(y, weights=w, increasing=True).x, dtype=float)


def _pava(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Pool adjacent violators: blocks of (mean, weight, length) merged while decreasing."""
    means: list[float] = []
    sizes: list[float] = []
    lengths: list[int] = []
    for value, weight in zip(y.tolist(), w.tolist(), strict=True):
        means.append(value)
        sizes.append(weight)
        lengths.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            total = sizes[-2] + sizes[-1]
            means[-2] = (means[-2] * sizes[-2] + means[-1] * sizes[-1]) / total
            sizes[-2] = total
            lengths[-2] += lengths[-1]
            del means[-1], sizes[-1], lengths[-1]
    return np.repeat(means, lengths)


def _fit(x: np.ndarray, y: np.ndarray, method: str) -> dict[str, Any]:
    """Parameters of ``method`` fitted on finite pairs ``x``, ``y`` (at least one)."""
    if method == "shift":
        return {"offset": float(np.mean(y - x))}
    if method == "linear":
        slope = 0.0
        if np.ptp(x) > 0:
            slope = max(0.0, float(np.polyfit(x, y, 1)[0]))
        return {"slope": slope, "intercept": float(np.mean(y) - slope * np.mean(x))}
    knots, values = _isotonic(x, y)
    return {"x": knots, "y": values}


def _describe(params: dict[str, Any], method: str) -> str:
    """The map's parameters in a few words, for a message."""
    if method == "shift":
        return f"shift map (offset {params['offset']:+.4g})"
    if method == "linear":
        return f"linear map (slope {params['slope']:.4g}, intercept {params['intercept']:.4g})"
    levels = len(set(params["y"]))
    return f"isotonic map ({len(params['x'])} knot(s), {levels} level(s))"


def order_problem(params: dict[str, Any], method: str) -> str:
    """Why a (non-decreasing) map cannot keep the judge's scores distinguishable on 1-5,
    or "".

    The map is clipped to 1-5, so its image of the 1-5 scale is ``[f(1), f(5)]``: narrower
    than `MIN_SPAN` (one level of the scale), the judge's worst and best dialogs land less
    than a level apart; a single value gives every dialog the same calibrated score
    (Spearman undefined, the judge erased).
    """
    low, high = _apply(params, method, np.asarray([1.0, 5.0]))
    if high - low >= MIN_SPAN - 1e-12:
        return ""
    if high - low <= FLAT:
        return (
            f"the {_describe(params, method)} sends every judge score on 1-5 to {low:.4g}, "
            "so every dialog would get the same calibrated score and the judge's ranking "
            "would be lost"
        )
    return (
        f"the {_describe(params, method)} sends the judge's 1-5 onto {low:.7g}-{high:.7g}, "
        f"{high - low:.3g} of a point: a map must keep the judge's lowest and highest "
        f"scores at least {MIN_SPAN:g} level of the scale apart, or the judge's scores "
        "are no longer distinguishable on 1-5"
    )


def _apply(params: dict[str, Any], method: str, scores: np.ndarray) -> np.ndarray:
    scores = np.asarray(scores, dtype=float)
    if method == "shift":
        mapped = scores + params["offset"]
    elif method == "linear":
        mapped = params["intercept"] + params["slope"] * scores
    else:
        mapped = np.interp(scores, params["x"], params["y"])
        mapped = np.where(np.isnan(scores), np.nan, mapped)
    return np.clip(mapped, 1.0, 5.0)


# --------------------------------------------------------------------------- the map


@dataclass(frozen=True)
class Calibration:
    """A fitted monotone map from judge scores to the human 1-5 scale, with provenance."""

    method: str
    parameters: dict[str, Any]
    n: int
    """Number of (judge score, human rating) pairs it was fitted on."""
    fitted_on: tuple[str, ...] = ()
    """Where the pairs came from (e.g. the eval log names)."""
    created: str = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    )
    judge: str | None = None
    """The judge whose scores it was fitted on (``inspect-empathy calibrate`` records it):
    applied to another judge's scores it is refused."""
    rubric: str | None = None
    """The rubric those scores answered (``seed``, or ``name:sha256[:8]``): refused under
    another rubric."""

    def apply(self, score: float) -> float:
        """The calibrated score (1-5) of one judge score; NaN stays NaN."""
        return float(_apply(self.parameters, self.method, np.asarray([score], dtype=float))[0])

    def apply_many(self, scores: Sequence[float] | np.ndarray) -> np.ndarray:
        """`apply` over many scores."""
        return _apply(self.parameters, self.method, np.asarray(scores, dtype=float))

    def as_dict(self) -> dict[str, Any]:
        """The JSON-ready form (see `to_json`)."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "method": self.method,
            "parameters": self.parameters,
            "n": self.n,
            "fitted_on": list(self.fitted_on),
            "created": self.created,
            **({"judge": self.judge} if self.judge is not None else {}),
            **({"rubric": self.rubric} if self.rubric is not None else {}),
        }

    def to_json(self, path: str | Path | None = None, inputs: Sequence[str] = ()) -> str:
        """The map as JSON text; also written to ``path`` when given (whole or not at all).

        CalibrationError, with nothing written, for a map `from_json` would refuse: one
        that cannot keep the judge's order, a file over `MAX_FILE_BYTES`, or a ``path``
        that is one of ``inputs`` (the files the map was fitted on).
        """
        where = "calibration map" if path is None else f"calibration file {path}"
        Calibration.from_dict(self.as_dict(), where)
        text = json.dumps(self.as_dict(), indent=2) + "\n"
        size = len(text.encode("utf-8"))
        if size > MAX_FILE_BYTES:
            raise CalibrationError(
                f"{where}: not written: the map is {size} bytes, more than the "
                f"{MAX_FILE_BYTES} a calibration file may hold"
            )
        if path is not None:
            try:
                write_text(path, text, inputs, what="the calibration file")
            except WriteRefused as ex:
                raise CalibrationError(str(ex)) from None
        return text

    @classmethod
    def from_dict(cls, data: Any, source: str = "calibration") -> Calibration:
        """A map from its `as_dict` form; ValueError naming ``source`` and the problem."""
        if not isinstance(data, dict):
            raise CalibrationError(f"{source}: expected a JSON object, got {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise CalibrationError(
                f"{source}: not an inspect-empathy calibration (format {FORMAT!r})"
            )
        if data.get("version") != VERSION:
            raise CalibrationError(
                f"{source}: calibration version {data.get('version')!r} is not supported "
                f"(this inspect-empathy reads version {VERSION})"
            )
        missing = [k for k in ("method", "parameters", "n") if k not in data]
        if missing:
            raise CalibrationError(f"{source}: missing key(s) {', '.join(missing)}")
        method = data["method"]
        if method not in METHODS:
            raise CalibrationError(
                f"{source}: unknown method {method!r} (one of {', '.join(METHODS)})"
            )
        parameters = data["parameters"]
        _check_parameters(parameters, method, source)
        problem = order_problem(parameters, method)
        if problem:
            raise CalibrationError(
                f"{source}: refused: {problem} (refit it on logs where the judge ranks "
                "dialogs like the humans, or drop the calibration)"
            )
        n = data["n"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise CalibrationError(f"{source}: n must be a positive integer, not {n!r}")
        fitted_on = data.get("fitted_on", [])
        if not isinstance(fitted_on, list) or not all(isinstance(s, str) for s in fitted_on):
            raise CalibrationError(f"{source}: fitted_on must be a list of names")
        for key in ("judge", "rubric"):
            if key in data and not (isinstance(data[key], str) and data[key]):
                raise CalibrationError(f"{source}: {key} must be a non-empty string")
        return cls(
            method=method,
            parameters=parameters,
            n=n,
            fitted_on=tuple(fitted_on),
            created=str(data.get("created", "")),
            judge=data.get("judge"),
            rubric=data.get("rubric"),
        )

    def check_identity(
        self, judge: str | None, rubric: str | Mapping[str, Any] | None, source: str
    ) -> None:
        """CalibrationError naming ``source`` when the map was fitted on another judge's
        scores or under another rubric (a map without them recorded is not checked).

        ``rubric`` is the run's rubric identity (``name``, ``sha256``, ``source``, as the
        log records it; see `same_rubric`) or its label."""
        if self.judge is not None and judge is not None and self.judge != judge:
            raise CalibrationError(_other(source, "judge", self.judge, judge))
        if self.rubric is None or rubric is None:
            return
        if isinstance(rubric, str):
            if rubric != self.rubric:
                raise CalibrationError(_other(source, "rubric", self.rubric, rubric))
        elif not same_rubric(self.rubric, rubric):
            raise CalibrationError(_other(source, "rubric", self.rubric, rubric_shown(rubric)))

    @classmethod
    def from_json(cls, path: str | Path) -> Calibration:
        """Read a map written by `to_json`; CalibrationError (a ValueError) naming the
        file for a missing, unreadable, oversized or malformed file, or a map that
        cannot keep the judge's order."""
        return cls.from_bytes(_read_bounded(Path(path)), path)

    @classmethod
    def from_bytes(cls, data: bytes, path: str | Path) -> Calibration:
        """The map in a calibration file's bytes (errors name ``path``)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise CalibrationError(f"calibration file {path}: cannot be read ({error})") from None
        try:  # the one JSON reader: no key twice (the last would win), no NaN
            parsed = json_text(text, path)
        except ReadError as error:
            raise CalibrationError(f"calibration file {error}") from None
        return cls.from_dict(parsed, f"calibration file {path}")


def _other(source: str, what: str, fitted: str, now: str) -> str:
    return (
        f"{source}: fitted on the scores of {what} {fitted!r}, not {now!r}: a map belongs "
        f"to one {what}; fit one for {now!r} (inspect-empathy calibrate)"
    )


SEED_RUBRIC = "seed"


def same_rubric(recorded: str, identity: Mapping[str, Any]) -> bool:
    """Whether a run's rubric (its logged identity: ``name``, ``sha256``, ``source``) is the
    one a map records: ``name:hash`` (the first hex digits of the rubric's content hash)
    matches that name with that content; a bare name (``seed``, or a variant named by a
    log written before hashes were recorded) matches only the bundled rubric of that name,
    never a file that happens to share it."""
    name, _, digest = recorded.partition(":")
    if str(identity.get("name")) != name:
        return False
    if digest:
        return str(identity.get("sha256", "")).startswith(digest) and len(digest) >= 8
    return identity.get("source") == "bundled"


def rubric_shown(identity: Mapping[str, Any]) -> str:
    """A run's rubric in a message: ``seed``, a variant with its hash, a file's path too."""
    name, digest = str(identity.get("name")), str(identity.get("sha256", ""))[:8]
    if identity.get("source") == "bundled":
        return name if name == SEED_RUBRIC else f"{name}:{digest}"
    return f"{name}:{digest} ({identity.get('source')})"


def _read_bounded(path: Path) -> bytes:
    """The bytes of a calibration file of at most `MAX_FILE_BYTES` (checked before reading)."""
    info, problem = file_problem(path)
    if info is None:
        raise CalibrationError(f"calibration file {path}: {problem}")
    if info.st_size > MAX_FILE_BYTES:
        raise CalibrationError(_too_large(path, info.st_size))
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise CalibrationError(f"calibration file {path}: no such file") from None
    except OSError as error:
        raise CalibrationError(f"calibration file {path}: cannot be read ({error})") from None
    if len(data) > MAX_FILE_BYTES:
        raise CalibrationError(_too_large(path, None))
    return data


def _too_large(path: Path, size: int | None) -> str:
    held = f"{size} bytes" if size is not None else "it grew while being read"
    return (
        f"calibration file {path}: too large ({held}; a calibration file holds at most "
        f"{MAX_FILE_BYTES} bytes: a map is a few numbers, so this is not one written by "
        "inspect-empathy calibrate)"
    )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_parameters(parameters: Any, method: str, source: str) -> None:
    expected = {"shift": ["offset"], "linear": ["slope", "intercept"], "isotonic": ["x", "y"]}
    keys = expected[method]
    if not isinstance(parameters, dict) or sorted(parameters) != sorted(keys):
        raise CalibrationError(f"{source}: {method} parameters must be exactly {', '.join(keys)}")
    if method == "isotonic":
        x, y = parameters["x"], parameters["y"]
        if (
            not isinstance(x, list)
            or not isinstance(y, list)
            or not x
            or len(x) != len(y)
            or not all(_number(v) for v in x + y)
        ):
            raise CalibrationError(
                f"{source}: isotonic x and y must be equal-length lists of numbers"
            )
        if np.any(np.diff(x) <= 0) or np.any(np.diff(y) < 0):
            raise CalibrationError(f"{source}: isotonic x must increase and y must not decrease")
        return
    if not all(_number(parameters[k]) for k in keys):
        raise CalibrationError(f"{source}: {method} parameters must be finite numbers")
    if method == "linear" and parameters["slope"] < 0:
        raise CalibrationError(
            f"{source}: linear slope must not be negative (the map must keep order)"
        )


def fit_calibration(
    judge: Sequence[float] | np.ndarray | pd.Series,
    human: Sequence[float] | np.ndarray | pd.Series,
    method: Method = DEFAULT_METHOD,
    fitted_on: Sequence[str] = (),
) -> Calibration:
    """Fit ``method`` on paired judge scores and human ratings (both 1-5).

    Pairs where either side is missing (NaN: unscored, or no human rating) are
    left out; ``n`` of the result counts the pairs used. ValueError when none is left.
    """
    _check_method(method)
    x, y = _pairs(judge, human)
    both = np.isfinite(x) & np.isfinite(y)
    if not both.any():
        raise ValueError("calibration: no dialog has both a judge score and a human rating")
    x, y = x[both], y[both]
    params = _fit(x, y, method)
    problem = order_problem(params, method)
    if problem:
        raise CalibrationError(
            f"calibration: no {method} map that keeps the judge's scores apart fits these "
            f"{len(x)} dialog(s): {_why_flat(x, y, method)}; {problem}"
        )
    return Calibration(
        method=method,
        parameters=params,
        n=len(x),
        fitted_on=tuple(str(s) for s in fitted_on),
    )


def _why_flat(x: np.ndarray, y: np.ndarray, method: str) -> str:
    """The data's reason for a flat fitted map (see `fit_calibration`)."""
    if method == "shift":
        return f"the mean of human - judge is {float(np.mean(y - x)):+.3g}"
    if np.ptp(x) == 0:
        return f"every judge score is {x[0]:g}, so there is no order to keep"
    if method == "linear":
        slope = float(np.polyfit(x, y, 1)[0])
        if slope > 0:
            return (
                f"the least-squares slope is {slope:.3g}: the judge's scores barely predict "
                "the human ratings"
            )
        return (
            f"the least-squares slope is {slope:.3g} (a map with a negative slope would "
            "reverse the order, so it is clipped to 0): the judge ranks these dialogs "
            "opposite to the human ratings, or not at all"
        )
    if method == "isotonic":
        levels = _isotonic(x, y)[1]
        if levels[-1] > levels[0]:
            return (
                f"the human ratings rise only {levels[-1] - levels[0]:.3g} over the judge's "
                "whole range"
            )
        return (
            "the human ratings never rise with the judge's scores (the isotonic fit pools "
            "them into one level): the judge ranks these dialogs opposite to the humans"
        )
    return ""


# --------------------------------------------------------------------------- in a log


def load(path: str | Path) -> tuple[Calibration, dict[str, Any]]:
    """The map in a calibration file and its provenance for the log (the file read once).

    The provenance holds ``file``, ``sha256`` (of the file's bytes), ``bytes`` and the
    map's `as_dict` form; for a map whose JSON is over `RECORD_MAP_BYTES` the
    ``parameters`` and ``fitted_on`` are left out (``parameters_omitted`` says so and
    ``fitted_on_count`` counts the logs), so a log header stays small.
    """
    data = _read_bounded(Path(path))
    calibration = Calibration.from_bytes(data, path)
    record: dict[str, Any] = {
        "file": str(path),
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        **calibration.as_dict(),
    }
    if len(json.dumps(record)) > RECORD_MAP_BYTES:
        record["parameters_omitted"] = f"the map is {len(data)} bytes: see the file (sha256 above)"
        record["fitted_on_count"] = len(calibration.fitted_on)
        del record["parameters"], record["fitted_on"]
    return calibration, record


def for_retry(
    path: str | Path | None, recorded: dict[str, Any] | None
) -> tuple[Calibration | None, dict[str, Any] | None]:
    """The map and provenance a retried run must use: the original run's.

    ``recorded`` is the provenance the retried log holds (its metadata's
    ``calibration``, from `load`; also the older form without ``sha256``). The file is
    used when it still holds that map. When it changed or is gone, the recorded map is
    used (the provenance then says so in ``retry``); when the log holds only the
    file's hash, or the runs disagree on having a map at all, CalibrationError (one
    line) says why and what to do.
    """
    if path is None and recorded is None:
        return None, None
    if path is None or not isinstance(recorded, dict):
        had = "no calibration" if recorded is None else f"calibration {recorded.get('file')}"
        now = "none" if path is None else str(path)
        raise CalibrationError(
            f"eval-retry: the retried log was scored with {had}, the retry with {now}: "
            "start a new run instead"
        )
    try:
        current: tuple[Calibration, dict[str, Any]] | None = load(path)
    except CalibrationError as error:
        current, reason = None, str(error)
    if current is not None:
        same = (
            current[1]["sha256"] == recorded["sha256"]
            if "sha256" in recorded
            else _map_of(recorded) == current[0].as_dict()
        )
        if same:
            return current
        reason = f"calibration file {path} changed since the run being retried"
    if "parameters" not in recorded:
        raise CalibrationError(
            f"eval-retry: {reason}, and the log keeps only its hash "
            f"(sha256 {str(recorded.get('sha256'))[:12]}...): restore the original file "
            "or start a new run"
        )
    original = Calibration.from_dict(_map_of(recorded), "the calibration recorded in the log")
    note = (
        f"{reason}: the map recorded in the retried log is used, so every sample of "
        "this log is mapped alike"
    )
    return original, {**recorded, "retry": note}


def _map_of(recorded: dict[str, Any]) -> dict[str, Any]:
    """A recorded provenance as a map's `as_dict` form (the provenance keys dropped)."""
    keys = ("format", "version", "method", "parameters", "n", "fitted_on", "created")
    return {key: recorded[key] for key in keys if key in recorded}


def resolve(path: str | Path | None) -> tuple[Calibration | None, dict[str, Any] | None]:
    """The map a task applies and the provenance its log records.

    A fresh run loads ``path`` (`load`); a retry (`retried_log_metadata`) uses the
    original run's map (`for_retry`). CalibrationError, one line, otherwise.
    """
    metadata = retried_log_metadata()
    if metadata is None:
        return (None, None) if path is None else load(path)
    return for_retry(path, metadata.get("calibration"))


def content_key(provenance: Mapping[str, Any]) -> str:
    """The first 16 hex digits of the map's content hash (the file's ``sha256``; for a
    provenance recorded before the hash was, the hash of the recorded map): what binds a
    run to its map (`tasks`: the task's version carries it, so an eval set resumed after
    the file changed does not pair its old log with the new map)."""
    digest = provenance.get("sha256")
    if not isinstance(digest, str) or not digest:
        text = json.dumps(_map_of(dict(provenance)), sort_keys=True)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return digest[:16]


def judge_name(models: Sequence[str]) -> str:
    """The judge whose scores a run's map maps, as the scorer names it: one model's name,
    or ``panel(a, b)`` for several (a model seated twice: ``a#2``)."""
    if len(models) == 1:
        return models[0]
    seen: dict[str, int] = {}
    names = []
    for model in models:
        seen[model] = seen.get(model, 0) + 1
        names.append(model if seen[model] == 1 else f"{model}#{seen[model]}")
    return "panel(" + ", ".join(names) + ")"


def run_judge(model: str | None, role: str | None = None, self_grading: bool = True) -> str | None:
    """The judge of a run where Inspect knows it before any call: judge mode (``role``
    None) the model under evaluation ``model``; response mode the model(s) bound to
    ``role``, else (``self_grading``) ``model``. None when not known (yet)."""
    if role is not None:
        from inspect_ai.model import model_roles

        bound = model_roles().get(role)
        members = bound if isinstance(bound, list) else ([] if bound is None else [bound])
        if members:
            return judge_name([str(m) for m in members])
        if not self_grading:
            return None  # no grader: the run stops on that (graded_generate)
    return model


def check_judge(
    file: str, fitted: str | None, model: str | None, role: str | None, self_grading: bool
) -> None:
    """CalibrationError (one line naming ``file`` and both judges) when the map was fitted
    on the scores of ``fitted`` and the run's judge (`run_judge`) is another."""
    now = run_judge(model, role, self_grading)
    if fitted is not None and now is not None and now != fitted:
        raise CalibrationError(_other(f"calibration file {file}", "judge", fitted, now))


@solver
def calibration_judge(
    file: str, judge: str, role: str | None = None, self_grading: bool = True
) -> Solver:
    """The setup step of a run with a calibration map fitted on ``judge``'s scores: a
    sample stops before its first model call when the run's judge is another (`check_judge`:
    judge mode the model under evaluation, response mode the ``role``'s models)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        check_judge(file, judge, str(state.model), role, self_grading)
        return state

    return solve


# --------------------------------------------------------------------------- cross-fitting


def fold_assignment(n: int, folds: int = 10, seed: int = 0) -> np.ndarray:
    """The fold (0..k-1) of each of ``n`` dialogs: one dialog per fold (leave-one-out)
    when ``n <= 50`` or ``folds >= n``, else ``folds`` shuffled folds of near-equal size."""
    if folds < 2:
        raise ValueError(f"cross-fitting needs at least 2 folds, not {folds}")
    if n <= LEAVE_ONE_OUT_MAX_N or folds >= n:
        return np.arange(n)
    order = np.random.default_rng(seed).permutation(n)
    assignment = np.empty(n, dtype=int)
    for fold, members in enumerate(np.array_split(order, folds)):
        assignment[members] = fold
    return assignment


def cross_fitted(
    judge: Sequence[float] | np.ndarray | pd.Series,
    human: Sequence[float] | np.ndarray | pd.Series,
    method: Method = DEFAULT_METHOD,
    folds: int = 10,
    seed: int = 0,
) -> np.ndarray | pd.Series:
    """Out-of-fold calibrated scores: each dialog's score mapped by a map fitted
    without it (and without the rest of its fold), clipped to 1-5.

    Only dialogs with both a judge score and a human rating take part; the others
    get NaN. Folds are made over those dialogs (see `fold_assignment`). Two Series
    are paired by dialog id, and the result is then a Series on the judge's index.
    """
    _check_method(method)
    x, y = _pairs(judge, human)
    labelled = np.flatnonzero(np.isfinite(x) & np.isfinite(y))
    if len(labelled) < 2:
        raise ValueError(
            f"calibration: cross-fitting needs at least 2 dialogs with both a judge score "
            f"and a human rating, found {len(labelled)}"
        )
    assignment = fold_assignment(len(labelled), folds, seed)
    predictions = np.full(len(x), np.nan)
    lx, ly = x[labelled], y[labelled]
    for fold in np.unique(assignment):
        held_out = assignment == fold
        params = _fit(lx[~held_out], ly[~held_out], method)
        predictions[labelled[held_out]] = _apply(params, method, lx[held_out])
    if isinstance(judge, pd.Series):
        return pd.Series(predictions, index=judge.index, name=judge.name)
    return predictions


def _mae(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(np.abs(a - b), axis=axis)


def calibrated_agreement(
    judge: Sequence[float] | np.ndarray | pd.Series,
    human: Sequence[float] | np.ndarray | pd.Series,
    method: Method = DEFAULT_METHOD,
    folds: int = 10,
    seed: int = 0,
    resamples: int = 2000,
    resample_seed: int | None = None,
) -> dict[str, Any]:
    """MAE and QWK of the judge with the humans, raw and cross-fitted-calibrated.

    Keys: ``method``, ``n``, ``mae``, ``qwk``, ``mae_calibrated``, ``qwk_calibrated``,
    each figure with ``_low``/``_high`` 95% bootstrap bounds over dialogs (the
    out-of-fold predictions held fixed), drawn from ``resample_seed`` (``seed``, the
    folds' seed, when None): BCa up to ``BCA_MAX_N`` dialogs, beyond that percentile
    intervals read from the draw counts (`_resample.resample_counts`). QWK is on scores
    rounded half up. Computed on the dialogs with both a judge score and a human rating.
    """
    calibrated = np.asarray(cross_fitted(judge, human, method, folds, seed), dtype=float)
    x, y = _pairs(judge, human)
    both = np.isfinite(x) & np.isfinite(y)
    x, y, calibrated = x[both], y[both], calibrated[both]
    out: dict[str, Any] = {"method": method, "n": int(both.sum())}
    draw_seed = seed if resample_seed is None else resample_seed
    counted = resamples > 0 and len(y) > BCA_MAX_N
    for suffix, scores in (("", x), ("_calibrated", calibrated)):
        rx, ry = round_score(scores), round_score(y)
        out[f"mae{suffix}"] = float(_mae(scores, y))
        out[f"qwk{suffix}"] = quadratic_weighted_kappa(rx, ry)
        if counted:
            mae_draws, qwk_draws = _counted_draws(scores, y, resamples, draw_seed)
            out[f"mae{suffix}_low"], out[f"mae{suffix}_high"] = percentile_interval(mae_draws)
            out[f"qwk{suffix}_low"], out[f"qwk{suffix}_high"] = percentile_interval(qwk_draws)
            continue
        out[f"mae{suffix}_low"], out[f"mae{suffix}_high"] = bootstrap_ci(
            (scores, y), _mae, resamples, draw_seed
        )
        out[f"qwk{suffix}_low"], out[f"qwk{suffix}_high"] = bootstrap_ci(
            (rx, ry), qwk_along, resamples, draw_seed
        )
    return out


def _counted_draws(
    scores: np.ndarray, human: np.ndarray, resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """MAE and QWK (scores rounded half up) of each bootstrap resample, from how often each
    dialog is drawn (`resample_counts`): MAE is the counts' product with the absolute
    errors, QWK a function of the 5 x 5 table of rounded pairs, the counts summed over the
    dialogs of each cell (integers: exact). Neither calls BLAS, whose threads cost more than
    the sums on a busy machine."""
    n = len(scores)
    errors = np.abs(scores - human)
    cell = (round_score(scores) - 1) * 5 + (round_score(human) - 1)
    by_cell = np.argsort(cell, kind="stable")
    present, starts = np.unique(cell[by_cell], return_index=True)
    counts = resample_counts(n, resamples, seed)
    mae, qwk = np.empty(resamples), np.empty(resamples)
    for start, rows in batches(resamples, n):
        batch = counts[start : start + rows]
        mae[start : start + rows] = np.einsum("ij,j->i", batch, errors) / n
        table = np.zeros((rows, 25))
        table[:, present] = np.add.reduceat(
            np.take(batch, by_cell, axis=1), starts, axis=1, dtype=np.int64
        )
        qwk[start : start + rows] = weighted_kappa(table.reshape(rows, 5, 5), np.arange(1, 6))
    return mae, qwk
