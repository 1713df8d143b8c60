"""Overhead breakdown: where the ``empathy`` task's extra cost over the bare task goes.

Runs the bare task, ``empathy`` and the one-change variants in ``_variants.py`` on the
same samples and zero-latency provider, all in this one warm process (imports and
start-up paid once, before measuring), rotating the order each repeat. Each eval's CPU
time (``time.process_time``; less sensitive to other load on the machine than wall
time) and wall time are reported against the bare task.

    python benchmarks/overhead_breakdown.py --samples 1000 --repeats 4
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import median, table, write_dialogs_jsonl, write_results

TASKS = [
    "bare",
    "empathy",
    "empathy_dialog",
    "one_solver",
    "no_transcript",
    "one_solver_no_transcript",
    "prerendered",
    "prerendered_no_transcript",
]
DESCRIPTIONS = {
    "bare": "bare Inspect task (rubric prompt as input, generate, trivial scorer)",
    "empathy": "the empathy task as shipped (the rubric prompt as input, the default)",
    "empathy_dialog": "the empathy task with -T input=dialog (chat input, prompt solver)",
    "one_solver": "empathy, prompt + generate merged into one solver",
    "no_transcript": "empathy without the transcript copy in sample metadata",
    "one_solver_no_transcript": "both of the above",
    "prerendered": "prompt rendered at load time, generate(), the plugin's scorer",
    "prerendered_no_transcript": "prompt rendered at load time and no transcript copy",
}


def factories(dataset: str) -> dict[str, Callable[[], Any]]:
    import _bench_tasks
    import _variants

    from inspect_empathy import empathy

    made: dict[str, Callable[[], Any]] = {
        "bare": lambda: _bench_tasks.bare(dataset=dataset),
        "empathy": lambda: empathy(dataset=dataset),
        "empathy_dialog": lambda: empathy(dataset=dataset, input="dialog"),
    }
    for name, variant in _variants.VARIANTS.items():
        made[name] = lambda variant=variant: variant(dataset=dataset)
    return made


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--model", default="bench/zero")
    parser.add_argument("--max-connections", type=int, default=100)
    parser.add_argument("--tasks", nargs="+", default=TASKS, choices=TASKS)
    parser.add_argument("--out", type=Path, default=None, help="results directory")
    args = parser.parse_args(argv)

    from inspect_ai import eval as inspect_eval

    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-breakdown-") as tmp:
        dataset = Path(tmp) / "dialogs.jsonl"
        source = write_dialogs_jsonl(dataset, args.samples)
        make = factories(str(dataset))
        options: dict[str, Any] = {
            "model": args.model,
            "max_connections": args.max_connections,
            "log_dir": str(Path(tmp) / "logs"),
            "log_format": "eval",
            "display": "none",
            "score_display": False,
        }
        # warm up: first-use costs (registry, provider, log writer) land outside the timings
        for task in ("bare", "empathy"):
            inspect_eval(make[task](), limit=10, **options)
        for rep in range(args.repeats):
            shift = rep % len(args.tasks)
            for task in args.tasks[shift:] + args.tasks[:shift]:
                the_task = make[task]()
                cpu, wall = time.process_time(), time.perf_counter()
                (log,) = inspect_eval(the_task, **options)
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                if log.status != "success":
                    raise SystemExit(f"{task}: eval ended {log.status}")
                run = {"task": task, "repeat": rep, "cpu_s": cpu, "wall_s": wall}
                runs.append(run)
                print(f"  {task:<26} rep {rep}: cpu {cpu:.2f}s wall {wall:.2f}s", flush=True)

    def med(task: str, key: str) -> float:
        return median([r[key] for r in runs if r["task"] == task])

    summary = []
    for task in args.tasks:
        row: dict[str, Any] = {"task": task, "what": DESCRIPTIONS[task]}
        row.update({k: med(task, k) for k in ("cpu_s", "wall_s")})
        if "bare" in args.tasks:
            row["ratio_cpu_s"] = row["cpu_s"] / med("bare", "cpu_s")
            row["ratio_wall_s"] = row["wall_s"] / med("bare", "wall_s")
            row["extra_cpu_ms_per_sample"] = (
                1000 * (row["cpu_s"] - med("bare", "cpu_s")) / args.samples
            )
        summary.append(row)
    headers = ["task", "CPU s", "CPU ratio", "extra CPU ms/sample", "wall s", "wall ratio"]
    rows = [
        [
            r["task"],
            r["cpu_s"],
            r.get("ratio_cpu_s"),
            r.get("extra_cpu_ms_per_sample"),
            r["wall_s"],
            r.get("ratio_wall_s"),
        ]
        for r in summary
    ]
    print(table(headers, rows))
    payload = {
        "settings": {
            "samples": args.samples,
            "repeats": args.repeats,
            "model": args.model,
            "max_connections": args.max_connections,
            "dataset_source": source,
            "process": "one warm process; medians over repeats",
        },
        "summary": summary,
        "runs": runs,
    }
    path = write_results("overhead_breakdown", payload, args.out)
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
