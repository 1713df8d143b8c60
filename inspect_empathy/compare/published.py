"""Published judges and raters (a ``format: raters`` spec) inside the comparison.

A study that publishes per-item judge ratings (Kumar et al. 2025: Gemini 2.5 Pro,
GPT-4o, Claude 3.7 Sonnet and a crowd, per dimension) becomes a set of judges in
``inspect-empathy compare --published SPEC``: joined by sample id to the dialogs of the
Inspect logs (the spec's ``raters`` loader gives the samples the same ids), or compared
on their own when there are no logs (a ratings-only corpus). They get every statistic
an Inspect judge gets, because they become rows of the same samples table.

`scale_agreement` computes kappas on the rating scale's own categories (and, when asked,
Kumar et al.'s index-spaced kappa); `reproduce` prints a published agreement table's
cells beside the same cells computed from the published files.
"""

from __future__ import annotations

import ast
import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..dataset.loaders.raters import NOTE_LIMIT, RatedTable, rater_bad_cells, read_rated
from ..dataset.loaders.spec import read_spec
from ..dialogs import normalise_rating
from ..errors import DatasetError
from . import kappa as kappas
from .comparison import LEFT_OUT, CompareError

PREFIX = "published:"
"""Judge label prefix of a published judge: ``published:gpt-4o``."""
RATERS = "raters"
"""In a ``reproduce.pairs`` entry: the aggregate of the spec's raters (the experts' median)."""


@dataclass
class Published:
    """A spec read: its file, mapping and the joined ratings."""

    spec: Path
    mapping: dict[str, Any]
    table: RatedTable
    name: str


def load_published(spec: str | os.PathLike[str], dimension: str | None = None) -> Published:
    """Read a ``format: raters`` spec (``dimension`` overrides its ``dimension``).

    A rater's bad cell (unreadable, or outside the scale) stops it, every such cell named
    by file, row and column, as the load does, unless the spec says ``bad_cells: missing``
    (the cell is a missing rating, named in the notes), ``bad_cells: as_published`` (an
    out-of-scale number is kept at its published value, counted in the notes) or lists
    the value under ``missing_values``."""
    path = Path(spec)
    if not path.is_file():
        raise CompareError(f"{path}: no such spec file")
    try:
        parsed = read_spec(path)
        if (parsed.format or "").lower() != "raters":
            raise DatasetError(f"{path}: --published takes a 'format: raters' spec")
        mapping = dict(parsed.mapping)
        if dimension is not None:
            mapping["dimension"] = dimension
        table = read_rated(parsed.source, mapping)
    except DatasetError as ex:
        raise CompareError(str(ex)) from ex
    bad = rater_bad_cells(table)
    if bad and str(mapping.get("bad_cells", "fail")) == "fail":
        lines = [f"  {cell}" for cell in bad[:NOTE_LIMIT]]
        if len(bad) > NOTE_LIMIT:
            lines.append(f"  ... and {len(bad) - NOTE_LIMIT} more")
        raise CompareError(
            f"{path}: {len(bad)} rater cell(s) unreadable or outside the scale "
            f"{table.scale[0]:g}-{table.scale[1]:g}:\n" + "\n".join(lines) + "\n"
            "(values that mean 'not rated': list them under missing_values; or "
            "bad_cells: missing keeps each such cell as a missing rating; bad_cells: "
            "as_published keeps an out-of-scale number as the authors averaged it)"
        )
    return Published(path, mapping, table, parsed.name or path.stem)


def people_rating(raw: float, scale: tuple[float, float]) -> float:
    """A rater's rating (or the raters' aggregate) mapped linearly from the spec's scale
    onto 1-5, as `dialogs.normalise_rating`, without its range check: ``bad_cells:
    as_published`` keeps out-of-scale values (a 0 placeholder) as the authors averaged
    them, so a mean may lie outside 1-5."""
    low, high = scale
    return 1.0 + 4.0 * (float(raw) - low) / (high - low)


def _aggregate(table: RatedTable, ids: Sequence[str]) -> pd.Series:
    frame = pd.DataFrame({r: pd.Series(v, dtype=float) for r, v in table.raters.items()})
    frame = frame.reindex(list(ids))
    if frame.empty or not len(frame.columns):
        return pd.Series(math.nan, index=list(ids))
    return frame.median(axis=1) if table.aggregate == "median" else frame.mean(axis=1)


