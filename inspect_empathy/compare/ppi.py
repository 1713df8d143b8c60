"""Response mode on the human scale: prediction-powered inference (PPI++).

A grader scores every one of N replies; people rated only n of them. The grader's mean is
on the grader's scale (judges inflate empathy), the people's mean rests on n replies only.
PPI++ (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, "Prediction-powered inference",
Science 2023; Angelopoulos, Duchi, Zrnic, "PPI++: Efficient prediction-powered
inference", 2023, arXiv:2311.01453) combines them into an estimate of the mean *human*
rating with a valid confidence interval, as narrow as the grader's agreement with the
people allows and never (asymptotically) wider than the people's mean alone:

    theta = mean_L(Y) + lambda * (mean_U(f) - mean_L(f))

with Y the human ratings and f the grader's scores on the labelled replies L (n), and f
on the unlabelled replies U (N - n). Its variance is var_L(Y - lambda f) / n + lambda^2
var_U(f) / (N - n); the power-tuned lambda = cov_L(Y, f) / ((1 + n / (N - n)) var(f))
(var over L and U together), clipped to [0, 1]; the CI is the normal interval. This is
the estimator of the authors' package (``ppi_py.ppi_mean_ci`` with ``lhat=None``, lambda
clipped), written out here, with one small-sample change to its interval: sample variances
(ddof 1) and Student's t with n - 1 degrees of freedom instead of the normal quantile (with
n = 30 rated replies the normal interval covered 92.7% in the simulation of
``tests/compare/test_ppi.py``; with t, 94-95%). It needs
the labelled replies to be a random sample of the N (rate a random subset, not the
interesting ones).

For two reply models graded on the same dialogs, the same estimator on the per-dialog
differences (Y_A - Y_B, predicted by f_A - f_B) gives the difference of their mean human
ratings; the labelled set is the dialogs where both replies were rated.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .._util.file_kind import file_problem
from .comparison import CompareError, LogSource

DEFAULT_CONFIDENCE = 0.95


def _z(confidence: float, df: float = math.inf) -> float:
    """The two-sided critical value: Student's t with ``df`` degrees of freedom (normal
    when infinite)."""
    from scipy import stats

    return float(stats.t.ppf(0.5 + confidence / 2, df))


def ppi_arrays(
    y: np.ndarray, f_labelled: np.ndarray, f_unlabelled: np.ndarray, lam: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PPI++ mean estimate, its standard error and lambda along the last axis (leading axes
    are independent problems: a simulation vectorises over them). ``lam`` fixes lambda
    (1 = plain PPI, 0 = the labelled mean); None tunes it."""
    y, fl, fu = (np.asarray(a, float) for a in (y, f_labelled, f_unlabelled))
    n, big_n = y.shape[-1], fu.shape[-1]
    if lam is None:
        if big_n == 0:
            lam_arr = np.zeros(y.shape[:-1])
        else:
            pooled = np.concatenate([fl, fu], axis=-1)
            var_f = pooled.var(axis=-1, ddof=1)
            cov = ((y - y.mean(-1, keepdims=True)) * (fl - fl.mean(-1, keepdims=True))).mean(-1)
            with np.errstate(invalid="ignore", divide="ignore"):
                lam_arr = np.where(var_f > 0, cov / ((1 + n / big_n) * var_f), 0.0)
            lam_arr = np.clip(lam_arr, 0.0, 1.0)
    else:
        lam_arr = np.full(y.shape[:-1], float(lam))
    lam_k = lam_arr[..., None]
    unlabelled_mean = fu.mean(-1) if big_n else np.zeros(y.shape[:-1])
    estimate = y.mean(-1) + lam_arr * (unlabelled_mean - fl.mean(-1))
    rectifier = (y - lam_k * fl).var(axis=-1, ddof=1) / n
    imputed = (lam_k * fu).var(axis=-1, ddof=1) / big_n if big_n > 1 else 0.0
    return estimate, np.sqrt(rectifier + imputed), lam_arr


