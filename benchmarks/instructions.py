"""Instructions per sample: response mode against its bare twin, counted by callgrind.

Wall and CPU time on a shared machine vary by 5-15% between processes of the same eval, so
they cannot settle whether response mode costs 3% more than a bare Inspect task. The number
of instructions the CPU executes can: ``valgrind --tool=callgrind`` counts every one of them
in a process, whatever else the machine runs (a repeat of the same eval agrees to a small
fraction of a percent; the spread is in the JSON).

Each eval (``bare_response`` and ``empathy_response`` by default, the same tasks, dataset
and zero-latency provider as ``overhead.py --task empathy_response``) runs in its own
process, ``benchmarks/_run_eval.py`` under callgrind, at two sizes. Inspect's start-up
(imports, task building, the log's opening and closing) is the same at both sizes, so the
**slope** (instructions at the larger size minus the smaller, divided by the difference in
samples) is what one more sample costs, and the ratio of the slopes is the per-sample
overhead of the plugin. The totals are read from the ``totals:`` line of each callgrind
output file (collection on from the start, the default ``--collect-atstart=yes`` and
``--instr-atstart=yes``; all threads summed, ``--separate-threads=no``).
``PYTHONHASHSEED=0`` makes set and dict orders the same in every run.

**Wall-clock timers are stretched.** Inspect does some work on wall-clock timers: every
sample in flight wakes once a second to check its working-time limit, a pending log
flush fires after 60 s, a throughput report every 60 s. (The live figures, every metric
recomputed over all scores so far at most every 0.9 s, are computed only where the score
display is on: ``_run_eval.py`` turns it off, so these runs compute none.) Under callgrind a
Python process runs about 50 times slower, so with 100 samples in flight each sample would
wake some 50-100 times instead of about once, and how often would depend on how busy the
machine is. The child (``--child``, run by this script) therefore sets those intervals to an
hour before it runs ``_run_eval.py``, so the count is the work per sample whatever the
machine's speed. (Natively these timers fire about once per sample. On 2026-11-25 the
unstretched slopes were within 0.5% of the stretched ones: a safeguard, not a correction.)

Limits: the instruction count is not time (cache misses, memory and the garbage
collector's pointer chasing cost more per instruction): it answers "how much more work",
not "how much slower".

The parent also reads each log (outside valgrind) for its size and the transcript events
per sample (total and by type), so the two tasks' Inspect work can be compared too.

    python benchmarks/instructions.py                          # 100 and 400 samples, 2 runs
    python benchmarks/instructions.py --sizes 50 200 --repeats 1 --jobs 2
    python benchmarks/instructions.py --tasks bare empathy     # judge mode instead
    python benchmarks/instructions.py --keep /tmp/cg           # keep callgrind.out files
    python benchmarks/instructions.py --no-stretch             # Inspect's timers as they are

Time on 2 cores, two evals at once (``--jobs 2``): about 5 minutes for a 100-sample eval
under callgrind, 9-12 for 400; the default (2 tasks x 2 sizes x 2 runs) about 35 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _common import (
    ROOT,
    checkout_pythonpath,
    eval_args,
    median,
    table,
    write_dialogs_jsonl,
    write_results,
)

VALGRIND = "valgrind"
CALLGRIND_OPTS = [
    "--tool=callgrind",
    "--collect-atstart=yes",  # the defaults, spelled out: count from the first instruction
    "--instr-atstart=yes",
    "--separate-threads=no",  # one file, every thread's instructions in its totals
]
TARGET = 1.03


HOUR = 3600.0


def stretch_timers() -> None:
    """Set Inspect's wall-clock timer intervals to an hour (see the module docstring)."""
    from inspect_ai._eval.task import log as task_log
    from inspect_ai.model import _throughput
    from inspect_ai.util import _limit

    _limit.monitor_working_limit.__defaults__ = (HOUR,)  # per sample, default 1 s
    task_log._STALE_FLUSH_INTERVAL = HOUR  # a pending log flush, default 60 s
    _throughput.report_throughput_periodically.__defaults__ = (HOUR,)  # default 60 s


def child(argv: list[str]) -> None:
    """``--child ARGS``: stretch the timers, then run ``_run_eval.py ARGS`` in this process."""
    import runpy

    stretch_timers()
    sys.argv = [str(Path(__file__).parent / "_run_eval.py"), *argv]
    runpy.run_path(sys.argv[0], run_name="__main__")


