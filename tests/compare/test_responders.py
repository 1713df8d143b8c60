"""Response-level corpora: bias, responder ranking and calibrated bias per judge."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from inspect_empathy.compare.responders import published_responders, responder_table


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    quality = {"bot_a": 4.2, "bot_b": 3.4, "bot_c": 2.6, "bot_d": 1.8}
    for context in range(12):
        for bot, q in quality.items():
            human = float(np.clip(q + rng.normal(0, 0.4), 1, 5))
            rows.append({"context": f"c{context}", "responder": bot, "human": human,
                         "harsh": float(np.clip(human - 1.0, 1, 5)),  # same order, 1 lower
                         "reversed": 6.0 - human})  # fmt: skip
    return pd.DataFrame(rows)

def _bots_spec(tmp_path: Path, more: str = "") -> Path:
    """A raters spec of `_frame`'s responders: people and a harsh judge, one file each."""
    frame = _frame()
    frame["ctx"], frame["bot"] = frame["context"], frame["responder"]
    frame[["ctx", "bot", "human"]].round(0).to_csv(tmp_path / "people.csv", index=False)
    frame[["ctx", "bot", "harsh"]].round(0).to_csv(tmp_path / "judge.csv", index=False)
    spec = tmp_path / "bots.yaml"
    spec.write_text(
        "format: raters\npath: .\nid: [ctx, bot]\nresponder: bot\nscale: [1, 5]\n"
        "raters: {people: {file: people.csv, column: human}}\n"
        "judges: {harsh: {file: judge.csv, column: harsh}}\n" + more,
        encoding="utf-8",
    )
    return spec



def test_bias_ranking_and_calibrated_bias() -> None:
    table = responder_table(_frame(), ["harsh", "reversed"], resamples=200).set_index("judge")
    harsh, rev = table.loc["harsh"], table.loc["reversed"]
    assert harsh["responses"] == 48 and harsh["contexts"] == 12 and harsh["responders"] == 4
    assert harsh["bias"] == pytest.approx(-0.95, abs=0.06)
    assert harsh["bias_low"] < harsh["bias"] < harsh["bias_high"] < 0
    assert harsh["ranking_spearman"] == pytest.approx(1.0)
    assert rev["ranking_spearman"] == pytest.approx(-1.0)
    # a shift fitted on half the contexts removes most of a constant offset on the others
    assert abs(harsh["calibrated_bias"]) < 0.1 and harsh["calibrated_bias_contexts"] == 6
    assert harsh["calibrated_bias_low"] <= harsh["calibrated_bias"] <= harsh["calibrated_bias_high"]


def test_responders_from_a_published_spec() -> None:
    from types import SimpleNamespace

    from inspect_empathy.dataset.loaders.raters import RatedTable

    ids = ["c1/a", "c1/b", "c2/a", "c2/b"]
    table = RatedTable(
        ids=ids, raters={"p": {"c1/a": 5.0, "c1/b": 1.0, "c2/a": 4.0, "c2/b": 2.0}},
        judges={"j": {"c1/a": 7.0, "c2/a": 5.0}}, judge_bad={}, rater_bad={},
        scale=(1.0, 5.0), judge_scales={"j": (1.0, 7.0)}, sources=[], dimension="empathy",
        keys={"c1/a": ("c1", "a"), "c1/b": ("c1", "b"), "c2/a": ("c2", "a"),
              "c2/b": ("c2", "b")},
        key_columns=("ctx", "bot"), responder="bot",
    )  # fmt: skip
    pub = SimpleNamespace(mapping={"id": ["ctx", "bot"], "responder": "bot"}, table=table)
    frame = published_responders(pub)
    assert list(frame["context"]) == ["c1", "c1", "c2", "c2"]
    assert list(frame["responder"]) == ["a", "b", "a", "b"]
    assert frame.loc["c1/a", "j"] == 5.0 and np.isnan(frame.loc["c1/b", "j"])
    assert frame.loc["c2/a", "j"] == pytest.approx(1 + (5 - 1) * 4 / 6)


