"""Sequential sampling against fixed n: calls and error per dialog, over mixes of judges.

Judges whose answer distribution per dialog is known are drawn from (numpy, fixed seeds)
through the plugin's own rule, `_judge_call.Draw` and one `SamplingLedger` per mix (a run):
``--concurrency`` dialogs are in flight, so a draw's unused calls reach the ledger only once
that many later dialogs have started (its first round at once, as in the plugin). The
estimate is the mean of the answers drawn; its error is taken against the exact weighted
score sum p(k) k. Fixed n at equal calls draws the first n of the same answers (n and n + 1
in the shares that give the rule's mean), so that chance in the answers cancels out of the
ratio (``rmse_ratio_exact``: against the exact sqrt(mean Var / calls) instead). The oracle
is the allocation n proportional to each judge's SD (known), at the same total: what no rule
that must learn the SDs from answers can beat; a mix is *heterogeneous* where the oracle's
RMSE is at most 0.85x fixed n's, and only there can a rule be asked to beat fixed n by 8%.

Families (`judges`): ``peaked`` (90-99% on a level, the rest on a neighbour), ``split``
(40-60% on one of two neighbours), ``flat`` (uniform over the five levels). Mixes: every
share of the three in steps of 0.1 (the grid, judges from ``--seed``), and mixes whose shares
are drawn from a flat Dirichlet (held out: shares and judges from generators seeded apart
from the grid's); dialogs in random order. One answer a call (Anthropic, Groq, Gemini 3, the
Responses API) unless ``--per-call``.

    python benchmarks/sequential.py    # --dialogs 8000 --seed 7 --held-out 30 --concurrency 10
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import machine, table, write_results  # noqa: E402

from inspect_empathy.judge._judge_call import (  # noqa: E402
    BUDGET,
    PRECISION,
    Draw,
    SamplingLedger,
)

LEVELS = np.arange(1, 6)
FAMILIES = ("peaked", "split", "flat")
HETEROGENEOUS = 0.85
"""Oracle RMSE / fixed n at or below which a mix is heterogeneous (a rule can win)."""
TARGET_RATIO = 0.92
TARGET_CALLS = 20 / 3


def judges(name: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` answer distributions over 1-5 of one family."""
    rows = np.zeros((n, 5))
    if name == "flat":
        rows[:] = 0.2
        return rows
    for i in range(n):
        k = int(rng.integers(0, 4))
        q = rng.uniform(0.9, 0.99) if name == "peaked" else rng.uniform(0.4, 0.6)
        top, other = (k, k + 1) if rng.random() < 0.5 else (k + 1, k)
        rows[i, top], rows[i, other] = q, 1 - q
    return rows


