"""Honest error rates of compare's statistics, by simulation.

Judge and human data come from a known model: a dialog's true empathy z ~ N(0, 1); a
human rating round(3 + 0.9 z + N(0, 0.6)) clipped to 1-5 (ties, like real ratings); a
judge's score 3.6 + z + N(0, sigma) clipped to 1-5 (continuous like a G-Eval weighted
score, inflated by 0.6 like real judges). The population Spearman, QWK and MAE of a judge
come from one draw of 400,000 dialogs. Reported at n = 50, 135, 500 dialogs:

- coverage of the 95% CIs compare reports: Spearman (``compare.stats.spearman_ci``: BCa), raw
  MAE and QWK (``stats.calibration.calibrated_agreement``'s raw intervals);
- type-I error of the paired test between two judges of equal quality
  (``compare.stats.paired_difference``, whose p-value is ``compare.stats.studentised_p``:
  the difference over its bootstrap standard error), its power at true differences in
  Spearman of about 0.05, 0.10 and 0.15, and the tail of its p-value at 0.005 and 0.001
  (where Holm's first step tests with five and eight judges);
- the family-wise error of Holm over every pair of 3, 4, ..., 8 equal judges
  (``compare.stats.holm``), the share of replicates where any pair is called significant
  (``holm_fwer_by_judges``), beside the same for the percentile p-value compare used
  before (twice the share of resampled differences beyond 0, ``percentile_holm_fwer_by_judges``),
  whose far tail is liberal;
- the coverage-aware ranking: how often the best of five judges (sigma 0.6 vs 0.75) ranks
  first on the common set;
- the alternative-annotator test's stated power (``alt_test_power``): for 3-6 raters,
  30-300 dialogs and close to spread raters (a dialog's ratings round(3 + z + N(0, s))
  on 1-5, s = 0.5, 0.8, 1.2; and s = 0.8 with each rater's own leniency ~ N(0, 0.3),
  the judge's too), the pass rate of a judge exactly as good as a rater (one more
  rater of the same model playing the judge; ``--alt-reps`` replicates of the whole test,
  ``stats.alttest._passes``, which gives ``alt_test``'s verdict on each) beside the power
  ``alt_test`` states, averaged over ``--alt-datasets`` data sets of the same model
  (``stated``; what it simulates under the raters' fitted joint distribution), and the
  older independent-raters figure (``independent``: ``pass_power``). ``--alt-only`` runs
  this part alone and updates it in the results file.

The p-values of the type-I, power and Holm rows come from ``compare.stats.studentised_p`` (the
function ``paired_difference`` calls) over a bootstrap of the dialogs drawn once per
replicate for all eight judges (``compare.stats._Ranker``'s rank trick; ``--fwer-resamples``
draws, 1,000 by default: a standard error needs fewer than a percentile), because calling
``paired_difference`` (BCa through scipy) 28 times per replicate would take hours;
``--check`` replicates call ``paired_difference`` itself for the type-I row, to show the
two agree. One replicate's eight judges give every judge count: the first k of them.

Run from the repository root: ``python benchmarks/error_rates.py`` (about ten minutes of
CPU on two cores; ``--reps`` and ``--fwer-reps`` scale it) writes
``benchmarks/results/error_rates.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inspect_empathy.compare import stats  # noqa: E402
from inspect_empathy.stats import alttest, calibration  # noqa: E402
from inspect_empathy.stats._agreement import quadratic_weighted_kappa, round_score  # noqa: E402

SIZES = (50, 135, 500)
RESAMPLES = 2000
JUDGE_COUNTS = range(3, 9)
"""Judges of equal quality whose pairs Holm's family-wise error is shown for."""


def draw(rng: np.random.Generator, n: int, sigmas: list[float]) -> tuple[np.ndarray, list]:
    z = rng.normal(size=n)
    human = np.clip(np.floor(3 + 0.9 * z + rng.normal(0, 0.6, n) + 0.5), 1, 5)
    judges = [np.clip(3.6 + z + rng.normal(0, s, n), 1, 5) for s in sigmas]
    return human, judges


