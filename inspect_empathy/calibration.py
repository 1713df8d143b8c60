"""Calibration: a judge's scores mapped onto the human 1-5 scale by a monotone map.

Three maps, each fitted on (judge score, human rating) pairs:

- ``shift`` (default): ``score + mean(human - judge)``; one parameter, robust at small n.
- ``linear``: least squares ``a + b * score`` with the slope clipped at 0 (a negative
  slope becomes a constant, the mean human rating), so the map never reverses the order.
- ``isotonic``: the non-decreasing step map of least squares (pool adjacent
  violators), linear between the fitted points and flat beyond them.

Every calibrated value is clipped to 1-5. A map judged on the dialogs it was fitted
on flatters itself, so agreement after calibration is measured by cross-fitting
(`cross_fitted`): each dialog's calibrated score comes from a map fitted on other
dialogs only. `fit_calibration` fits one map on all the pairs, to apply to new
scores later (`Calibration.apply`), and `Calibration.to_json` / `Calibration.from_json`
keep it in a file with its provenance.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from ._stats import quadratic_weighted_kappa, round_score
from .humans import bootstrap_ci, qwk_along

Method = Literal["shift", "linear", "isotonic"]
METHODS: tuple[str, ...] = ("shift", "linear", "isotonic")
DEFAULT_METHOD = "shift"
FORMAT = "inspect-empathy-calibration"
VERSION = 1
LEAVE_ONE_OUT_MAX_N = 50
"""Up to this many dialogs, `cross_fitted` leaves one dialog out at a time."""

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
    return knots.tolist(), pool_adjacent_violators(means, weights).tolist()


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
        }

    def to_json(self, path: str | Path | None = None) -> str:
        """The map as JSON text; also written to ``path`` when given."""
        text = json.dumps(self.as_dict(), indent=2) + "\n"
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    @classmethod
    def from_dict(cls, data: Any, source: str = "calibration") -> Calibration:
        """A map from its `as_dict` form; ValueError naming ``source`` and the problem."""
        if not isinstance(data, dict):
            raise ValueError(f"{source}: expected a JSON object, got {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise ValueError(f"{source}: not an inspect-empathy calibration (format {FORMAT!r})")
        if data.get("version") != VERSION:
            raise ValueError(
                f"{source}: calibration version {data.get('version')!r} is not supported "
                f"(this inspect-empathy reads version {VERSION})"
            )
        missing = [k for k in ("method", "parameters", "n") if k not in data]
        if missing:
            raise ValueError(f"{source}: missing key(s) {', '.join(missing)}")
        method = data["method"]
        if method not in METHODS:
            raise ValueError(
                f"{source}: unknown method {method!r} (one of {', '.join(METHODS)})"
            )
        parameters = data["parameters"]
        _check_parameters(parameters, method, source)
        n = data["n"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"{source}: n must be a positive integer, not {n!r}")
        fitted_on = data.get("fitted_on", [])
        if not isinstance(fitted_on, list) or not all(isinstance(s, str) for s in fitted_on):
            raise ValueError(f"{source}: fitted_on must be a list of names")
        return cls(
            method=method,
            parameters=parameters,
            n=n,
            fitted_on=tuple(fitted_on),
            created=str(data.get("created", "")),
        )

    @classmethod
    def from_json(cls, path: str | Path) -> Calibration:
        """Read a map written by `to_json`; ValueError naming the file for a missing,
        unreadable or malformed file."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ValueError(f"calibration file {path}: not found") from None
        except (OSError, UnicodeDecodeError) as error:
            raise ValueError(f"calibration file {path}: cannot be read ({error})") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(
                f"calibration file {path}, line {error.lineno}: not valid JSON ({error.msg})"
            ) from None
        return cls.from_dict(data, f"calibration file {path}")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_parameters(parameters: Any, method: str, source: str) -> None:
    expected = {"shift": ["offset"], "linear": ["slope", "intercept"], "isotonic": ["x", "y"]}
    keys = expected[method]
    if not isinstance(parameters, dict) or sorted(parameters) != sorted(keys):
        raise ValueError(f"{source}: {method} parameters must be exactly {', '.join(keys)}")
    if method == "isotonic":
        x, y = parameters["x"], parameters["y"]
        if (
            not isinstance(x, list)
            or not isinstance(y, list)
            or not x
            or len(x) != len(y)
            or not all(_number(v) for v in x + y)
        ):
            raise ValueError(f"{source}: isotonic x and y must be equal-length lists of numbers")
        if np.any(np.diff(x) <= 0) or np.any(np.diff(y) < 0):
            raise ValueError(f"{source}: isotonic x must increase and y must not decrease")
        return
    if not all(_number(parameters[k]) for k in keys):
        raise ValueError(f"{source}: {method} parameters must be finite numbers")
    if method == "linear" and parameters["slope"] < 0:
        raise ValueError(f"{source}: linear slope must not be negative (the map must keep order)")


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
    return Calibration(
        method=method,
        parameters=_fit(x[both], y[both], method),
        n=int(both.sum()),
        fitted_on=tuple(str(s) for s in fitted_on),
    )


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
) -> dict[str, Any]:
    """MAE and QWK of the judge with the humans, raw and cross-fitted-calibrated.

    Keys: ``method``, ``n``, ``mae``, ``qwk``, ``mae_calibrated``, ``qwk_calibrated``,
    each figure with ``_low``/``_high`` 95% bootstrap bounds over dialogs (the
    out-of-fold predictions held fixed). QWK is on scores rounded half up.
    Computed on the dialogs with both a judge score and a human rating.
    """
    calibrated = np.asarray(cross_fitted(judge, human, method, folds, seed), dtype=float)
    x, y = _pairs(judge, human)
    both = np.isfinite(x) & np.isfinite(y)
    x, y, calibrated = x[both], y[both], calibrated[both]
    out: dict[str, Any] = {"method": method, "n": int(both.sum())}
    for suffix, scores in (("", x), ("_calibrated", calibrated)):
        out[f"mae{suffix}"] = float(_mae(scores, y))
        out[f"mae{suffix}_low"], out[f"mae{suffix}_high"] = bootstrap_ci(
            (scores, y), _mae, resamples, seed
        )
        rx, ry = round_score(scores), round_score(y)
        out[f"qwk{suffix}"] = quadratic_weighted_kappa(rx, ry)
        out[f"qwk{suffix}_low"], out[f"qwk{suffix}_high"] = bootstrap_ci(
            (rx, ry), qwk_along, resamples, seed
        )
    return out
