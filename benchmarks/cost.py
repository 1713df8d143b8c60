"""Cost per judged sample: calls, prompt tokens and output tokens for each G-Eval method.

The ``empathy`` task judges the bundled set through Inspect's OpenAI provider
(``openai/gpt-4o-mini``) against ``fake_openai.py`` (no latency), which counts calls and
tokens (whitespace tokens: an approximation of a real tokenizer) and answers like a judge
that complies with the rubric (score only, or reasoning then ``Score: N`` with ``cot``).
Inspect's own usage totals from the log are reported alongside.
Target: ``logprobs`` makes one call with at most 2 output tokens per sample, the same
cost as a plain integer score (``parse``), and a judge that rambles (writes 60 words
before its score) is cut at the bound and asked once again with room: two calls, each
within its ``max_tokens`` bound (a cut answer is never read).

    python benchmarks/cost.py                     # the task's own generation settings
    python benchmarks/cost.py --max-tokens 2      # an explicit bound (--max-tokens)
    python benchmarks/cost.py --dataset my_dialogs.jsonl
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from _common import BUNDLED, ROOT, check, run_child, table, write_dialogs_jsonl, write_results
from fake_openai import FakeOpenAI

MODEL = "openai/gpt-4o-mini"
MAX_OUTPUT_TOKENS = 2
RAMBLE_WORDS = 60
# (label, task args, provider honours n, words the judge writes before its score)
CASES: list[tuple[str, dict[str, str], bool, int]] = [
    ("logprobs", {"method": "logprobs"}, True, 0),
    ("samples (n=20)", {"method": "samples", "completions": "20"}, True, 0),
    ("parse", {"method": "parse"}, True, 0),
    ("auto", {"method": "auto"}, True, 0),
    ("samples (n=20), provider ignores n", {"method": "samples", "completions": "20"}, False, 0),
    ("logprobs + cot", {"method": "logprobs", "cot": "true"}, True, 0),
    ("logprobs, rambling judge", {"method": "logprobs"}, True, RAMBLE_WORDS),
]


def n_sent(counts: dict[str, int]) -> str:
    """The ``n`` values the server saw, compactly (``-`` for none sent)."""
    values = [k for k in counts if k != "None"]
    if not values:
        return "-"
    if len(values) > 3:
        return f"{values[0]}, {values[1]}, ..., {values[-1]}"
    return ", ".join(values)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=None, help="default: the bundled set")
    parser.add_argument("--limit", type=int, default=None, help="first N dialogs only")
    parser.add_argument(
        "--cases", nargs="+", default=None, help="labels of the cases to run (default: all)"
    )
    parser.add_argument(
        "--max-tokens", type=int, default=None, help="generate max_tokens (default: the task's)"
    )
    parser.add_argument("--out", type=Path, default=None, help="results directory")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if args.cases is None or c[0] in args.cases]
    if not cases:
        parser.error(f"no such case; cases: {', '.join(c[0] for c in CASES)}")

    rows_out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-cost-") as tmp:
        tmpdir = Path(tmp)
        if args.dataset is not None:
            dataset, source = args.dataset.resolve(), str(args.dataset)
        elif BUNDLED.is_file():
            dataset, source = BUNDLED, str(BUNDLED.relative_to(ROOT))
        else:
            dataset = tmpdir / "fallback.jsonl"
            source = write_dialogs_jsonl(dataset, 3)
        if args.limit is not None:
            lines = dataset.read_text("utf-8").splitlines()[: args.limit]
            dataset = tmpdir / "dialogs.jsonl"
            dataset.write_text("\n".join(lines) + "\n", "utf-8")
            source += f" (first {args.limit})"
        for label, task_args, honours_n, ramble in cases:
            with FakeOpenAI(latency=0.0, ignore_n=not honours_n, ramble=ramble) as server:
                result = run_child(
                    [
                        "benchmarks/_run_eval.py",
                        "--task",
                        "empathy",
                        "--dataset",
                        str(dataset),
                        "--model",
                        MODEL,
                        "--max-connections",
                        "50",
                        "--log-dir",
                        str(tmpdir / "logs"),
                        "--count-scored",
                        *(["--max-tokens", str(args.max_tokens)] if args.max_tokens else []),
                        *[x for k, v in task_args.items() for x in ("-T", f"{k}={v}")],
                    ],
                    env=server.env(),
                )
                check(result, f"{label} eval")
                stats = server.stats()
            report = result.report
            n = report["samples"]
            scored = report["scored"]
            usage = report["usage"].get(MODEL, {})
            row = {
                "case": label,
                "task_args": task_args,
                "samples": n,
                "scored": scored,
                "calls": stats["calls"],
                "calls_per_sample": stats["calls"] / n,
                "prompt_tokens_per_sample": stats["prompt_tokens"] / n,
                "output_tokens_per_sample": stats["completion_tokens"] / n,
                "inspect_input_tokens_per_sample": usage.get("input_tokens", 0) / n,
                "inspect_output_tokens_per_sample": usage.get("output_tokens", 0) / n,
                "request_n": stats["n_values"],
                "request_max_tokens": stats["max_tokens_values"],
                "request_top_logprobs": stats["top_logprobs_values"],
                "mean_score": (report["scores"].get("empathy_scorer") or {}).get("mean"),
                "judge_words_before_score": ramble,
                "max_output_tokens_per_call": stats.get("max_completion_tokens_per_call"),
            }
            rows_out.append(row)
            print(
                f"  {label}: {row['calls_per_sample']:.2f} calls, "
                f"{row['prompt_tokens_per_sample']:.0f} prompt + "
                f"{row['output_tokens_per_sample']:.2f} output tokens per sample",
                flush=True,
            )

    by_case = {r["case"]: r for r in rows_out}
    logprobs, parse = by_case.get("logprobs"), by_case.get("parse")
    meets = None
    if logprobs is not None:
        meets = (
            logprobs["calls_per_sample"] == 1
            and logprobs["output_tokens_per_sample"] <= MAX_OUTPUT_TOKENS
        )
        if parse is not None:
            meets = meets and (
                logprobs["prompt_tokens_per_sample"] == parse["prompt_tokens_per_sample"]
                and logprobs["output_tokens_per_sample"] == parse["output_tokens_per_sample"]
            )
    rambling = by_case.get("logprobs, rambling judge")
    rambling_bounded = None
    if rambling is not None:
        bounds = [int(k) for k in rambling["request_max_tokens"] if k != "None"]
        rambling_bounded = bool(bounds) and (
            rambling["calls_per_sample"] <= 2
            and rambling["max_output_tokens_per_call"] <= max(bounds)
        )
    headers = [
        "method",
        "samples",
        "scored",
        "calls/sample",
        "prompt tok/sample",
        "output tok/sample",
        "Inspect usage in/out per sample",
        "n per request",
        "max_tokens sent",
    ]
    rows = [
        [
            r["case"],
            r["samples"],
            r["scored"],
            r["calls_per_sample"],
            r["prompt_tokens_per_sample"],
            r["output_tokens_per_sample"],
            f"{r['inspect_input_tokens_per_sample']:.1f} / "
            f"{r['inspect_output_tokens_per_sample']:.2f}",
            n_sent(r["request_n"]),
            ", ".join(r["request_max_tokens"]),
        ]
        for r in rows_out
    ]
    print(table(headers, rows))
    print(f"logprobs: 1 call, <= {MAX_OUTPUT_TOKENS} output tokens, same as parse: {meets}")
    if rambling is not None:
        print(f"rambling judge: asked once again, each call within its bound: {rambling_bounded}")
    payload = {
        "target": f"logprobs: 1 call and <= {MAX_OUTPUT_TOKENS} output tokens per sample "
        "(compliant judge), no more than parse",
        "meets_target": meets,
        "rambling_within_bound": rambling_bounded,
        "settings": {
            "model": MODEL,
            "dataset": source,
            "tokens": "whitespace tokens counted by the fake server (approximate)",
            "max_tokens": args.max_tokens,
            "max_tokens_note": "None: the generation settings of the empathy task itself",
        },
        "cases": rows_out,
    }
    path = write_results("cost", payload, args.out)
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