def truth(sigma: float) -> dict[str, float]:
    from scipy import stats as ss

    rng = np.random.default_rng(12345)
    human, (judge,) = draw(rng, 400_000, [sigma])
    return {
        "spearman": float(ss.spearmanr(judge, human).statistic),
        "mae": float(np.abs(judge - human).mean()),
        "qwk": float(quadratic_weighted_kappa(round_score(judge), round_score(human))),
    }


def pair_p_values(
    human: np.ndarray, judges: list, rng: np.random.Generator, resamples: int = RESAMPLES,
    percentile: bool = False,
) -> np.ndarray:
    """Two-sided p of every pair (a < b, in itertools.combinations order) by
    ``compare.stats.studentised_p``, one bootstrap for all judges; with ``percentile`` also the
    percentile p-value compare used before (twice the share of resampled differences on
    the far side of 0, +1 corrected) as a second row, for comparison."""
    n = len(human)
    drawn = rng.integers(0, n, size=(resamples, n))
    rh = stats._Ranker(human).ranks(drawn)
    rhos = [stats._rho(stats._Ranker(j).ranks(drawn), rh, n) for j in judges]
    observed = [stats.spearman(j, human) for j in judges]
    out, old = [], []
    for a in range(len(judges)):
        for b in range(a + 1, len(judges)):
            d = rhos[a] - rhos[b]
            out.append(stats.studentised_p(float(observed[a] - observed[b]), d))
            d = d[np.isfinite(d)]
            tail = min(int((d <= 0).sum()), int((d >= 0).sum()))
            old.append(min(1.0, 2 * (tail + 1) / (len(d) + 1)))
    return np.array([out, old]) if percentile else np.array(out)


def first_pairs(k: int, total: int) -> np.ndarray:
    """Positions, among the pairs of ``total`` judges, of the pairs of the first ``k``."""
    pairs = [(a, b) for a in range(total) for b in range(a + 1, total)]
    return np.array([i for i, (a, b) in enumerate(pairs) if b < k])


def holm_fwer(pvals: np.ndarray) -> float:
    """Share of replicates (rows) where Holm calls any pair significant at 0.05."""
    return float(np.mean([min(stats.holm(list(p))) < 0.05 for p in pvals]))


def ss_norm_sf(x: float) -> float:
    from scipy import stats as ss

    return float(ss.norm.sf(x))


def coverage(n: int, reps: int, rng: np.random.Generator, true: dict) -> dict:
    hits = {"spearman": 0, "mae": 0, "qwk": 0}
    for r in range(reps):
        human, (judge,) = draw(rng, n, [0.75])
        low, high = stats.spearman_ci(judge, human, RESAMPLES, seed=r)
        hits["spearman"] += low <= true["spearman"] <= high
        got = calibration.calibrated_agreement(judge, human, "shift", seed=r, resamples=RESAMPLES)
        hits["mae"] += got["mae_low"] <= true["mae"] <= got["mae_high"]
        hits["qwk"] += got["qwk_low"] <= true["qwk"] <= got["qwk_high"]
    return {k: v / reps for k, v in hits.items()}


ALT_RATERS = (3, 4, 5, 6)
ALT_DIALOGS = (30, 60, 100, 300)
ALT_SPREADS = {"close": (0.5, 0.0), "middle": (0.8, 0.0), "spread": (1.2, 0.0),
               "lenient": (0.8, 0.3)}  # fmt: skip
"""The raters of the alt-test power rows: within-dialog noise, and the sd of each rater's
own leniency (drawn per rater and replicate, the judge's too)."""


def alt_ratings(
    rng: np.random.Generator, shape: tuple[int, ...], noise: float, leniency: float = 0.0
) -> np.ndarray:
    """Ratings (... x dialogs x raters): round(3 + z + b_r + N(0, noise)) half up, on 1-5,
    b_r ~ N(0, leniency) per rater."""
    z = rng.normal(size=shape[:-1])[..., None]
    b = rng.normal(0, leniency, (*shape[:-2], 1, shape[-1])) if leniency else 0.0
    return np.clip(np.floor(3 + z + b + rng.normal(0, noise, shape) + 0.5), 1, 5)


