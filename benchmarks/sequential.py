"""Sequential sampling against fixed n: calls, tokens and error per dialog, by judge family.

Judges whose answer distribution per dialog is known are drawn from (numpy, fixed seed)
through the plugin's own rule: `round_sizes` (answers per call on a service with and
without ``n``) and `settled` (the stopping rule of `draw_sequentially`), with the
default `PRECISION`. Fixed n draws n answers. The error of each estimate (the mean of the
answers drawn) is taken against the exact weighted score sum p(k) k.

Families: ``peaked`` (95% on one level, the rest on a neighbour), ``leaning`` (80/20
neighbours), ``split`` (50/50 neighbours), ``wide`` (spread over four levels), ``flat``
(uniform over the five levels), ``baseline`` (the offline lexicon judge's logprob
distributions on the bundled set, as a real judge's shapes), ``mix`` (70% peaked, 15%
leaning, 10% split, 5% wide: most dialogs peaked, as real judges at temperature 1 mostly
are), and mixes of peaked, split and flat judges whose shapes vary by dialog
(``mix_p80_s10_f10``: 80% peaked with 90-99% on the top level, 10% split 40/60-60/40, 10%
flat), drawn from their own generator so that they are not the mix the rule was tuned on.
Input tokens per call are the bundled set's mean rubric prompt (whitespace tokens); each
answer is one output token.

    python benchmarks/sequential.py            # --dialogs 4000 --seed 7 --completions 20
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import machine, table, write_results  # noqa: E402

from inspect_empathy.judge._judge_call import PRECISION, round_sizes, settled  # noqa: E402

LEVELS = np.arange(1, 6)


def family(name: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` answer distributions over 1-5 of one family."""
    rows = np.zeros((n, 5))
    top = rng.integers(1, 4, size=n) if name != "wide" else rng.integers(0, 2, size=n)
    for i, k in enumerate(top):
        if name == "peaked":
            rows[i, k], rows[i, k + 1] = 0.95, 0.05
        elif name == "leaning":
            rows[i, k], rows[i, k + 1] = 0.8, 0.2
        elif name == "split":
            rows[i, k], rows[i, k + 1] = 0.5, 0.5
        elif name == "wide":
            rows[i, k : k + 4] = (0.2, 0.3, 0.3, 0.2)
        elif name == "flat":
            rows[i] = 0.2
    return rows