def published_rows(pub: Published, ids: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows of the comparison's samples table for each published judge (``per_dialog``
    columns), on ``ids`` (default: the spec's dialogs). A dialog the judge's file does
    not rate is unscored (``not in the published file``); a bad cell is unscored with the
    cell named; a rating of the judge's own model's reply (``own_replies``) is left out
    by design (status ``comparison.LEFT_OUT``: outside its coverage and headline)."""
    table = pub.table
    ids = list(table.ids if ids is None else ids)
    human = _aggregate(table, ids)
    responder_of: dict[str, str] = {}
    if table.own_replies and table.responder is not None:
        position = table.key_columns.index(table.responder)
        responder_of = {sid: key[position] for sid, key in table.keys.items()}
    rows = []
    for sid in ids:
        ratings = {
            r: people_rating(v[sid], table.scale)
            for r, v in table.raters.items()
            # out of the scale, kept as published (bad_cells: as_published): in the
            # aggregate, not in the raters' agreement
            if sid in v and table.scale[0] <= v[sid] <= table.scale[1]
        }
        h = human.get(sid, math.nan)
        base = {
            "id": sid,
            "dataset": pub.name,
            "method": "published",
            "human": people_rating(h, table.scale) if pd.notna(h) else math.nan,
            "ratings": ratings or None,
            "reply_words": math.nan,
            "emotion": None,
            "dialog": None,
            "reply": None,
            "tokens": math.nan,
            "epochs": 1,
            "errored_epochs": 0,
            "error": None,
            "log": str(pub.spec),
        }
        for judge, values in table.judges.items():
            label = PREFIX + judge
            row = base | {"judge": label, "model": label}
            if sid in values:
                score = normalise_rating(values[sid], table.judge_scales[judge])
                row |= {"score": score, "status": "scored", "unscored_reason": None}
            else:
                bad = table.judge_bad.get(judge, {}).get(sid)
                reason = str(bad) if bad is not None else "not in the published file"
                status = "unscored"
                if responder_of.get(sid) in table.own_replies.get(judge, ()):
                    reason, status = "its own model's reply (left out: own_replies)", LEFT_OUT
                row |= {"score": math.nan, "status": status, "unscored_reason": reason}
            rows.append(row)
    return pd.DataFrame(rows)


def add_published(loaded: Any, specs: Sequence[str | os.PathLike[str]]) -> Any:
    """``loaded`` (a ``logs.LoadedScores``, or None for no logs) with each spec's
    published judges joined on the compared dialogs' ids; ids that do not match are
    counted in the warnings."""
    from .logs import LoadedScores

    warnings = list(loaded.warnings) if loaded is not None else []
    frames = [loaded.samples] if loaded is not None else []
    log_rows = []
    for spec in specs:
        pub = load_published(spec)
        warnings += [f"{pub.spec.name}: {line}" for line in pub.table.notes() if "bad cell" in line
                     or "missing" in line or "extra" in line or "repeated" in line
                     or "ambiguous" in line or "left out" in line]  # fmt: skip
        if loaded is not None:
            ids = list(dict.fromkeys(loaded.samples["id"].astype(str)))
            known, published_ids = set(ids), set(pub.table.ids)
            outside = [i for i in pub.table.ids if i not in known]
            absent = [i for i in ids if i not in published_ids]
            if not known & published_ids:
                raise CompareError(
                    f"{pub.spec}: none of its {len(pub.table.ids)} ids is among the logs' "
                    f"{len(ids)} dialogs (e.g. {ids[:1]} vs {pub.table.ids[:1]})"
                )
            if outside:
                warnings.append(f"{pub.spec.name}: {len(outside)} published id(s) are not among "
                                "the logs' dialogs and are not compared")  # fmt: skip
            if absent:
                warnings.append(f"{pub.spec.name}: {len(absent)} of the logs' dialogs are not in "
                                "the published files (unscored for its judges)")  # fmt: skip
        else:
            ids = pub.table.ids
        frame = published_rows(pub, ids)
        if loaded is not None and len(frame):
            human = loaded.samples.groupby("id")["human"].first()
            frame["human"] = frame["id"].map(human)
            ratings = loaded.samples.dropna(subset=["ratings"]).groupby("id")["ratings"].first()
            frame["ratings"] = frame["id"].map(ratings)
            for column in ("reply_words", "emotion", "dialog", "reply"):
                if column in loaded.samples:
                    frame[column] = frame["id"].map(loaded.samples.groupby("id")[column].first())
            for column in loaded.samples.columns.difference(frame.columns):
                frame[column] = None
        frames.append(frame)
        log_rows.append({
            "judges": ", ".join(PREFIX + j for j in pub.table.judges), "mode": "judge",
            "reply_model": "", "dataset": pub.name, "fingerprint": "published",
            "task": "published ratings", "status": "published", "cot": False,
            "samples": len(ids), "errored": 0, "created": "", "log": str(pub.spec),
            "set_apart": "", "records": "",
        })  # fmt: skip
    if not frames:
        raise CompareError("nothing to compare: give logs or --published specs")
    samples = pd.concat(frames, ignore_index=True)
    logs = pd.DataFrame(log_rows)
    if loaded is not None:
        logs = pd.concat([loaded.logs, logs], ignore_index=True)
        return dataclasses.replace(loaded, samples=samples, logs=logs, warnings=warnings)
    return LoadedScores(samples, logs, warnings, f"{pub.name}@published", None)


# --------------------------------------------------------------------------- scale's own categories


def scale_agreement(
    pub: Published,
    ids: Sequence[str] | None = None,
    extra: Mapping[str, pd.Series] | None = None,
    kind: str = "standard",
) -> pd.DataFrame:
    """Kappa of each rater pair, each rater and judge against the raters' aggregate, on the
    rating scale's own categories (``kind="paper"``: Kumar et al.'s kappa). ``extra``:
    more judges' scores on 1-5 (Inspect judges), mapped linearly onto the scale and rounded
    half up, so a 1-5 judge meets a 0-2 or 1-7 human scale on the humans' categories."""
    table = pub.table
    ids = list(table.ids if ids is None else ids)
    low, high = table.scale
    columns = {r: pd.Series(v, dtype=float).reindex(ids) for r, v in table.raters.items()}
    agg = _aggregate(table, ids)
    judges = {j: pd.Series(v, dtype=float).reindex(ids) for j, v in table.judges.items()}
    for name, scores in (extra or {}).items():
        judges[name] = low + (scores.reindex(ids).astype(float) - 1) * (high - low) / 4
    rows = []
    names = list(columns)
    pairs = [(a, b, columns[a], columns[b]) for i, a in enumerate(names) for b in names[i + 1 :]]
    pairs += [(j, RATERS, s, agg) for j, s in judges.items()]
    for a, b, x, y in pairs:
        try:
            result = kappas.kappa_test(x.to_numpy(), y.to_numpy(), kind, table.scale)
        except ValueError as ex:  # a judge on another scale than the raters'
            result = {"kappa": math.nan, "p": math.nan, "n": math.nan, "note": str(ex)}
        rows.append({"a": a, "b": b, "n": int(result["n"]) if math.isfinite(result["n"]) else 0,
                     "kappa": result["kappa"], "p": result["p"], "kind": kind,
                     "scale": f"{low:g}-{high:g}", "note": result.get("note", "")})  # fmt: skip
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- reproduce


