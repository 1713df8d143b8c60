"""``inspect-empathy human-scale``: response mode on the human scale (`compare.ppi`).

Only argparse at import: the statistics (numpy, pandas, scipy) load when the command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_CONFIDENCE = 0.95

# --------------------------------------------------------------------------

HELP = """\
The mean human rating of each reply model's replies, estimated from the grader's scores on
every reply and human ratings on a random subset (PPI++, Angelopoulos et al. 2023), beside
the grader's own mean (on its scale) and the people's mean alone; and each pair of reply
models' difference on the same dialogs. --ratings FILE: CSV or JSONL with id, rating and,
for several reply models, reply_model. Without it, judge-mode logs use the dataset's
ratings of the judged replies. See docs/response-mode.md.
"""


def add_command(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser(
        "human-scale",
        help="response mode on the human scale: PPI++ mean human rating per reply model",
        description=HELP,
    )
    command.add_argument("logs", nargs="+", metavar="LOGS", help="log files or folders")
    command.add_argument("--ratings", type=Path, default=None, help="human ratings (CSV/JSONL)")
    command.add_argument(
        "--scale", type=float, nargs=2, default=None, metavar=("LOW", "HIGH"),
        help="the ratings' scale when it is not 1-5 (mapped linearly onto 1-5)",
    )  # fmt: skip
    command.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE)
    command.add_argument("--out", type=Path, default=None, help="write CSV and Markdown here")


def _ci(r: pd.Series, key: str, digits: int = 3) -> str:
    from ..compare.formats import with_ci

    return with_ci(r[key], r[f"{key}_low"], r[f"{key}_high"], digits)


def displays(means: pd.DataFrame, pairs: pd.DataFrame, confidence: float) -> list[Any]:
    """(title, headers, rows) of the two tables."""
    from ..compare.formats import number

    level = f"{confidence:.0%} CI"
    headers = ["grader", "reply model", "replies", "rated", f"grader mean [{level}]"]
    headers += [f"people's mean, rated only [{level}]", f"PPI++ human mean [{level}]"]
    headers += ["λ", "worth n rated"]
    rows = [
        [str(r["grader"]), str(r["reply_model"]), number(r["n_total"], 0), number(r["n"], 0),
         _ci(r, "judge"), _ci(r, "labelled"), _ci(r, "ppi"), number(r["lambda"], 2),
         number(r["effective_n"], 0)]
        for _, r in means.iterrows()
    ]  # fmt: skip
    out = [("Mean human rating per reply model", headers, rows)]
    if len(pairs):
        headers = ["grader", "A", "B", "dialogs", "both rated", f"grader A−B [{level}]"]
        headers += [f"people A−B, rated only [{level}]", f"PPI++ A−B [{level}]", "λ"]
        rows = [
            [str(r["grader"]), str(r["model_a"]), str(r["model_b"]), number(r["n_total"], 0),
             number(r["n"], 0), _ci(r, "judge"), _ci(r, "labelled"), _ci(r, "ppi"),
             number(r["lambda"], 2)]
            for _, r in pairs.iterrows()
        ]  # fmt: skip
        out.append(("Difference between reply models (same dialogs)", headers, rows))
    return out


def main(args: argparse.Namespace) -> int:
    """Run the command: print the tables, and write them with ``--out``."""
    from ..compare.comparison import CompareError
    from ..compare.ppi import human_scale, join_ratings, read_ratings, read_scores
    from ..compare.report import markdown_table, plain_table, to_jsonable, write_csv

    if not 0 < args.confidence < 1:
        print("inspect-empathy human-scale: --confidence must be in (0, 1)", file=sys.stderr)
        return 2
    try:
        scale = tuple(args.scale) if args.scale else None
        if scale is not None and not scale[0] < scale[1]:
            raise CompareError(f"--scale {scale[0]:g} {scale[1]:g}: LOW must be below HIGH")
        ratings = read_ratings(args.ratings, scale) if args.ratings else None
        scores = join_ratings(read_scores(args.logs), ratings)
    except CompareError as ex:
        print(f"inspect-empathy human-scale: {ex}", file=sys.stderr)
        return 1
    means, pairs = human_scale(scores, args.confidence)
    tables = displays(means, pairs, args.confidence)
    for title, headers, rows in tables:
        print(f"{title}:\n{plain_table(headers, rows)}\n")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        write_csv(means, args.out / "human_scale.csv")
        write_csv(pairs, args.out / "human_scale_pairs.csv")
        text = "\n\n".join(f"## {t}\n\n{markdown_table(h, r)}" for t, h, r in tables)
        (args.out / "human_scale.md").write_text(text + "\n", encoding="utf-8")
        summary = {
            name: [{k: to_jsonable(v) for k, v in r.items()} for r in f.to_dict(orient="records")]
            for name, f in (("means", means), ("pairs", pairs))
        }
        (args.out / "human_scale.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
        print(f"Wrote human_scale.csv, human_scale_pairs.csv, human_scale.md, .json to {args.out}")
    return 0