def varied(name: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` distributions of a held-out family whose shape varies by dialog: ``peaked``
    (90-99% on a level, the rest on a neighbour), ``split`` (40-60% on one of two
    neighbours), ``flat`` (uniform)."""
    rows = np.zeros((n, 5))
    for i in range(n):
        if name == "flat":
            rows[i] = 0.2
            continue
        k = int(rng.integers(0, 4))
        q = rng.uniform(0.9, 0.99) if name == "peaked" else rng.uniform(0.4, 0.6)
        top, other = (k, k + 1) if rng.random() < 0.5 else (k + 1, k)
        rows[i, top], rows[i, other] = q, 1 - q
    return rows


HELD_OUT = {"mix_p80_s10_f10": (0.8, 0.1, 0.1), "mix_p70_s20_f10": (0.7, 0.2, 0.1),
            "mix_p90_s5_f5": (0.9, 0.05, 0.05), "mix_p75_s15_f10": (0.75, 0.15, 0.1),
            "mix_p85_s5_f10": (0.85, 0.05, 0.1)}  # fmt: skip
"""Mixes of peaked, split and flat judges (shares), not used to choose `PRECISION`."""


def held_out(shares: tuple[float, float, float], rng: np.random.Generator, n: int) -> np.ndarray:
    names = ("peaked", "split", "flat")
    return np.concatenate([varied(name, rng, int(round(n * share)))
                           for name, share in zip(names, shares, strict=True)])  # fmt: skip


def baseline_family() -> np.ndarray:
    """The offline lexicon judge's distributions on the bundled set (logprobs method)."""
    from inspect_ai import eval

    from inspect_empathy.tasks import empathy

    [log] = eval(empathy(method="logprobs"), model="empathy_baseline/lexicon",
                 display="none", log_dir=str(ROOT / "logs" / "bench_sequential"))  # fmt: skip
    rows = []
    for sample in log.samples or []:
        dist = sample.scores["empathy_scorer"].metadata["distribution"]  # type: ignore[index]
        rows.append([dist[str(k)] for k in range(1, 6)])
    table = np.array(rows)
    return table / table.sum(axis=1, keepdims=True)  # the Score keeps 6 decimals


def mix(rng: np.random.Generator, n: int) -> np.ndarray:
    parts = {"peaked": 0.70, "leaning": 0.15, "split": 0.10, "wide": 0.05}
    rows = [family(name, rng, int(round(n * share))) for name, share in parts.items()]
    return np.concatenate(rows)


def draw_fixed(p: np.ndarray, n: int, rng: np.random.Generator) -> float:
    return float(rng.choice(LEVELS, size=n, p=p).mean())


def draw_sequential(
    p: np.ndarray, per_call: int, completions: int, precision: float, rng: np.random.Generator
) -> tuple[float, int, int]:
    """The estimate, answers drawn and calls made under the plugin's rule."""
    scores: list[int] = []
    calls = 0
    while len(scores) < completions:
        sizes = round_sizes(len(scores), per_call, completions)
        calls += len(sizes)
        scores.extend(int(k) for k in rng.choice(LEVELS, size=sum(sizes), p=p))
        if settled(scores, precision):
            break
    return float(np.mean(scores)), len(scores), calls


def run_family(
    dists: np.ndarray, per_call: int | None, completions: int, precision: float, seed: int,
    prompt_tokens: float,
) -> dict[str, Any]:
    """Fixed n (5, 10, 20) and the sequential rule on one family, for one kind of service
    (``per_call`` None: a service with n, one call of ``completions``)."""
    rng = np.random.default_rng(seed)
    exact = dists @ LEVELS
    result: dict[str, Any] = {"dialogs": len(dists)}
    for n in (5, 10, 20):
        est = np.array([draw_fixed(p, n, rng) for p in dists])
        calls = 1 if per_call is None else math.ceil(n / per_call)
        result[f"fixed_{n}"] = {
            "answers": n, "calls": calls, "input_tokens": calls * prompt_tokens,
            "output_tokens": n, "rmse": float(np.sqrt(np.mean((est - exact) ** 2))),
        }  # fmt: skip
    if per_call is not None and per_call < completions:
        runs = [draw_sequential(p, per_call, completions, precision, rng) for p in dists]
        est = np.array([r[0] for r in runs])
        answers = float(np.mean([r[1] for r in runs]))
        calls = float(np.mean([r[2] for r in runs]))
        seq_rmse = float(np.sqrt(np.mean((est - exact) ** 2)))
        # fixed n at equal cost: n = the rule's mean answers (interpolated between integers)
        lo, hi = math.floor(answers), math.ceil(answers)
        same = []
        for n in sorted({lo, hi}):
            fixed = np.array([draw_fixed(p, n, rng) for p in dists])
            same.append(float(np.sqrt(np.mean((fixed - exact) ** 2))))
        weight = answers - lo
        equal_cost = same[0] if len(same) == 1 else same[0] * (1 - weight) + same[1] * weight
        result["sequential"] = {
            "answers": answers, "calls": calls, "input_tokens": calls * prompt_tokens,
            "output_tokens": answers, "rmse": seq_rmse,
            "rmse_fixed_at_equal_answers": equal_cost,
            "rmse_ratio_to_equal_cost": seq_rmse / equal_cost,
            "input_share_of_fixed_20": calls / result["fixed_20"]["calls"],
        }  # fmt: skip
    return result


def prompt_size() -> float:
    from inspect_empathy.dataset._dataset import load_dialogs

    prompts = load_dialogs("default").as_prompts(False)
    return float(np.mean([len(str(s.input).split()) for s in prompts]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogs", type=int, default=4000, help="dialogs per family")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--completions", type=int, default=20)
    parser.add_argument("--precision", type=float, default=PRECISION)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    families = {name: family(name, rng, args.dialogs)
                for name in ("peaked", "leaning", "split", "wide", "flat")}  # fmt: skip
    families["mix"] = mix(rng, args.dialogs)
    other = np.random.default_rng(args.seed + 1000)
    for name, shares in HELD_OUT.items():
        families[name] = held_out(shares, other, args.dialogs)
    base = baseline_family()
    families["baseline"] = np.repeat(base, max(1, args.dialogs // len(base)), axis=0)
    tokens = prompt_size()
    services = {"no n (Anthropic, Groq, Gemini 3, Responses API)": 1, "n <= 8 (Gemini 2.x)": 8,
                "n (OpenAI chat, vLLM)": None}  # fmt: skip
    results: dict[str, Any] = {}
    rows = []
    for service, per_call in services.items():
        results[service] = {}
        for name, dists in families.items():
            res = run_family(dists, per_call, args.completions, args.precision, args.seed,
                             tokens)  # fmt: skip
            results[service][name] = res
            for how in ("fixed_5", "fixed_10", "fixed_20", "sequential"):
                if how in res:
                    r = res[how]
                    ratio = r.get("rmse_ratio_to_equal_cost", float("nan"))
                    rows.append([service.split(" (")[0], name, how, f"{r['answers']:.2f}",
                                 f"{r['calls']:.2f}", f"{r['input_tokens']:.0f}",
                                 f"{r['rmse']:.4f}", f"{ratio:.3f}"])  # fmt: skip
    print(table(["service", "family", "method", "answers", "calls", "input tokens",
                 "RMSE", "RMSE / fixed at equal answers"], rows))  # fmt: skip
    no_n = results["no n (Anthropic, Groq, Gemini 3, Responses API)"]
    targets = {
        "mix_rmse_ratio_to_equal_cost": no_n["mix"]["sequential"]["rmse_ratio_to_equal_cost"],
        "mix_input_share_of_fixed_20": no_n["mix"]["sequential"]["input_share_of_fixed_20"],
        "mix_rmse_sequential": no_n["mix"]["sequential"]["rmse"],
        "mix_rmse_fixed_20": no_n["mix"]["fixed_20"]["rmse"],
        "held_out": {name: {"calls": no_n[name]["sequential"]["calls"],
                            "rmse_ratio_to_equal_cost":
                                no_n[name]["sequential"]["rmse_ratio_to_equal_cost"]}
                     for name in HELD_OUT},
        "target_rmse_ratio": "<= 0.92", "target_calls": "<= 6.67 (a third of fixed 20)",
    }
    print(targets)
    write_results("sequential", {"machine": machine(), "settings": vars(args) | {"out": None},
                                 "prompt_tokens": tokens, "results": results,
                                 "targets": targets}, args.out)  # fmt: skip


if __name__ == "__main__":
    main()