def _pair_series(pub: Published, name: str) -> pd.Series:
    table = pub.table
    if name == RATERS:
        return _aggregate(table, table.ids)
    for group in (table.raters, table.judges):
        if name in group:
            return pd.Series(group[name], dtype=float).reindex(table.ids)
    raise CompareError(f"{pub.spec}: reproduce pair names {name!r}, not a rater or judge")


def reproduce(specs: Sequence[str | os.PathLike[str]]) -> pd.DataFrame:
    """Each cell of each spec's ``reproduce`` table beside the same cell from the files.

    Columns: dataset, dimension, pair, n, standard (QWK on the scale's categories), paper
    (Kumar et al.'s kappa), p (the paper kappa's p-value), published, published_p, diff
    (``reproduce.kappa`` minus published), needs_paper (the standard QWK is off by more
    than 0.01 and the paper kappa is not) and why (a reason for each cell off by > 0.01).
    """
    rows = []
    notes: list[str] = []
    for spec in specs:
        base = load_published(spec)
        notes += [f"{Path(spec).name}: {line}" for line in base.table.notes()
                  if "bad cell" in line or "marked missing" in line]  # fmt: skip
        settings = base.mapping.get("reproduce")
        if not isinstance(settings, Mapping) or "table" not in settings:
            raise CompareError(f"{spec}: the spec has no reproduce: {{table, dataset, pairs}}")
        root = Path(read_spec(Path(spec)).source)
        published = pd.read_csv(root / str(settings["table"]))
        value_col = str(settings.get("column", "Weighted Cohen's Kappa"))
        kind = str(settings.get("kappa", "standard"))
        mine = published[published["Dataset"] == settings["dataset"]]
        dims = base.mapping.get("dimensions") or [base.mapping.get("dimension")]
        for dim in dims:
            pub = base if dim == base.mapping.get("dimension") else load_published(spec, dim)
            for label, (a, b) in settings["pairs"].items():
                x, y = _pair_series(pub, a), _pair_series(pub, b)
                std = kappas.kappa_test(x.to_numpy(), y.to_numpy(), "standard", pub.table.scale)
                pap = kappas.kappa_test(x.to_numpy(), y.to_numpy(), "paper")
                cell = mine[(mine["Dimension"] == dim) & (mine["Annotator Pair"] == label)]
                value = float(cell[value_col].iloc[0]) if len(cell) else math.nan
                p_pub = (
                    float(cell["Kappa P-value"].iloc[0])
                    if len(cell) and "Kappa P-value" in cell
                    else math.nan
                )
                ours = pap if kind == "paper" else std
                row = {
                    "dataset": settings["dataset"], "dimension": dim, "pair": label,
                    "n": int(std["n"]), "standard": std["kappa"], "paper": pap["kappa"],
                    "p": ours["p"], "published": value, "published_p": p_pub,
                    "diff": ours["kappa"] - value,
                }  # fmt: skip
                row["needs_paper"] = bool(
                    abs(std["kappa"] - value) > 0.01 and abs(pap["kappa"] - value) <= 0.01
                )
                row["why"] = _why(row, x, y, pub.table.scale)
                rows.append(row)
    frame = pd.DataFrame(rows)
    frame.attrs["notes"] = notes
    return frame


