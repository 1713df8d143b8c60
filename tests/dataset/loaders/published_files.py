"""Small per-rater files in the shapes Kumar et al. (2025) publish, written by the tests.

``corpus(root)`` writes ``annotations/toy/<rater>_ratings.csv`` (an id column or two, one
column per dimension), a dialogs file under ``original_data/``, a ``table_kappa.csv`` and
a spec ``toy.yaml`` whose one input is the folder (``path: ${TOY_ROOT}``). The numbers are
made up; no published data is copied.
"""

from __future__ import annotations

from pathlib import Path

IDS = [("s1", "r1"), ("s2", "r2"), ("s3", "r3"), ("s4", "r4"), ("s5", "r5"), ("s6", "r6")]
EXPERT1 = [0, 1, 2, 2, 0, 1]
EXPERT2 = [0, 1, 2, 1, 0, 2]
EXPERT3 = [1, 1, 2, 2, 0, 1]
GEMINI = [0, 2, 2, 1, 0, 1]
CROWD = [0.5, 1.0, 2.0, 1.5, 0.0, 1.0]
GPT = [0.0, 1.0, 2.0, 2.0, 1.0, 1.0]


def _csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [",".join(header)] + [",".join(str(v) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def ratings(path: Path, values: list[object], ids: list[tuple[str, str]] = IDS) -> Path:
    """A rater file keyed by ``sp_id`` + ``rp_id`` with ``level`` and ``other`` columns."""
    rows = [[s, r, v, 1] for (s, r), v in zip(ids, values, strict=True)]
    return _csv(path, ["sp_id", "rp_id", "level", "other"], rows)


def corpus(root: Path, spec_extra: str = "") -> Path:
    """The toy corpus under ``root``; returns the spec file (outside ``root``)."""
    ann = root / "annotations" / "toy"
    ratings(ann / "expert1_ratings.csv", EXPERT1)
    ratings(ann / "expert2_ratings.csv", EXPERT2)
    ratings(ann / "expert3_ratings.csv", EXPERT3)
    ratings(ann / "gemini_ratings.csv", GEMINI)
    ratings(ann / "crowd_ratings.csv", CROWD)
    # like Kumar et al.'s GPT-4o files: an index column, and sp_id only
    _csv(ann / "gpt_ratings.csv", ["", "sp_id", "level"],
         [[i, s, v] for i, ((s, _), v) in enumerate(zip(IDS, GPT, strict=True))])  # fmt: skip
    header = ["sp_id", "rp_id", "seeker_post", "response_post"]
    texts = [[s, r, f"I feel low today ({s})", f"That sounds heavy ({r})"] for s, r in IDS]
    _csv(root / "original_data" / "dialogs.csv", header, texts)
    _csv(root / "annotations" / "table_kappa.csv",
         ["Dataset", "Dimension", "Annotator Pair", "Weighted Cohen's Kappa", "Kappa P-value"],
         [["Toy", "level", '"(\'expert1\', \'expert2\')"', "0.75", "0.000"],
          ["Toy", "level", '"(\'experts\', \'llm\')"', "0.75", "0.000"],
          ["Toy", "level", '"(\'experts\', \'crowd\')"', "0.92", "0.000"]])  # fmt: skip
    spec = root.parent / "toy.yaml"
    spec.write_text(
        f"""format: raters
path: ${{TOY_ROOT}}
environment: [TOY_ROOT]
name: toy
dialogs:
  file: original_data/dialogs.csv
  context: seeker_post
  response: response_post
id: [sp_id, rp_id]
scale: [0, 2]
dimension: level
dimensions: [level]
raters:
  expert1: annotations/toy/expert1_ratings.csv
  expert2: annotations/toy/expert2_ratings.csv
  expert3: annotations/toy/expert3_ratings.csv
judges:
  gemini: annotations/toy/gemini_ratings.csv
  gpt: {{file: annotations/toy/gpt_ratings.csv, id: sp_id}}
  crowd: annotations/toy/crowd_ratings.csv
reproduce:
  table: annotations/table_kappa.csv
  dataset: Toy
  kappa: paper
  pairs:
    "('expert1', 'expert2')": [expert1, expert2]
    "('experts', 'llm')": [raters, gemini]
    "('experts', 'crowd')": [raters, crowd]
{spec_extra}""",
        encoding="utf-8",
    )
    return spec