def ppi_mean(
    y: Sequence[float],
    f_labelled: Sequence[float],
    f_unlabelled: Sequence[float],
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, float]:
    """The mean human rating three ways, each with its CI at ``confidence``:

    ``ppi`` (PPI++, power-tuned), ``labelled`` (the people's mean alone: mean and
    normal interval with the sample SD), ``judge`` (the grader's mean over all N replies:
    on the *grader's* scale, not an estimate of the human mean). Also ``lambda``,
    ``n`` (labelled), ``n_total`` (N) and ``effective_n``: the labelled replies the
    people's mean alone would need for the PPI++ interval's width.
    """
    y, fl, fu = (np.asarray(a, float) for a in (y, f_labelled, f_unlabelled))
    if len(y) != len(fl):
        raise ValueError(
            "ppi_mean: human ratings and grader scores of the labelled replies differ in length"
        )
    n = len(y)
    z = _z(confidence, max(n - 1, 1))
    out: dict[str, float] = {"n": float(n), "n_total": float(n + len(fu))}
    every = np.concatenate([fl, fu])
    out["judge"] = float(every.mean()) if len(every) else math.nan
    judge_se = float(every.std(ddof=1) / math.sqrt(len(every))) if len(every) > 1 else math.nan
    out["judge_low"], out["judge_high"] = out["judge"] - z * judge_se, out["judge"] + z * judge_se
    if n < 2:
        out |= dict.fromkeys(
            ["labelled", "labelled_low", "labelled_high", "ppi", "ppi_low", "ppi_high"], math.nan
        )
        out |= {"lambda": math.nan, "effective_n": math.nan}
        return out
    labelled_se = float(y.std(ddof=1) / math.sqrt(n))
    out["labelled"] = float(y.mean())
    out["labelled_low"] = out["labelled"] - z * labelled_se
    out["labelled_high"] = out["labelled"] + z * labelled_se
    estimate, se, lam = ppi_arrays(y, fl, fu)
    out["ppi"], out["lambda"] = float(estimate), float(lam)
    out["ppi_low"], out["ppi_high"] = float(estimate - z * se), float(estimate + z * se)
    out["effective_n"] = float(n * (labelled_se / se) ** 2) if se > 0 else math.nan
    return out


# --- logs and ratings ---------------------------------------------------------------------


def read_scores(logs: Sequence[LogSource]) -> pd.DataFrame:
    """One row per grader, reply model and dialog: the grader's score (epochs averaged),
    the dataset's human rating and the log's mode. Judge-mode logs count with the
    judge as grader and the dataset's replies as the reply model ``dataset``."""
    from .logs import RESPONSE_MODE, find_logs, read_one

    paths = find_logs(list(logs))
    frames, notes = [], []
    for path in paths:
        header, rows, note = read_one(path)
        if header is None:
            notes.append(str(note))
            continue
        frame = pd.DataFrame(rows)
        frame["mode"] = header["mode"]
        frame["reply_model"] = header["reply_model"] or "dataset"
        frame["dataset"] = header["dataset"]
        frame["log"] = header["log"]
        frames.append(frame)
    if not frames:
        raise CompareError(
            f"no log scored by the empathy scorer in {len(paths)} file(s): {'; '.join(notes)}"
        )
    rows = pd.concat(frames, ignore_index=True)
    rows = rows[~rows["errored"]]
    scores = rows.groupby(["judge_model", "reply_model", "id"], sort=True).agg(
        score=("score", "mean"), human=("human", "first"), mode=("mode", "first")
    )
    scores = scores.reset_index().rename(columns={"judge_model": "grader"})
    scores.loc[scores["mode"] == RESPONSE_MODE, "human"] = math.nan
    return scores


