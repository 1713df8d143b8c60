"""Child process: run one eval (``empathy`` or the bare task) and print a JSON report.

Usage: python benchmarks/_run_eval.py --task empathy|empathy_dialog|empathy_prompt|bare|
       empathy_response|bare_response|variant:NAME
       --dataset FILE --model MODEL [--max-connections N] [--max-tokens N] [--log-dir DIR]
       [-T key=value ...]

``empathy`` is the task as shipped (judge mode's default input, the conversation);
``empathy_dialog`` adds ``-T input=dialog``; ``empathy_prompt`` spells out ``input=prompt``.
``empathy_response`` (response mode) and ``bare_response`` (its bare two-call twin) bind
the ``grader`` role to ``--model`` too.
"""

from __future__ import annotations

import time

START = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))


def parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--task",
        required=True,
        help="empathy, empathy_dialog (-T input=dialog), empathy_prompt (-T input=prompt), "
        "bare, bare_weighted, empathy_response, bare_response or variant:NAME",
    )
    parser.add_argument("--max-tokens", type=int, default=None, help="generate max_tokens")
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--model", default="bench/zero")
    parser.add_argument("--max-connections", type=int, default=100)
    parser.add_argument("--log-dir", required=True)
    parser.add_argument("-T", dest="task_args", action="append", default=[])
    parser.add_argument(
        "--count-scored", action="store_true", help="count samples with a numeric score"
    )
    args = parser.parse_args()
    task_args = dict(kv.split("=", 1) for kv in args.task_args)
    task_args = {k: parse_value(v) for k, v in task_args.items()}

    import _bench_tasks  # registers bench/zero
    from inspect_ai import eval as inspect_eval

    if args.task in ("empathy", "empathy_dialog", "empathy_prompt"):
        from inspect_empathy import empathy
    if args.task == "empathy_response":
        from inspect_empathy import empathy_response

    imported = time.perf_counter()
    if args.task == "empathy":
        # scorer=trivial (rss_breakdown.py): the bare task's one-metric scorer instead
        trivial = task_args.pop("scorer", None) == "trivial"
        the_task = empathy(dataset=args.dataset, **task_args)
        if trivial:
            from inspect_ai import task_with

            the_task = task_with(the_task, scorer=_bench_tasks.first_digit())
    elif args.task == "empathy_prompt":
        the_task = empathy(dataset=args.dataset, input="prompt", **task_args)
    elif args.task == "empathy_dialog":
        the_task = empathy(dataset=args.dataset, input="dialog", **task_args)
    elif args.task == "bare":
        the_task = _bench_tasks.bare(dataset=args.dataset)
    elif args.task == "bare_weighted":
        the_task = _bench_tasks.bare_weighted(dataset=args.dataset)
    elif args.task == "empathy_response":
        the_task = empathy_response(dataset=args.dataset, **task_args)
    elif args.task == "bare_response":
        the_task = _bench_tasks.bare_response(dataset=args.dataset)
    else:
        from _variants import VARIANTS

        the_task = VARIANTS[args.task.removeprefix("variant:")](dataset=args.dataset)
    built = time.perf_counter()
    logs = inspect_eval(
        the_task,
        model=args.model,
        max_connections=args.max_connections,
        log_dir=args.log_dir,
        log_format="eval",
        display="none",
        score_display=False,
        model_roles={"grader": args.model} if args.task.endswith("_response") else None,
        **({"max_tokens": args.max_tokens} if args.max_tokens is not None else {}),
    )
    done = time.perf_counter()
    log = logs[0]
    usage: dict[str, Any] = {}
    if log.stats and log.stats.model_usage:
        for name, u in log.stats.model_usage.items():
            usage[name] = {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens}
    scores: dict[str, Any] = {}
    if log.results:
        for s in log.results.scores:
            scores[s.name] = {k: m.value for k, m in s.metrics.items()}
    scored = None
    if args.count_scored:
        from inspect_ai.log import read_eval_log_sample_summaries

        scored = 0
        for summary in read_eval_log_sample_summaries(log.location):
            values = [s.value for s in (summary.scores or {}).values()]
            scored += any(isinstance(v, int | float) and v == v for v in values)
    report = {
        "task": args.task,
        "status": log.status,
        "error": str(log.error.message) if log.error else None,
        "samples": log.results.completed_samples if log.results else 0,
        "import_s": imported - START,
        "task_s": built - imported,
        "eval_s": done - built,
        "total_s": done - START,
        "self_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "usage": usage,
        "scored": scored,
        "scores": scores,
        "imported_inspect_empathy": "inspect_empathy" in sys.modules,
        "inspect_empathy_from": getattr(sys.modules.get("inspect_empathy"), "__file__", None),
        "log": log.location,
        "log_bytes": os.path.getsize(log.location) if os.path.exists(log.location) else None,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
