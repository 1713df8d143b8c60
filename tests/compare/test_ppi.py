"""Issue 28 item 3: response mode on the human scale (PPI++, `compare.ppi`).

The estimator is checked against the closed form written out by hand from the PPI++ paper
(Angelopoulos, Duchi, Zrnic 2023, mean estimation: lambda = cov(Y, f) / ((1 + n/N) var(f)),
clipped to [0, 1]), its interval's coverage by simulation (fixed seed, 4,000 draws,
vectorised), and the command on real response-mode logs of the offline baselines.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fixture_logs import LENGTH, LEXICON, respond
from scipy import stats

from inspect_empathy.cli import main
from inspect_empathy.compare.ppi import ppi_arrays, ppi_mean


def test_matches_the_closed_form_by_hand() -> None:
    rng = np.random.default_rng(5)
    f_all = rng.uniform(1, 5, size=200)
    y = np.clip(np.round(f_all[:30] - 0.7 + rng.normal(0, 0.6, size=30)), 1, 5)
    fl, fu = f_all[:30], f_all[30:]
    n, big_n = 30, 170
    cov = np.mean((y - y.mean()) * (fl - fl.mean()))
    lam = min(1.0, max(0.0, cov / ((1 + n / big_n) * np.var(f_all, ddof=1))))
    theta = y.mean() + lam * (fu.mean() - fl.mean())
    se = math.sqrt(np.var(y - lam * fl, ddof=1) / n + lam**2 * np.var(fu, ddof=1) / big_n)
    z = stats.t.ppf(0.975, n - 1)  # t with n - 1 df: the small-sample interval
    got = ppi_mean(y, fl, fu)
    assert got["lambda"] == pytest.approx(lam)
    assert got["ppi"] == pytest.approx(theta)
    assert (got["ppi_low"], got["ppi_high"]) == pytest.approx((theta - z * se, theta + z * se))
    # the people's mean alone: the textbook interval; the grader's mean over all 200
    t_se = y.std(ddof=1) / math.sqrt(n)
    assert (got["labelled_low"], got["labelled_high"]) == pytest.approx(
        (y.mean() - z * t_se, y.mean() + z * t_se)
    )
    assert got["judge"] == pytest.approx(f_all.mean()) and got["n_total"] == 200
    # lambda 0 is the labelled mean, lambda 1 plain PPI
    assert ppi_arrays(y, fl, fu, lam=0.0)[0] == pytest.approx(y.mean())
    assert ppi_arrays(y, fl, fu, lam=1.0)[0] == pytest.approx(y.mean() + fu.mean() - fl.mean())


def _simulate(rng: np.random.Generator, draws: int, n: int, big_n: int, bias: float):
    """Human ratings on 1-5 and an inflated, noisy grader; returns the labelled ratings and
    scores and the unlabelled scores, ``draws`` data sets at once, and the true mean."""
    latent = rng.normal(3.0, 1.0, size=(draws, n + big_n))
    human = np.clip(np.round(latent + rng.normal(0, 0.5, size=latent.shape)), 1, 5)
    grader = np.clip(latent + bias + rng.normal(0, 0.6, size=latent.shape), 1, 5)
    big = rng.normal(3.0, 1.0, size=400_000)
    truth = np.clip(np.round(big + rng.normal(0, 0.5, size=big.shape)), 1, 5).mean()
    return human[:, :n], grader[:, :n], grader[:, n:], truth


@pytest.mark.parametrize("n", [30, 100])
def test_coverage_near_nominal(n: int) -> None:
    rng = np.random.default_rng(2023)
    y, fl, fu, truth = _simulate(rng, 4000, n, 1000, bias=0.7)
    estimate, se, lam = ppi_arrays(y, fl, fu)
    z = stats.t.ppf(0.975, n - 1)
    covered = np.abs(estimate - truth) <= z * se
    assert 0.93 <= covered.mean() <= 0.965, covered.mean()
    # the people's mean alone covers too, with wider intervals; the grader's mean does not
    labelled_se = y.std(axis=1, ddof=1) / math.sqrt(n)
    assert 0.93 <= (np.abs(y.mean(1) - truth) <= z * labelled_se).mean() <= 0.97
    assert np.median(se) < np.median(labelled_se)
    judge = np.concatenate([fl, fu], axis=1)
    judge_se = judge.std(axis=1, ddof=1) / math.sqrt(judge.shape[1])
    assert (np.abs(judge.mean(1) - truth) <= z * judge_se).mean() < 0.01
    assert 0 < np.median(lam) <= 1


def test_difference_coverage() -> None:
    """Two reply models on the same dialogs: the PPI++ difference covers the true one."""
    rng = np.random.default_rng(7)
    draws, n, big_n = 3000, 60, 600
    dialog = rng.normal(0, 0.8, size=(draws, n + big_n))

    def model(shift: float, grader_bias: float) -> tuple[np.ndarray, np.ndarray]:
        latent = 3 + shift + dialog + rng.normal(0, 0.5, size=dialog.shape)
        human = np.clip(np.round(latent + rng.normal(0, 0.4, size=dialog.shape)), 1, 5)
        grader = np.clip(latent + grader_bias + rng.normal(0, 0.5, size=dialog.shape), 1, 5)
        return human, grader

    ha, ga = model(0.3, 0.8)
    hb, gb = model(0.0, 0.4)  # the grader inflates B less: its raw difference is biased
    d_human, d_grader = ha - hb, ga - gb
    big = rng.normal(0, 0.8, size=300_000)
    la = np.clip(
        np.round(3.3 + big + rng.normal(0, 0.5, 300_000) + rng.normal(0, 0.4, 300_000)), 1, 5
    )
    lb = np.clip(
        np.round(3.0 + big + rng.normal(0, 0.5, 300_000) + rng.normal(0, 0.4, 300_000)), 1, 5
    )
    truth = la.mean() - lb.mean()
    estimate, se, _ = ppi_arrays(d_human[:, :n], d_grader[:, :n], d_grader[:, n:])
    covered = np.abs(estimate - truth) <= stats.t.ppf(0.975, n - 1) * se
    assert 0.93 <= covered.mean() <= 0.965, covered.mean()


def test_human_scale_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = tmp_path / "logs"
    respond(logs, LEXICON, LEXICON)
    respond(logs, LENGTH, LEXICON)
    from inspect_empathy.compare.ppi import read_scores

    scores = read_scores([logs])
    ids = sorted(scores["id"].unique())
    rated = ids[: max(3, len(ids) // 2)]
    rows = [
        {"id": i, "reply_model": m, "rating": 1 + (k % 5)}
        for k, (i, m) in enumerate((i, m) for i in rated for m in (LEXICON, LENGTH))
    ]
    ratings = tmp_path / "ratings.csv"
    pd.DataFrame(rows).to_csv(ratings, index=False)
    out = tmp_path / "out"
    assert main(["human-scale", str(logs), "--ratings", str(ratings), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "PPI++ human mean" in printed and "Difference between reply models" in printed
    means = pd.read_csv(out / "human_scale.csv")
    assert set(means["reply_model"]) == {LEXICON, LENGTH}
    for _, r in means.iterrows():
        mine = scores[scores["reply_model"] == r["reply_model"]].dropna(subset=["score"])
        joined = mine.merge(pd.DataFrame(rows), on=["id", "reply_model"], how="left")
        lab = joined.dropna(subset=["rating"])
        expected = ppi_mean(lab["rating"], lab["score"], joined[joined["rating"].isna()]["score"])
        assert r["ppi"] == pytest.approx(expected["ppi"], rel=1e-5)
        assert r["labelled"] == pytest.approx(lab["rating"].mean(), rel=1e-5)
        assert r["n"] == len(lab)
    assert len(pd.read_csv(out / "human_scale_pairs.csv")) == 1
    assert (out / "human_scale.md").read_text().startswith("## Mean human rating")
    # response-mode logs without a ratings file: the dataset's ratings rate other replies
    assert main(["human-scale", str(logs)]) == 1
    assert "--ratings" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    pd.DataFrame([{"id": ids[0], "rating": 9}]).to_csv(bad, index=False)
    assert main(["human-scale", str(logs), "--ratings", str(bad)]) == 1
    assert "outside the scale" in capsys.readouterr().err
