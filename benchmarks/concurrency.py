"""Concurrency: requests per second against a fake OpenAI server with a fixed latency.

The ``empathy`` task and the bare task judge the same dialogs through Inspect's OpenAI
provider (``openai/gpt-4o-mini``, chat completions) pointed at ``fake_openai.py`` on
127.0.0.1. Requests per second are measured at the server, from the first request's
arrival to the last response, against the bound ``connections / latency`` and against
the bare task, and the client's CPU time per request. The two tasks alternate (bare,
empathy, bare, empathy), each eval in its own process. Targets: empathy's request rate
>= 0.95 of the bare task's, its client CPU per request <= 1.05 of the bare task's.

    python benchmarks/concurrency.py                       # 20 and 50 connections
    python benchmarks/concurrency.py --connections 20 --rounds 5
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from _common import check, eval_args, median, run_child, table, write_dialogs_jsonl, write_results
from fake_openai import FakeOpenAI

TARGET = 0.95
CPU_TARGET = 1.05
MODEL = "openai/gpt-4o-mini"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, nargs="+", default=[20, 50])
    parser.add_argument("--latency", type=float, default=0.2, help="server latency, seconds")
    parser.add_argument(
        "--rounds", type=int, default=20, help="samples = connections x rounds (bounded)"
    )
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--task",
        default="empathy",
        help="task compared with bare: empathy (as shipped), empathy_dialog (-T input=dialog), "
        "or variant:NAME from _variants.py "
        "(results then go to concurrency_NAME.json)",
    )
    parser.add_argument("--out", type=Path, default=None, help="results directory")
    args = parser.parse_args(argv)
    tasks = ("bare", args.task)

    runs: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-concurrency-") as tmp:
        tmpdir = Path(tmp)
        with FakeOpenAI(latency=args.latency) as server:
            for connections in args.connections:
                size = connections * args.rounds
                dataset = tmpdir / f"dialogs-{size}.jsonl"
                write_dialogs_jsonl(dataset, size)
                per_task: dict[str, list[dict[str, Any]]] = {t: [] for t in tasks}
                for rep in range(args.repeats):
                    for task in tasks:  # bare, empathy, bare, empathy, ...
                        server.reset()
                        server_cpu = server.cpu_seconds()
                        result = run_child(
                            [
                                "benchmarks/_run_eval.py",
                                *eval_args(task, dataset, MODEL, connections, tmpdir / "logs"),
                            ],
                            env=server.env(),
                        )
                        check(result, f"{task} eval")
                        stats = server.stats()
                        server_cpu = server.cpu_seconds() - server_cpu
                        if result.report["samples"] != size or stats["calls"] != size:
                            raise SystemExit(
                                f"{task}: {result.report['samples']} samples, "
                                f"{stats['calls']} calls, expected {size}"
                            )
                        run = {
                            "task": task,
                            "connections": connections,
                            "samples": size,
                            "repeat": rep,
                            "server_rps": stats["requests_per_s"],
                            "server_span_s": stats["span_s"],
                            "max_inflight": stats["max_inflight"],
                            "eval_s": result.report["eval_s"],
                            "client_rps": size / result.report["eval_s"],
                            "wall_s": result.wall_s,
                            "client_cpu_s": result.cpu_s,
                            "client_cpu_busy": result.cpu_s / result.wall_s,
                            "client_cpu_ms_per_request": 1000 * result.cpu_s / size,
                            "server_cpu_s": server_cpu,
                        }
                        print(
                            f"  {connections:>3} conns {task:<8} rep {rep}: "
                            f"{run['server_rps']:.1f} req/s (in flight <= "
                            f"{run['max_inflight']}), eval {run['eval_s']:.1f}s, client CPU "
                            f"{run['client_cpu_busy']:.0%} of wall, server CPU "
                            f"{run['server_cpu_s']:.1f}s",
                            flush=True,
                        )
                        per_task[task].append(run)
                        runs.append(run)
                bound = connections / args.latency
                bare = median([r["server_rps"] for r in per_task["bare"]])
                emp = median([r["server_rps"] for r in per_task[args.task]])
                summary.append(
                    {
                        "connections": connections,
                        "samples": size,
                        "bound_rps": bound,
                        "bare_rps": bare,
                        "empathy_rps": emp,
                        "empathy_vs_bare": emp / bare,
                        "empathy_vs_bound": emp / bound,
                        "bare_vs_bound": bare / bound,
                        "bare_max_inflight": max(r["max_inflight"] for r in per_task["bare"]),
                        "empathy_max_inflight": max(r["max_inflight"] for r in per_task[args.task]),
                        "meets_target": emp / bare >= TARGET,
                        "bare_cpu_ms_per_request": median(
                            [r["client_cpu_ms_per_request"] for r in per_task["bare"]]
                        ),
                        "empathy_cpu_ms_per_request": median(
                            [r["client_cpu_ms_per_request"] for r in per_task[args.task]]
                        ),
                        "cpu_per_request_ratio": median(
                            [r["client_cpu_ms_per_request"] for r in per_task[args.task]]
                        )
                        / median([r["client_cpu_ms_per_request"] for r in per_task["bare"]]),
                        "client_cpu_busy": median(
                            [r["client_cpu_busy"] for r in per_task["bare"] + per_task[args.task]]
                        ),
                    }
                )

    label = args.task.removeprefix("variant:")
    headers = [
        "connections",
        "samples",
        "bound req/s",
        "bare req/s",
        f"{label} req/s",
        f"{label}/bare",
        f"{label}/bound",
        "bare/bound",
        f"CPU ms/request (bare, {label})",
        "CPU ratio",
        f"peak in flight (bare, {label})",
        "client CPU busy",
        f">= {TARGET}",
    ]
    rows = [
        [
            r["connections"],
            r["samples"],
            r["bound_rps"],
            r["bare_rps"],
            r["empathy_rps"],
            r["empathy_vs_bare"],
            r["empathy_vs_bound"],
            r["bare_vs_bound"],
            f"{r['bare_cpu_ms_per_request']:.1f}, {r['empathy_cpu_ms_per_request']:.1f}",
            r["empathy_cpu_ms_per_request"] / r["bare_cpu_ms_per_request"],
            f"{r['bare_max_inflight']}, {r['empathy_max_inflight']}",
            f"{r['client_cpu_busy']:.0%}",
            "yes" if r["meets_target"] else "no",
        ]
        for r in summary
    ]
    print(table(headers, rows))
    payload = {
        "target": f"empathy req/s >= {TARGET} x bare req/s; client CPU per request "
        f"<= {CPU_TARGET} x bare's",
        "task": args.task,
        "settings": {
            "model": MODEL,
            "endpoint": "chat completions (fake server on 127.0.0.1)",
            "latency_s": args.latency,
            "rounds": args.rounds,
            "repeats": args.repeats,
            "order": "bare, task, bare, task, ... (each in its own process)",
        },
        "summary": summary,
        "runs": runs,
    }
    name = "concurrency" if args.task == "empathy" else f"concurrency_{label}"
    path = write_results(name, payload, args.out)
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