def read_ratings(path: LogSource, scale: tuple[float, float] | None = None) -> pd.DataFrame:
    """Human ratings of the graded replies: a CSV or JSONL file with columns ``id``,
    ``rating`` and, where the logs hold several reply models, ``reply_model``. Ratings on
    1-5, or on ``scale`` (low, high) mapped linearly onto 1-5."""
    path = Path(path)
    problem = file_problem(path)[1]  # a FIFO would hang: refused unread, saying what it is
    if problem:
        raise CompareError(f"human ratings {path}: {problem}")
    try:
        if path.suffix.lower() in (".jsonl", ".json"):
            frame = pd.read_json(path, lines=path.suffix.lower() == ".jsonl", dtype=False)
        else:
            frame = pd.read_csv(path, dtype={"id": str, "reply_model": str})
    except (OSError, ValueError) as ex:
        raise CompareError(f"human ratings {path}: cannot read: {ex}") from None
    missing = {"id", "rating"} - set(frame.columns)
    if missing:
        raise CompareError(f"human ratings {path}: no column {', '.join(sorted(missing))}")
    frame["id"] = frame["id"].astype(str)
    rating = pd.to_numeric(frame["rating"], errors="coerce")
    bad = frame.loc[rating.isna() & frame["rating"].notna(), "id"].tolist()
    if bad:
        raise CompareError(f"human ratings {path}: not a number for id(s) {', '.join(bad[:5])}")
    low, high = scale or (1.0, 5.0)
    outside = frame.loc[(rating < low) | (rating > high), "id"].tolist()
    if outside:
        raise CompareError(
            f"human ratings {path}: id(s) {', '.join(outside[:5])} outside the scale "
            f"{low:g}-{high:g}"
        )
    frame["rating"] = 1 + (rating - low) * 4 / (high - low)
    keys = ["id", "reply_model"] if "reply_model" in frame else ["id"]
    repeated = frame[frame.duplicated(keys, keep=False)]
    if len(repeated):
        raise CompareError(
            f"human ratings {path}: {', '.join(keys)} repeated: {repeated[keys].iloc[0].tolist()}"
        )
    return frame.dropna(subset=["rating"])[keys + ["rating"]]


def join_ratings(scores: pd.DataFrame, ratings: pd.DataFrame | None) -> pd.DataFrame:
    """``scores`` with a ``rating`` column: from ``ratings`` (joined by id, and reply model
    where the file has one) or, without a file, the dataset's ratings of judge-mode logs
    (they rate the judged reply itself; a response-mode log's dataset rating does not)."""
    if ratings is None:
        if scores["human"].isna().all():
            raise CompareError(
                "no human ratings of the graded replies: response-mode logs grade new replies, "
                "which the dataset's ratings do not rate; give them with --ratings FILE"
            )
        return scores.assign(rating=scores["human"])
    if "reply_model" not in ratings:
        models = scores["reply_model"].unique()
        if len(models) > 1:
            raise CompareError(
                f"the logs hold {len(models)} reply models ({', '.join(map(str, models))}): "
                "the ratings file needs a reply_model column"
            )
        joined = scores.merge(ratings, on="id", how="left")
    else:
        joined = scores.merge(ratings, on=["id", "reply_model"], how="left")
    unknown = set(map(str, ratings["id"])) - set(scores["id"])
    if unknown:
        shown = ", ".join(sorted(unknown)[:5])
        raise CompareError(f"human ratings of {len(unknown)} id(s) not in the logs: {shown}")
    return joined


def human_scale(
    scores: pd.DataFrame, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per grader and reply model the three means (`ppi_mean`), and per grader each pair
    of reply models' difference on the dialogs both were graded on."""
    rows = []
    for (grader, model), group in scores.groupby(["grader", "reply_model"], sort=True):
        scored = group.dropna(subset=["score"])
        labelled = scored.dropna(subset=["rating"])
        unlabelled = scored[scored["rating"].isna()]
        figures = ppi_mean(labelled["rating"], labelled["score"], unlabelled["score"], confidence)
        rows.append({"grader": grader, "reply_model": model, **figures})
    means = pd.DataFrame(rows)
    pairs = []
    for grader, group in scores.groupby("grader", sort=True):
        wide = group.pivot(index="id", columns="reply_model", values=["score", "rating"])
        for a, b in itertools.combinations(sorted(group["reply_model"].unique()), 2):
            both = wide[[("score", a), ("score", b)]].dropna().index
            d_score = (wide.loc[both, ("score", a)] - wide.loc[both, ("score", b)]).astype(float)
            d_rating = (wide.loc[both, ("rating", a)] - wide.loc[both, ("rating", b)]).astype(float)
            labelled = d_rating.notna()
            figures = ppi_mean(
                d_rating[labelled], d_score[labelled], d_score[~labelled], confidence
            )
            pairs.append({"grader": grader, "model_a": a, "model_b": b, **figures})
    return means, pd.DataFrame(pairs)