def alt_power_rows(args: argparse.Namespace, rng: np.random.Generator) -> list[dict]:
    """The alt-test's stated power against the pass rate of a judge as good as a rater."""
    import pandas as pd

    rows = []
    for m in args.alt_raters:
        for n in args.alt_dialogs:
            for name in args.alt_spreads:
                noise, leniency = ALT_SPREADS[name]
                people = alt_ratings(rng, (args.alt_reps, n, m + 1), noise, leniency)
                rate = float(alttest._passes(people[..., :m], people[..., m], 0.2, 0.05, 30)
                             .mean())  # fmt: skip
                stated, independent = [], []
                t0 = time.process_time()
                for _ in range(args.alt_datasets):
                    data = alt_ratings(rng, (n, m + 1), noise, leniency)
                    result = alttest.alt_test(pd.Series(data[:, m]), pd.DataFrame(data[:, :m]))
                    stated.append(result.power)
                    independent.append(alttest.pass_power(result.raters["n"],
                                                          result.raters["ties"]))  # fmt: skip
                row = {
                    "raters": m, "dialogs": n, "raters_spread": name, "noise": noise,
                    "leniency_sd": leniency,
                    "pass_rate": round(rate, 4),
                    "pass_rate_se": round(float(np.sqrt(rate * (1 - rate) / args.alt_reps)), 4),
                    "stated": round(float(np.mean(stated)), 4),
                    "stated_sd": round(float(np.std(stated)), 4),
                    "independent": round(float(np.mean(independent)), 4),
                    "cpu_seconds_per_stated_power": round(
                        (time.process_time() - t0) / max(1, args.alt_datasets), 3),
                }  # fmt: skip
                row["gap"] = round(row["stated"] - rate, 4)
                row["independent_gap"] = round(row["independent"] - rate, 4)
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def alt_summary(rows: list[dict]) -> dict:
    gaps = [abs(r["gap"]) for r in rows]
    old = [abs(r["independent_gap"]) for r in rows]
    return {
        "cells": len(rows),
        "largest_abs_gap": max(gaps, default=float("nan")),
        "within_0.05": sum(g <= 0.05 for g in gaps),
        "independent_largest_abs_gap": max(old, default=float("nan")),
        "independent_within_0.05": sum(g <= 0.05 for g in old),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=600, help="replicates for power, ranking")
    parser.add_argument("--ci-reps", type=int, default=150, help="replicates for CI coverage")
    parser.add_argument(
        "--fwer-reps", type=int, default=1000, help="replicates of eight equal judges (Holm)"
    )
    parser.add_argument("--fwer-resamples", type=int, default=1000,
                        help="bootstrap draws per replicate of the Holm rows")  # fmt: skip
    parser.add_argument("--check", type=int, default=100, help="paired_difference replicates")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--alt-reps", type=int, default=2000,
                        help="replicates of the whole alt-test behind each pass rate")
    parser.add_argument("--alt-datasets", type=int, default=30,
                        help="data sets whose stated alt-test power is averaged per cell")
    parser.add_argument("--alt-raters", type=int, nargs="+", default=list(ALT_RATERS))
    parser.add_argument("--alt-dialogs", type=int, nargs="+", default=list(ALT_DIALOGS))
    parser.add_argument("--alt-spreads", nargs="+", default=list(ALT_SPREADS),
                        choices=list(ALT_SPREADS))
    parser.add_argument("--alt-only", action="store_true",
                        help="only the alt-test power rows, updated in the results file")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.alt_only:
        path = args.out / "error_rates.json"
        results = json.loads(path.read_text()) if path.exists() else {}
        rows = alt_power_rows(args, np.random.default_rng(2029))
        results["alt_test_power"] = {"rows": rows, "summary": alt_summary(rows),
                                     "alt_reps": args.alt_reps,
                                     "alt_datasets": args.alt_datasets}  # fmt: skip
        args.out.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=2) + "\n")
        print(json.dumps(results["alt_test_power"]["summary"]))
        return
    rng = np.random.default_rng(2028)
    base = truth(0.75)
    deltas = {"0.05": 0.62, "0.10": 0.50, "0.15": 0.40}  # sigma of the better judge
    true_delta = {k: truth(s)["spearman"] - base["spearman"] for k, s in deltas.items()}
    results: dict = {"truth": base, "true_delta_spearman": true_delta, "sizes": {}}
    for n in args.sizes:
        row: dict = {"n": n}
        t0 = time.perf_counter()
        row["ci_coverage"] = coverage(n, args.ci_reps, rng, base)
        # eight equal judges: per-pair type-I error, the p-value's tail, Holm's family error
        # for the first 3, 4, ..., 8 of them
        total = max(JUDGE_COUNTS)
        both = np.array([
            pair_p_values(*draw(rng, n, [0.75] * total), rng, args.fwer_resamples, True)
            for _ in range(args.fwer_reps)
        ])  # fmt: skip
        pvals, old = both[:, 0], both[:, 1]
        five = first_pairs(5, total)
        row["fwer_replicates"] = args.fwer_reps
        row["fwer_resamples"] = args.fwer_resamples
        row["type_I_0.05"] = float((pvals < 0.05).mean())
        row["tail_p_le_0.005"] = float((pvals <= 0.005).mean())
        row["tail_p_le_0.001"] = float((pvals <= 0.001).mean())
        row["holm_fwer"] = holm_fwer(pvals[:, five])
        row["bonferroni_fwer"] = float((pvals[:, five].min(axis=1) * len(five) < 0.05).mean())
        row["holm_fwer_by_judges"] = {
            str(k): holm_fwer(pvals[:, first_pairs(k, total)]) for k in JUDGE_COUNTS
        }
        row["percentile_type_I_0.05"] = float((old < 0.05).mean())
        row["percentile_holm_fwer_by_judges"] = {
            str(k): holm_fwer(old[:, first_pairs(k, total)]) for k in JUDGE_COUNTS
        }
        # the real function on some replicates (BCa draws through scipy)
        checks = []
        for r in range(args.check):
            human, (a, b) = draw(rng, n, [0.75, 0.75])
            checks.append(stats.paired_difference(a, b, human, RESAMPLES, seed=r)["p_value"])
        row["type_I_0.05_paired_difference"] = float((np.array(checks) < 0.05).mean())
        row["type_I_check_replicates"] = args.check
        # power of one pair at the true differences
        power = {}
        for key, sigma in deltas.items():
            p = [pair_p_values(*draw(rng, n, [sigma, 0.75]), rng)[0] for _ in range(args.reps // 2)]
            power[key] = float((np.array(p) < 0.05).mean())
        row["power_0.05"] = power
        # coverage-aware ranking: the best of five judges first on the common set
        firsts = 0
        for _ in range(args.reps // 2):
            human, judges = draw(rng, n, [0.6, 0.75, 0.75, 0.75, 0.75])
            rhos = [stats.spearman(j, human) for j in judges]
            firsts += int(np.argmax(rhos) == 0)
        row["best_of_five_ranked_first"] = firsts / (args.reps // 2)
        row["seconds"] = round(time.perf_counter() - t0, 1)
        results["sizes"][str(n)] = row
        print(json.dumps(row), flush=True)
    alt_rows = alt_power_rows(args, np.random.default_rng(2029))
    results["alt_test_power"] = {"rows": alt_rows, "summary": alt_summary(alt_rows),
                                 "alt_reps": args.alt_reps,
                                 "alt_datasets": args.alt_datasets}  # fmt: skip
    results["settings"] = {
        "reps": args.reps,
        "fwer_reps": args.fwer_reps,
        "ci_reps": args.ci_reps,
        "resamples": RESAMPLES,
        "fwer_resamples": args.fwer_resamples,
        "judge_counts": list(JUDGE_COUNTS),
        "model": "z~N(0,1); human=round(3+0.9z+N(0,0.6)) on 1-5; judge=3.6+z+N(0,sigma) on 1-5",
        "sigma_equal_judges": 0.75,
        "sigma_better_judge": deltas,
        "monte_carlo_se_of_a_0.05_fwer": float(np.sqrt(0.05 * 0.95 / args.fwer_reps)),
    }
    results["machine"] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average": os.getloadavg(),
        "seconds": round(time.perf_counter() - start, 1),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "error_rates.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out / 'error_rates.json'} in {results['machine']['seconds']} s")


if __name__ == "__main__":
    main()
