"""Shared helpers for the benchmark scripts: data generation, child processes, tables, JSON."""

from __future__ import annotations

import csv
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
BUNDLED = ROOT / "datasets" / "empathy_reference.jsonl"

# a few dialogs of our own, used when the bundled set is missing
FALLBACK_DIALOGS: list[dict[str, Any]] = [
    {
        "id": "fb-1",
        "turns": [
            {"role": "user", "content": "My dog died yesterday and the house feels empty."},
            {
                "role": "assistant",
                "content": "I'm so sorry. Losing a dog is losing family. What was she like?",
            },
        ],
        "rating": 5,
    },
    {
        "id": "fb-2",
        "turns": [
            {"role": "user", "content": "I failed my driving test again."},
            {"role": "assistant", "content": "Just practise more. Everyone passes eventually."},
        ],
        "rating": 2,
    },
    {
        "id": "fb-3",
        "turns": [
            {"role": "user", "content": "Work is piling up and I can't sleep."},
            {"role": "assistant", "content": "Calm down, it's not a big deal."},
            {"role": "user", "content": "It is to me."},
            {
                "role": "assistant",
                "content": "You're right, I'm sorry. Lying awake with a pile of work sounds "
                "exhausting. What's weighing on you most?",
            },
        ],
        "rating": 4,
    },
]


def base_dialogs() -> tuple[list[dict[str, Any]], str]:
    """The bundled dialogs (or a small fallback set if it is missing) and where they came from."""
    if BUNDLED.is_file():
        rows = [json.loads(line) for line in BUNDLED.read_text("utf-8").splitlines() if line]
        if rows:
            return rows, str(BUNDLED.relative_to(ROOT))
    return FALLBACK_DIALOGS, "benchmarks/_common.py FALLBACK_DIALOGS (bundled set missing)"


def write_dialogs_jsonl(path: Path, n: int) -> str:
    """Write n dialogs cycling over the base set, with unique ids; returns the source name."""
    rows, source = base_dialogs()
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            row = dict(rows[i % len(rows)])
            row["id"] = f"{row['id']}-{i}"
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return source


CSV_ROLES = {"user": "Seeker", "assistant": "Supporter", "bot": "Supporter"}


def write_dialogs_csv(path: Path, n: int) -> str:
    """Write n dialogs as CSV: id, transcript (``Seeker:``/``Supporter:`` lines), rating 1-3."""
    rows, source = base_dialogs()
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "transcript", "rating"])
        for i in range(n):
            row = rows[i % len(rows)]
            lines = [
                f"{CSV_ROLES[t['role']]}: {' '.join(t['content'].split())}" for t in row["turns"]
            ]
            rating = row.get("rating")
            rating3 = "" if rating is None else str(1 + round((float(rating) - 1) / 2))
            writer.writerow([f"{row['id']}-{i}", "\n".join(lines), rating3])
    return source


@dataclass
class ChildResult:
    """What a child process reported, with its wall time and peak RSS from ``wait4``."""

    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    returncode: int
    report: dict[str, Any]
    stderr: str


def eval_args(task: str, dataset: Path, model: str, connections: int, log_dir: Path) -> list[str]:
    """``benchmarks/_run_eval.py``'s options for one eval."""
    return [
        "--task",
        task,
        "--dataset",
        str(dataset),
        "--model",
        model,
        "--max-connections",
        str(connections),
        "--log-dir",
        str(log_dir),
    ]


def checkout_pythonpath() -> str:
    """``PYTHONPATH`` for a child that imports ``inspect_empathy`` from this checkout."""
    return os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)


def run_child(args: Sequence[str], env: dict[str, str] | None = None) -> ChildResult:
    """Run a Python child process; CPU time and peak RSS come from ``os.wait4`` (that child).

    The child prints one JSON object as the last line of stdout. It imports
    ``inspect_empathy`` from this checkout (``PYTHONPATH``), whatever is installed.
    """
    path = checkout_pythonpath()
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": path, **(env or {})},
        cwd=ROOT,
        text=True,
    )
    # read the pipes to the end first (a full pipe would block the child), then reap it
    out, err = _drain(proc)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    report: dict[str, Any] = {}
    for line in reversed(out.strip().splitlines()):
        if line.startswith("{"):
            report = json.loads(line)
            break
    cpu = usage.ru_utime + usage.ru_stime
    return ChildResult(wall, cpu, usage.ru_maxrss / 1024, proc.returncode, report, err)


def _drain(proc: subprocess.Popen[str]) -> tuple[str, str]:
    import threading

    chunks: dict[str, str] = {}

    def read(name: str, stream: Any) -> None:
        chunks[name] = stream.read()

    threads = [
        threading.Thread(target=read, args=("out", proc.stdout)),
        threading.Thread(target=read, args=("err", proc.stderr)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return chunks.get("out", ""), chunks.get("err", "")


def check(result: ChildResult, what: str) -> None:
    """Fail loudly if a child process failed."""
    if result.returncode != 0 or not result.report:
        raise SystemExit(f"{what} failed (exit {result.returncode}):\n{result.stderr[-4000:]}")


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ratio(a: float, b: float) -> float:
    """a / b, or NaN when b is zero (too small to measure)."""
    return a / b if b else float("nan")


def machine() -> dict[str, Any]:
    """Where the numbers were measured."""
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    info: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average_1_5_15min": [round(x, 2) for x in load],
    }
    try:
        import inspect_ai

        info["inspect_ai"] = inspect_ai.__version__
    except Exception:  # noqa: BLE001 - informational only
        pass
    return info


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table (also valid Markdown)."""

    def fmt(value: Any) -> str:
        if isinstance(value, float):
            if value != value:  # NaN
                return "-"
            return f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"
        return "-" if value is None else str(value)

    cells = [[fmt(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells
    ]
    return "\n".join([line, rule, *body])


def _finite(value: Any) -> Any:
    """NaN/inf become null, so the JSON is strict."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def write_results(name: str, payload: dict[str, Any], out_dir: Path | None = None) -> Path:
    """Write a benchmark's results as JSON under benchmarks/results/ (or ``out_dir``)."""
    directory = out_dir or RESULTS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    payload = {"benchmark": name, "machine": machine(), **payload}
    path.write_text(json.dumps(_finite(payload), indent=2) + "\n", encoding="utf-8")
    return path
