"""A multi-chatbot corpus in the shape such corpora are published, written by the tests.

One row per context; each chatbot's reply in a column of its own (``<bot> reply``); each
rater's file has one column per chatbot (``<bot> rating``) holding a JSON object of
attributes (``{"empathy": 4, "fluency": 5}``); each judge's file (a workbook, or a CSV)
has the same shape with the judge's raw answer in each cell (a fenced JSON block). Two
judges are among the chatbots rated. Ids (contexts and chatbots) hold ``/``, ``|``, ``,``,
``#``, ``:``, spaces and non-ASCII letters. The numbers are made up, from a seed.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

BOTS = ["openai/gpt-4o", "claude|3.7", "bot, one", "#7: ünï bot", "llama 3:8b", "qwen/2.5|7b"]
"""Chatbots; the first two are the models of the judges ``gpt-4o`` and ``claude``."""
QUALITY = [4.3, 3.9, 3.4, 2.9, 2.4, 1.9]


def contexts(n: int) -> list[str]:
    """Context ids that a parser would split: ``ctx/0``, ``c|1``, ``c,2``, ..."""
    marks = ["ctx/{}", "c|{}", "c,{}", "c#{}", "c:{}", "c {} é", "ç/ü:{}"]
    return [marks[i % len(marks)].format(i) for i in range(n)]


def _write(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".xlsx":
        import openpyxl

        book = openpyxl.Workbook()
        sheet = book.active
        sheet.append(header)
        for row in rows:
            sheet.append(row)
        book.save(path)
        return path
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def ratings_grid(n_contexts: int, seed: int = 7) -> dict[str, np.ndarray]:
    """Contexts x bots ratings on 1-5: two raters, and judges that are lenient (gpt-4o,
    +1.2, clipped at 5) or harsh (claude, -0.6) and prefer their own model's replies."""
    rng = np.random.default_rng(seed)
    true = np.array(QUALITY)[None, :] + rng.normal(0, 0.6, (n_contexts, len(BOTS)))
    grid = {}
    for rater in ("rater1", "rater2"):
        grid[rater] = np.clip(np.rint(true + rng.normal(0, 0.5, true.shape)), 1, 5)
    gpt = np.clip(np.rint(true + 1.2 + rng.normal(0, 0.5, true.shape)), 1, 5)
    gpt[:, 0] = 5  # its own model's replies
    claude = np.clip(np.rint(true - 0.6 + rng.normal(0, 0.5, true.shape)), 1, 5)
    claude[:, 1] = 5
    grid["gpt-4o"], grid["claude"] = gpt, claude
    return grid


def corpus(root: Path, n_contexts: int = 14, seed: int = 7, spec_extra: str = "") -> Path:
    """The corpus under ``root`` and its spec (``path: ${MULTI_ROOT}``) beside it."""
    ids = contexts(n_contexts)
    grid = ratings_grid(n_contexts, seed)
    _write(root / "dialogs.csv", ["context id", "prompt", *[f"{b} reply" for b in BOTS]],
           [[c, f"I lost my job ({c})", *[f"{b} says sorry ({c})" for b in BOTS]]
            for c in ids])  # fmt: skip
    header = ["context id", *[f"{b} rating" for b in BOTS]]
    for rater, name in (("rater1", "people1.csv"), ("rater2", "people2.xlsx")):
        rows = [[c, *[json.dumps({"fluency": 5, "empathy": int(v)}) for v in grid[rater][i]]]
                for i, c in enumerate(ids)]  # fmt: skip
        _write(root / name, header, rows)
    for judge, name in (("gpt-4o", "judge_gpt4o.xlsx"), ("claude", "judge_claude.csv")):
        rows = [[c, *[f'Here is my rating.\n```json\n{{"empathy": {int(v)}, "fluency": 4}}\n```'
                      for v in grid[judge][i]]] for i, c in enumerate(ids)]  # fmt: skip
        _write(root / name, header, rows)
    spec = root.parent / "multi.yaml"
    spec.write_text(
        f"""format: raters
path: ${{MULTI_ROOT}}
environment: [MULTI_ROOT]
name: multi
dialogs: {{file: dialogs.csv, context: prompt, response: "{{responder}} reply"}}
id: context id
responders: "{{responder}} rating"
dimension: empathy
scale: [1, 5]
raters:
  rater1: {{file: people1.csv, read: json, attribute: empathy}}
  rater2: {{file: people2.xlsx, read: json, attribute: empathy}}
judges:
  gpt-4o: {{file: judge_gpt4o.xlsx, read: text, attribute: empathy}}
  claude: {{file: judge_claude.csv, read: text, attribute: empathy}}
own_replies: {{gpt-4o: openai/gpt-4o, claude: "claude|3.7"}}
{spec_extra}""",
        encoding="utf-8",
    )
    return spec