def totals(path: Path) -> int:
    """Instructions (Ir) in a callgrind output file: its ``totals:`` (or ``summary:``) line."""
    found: dict[str, int] = {}
    for line in path.read_text("utf-8", errors="replace").splitlines():
        match = re.match(r"^(totals|summary):\s+(\d+)", line)
        if match:
            found[match.group(1)] = int(match.group(2))
    if not found:
        raise SystemExit(f"no totals: line in {path}")
    return found.get("totals", found.get("summary", 0))


def log_facts(location: str) -> dict[str, Any]:
    """Transcript events per sample (total and by type) and sizes of one log."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(location)
    samples = log.samples or []
    events = [len(s.events) for s in samples]
    by_type: Counter[str] = Counter()
    for s in samples:
        by_type.update(e.event for e in s.events)
    n = len(samples) or 1
    return {
        "log_bytes": os.path.getsize(location),
        "events_per_sample": sum(events) / n,
        "events_min_max": [min(events, default=0), max(events, default=0)],
        "events_by_type_per_sample": {k: v / n for k, v in sorted(by_type.items())},
        "metadata_json_bytes_per_sample": sum(len(json.dumps(s.metadata)) for s in samples) / n,
        "scores_json_bytes_per_sample": sum(
            len(json.dumps({k: v.model_dump() for k, v in (s.scores or {}).items()}))
            for s in samples
        )
        / n,
    }


def run_one(task: str, size: int, rep: int, dataset: Path, tmp: Path, model: str,
            connections: int, keep: Path | None, stretch: bool) -> dict[str, Any]:  # fmt: skip
    """One eval under callgrind in its own process; its instruction total and its log."""
    out = tmp / f"callgrind.{task}.{size}.{rep}.out"
    log_dir = tmp / "logs" / f"{task}-{size}-{rep}"
    cmd = [
        VALGRIND,
        *CALLGRIND_OPTS,
        f"--callgrind-out-file={out}",
        sys.executable,
        *(["benchmarks/instructions.py", "--child"] if stretch else ["benchmarks/_run_eval.py"]),
        *eval_args(task, dataset, model, connections, log_dir),
    ]
    env = {**os.environ, "PYTHONPATH": checkout_pythonpath(), "PYTHONHASHSEED": "0"}
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    report: dict[str, Any] = {}
    for line in reversed(proc.stdout.strip().splitlines()):
        if line.startswith("{"):
            report = json.loads(line)
            break
    if proc.returncode != 0 or report.get("status") != "success":
        raise SystemExit(f"{task} ({size}) under callgrind failed:\n{proc.stderr[-4000:]}")
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copy(out, keep / out.name)
    return {
        "task": task,
        "samples": size,
        "repeat": rep,
        "instructions": totals(out),
        "valgrind_wall_s": round(wall, 1),
        "completed": report["samples"],
        **log_facts(report["log"]),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=int, nargs=2, default=[100, 400], metavar=("SMALL", "LARGE")
    )
    parser.add_argument("--repeats", type=int, default=2, help="runs of each task at each size")
    parser.add_argument(
        "--tasks",
        nargs=2,
        default=["bare_response", "empathy_response"],
        metavar=("BARE", "PLUGIN"),
        help="the bare task and the plugin's task (_run_eval.py names)",
    )
    parser.add_argument("--model", default="bench/zero", help="zero-latency provider")
    parser.add_argument("--max-connections", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=1, help="evals under callgrind at once")
    parser.add_argument("--keep", type=Path, default=None, help="copy callgrind outputs here")
    parser.add_argument("--out", type=Path, default=None, help="results directory")
    parser.add_argument("--name", default="instructions", help="results file name (no .json)")
    parser.add_argument(
        "--no-stretch", action="store_true", help="leave Inspect's wall-clock timers as they are"
    )
    args = parser.parse_args(argv)
    if shutil.which(VALGRIND) is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    small, large = sorted(args.sizes)
    bare, plugin = args.tasks

    with tempfile.TemporaryDirectory(prefix="bench-instructions-") as tmp:
        tmpdir = Path(tmp)
        source = ""
        datasets = {}
        for size in (small, large):
            datasets[size] = tmpdir / f"dialogs-{size}.jsonl"
            source = write_dialogs_jsonl(datasets[size], size)
        jobs = [(task, size, rep) for rep in range(args.repeats) for size in (small, large)
                for task in (bare, plugin)]  # fmt: skip
        started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())

        def work(job: tuple[str, int, int]) -> dict[str, Any]:
            task, size, rep = job
            run = run_one(task, size, rep, datasets[size], tmpdir, args.model,
                          args.max_connections, args.keep, not args.no_stretch)  # fmt: skip
            print(
                f"  {task:<17} {size:>5} rep {rep}: {run['instructions']:,} instructions "
                f"({run['valgrind_wall_s']:.0f} s under callgrind), "
                f"{run['events_per_sample']:.1f} events/sample, log {run['log_bytes']:,} B",
                flush=True,
            )
            return run

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            runs = list(pool.map(work, jobs))
        finished = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())

    def at(task: str, size: int) -> list[int]:
        return [r["instructions"] for r in runs if r["task"] == task and r["samples"] == size]

    per_task: dict[str, dict[str, Any]] = {}
    for task in (bare, plugin):
        lo, hi = at(task, small), at(task, large)
        slopes = [(h - lo_) / (large - small) for lo_ in lo for h in hi]
        spread = {
            str(size): (max(v) - min(v)) / min(v) if len(v) > 1 else None
            for size, v in ((small, lo), (large, hi))
        }
        facts = [r for r in runs if r["task"] == task and r["samples"] == large][0]
        small_log = [r for r in runs if r["task"] == task and r["samples"] == small][0]
        per_task[task] = {
            "instructions_small": lo,
            "instructions_large": hi,
            "slope_per_sample": median(slopes),
            "slope_min_max": [min(slopes), max(slopes)],
            "fixed_instructions": median(lo) - median(slopes) * small,
            "repeat_spread_relative": spread,
            "events_per_sample": facts["events_per_sample"],
            "events_by_type_per_sample": facts["events_by_type_per_sample"],
            "metadata_json_bytes_per_sample": facts["metadata_json_bytes_per_sample"],
            "scores_json_bytes_per_sample": facts["scores_json_bytes_per_sample"],
            "log_bytes_per_sample": (facts["log_bytes"] - small_log["log_bytes"]) / (large - small),
        }
    b, p = per_task[bare], per_task[plugin]
    slope_ratio = p["slope_per_sample"] / b["slope_per_sample"]
    summary = {
        "slope_ratio": slope_ratio,
        "slope_ratio_min_max": [
            p["slope_min_max"][0] / b["slope_min_max"][1],
            p["slope_min_max"][1] / b["slope_min_max"][0],
        ],
        "extra_instructions_per_sample": p["slope_per_sample"] - b["slope_per_sample"],
        "fixed_ratio": p["fixed_instructions"] / b["fixed_instructions"],
        f"total_ratio_at_{large}": median(at(plugin, large)) / median(at(bare, large)),
        "meets_target": slope_ratio <= TARGET,
    }
    headers = ["task", "instr/sample", "fixed (start-up)", "repeat spread", "events/sample",
               "log B/sample"]  # fmt: skip
    rows = [
        [
            t,
            f"{d['slope_per_sample'] / 1e6:.2f} M",
            f"{d['fixed_instructions'] / 1e9:.2f} G",
            ", ".join(f"{v:.4%}" for v in d["repeat_spread_relative"].values() if v is not None)
            or "-",
            d["events_per_sample"],
            d["log_bytes_per_sample"],
        ]
        for t, d in per_task.items()
    ]
    print(table(headers, rows))
    print(
        f"per-sample ratio {plugin}/{bare}: {slope_ratio:.4f} "
        f"(range {summary['slope_ratio_min_max'][0]:.4f}-{summary['slope_ratio_min_max'][1]:.4f}); "
        f"target <= {TARGET}: {'met' if summary['meets_target'] else 'missed'}"
    )
    payload = {
        "target": f"{plugin}/{bare} instructions per sample <= {TARGET}",
        "tasks": {"bare": bare, "plugin": plugin},
        "settings": {
            "sizes": [small, large],
            "repeats": args.repeats,
            "model": args.model,
            "max_connections": args.max_connections,
            "valgrind": subprocess.run(
                [VALGRIND, "--version"], capture_output=True, text=True, check=False
            ).stdout.strip(),
            "valgrind_options": CALLGRIND_OPTS,
            "env": {"PYTHONHASHSEED": "0"},
            "inspect_timers": "as shipped"
            if args.no_stretch
            else f"stretched to {HOUR:.0f} s "
            "(working-limit monitor, stale log flush, throughput report)",
            "jobs": args.jobs,
            "dataset_source": source,
            "started": started,
            "finished": finished,
        },
        "summary": summary,
        "per_task": per_task,
        "runs": runs,
    }
    path = write_results(args.name, payload, args.out)
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        main()
