"""Overhead: the ``empathy`` task against a bare Inspect task on the same samples and provider.

Each eval runs in its own child process (peak RSS from ``os.wait4``); the two tasks are
interleaved (bare, empathy, bare, empathy, ...) so that drift in machine load hits both
alike. Ratios are empathy / bare from the same run: the ratio of the medians, and the
median of the per-pair ratios (each empathy run against the bare run just before it).
Target: CPU time and peak RSS ratio <= 1.02 against ``bare_weighted`` (Inspect alone,
keeping the Score the plugin keeps).

    python benchmarks/overhead.py                      # 2,000 and 10,000 samples
    python benchmarks/overhead.py --sizes 200 --repeats 3
    python benchmarks/overhead.py --task empathy_response --sizes 2000   # response mode
    python benchmarks/overhead.py --bare bare   # against a task keeping value and answer only

``--task empathy_response`` compares response mode (the model writes the reply, a grader
rates it: two calls a sample) with ``bare_response`` in ``_bench_tasks.py``: ``generate()``
and a scorer that asks the grader once with a rubric prompt of the same size, no plugin.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from _common import check, eval_args, median, run_child, table, write_dialogs_jsonl, write_results

TARGET = 1.02


def run_eval(task: str, dataset: Path, model: str, connections: int, log_dir: Path) -> dict:
    """One eval in a child process: wall time, peak RSS and the child's own report."""
    load = os.getloadavg()[0]
    result = run_child(
        ["benchmarks/_run_eval.py", *eval_args(task, dataset, model, connections, log_dir / task)]
    )
    check(result, f"{task} eval")
    report = result.report
    if report["status"] != "success":
        raise SystemExit(f"{task} eval ended {report['status']}: {report['error']}")
    return {
        "task": task,
        "wall_s": result.wall_s,
        "cpu_s": result.cpu_s,
        "eval_s": report["eval_s"],
        "import_s": report["import_s"],
        "peak_rss_mb": result.peak_rss_mb,
        "samples": report["samples"],
        "load_1min_before": round(load, 2),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument(
        "--repeats",
        type=int,
        nargs="+",
        default=[2],
        help="runs of each task per size (one number, or one per size)",
    )
    parser.add_argument("--model", default="bench/zero", help="zero-latency provider")
    parser.add_argument("--max-connections", type=int, default=100)
    parser.add_argument(
        "--task",
        default="empathy",
        help="task compared with bare: empathy (as shipped), empathy_dialog (-T input=dialog), "
        "empathy_response (response mode, against bare_response), "
        "or variant:NAME from _variants.py "
        "(results then go to overhead_NAME.json)",
    )
    parser.add_argument(
        "--bare",
        default=None,
        help="the Inspect-only task compared against: bare_weighted (default; its scorer "
        "keeps the weighted score with its arithmetic as the explanation and the distribution "
        "as metadata, as the plugin does; bare_response for empathy_response), or bare (value "
        "and answer only)",
    )
    parser.add_argument("--out", type=Path, default=None, help="results directory")
    parser.add_argument(
        "--name", default=None, help="results file name (default: overhead[_TASK])"
    )
    args = parser.parse_args(argv)
    bare_task = args.bare or (
        "bare_response" if args.task == "empathy_response" else "bare_weighted"
    )
    tasks = (bare_task, args.task)

    runs: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        tmpdir = Path(tmp)
        source = ""
        for index, size in enumerate(args.sizes):
            repeats = args.repeats[min(index, len(args.repeats) - 1)]
            dataset = tmpdir / f"dialogs-{size}.jsonl"
            source = write_dialogs_jsonl(dataset, size)
            per_task: dict[str, list[dict[str, Any]]] = {t: [] for t in tasks}
            for rep in range(repeats):
                for task in tasks:  # bare, empathy, bare, empathy, ...
                    run = run_eval(task, dataset, args.model, args.max_connections, tmpdir)
                    run.update(size=size, repeat=rep)
                    print(
                        f"  {size:>6} {task:<8} rep {rep} (load {run['load_1min_before']:.1f}): "
                        f"wall {run['wall_s']:.1f}s "
                        f"cpu {run['cpu_s']:.1f}s eval {run['eval_s']:.1f}s "
                        f"rss {run['peak_rss_mb']:.0f} MB",
                        flush=True,
                    )
                    per_task[task].append(run)
                    runs.append(run)
            row: dict[str, Any] = {"samples": size, "repeats": repeats}
            for key in ("wall_s", "cpu_s", "eval_s", "import_s", "peak_rss_mb"):
                bare = median([r[key] for r in per_task[bare_task]])
                emp = median([r[key] for r in per_task[args.task]])
                row[f"bare_{key}"] = bare
                row[f"empathy_{key}"] = emp
                row[f"ratio_{key}"] = emp / bare if bare else float("nan")
                row[f"pair_ratio_{key}"] = median(
                    [e[key] / b[key] for b, e in zip(per_task[bare_task], per_task[args.task],
                                                     strict=True) if b[key]]
                )  # fmt: skip
            row["meets_target"] = row["ratio_cpu_s"] <= TARGET and (
                row["ratio_peak_rss_mb"] <= TARGET
            )
            summary.append(row)

    label = args.task.removeprefix("variant:")
    headers = [
        "samples",
        "bare wall s",
        f"{label} wall s",
        "wall ratio",
        "CPU ratio",
        "eval-only ratio",
        "bare RSS MB",
        f"{label} RSS MB",
        "RSS ratio",
        f"<= {TARGET}",
    ]
    rows = [
        [
            r["samples"],
            r["bare_wall_s"],
            r["empathy_wall_s"],
            r["ratio_wall_s"],
            r["ratio_cpu_s"],
            r["ratio_eval_s"],
            r["bare_peak_rss_mb"],
            r["empathy_peak_rss_mb"],
            r["ratio_peak_rss_mb"],
            "yes" if r["meets_target"] else "no",
        ]
        for r in summary
    ]
    print(table(headers, rows))
    payload = {
        "target": f"{args.task}/{bare_task} <= {TARGET} (CPU time and peak RSS)",
        "task": args.task,
        "bare_task": bare_task,
        "settings": {
            "model": args.model,
            "max_connections": args.max_connections,
            "repeats": dict(zip(args.sizes, [args.repeats[min(i, len(args.repeats) - 1)]
                                             for i in range(len(args.sizes))], strict=True)),
            "order": "bare, task, bare, task, ... (each in its own process)",
            "task_args": {"empathy": {}, "empathy_dialog": {"input": "dialog"},
                          "empathy_prompt": {"input": "prompt"},
                          "empathy_response": {"model_roles": {"grader": args.model}}
                          }.get(args.task),
            "log_format": "eval",
            "display": "none",
            "dataset_source": source,
        },
        "summary": summary,
        "runs": runs,
    }
    name = args.name or ("overhead" if args.task == "empathy" else f"overhead_{label}")
    path = write_results(name, payload, args.out)
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