def test_compare_published_prints_the_responder_table(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    from inspect_empathy.cli import main

    spec = _bots_spec(tmp_path)
    assert main(["compare", "--published", str(spec), "--resamples", "50", "--quiet"]) == 0
    assert main(["compare", "--published", str(spec), "--resamples", "50", "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "Responders (bots: 4 responders in 12 contexts" in out
    assert "| harsh | 48 | 0 | -" in out
    assert "ICC(C,1) [95% CI] | ICC(A,1) [95% CI] |" in out


def _ten_bots(seed: int, contexts: int = 40, lenient: float = 0.5) -> pd.DataFrame:
    """10 chatbots rated 1-5 by people and by a lenient judge (scores clipped at 5)."""
    rng = np.random.default_rng(seed)
    quality = np.linspace(1.8, 4.4, 10)
    rows = []
    for context in range(contexts):
        for bot, q in enumerate(quality):
            rows.append({
                "context": f"c{context}", "responder": f"b{bot}",
                "human": float(np.clip(np.rint(q + rng.normal(0, 0.9)), 1, 5)),
                "judge": float(np.clip(np.rint(q + lenient + rng.normal(0, 1.0)), 1, 5)),
            })  # fmt: skip
    return pd.DataFrame(rows)


@pytest.mark.parametrize("seed", [0, 4, 5])
def test_the_ranking_interval_holds_its_estimate_inside(seed: int) -> None:
    """Over 10 responders a percentile interval of the discrete rank correlation put the
    estimate on its edge, or outside it (0.997 [0.889, 0.994])."""
    row = responder_table(_ten_bots(seed), ["judge"], resamples=300).iloc[0]
    assert row["responders"] == 10
    assert row["ranking_low"] < row["ranking_spearman"] < row["ranking_high"]


@pytest.mark.parametrize(("lenient", "method"), [(0.5, "shift"), (1.5, "shift"),
                                                 (1.5, "linear"), (-1.0, "shift")])  # fmt: skip
def test_calibrated_bias_is_removed_when_scores_are_clipped(lenient: float, method: str) -> None:
    """A shift that pushes scores past 5 loses the clipped mass: the map is fitted so that
    the clipped scores hold the people's mean, leaving under 0.01 of cross-fitted bias."""
    row = responder_table(_ten_bots(1, lenient=lenient), ["judge"], method, resamples=100).iloc[0]
    assert abs(row["bias"]) > 0.3
    assert abs(row["calibrated_bias_crossfit"]) <= 0.01


def test_the_vectorised_bootstrap_is_resampling_the_table() -> None:
    """Each resample's bias and ranking equal those of the table built by drawing whole
    contexts (the draws of ``resample_counts``, pd.concat of the drawn contexts)."""
    from scipy import stats

    from inspect_empathy.compare import responders
    from inspect_empathy.stats._resample import resample_counts

    frame = _ten_bots(2, contexts=12).rename(columns={"judge": "j", "human": "h"})
    codes, names = pd.factorize(frame["context"], sort=True)
    counts = resample_counts(len(names), 25, 9).astype(float)
    groups = [frame[codes == i] for i in range(len(names))]
    n_r = frame["responder"].nunique()
    responder, _ = pd.factorize(frame["responder"], sort=True)
    cell = codes * n_r + responder
    sums = {c: responders._totals(cell, frame[c].to_numpy(float), len(names) * n_r)
            for c in ("j", "h")}  # fmt: skip
    for k, weights in enumerate(counts):
        drawn = pd.concat([g for i, g in enumerate(groups) for _ in range(int(weights[i]))])
        bias = (drawn["j"] - drawn["h"]).mean()
        means = drawn.groupby("responder")[["j", "h"]].mean()
        rho = stats.spearmanr(means["j"], means["h"]).statistic
        drawn_n = counts[k] @ sums["j"][1].reshape(len(names), n_r)
        j_means = (counts[k] @ sums["j"][0].reshape(len(names), n_r)) / drawn_n
        h_means = (counts[k] @ sums["h"][0].reshape(len(names), n_r)) / drawn_n
        assert (counts[k] @ np.bincount(codes, frame["j"] - frame["h"])) / (
            counts[k] @ np.bincount(codes)) == pytest.approx(bias)  # fmt: skip
        assert responders._ranking(j_means, h_means)[0] == pytest.approx(rho)


def test_own_replies_left_out_are_a_column() -> None:
    table = responder_table(_frame(), ["harsh"], resamples=0, left_out={"harsh": 7})
    assert table.iloc[0]["own_left_out"] == 7


def test_people_means_per_responder_with_a_ci_over_contexts() -> None:
    from inspect_empathy.compare.responders import people_means

    means = people_means(_frame(), resamples=200).set_index("responder")
    assert list(means.index) == ["bot_a", "bot_b", "bot_c", "bot_d"]
    assert means.loc["bot_a", "mean_human"] == pytest.approx(
        _frame().query("responder == 'bot_a'")["human"].mean())  # fmt: skip
    assert (means["low"] < means["mean_human"]).all()
    assert (means["mean_human"] < means["high"]).all()
    assert (means["contexts"] == 12).all() and (means["responses"] == 12).all()


def test_icc_on_the_responder_means_matches_pingouin() -> None:
    """ICC(C,1), ICC(A,1) (and average measures) of each responder's mean judge score and
    mean rating by people, as MentalBench-Align reports them, checked against pingouin."""
    pingouin = pytest.importorskip("pingouin")
    frame = _ten_bots(3)
    row = responder_table(frame, ["judge"], resamples=0).iloc[0]
    means = frame.groupby("responder")[["judge", "human"]].mean()
    long = means.reset_index().melt(id_vars="responder", var_name="rater", value_name="v")
    ref = pingouin.intraclass_corr(long, "responder", "rater", "v").set_index("Type")
    for key, names in (("icc_c1", ("ICC(C,1)", "ICC3")), ("icc_a1", ("ICC(A,1)", "ICC2")),
                       ("icc_ck", ("ICC(C,k)", "ICC3k")), ("icc_ak", ("ICC(A,k)", "ICC2k"))):
        name = next(n for n in names if n in ref.index)
        assert row[key] == pytest.approx(ref.loc[name, "ICC"], abs=1e-9), key
        low, high = ref.loc[name, next(c for c in ref.columns if c.startswith("CI95"))]
        assert row[f"{key}_low"] == pytest.approx(low, abs=0.005 + 1e-9)
        assert row[f"{key}_high"] == pytest.approx(high, abs=0.005 + 1e-9)
    # a lenient judge ranks the bots as people do: consistency high, absolute agreement lower
    assert row["icc_c1"] > row["icc_a1"]


def test_the_title_counts_the_corpus_responders_with_own_replies_left_out(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge whose own model is one of 4 responders rates 3: the title says "3 of 4
    responders, own replies left out", not "3 responders"."""
    from inspect_empathy.cli import main

    spec = _bots_spec(tmp_path, "own_replies: {harsh: bot_a}\n")
    assert main(["compare", "--published", str(spec), "--resamples", "0", "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "Responders (bots: 3 of 4 responders, own replies left out, in 12 contexts" in out


def test_the_calibrated_bias_can_show_a_map_that_does_not_carry_over() -> None:
    """The cross-fitted bias is about 0 whatever the data; the held-out half's is not: it
    varies from corpus to corpus as the map's own error does, its CI holds it, and a judge
    whose leniency differs between contexts (a map that cannot carry over) gets a CI wider
    than the same judge's with one leniency."""
    values = []
    for seed in range(4):
        row = responder_table(_ten_bots(seed), ["judge"], resamples=200, seed=seed).iloc[0]
        assert abs(row["calibrated_bias_crossfit"]) <= 0.01
        assert row["calibrated_bias_low"] < row["calibrated_bias"] < row["calibrated_bias_high"]
        assert row["calibrated_bias_contexts"] == 20
        values.append(row["calibrated_bias"])
    assert max(abs(v) for v in values) > 0.02

    steady = _ten_bots(7)
    drifting = steady.copy()
    lenient = drifting["context"].str[1:].astype(int) % 2 == 0  # every other context +2
    drifting.loc[lenient, "judge"] = np.clip(drifting.loc[lenient, "human"] + 2, 1, 5)
    drifting.loc[~lenient, "judge"] = drifting.loc[~lenient, "human"]
    widths = [
        float(np.subtract(*responder_table(f, ["judge"], resamples=200).iloc[0][
            ["calibrated_bias_high", "calibrated_bias_low"]]))
        for f in (steady, drifting)
    ]  # fmt: skip
    assert widths[1] > widths[0]