def population(shares: tuple[float, ...], rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` judges in the given shares of `FAMILIES`, in random order."""
    counts = np.floor(np.array(shares) * n).astype(int)
    counts[np.argmax(shares)] += n - counts.sum()
    rows = np.concatenate([judges(f, rng, c) for f, c in zip(FAMILIES, counts, strict=True)])
    return rows[rng.permutation(len(rows))]


def run_answers(
    said: np.ndarray, per_call: int, completions: int, precision: float, concurrency: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The plugin's rule over one run: each dialog's answers in the order its judge gives
    them (rows of ``said``), one `SamplingLedger`; the estimates, the calls each made and
    the answers each drew."""
    ledger = SamplingLedger()
    pending: deque[Draw] = deque()
    estimates, calls, answers = [], [], []
    for drawn in said:
        draw = Draw(ledger, per_call, completions, precision)
        scores: list[int] = []
        while sizes := draw.next_round(scores, len(scores)):
            scores.extend(int(k) for k in drawn[len(scores) : len(scores) + sum(sizes)])
        estimates.append(float(np.mean(scores)))
        calls.append(draw.calls)
        answers.append(len(scores))
        pending.append(draw)
        if len(pending) >= concurrency:
            pending.popleft().finish()
    return np.array(estimates), np.array(calls), np.array(answers)


def run_mix(
    dists: np.ndarray,
    rng: np.random.Generator,
    per_call: int,
    completions: int,
    precision: float,
    concurrency: int,
) -> dict[str, Any]:
    """The plugin's rule over one run of dialogs, against fixed n and the oracle."""
    said = np.array([rng.choice(LEVELS, size=completions, p=p) for p in dists])
    estimates, calls, answers = run_answers(said, per_call, completions, precision, concurrency)
    exact = dists @ LEVELS
    var = dists @ LEVELS**2 - exact**2
    mean_calls = float(np.mean(calls))
    mean_answers = float(np.mean(answers))
    mse = float(np.mean((np.array(estimates) - exact) ** 2))
    # fixed n at equal answers, on the same answers: the first lo or hi of each dialog's,
    # in the shares that make the mean (the answers' errors cancel out of the comparison)
    lo, share_hi = math.floor(mean_answers), mean_answers - math.floor(mean_answers)
    fixed = [float(np.mean((said[:, :n].mean(axis=1) - exact) ** 2)) for n in (lo, lo + 1)]
    fixed_mse = (1 - share_hi) * fixed[0] + share_hi * fixed[1]
    oracle = float(np.sqrt(var).mean()) / math.sqrt(float(var.mean()))
    return {
        "dialogs": len(dists), "calls": mean_calls, "answers": mean_answers,
        "max_calls": int(max(calls)), "rmse": math.sqrt(mse),
        "rmse_fixed_at_equal_answers": math.sqrt(fixed_mse),
        "rmse_ratio": math.sqrt(mse / fixed_mse),
        "rmse_ratio_exact": math.sqrt(mse * mean_answers / float(var.mean())),
        "oracle_ratio": oracle,
    }  # fmt: skip


def grid(step: float = 0.1) -> list[tuple[float, float, float]]:
    k = round(1 / step)
    return [(a / k, b / k, (k - a - b) / k) for a in range(k + 1) for b in range(k + 1 - a)]


def name_of(shares: tuple[float, ...]) -> str:
    return "/".join(f"{round(100 * s)}" for s in shares)


def summary(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The worst mixes for calls and for the RMSE ratio (heterogeneous mixes and the rest)."""
    het = {k: r for k, r in rows.items() if r["oracle_ratio"] <= HETEROGENEOUS}
    rest = {k: r for k, r in rows.items() if r["oracle_ratio"] > HETEROGENEOUS}

    def worst(of: dict[str, dict[str, Any]], key: str) -> dict[str, Any]:
        name = max(of, key=lambda k: of[k][key])
        return {"mix": name, **{k: of[name][k] for k in ("calls", "rmse_ratio", "oracle_ratio")}}

    return {
        "mixes": len(rows), "heterogeneous": len(het),
        "worst_calls": worst(rows, "calls"),
        "worst_ratio_heterogeneous": worst(het, "rmse_ratio") if het else None,
        "heterogeneous_within_target": sum(r["rmse_ratio"] <= TARGET_RATIO for r in het.values()),
        "worst_ratio_rest": worst(rest, "rmse_ratio") if rest else None,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogs", type=int, default=8000, help="dialogs per mix")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--held-out", type=int, default=30, help="Dirichlet-share mixes")
    parser.add_argument("--completions", type=int, default=20)
    parser.add_argument("--precision", type=float, default=PRECISION)
    parser.add_argument("--per-call", type=int, default=1, help="answers a call")
    parser.add_argument("--concurrency", type=int, default=10, help="dialogs in flight")
    parser.add_argument(
        "--mix", type=float, nargs=3, action="append", metavar=("PEAKED", "SPLIT", "FLAT"),
        help="only these shares (repeatable), judges from --seed",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    run = (args.per_call, args.completions, args.precision, args.concurrency)
    sets: dict[str, dict[str, dict[str, Any]]] = {}
    if args.mix:
        mixes = {name_of(tuple(m)): tuple(s / sum(m) for s in m) for m in args.mix}
        sets["given"] = {}
        for j, (name, shares) in enumerate(mixes.items()):
            rng = np.random.default_rng([args.seed, j])
            sets["given"][name] = run_mix(population(shares, rng, args.dialogs), rng, *run)
    else:
        sets["grid"] = {}
        for j, shares in enumerate(grid()):
            rng = np.random.default_rng([args.seed, j])
            sets["grid"][name_of(shares)] = run_mix(
                population(shares, rng, args.dialogs), rng, *run
            )
        draws = np.random.default_rng([args.seed, 1000]).dirichlet((1, 1, 1), args.held_out)
        sets["held_out"] = {}
        for j, shares in enumerate(draws):
            rng = np.random.default_rng([args.seed, 2000 + j])
            mix = tuple(float(s) for s in shares)
            sets["held_out"][name_of(mix)] = run_mix(population(mix, rng, args.dialogs), rng, *run)
    rows = [
        [part, name, f"{r['calls']:.2f}", r["max_calls"], f"{r['rmse']:.4f}",
         f"{r['rmse_ratio']:.3f}", f"{r['oracle_ratio']:.3f}"]
        for part, mixes in sets.items() for name, r in mixes.items()
    ]  # fmt: skip
    print(table(["set", "peaked/split/flat %", "calls", "most calls", "RMSE",
                 "RMSE / fixed n", "oracle / fixed n"], rows))  # fmt: skip
    summaries = {part: summary(mixes) for part, mixes in sets.items()}
    for part, s in summaries.items():
        print(part, s)
    write_results(
        "sequential",
        {"machine": machine(), "settings": vars(args) | {"out": None, "budget": BUDGET},
         "targets": {"calls": f"<= {TARGET_CALLS:.2f} (a third of G-Eval's 20)",
                     "rmse_ratio": f"<= {TARGET_RATIO} where oracle <= {HETEROGENEOUS}"},
         "summary": summaries, "results": sets},
        args.out,
    )  # fmt: skip


if __name__ == "__main__":
    main()