def not_reproduced(frame: pd.DataFrame) -> int:
    """Cells not reproduced: off by more than 0.01, or with no published or computed value."""
    diff = pd.to_numeric(frame["diff"], errors="coerce")
    return int((diff.isna() | (diff.abs() > 0.01)).sum())


def _why(row: Mapping[str, Any], x: pd.Series, y: pd.Series, scale: tuple[float, float]) -> str:
    """Why the standard QWK differs from the paper's cell (empty when within 0.01)."""
    if abs(row["diff"]) > 0.01 and math.isfinite(row["published"]):
        return "not reproduced: the files give another value (see the docs)"
    if not row["needs_paper"]:
        return ""
    values = np.concatenate([x.dropna().to_numpy(), y.dropna().to_numpy()])
    if not np.allclose(values, np.round(values)):
        return "fractional ratings (means/medians): the paper's categories are the observed values"
    used = set(np.round(values).astype(int))
    gaps = [c for c in range(int(scale[0]), int(scale[1]) + 1) if c not in used
            and min(used) < c < max(used)]  # fmt: skip
    if gaps:
        return f"no rating of {', '.join(map(str, gaps))}: the paper's index weights close the gap"
    return "the paper's weights differ from the scale's"


def reproduce_text(frame: pd.DataFrame) -> str:
    """The cells as a Markdown table, and a line of counts."""
    shown = frame.copy()
    for col in ("standard", "paper", "published"):
        shown[col] = frame[col].map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
    shown["diff"] = frame["diff"].map(lambda v: "" if pd.isna(v) else f"{v:+.3f}")
    shown["p"] = frame["p"].map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
    shown["published_p"] = frame["published_p"].map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
    shown["needs_paper"] = frame["needs_paper"].map({True: "yes", False: ""})
    header = ["dataset", "dimension", "pair", "n", "standard", "paper", "published", "diff",
              "p", "published_p", "needs_paper", "why"]  # fmt: skip
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, r in shown[header].iterrows():
        lines.append("| " + " | ".join(str(v) for v in r) + " |")
    off = frame[frame["diff"].abs() > 0.01]
    within = (frame["diff"].abs() <= 0.005 + 1e-9).sum()
    lines.append("")
    lines.append(
        f"{len(frame)} cells: {within} equal to the published value at its 2 decimals "
        f"(|diff| <= 0.005), {len(off)} off by more than 0.01; "
        f"{int(frame['needs_paper'].sum())} need the paper's kappa (the standard QWK is off "
        "by more than 0.01 there)."
    )
    return "\n".join(lines)


def pair_label(text: str) -> tuple[str, str]:
    """``"('expert1', 'expert2')"`` -> ``("expert1", "expert2")`` (a published pair label)."""
    value = ast.literal_eval(text)
    return str(value[0]), str(value[1])
