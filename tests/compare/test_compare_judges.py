"""Comparing judge models from Inspect logs: ranking, paired bootstrap, bias, report files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fixture_logs import run_judges
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage
from inspect_ai.scorer import match
from scipy import stats

from inspect_empathy import compare_judges
from inspect_empathy.compare import (
    CompareError,
    JudgeComparison,
    compare_logs,
    load_scores,
    write_report,
)
from inspect_empathy.compare.stats import paired_difference, spearman, spearman_ci
from inspect_empathy.dataset._dataset import bundled_path
from inspect_empathy.errors import DatasetError
from inspect_empathy.stats.metrics import agreement
from inspect_empathy.tasks import empathy

FIXTURE = Path(__file__).parents[1] / "fixtures" / "compare" / "judges.jsonl"
LEXICON = "empathy_baseline/lexicon"
LENGTH = "empathy_baseline/length"
RESAMPLES = 1000


@pytest.fixture(scope="module")
def fixture_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log_dir = tmp_path_factory.mktemp("fixture_logs")
    run_judges(log_dir, str(FIXTURE), [LEXICON, LENGTH])
    return log_dir


@pytest.fixture(scope="module")
def fixture_comparison(fixture_logs: Path) -> JudgeComparison:
    return compare_logs(fixture_logs, resamples=RESAMPLES, seed=1)


# --- done-when: the bundled set ------------------------------------------------------------


@pytest.mark.slow
def test_bundled_set_ranks_known_judges_and_ci_excludes_zero(tmp_path: Path) -> None:
    try:
        bundled_path("default")
    except DatasetError as ex:
        pytest.skip(f"bundled dataset not available: {ex}")
    run_judges(tmp_path / "logs", "default", [LEXICON, LENGTH])
    comparison = compare_logs(tmp_path / "logs", resamples=2000, seed=0)

    assert list(comparison.judges["judge"]) == [LEXICON, LENGTH]
    lexicon, length = comparison.judges.iloc[0], comparison.judges.iloc[1]
    assert lexicon["spearman"] > length["spearman"]
    assert lexicon["qwk"] > length["qwk"]
    pair = comparison.pairs.iloc[0]
    assert (pair["judge_a"], pair["judge_b"]) == (LEXICON, LENGTH)
    assert pair["diff"] > 0.1
    # borderline at n=135 (p ~ 0.05 whatever the seed): the CI nearly excludes 0; with a
    # single pair Holm changes nothing
    assert pair["diff_low"] > -0.05
    assert pair["p_value"] < 0.1
    assert pair["p_holm"] == pair["p_value"]
    # the length judge is the one with the length bias
    bias = comparison.length_bias.set_index("rater")["length_spearman"]
    assert bias[LENGTH] > 0.9 > bias[LEXICON]


# --- per-judge table ------------------------------------------------------------------------


def test_compare_judges_returns_ranked_dataframe(fixture_logs: Path) -> None:
    table = compare_judges([fixture_logs], resamples=200)
    assert isinstance(table, pd.DataFrame)
    assert list(table["judge"]) == [LEXICON, LENGTH]
    assert list(table["rank"]) == [1, 2]
    for column in (
        "model",
        "method",
        "scored",
        "unscored",
        "spearman",
        "spearman_low",
        "spearman_high",
        "kendall",
        "pearson",
        "mae",
        "qwk",
        "within_one",
        "mean_score",
        "tokens_per_sample",
    ):
        assert column in table.columns, column
    assert set(table["method"]) == {"logprobs"}
    assert list(table["scored"]) == [30, 30]
    assert list(table["unscored"]) == [0, 0]
    assert (table["tokens_per_sample"] > 0).all()


def test_metrics_match_the_package_agreement_function(fixture_comparison: JudgeComparison) -> None:
    samples = fixture_comparison.samples
    for _, row in fixture_comparison.judges.iterrows():
        mine = samples[samples["judge"] == row["judge"]]
        expected = agreement(mine["score"].to_numpy(float), mine["human"].to_numpy(float))
        for key in ("spearman", "kendall", "pearson", "mae", "qwk", "within_one"):
            assert row[key] == pytest.approx(expected[key]), key
        assert row["spearman_low"] <= row["spearman"] <= row["spearman_high"]
        assert row["mean_score"] == pytest.approx(mine["score"].mean())


def test_samples_are_joined_on_dataset_and_id(fixture_comparison: JudgeComparison) -> None:
    samples = fixture_comparison.samples
    ids = [json.loads(line)["id"] for line in FIXTURE.read_text().splitlines()]
    for judge in (LEXICON, LENGTH):
        mine = samples[samples["judge"] == judge]
        assert sorted(mine["id"]) == sorted(ids)
        assert set(mine["dataset"]) == {"judges"}
    human = samples.groupby("id")["human"].nunique()
    assert (human == 1).all()  # both logs carry the same human rating per dialog
    pair = fixture_comparison.pairs.iloc[0]
    assert pair["n_common"] == pair["n_human"] == 30


def test_fixture_difference_is_large_and_significant(fixture_comparison: JudgeComparison) -> None:
    pair = fixture_comparison.pairs.iloc[0]
    assert pair["diff"] > 0.5
    assert pair["diff_low"] > 0
    assert pair["p_value"] < 0.01
    assert -1 <= pair["judge_alpha"] <= 1
    assert math.isfinite(fixture_comparison.alpha)


def test_bias_diagnostics(fixture_comparison: JudgeComparison) -> None:
    bias = fixture_comparison.length_bias.set_index("rater")
    assert list(bias.index) == [LEXICON, LENGTH, "human"]
    assert bias.loc[LENGTH, "length_spearman"] > 0.95
    assert bias.loc[LENGTH, "length_spearman"] > bias.loc["human", "length_spearman"]
    hist = fixture_comparison.histograms.set_index("rater")
    shares = hist[[f"share_{k}" for k in range(1, 6)]]
    assert np.allclose(shares.sum(axis=1), 1.0)
    # the fixture has two dialogs rated 1 per emotion: 10 of 30
    assert hist.loc["human", "share_1"] == pytest.approx(10 / 30)
    emotions = fixture_comparison.emotions
    assert set(emotions["emotion"]) == {"grief", "anxiety", "frustration", "joy", "loneliness"}
    assert len(emotions) == 10
    assert (emotions["n"] == 6).all()


# --- edge cases -------------------------------------------------------------------------------


def test_without_human_ratings_compares_judges_only(tmp_path: Path) -> None:
    unrated = tmp_path / "unrated.jsonl"
    lines = []
    for line in FIXTURE.read_text().splitlines():
        record = json.loads(line)
        record.pop("rating")
        lines.append(json.dumps(record))
    unrated.write_text("\n".join(lines) + "\n")
    run_judges(tmp_path / "logs", str(unrated), [LEXICON, LENGTH])
    comparison = compare_logs(tmp_path / "logs", resamples=200)

    assert not comparison.has_human
    assert comparison.judges["spearman"].isna().all()
    assert (comparison.judges["n_common"] == 0).all()
    pair = comparison.pairs.iloc[0]
    assert pair["n_common"] == 30
    assert math.isnan(pair["diff"]) and not pair["significant"]
    assert math.isfinite(pair["judge_alpha"]) and math.isfinite(pair["judge_spearman"])
    written = write_report(comparison, tmp_path / "report")
    assert "heatmap.png" not in written and "agreement.png" not in written
    assert "histograms.png" in written
    html = written["report.html"].read_text()
    assert "No human ratings: inter-judge agreement only." in html
    assert "Spearman [95% CI]" not in html


def test_unscored_samples_and_tokens_from_model_usage(tmp_path: Path) -> None:
    outputs = [
        ModelOutput.from_content("mockllm/model", "4" if i % 6 else "I cannot rate this.")
        for i in range(30)
    ]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=90, output_tokens=10, total_tokens=100)
    eval(
        empathy(dataset=str(FIXTURE)),
        model="mockllm/model",
        model_args={"custom_outputs": outputs},
        log_dir=str(tmp_path),
        log_format="eval",
        display="none",
    )
    table = compare_judges(tmp_path, resamples=0)
    row = table.iloc[0]
    assert row["judge"] == "mockllm/model"
    assert (row["scored"], row["unscored"]) == (25, 5)
    assert row["method"] == "parse"
    assert row["tokens_per_sample"] == pytest.approx(100)
    assert row["mean_score"] == pytest.approx(4.0)
    assert math.isnan(row["spearman_low"])  # resamples=0: no CI


def test_epochs_are_averaged_and_reruns_become_separate_judges(tmp_path: Path) -> None:
    run_judges(tmp_path, str(FIXTURE), [LENGTH], epochs=2)
    run_judges(tmp_path, str(FIXTURE), [LENGTH])
    loaded = load_scores(tmp_path)
    samples, logs, notes = loaded.samples, loaded.logs, loaded.warnings
    assert sorted(samples["judge"].unique()) == [LENGTH, f"{LENGTH} #2"]
    assert len(samples) == 60
    assert sorted(samples.groupby("judge")["epochs"].max()) == [1, 2]
    assert len(logs) == 2 and not notes


def test_logs_without_the_empathy_scorer_are_skipped(tmp_path: Path, fixture_logs: Path) -> None:
    other = Task(dataset=[Sample(input="Say hi", target="hi")], scorer=match())
    eval(other, model="mockllm/model", log_dir=str(tmp_path / "other"), display="none")
    with pytest.raises(CompareError, match="scored by empathy_scorer"):
        compare_logs(tmp_path / "other")
    comparison = compare_logs([fixture_logs, tmp_path / "other"], resamples=0)
    assert comparison.judge_names == [LEXICON, LENGTH]
    assert any("not scored by empathy_scorer" in w for w in comparison.warnings)


def test_missing_and_empty_sources_raise(tmp_path: Path) -> None:
    with pytest.raises(CompareError, match="no such log file or folder"):
        compare_logs(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CompareError, match="no Inspect logs"):
        compare_logs(tmp_path / "empty")


def test_single_log_files_are_accepted(fixture_logs: Path) -> None:
    files = sorted(fixture_logs.glob("*.eval"))
    assert len(files) == 2
    table = compare_judges([str(f) for f in files], resamples=0)
    assert list(table["judge"]) == [LEXICON, LENGTH]


# --- statistics -------------------------------------------------------------------------------


def test_vectorised_spearman_matches_scipy_with_ties() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(1, 6, size=(4, 40)).astype(float)
    y = rng.integers(1, 6, size=(4, 40)).astype(float)
    mine = spearman(x, y, axis=-1)
    for i in range(4):
        assert mine[i] == pytest.approx(stats.spearmanr(x[i], y[i]).statistic)
    assert math.isnan(spearman(np.ones(5), np.arange(5.0)))


def test_paired_difference_detects_a_better_judge_and_not_an_equal_one() -> None:
    rng = np.random.default_rng(0)
    human = rng.integers(1, 6, size=80).astype(float)
    good = human + rng.normal(0, 0.5, size=80)
    bad = rng.uniform(1, 5, size=80)
    result = paired_difference(good, bad, human, resamples=1000, seed=0)
    assert result["diff"] > 0.5
    assert result["diff_low"] > 0
    assert result["p_value"] < 0.01
    same = paired_difference(good, good, human, resamples=500, seed=0)
    assert same["diff"] == 0
    assert same["diff_low"] <= 0 <= same["diff_high"]
    assert same["p_value"] == 1.0
    again = paired_difference(good, bad, human, resamples=1000, seed=0)
    assert again == result  # seeded: reproducible


def test_spearman_ci_is_undefined_without_variation() -> None:
    low, high = spearman_ci(np.full(10, 3.0), np.arange(10.0), resamples=100)
    assert math.isnan(low) and math.isnan(high)
    low, high = spearman_ci(np.arange(20.0), np.arange(20.0) ** 2, resamples=200)
    assert low == pytest.approx(1.0) and high == pytest.approx(1.0)


# --- report files -----------------------------------------------------------------------------


def test_report_files_render(fixture_comparison: JudgeComparison, tmp_path: Path) -> None:
    written = write_report(fixture_comparison, tmp_path / "report")
    for name in (
        "judges.csv",
        "judges.md",
        "pairs.csv",
        "pairs.md",
        "length_bias.csv",
        "histograms.csv",
        "emotions.csv",
        "samples.csv",
        "report.md",
        "report.html",
        "summary.json",
    ):
        assert name in written and written[name].stat().st_size > 0, name
    pngs = ["heatmap.png", "agreement.png", "differences.png", "histograms.png", "length.png"]
    for name in [*pngs, "emotions.png"]:
        data = written[name].read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, name

    judges_csv = pd.read_csv(written["judges.csv"])
    assert list(judges_csv["judge"]) == [LEXICON, LENGTH]
    md = written["judges.md"].read_text()
    escaped = [name.replace("_", "\\_") for name in (LEXICON, LENGTH)]  # Markdown-escaped
    assert md.index(escaped[0]) < md.index(escaped[1])
    assert "Spearman \\[95% CI\\]" in md

    html = written["report.html"].read_text()
    # heatmap, agreement, choice (agreement against cost), differences, histograms, length,
    # emotions
    assert html.count("data:image/png;base64,") == 7
    assert "Floor: empathy_baseline/lexicon is an offline baseline" in html
    assert "Best agreement" not in html
    samples = pd.read_csv(written["samples.csv"])
    assert {LEXICON, LENGTH, "human", "reply_words", "emotion"} <= set(samples.columns)
    assert len(samples) == 30
    summary = json.loads(written["summary.json"].read_text())
    assert summary["judges"][0]["judge"] == LEXICON
    assert summary["pairs"][0]["significant"] is True


def test_prompt_input_logs_keep_reply_length(tmp_path: Path, fixture_logs: Path) -> None:
    [log] = eval(
        empathy(dataset=str(FIXTURE), input="prompt"), model=LENGTH, log_dir=str(tmp_path),
        log_format="eval", display="none",
    )  # fmt: skip
    assert log.status == "success"
    prompt_rows = load_scores(tmp_path).samples.set_index("id")
    dialog_rows = load_scores(fixture_logs).samples
    dialog_rows = dialog_rows[dialog_rows["judge"] == LENGTH].set_index("id")
    assert len(prompt_rows) == 30 and prompt_rows["reply_words"].notna().all()
    for column in ("reply_words", "score"):
        assert prompt_rows[column].equals(dialog_rows.loc[prompt_rows.index, column])


def test_linear_time_bootstrap_equals_spearman_of_the_resampled_arrays() -> None:
    from inspect_empathy.compare.stats import _Ranker, _rho

    rng = np.random.default_rng(5)
    x = rng.integers(1, 6, size=60).astype(float)  # many ties
    y = x + rng.normal(0, 1, size=60).round(1)
    drawn = rng.integers(0, 60, size=(7, 60))
    fast = _rho(_Ranker(x).ranks(drawn), _Ranker(y).ranks(drawn), 60)
    slow = [stats.spearmanr(x[d], y[d]).statistic for d in drawn]
    assert fast == pytest.approx(slow, abs=1e-12)


def test_large_samples_use_the_percentile_bootstrap_reproducibly() -> None:
    from inspect_empathy.compare import stats as compare_stats

    rng = np.random.default_rng(2)
    n = compare_stats.BCA_MAX_N + 500
    human = rng.integers(1, 6, size=n).astype(float)
    good = human + rng.normal(0, 1, size=n)
    bad = human + rng.normal(0, 2, size=n)
    rho = spearman(good, human)
    low, high = spearman_ci(good, human, resamples=300, seed=4)
    assert low < rho < high and high - low < 0.1
    assert (low, high) == spearman_ci(good, human, resamples=300, seed=4)
    result = paired_difference(good, bad, human, resamples=300, seed=1)
    assert result["diff_low"] > 0 and result["p_value"] < 0.01


def test_parallel_log_reading_gives_the_same_rows(
    fixture_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_empathy.compare import logs as compare_logs_module

    serial = load_scores(fixture_logs).samples
    monkeypatch.setattr(compare_logs_module, "PARALLEL_BYTES", 1)
    parallel = load_scores(fixture_logs).samples
    pd.testing.assert_frame_equal(serial, parallel)


def test_bootstrap_does_not_depend_on_the_batch_size(monkeypatch: pytest.MonkeyPatch) -> None:
    from inspect_empathy.compare import stats as compare_stats

    rng = np.random.default_rng(9)
    x = rng.normal(size=1500)
    h = np.round(x + rng.normal(size=1500))
    small = spearman_ci(x, h, resamples=200, seed=2)
    monkeypatch.setattr(compare_stats, "BATCH_ELEMENTS", 10**9)
    assert spearman_ci(x, h, resamples=200, seed=2) == small


def test_judges_table_has_icc_of_judge_and_people(fixture_comparison: JudgeComparison) -> None:
    """ICC(C,1), ICC(A,1) and the average measures, judge and people as two raters of each
    common dialog, checked against pingouin; the report shows the single measures."""
    pingouin = pytest.importorskip("pingouin")
    from inspect_empathy.compare.report import judges_display

    samples = fixture_comparison.samples
    headers, rows = judges_display(fixture_comparison)
    for (_, row), shown in zip(fixture_comparison.judges.iterrows(), rows, strict=True):
        mine = samples[samples["judge"] == row["judge"]].dropna(subset=["score", "human"])
        long = pd.concat([
            pd.DataFrame({"t": mine["id"], "r": "judge", "v": mine["score"]}),
            pd.DataFrame({"t": mine["id"], "r": "people", "v": mine["human"]}),
        ])  # fmt: skip
        ref = pingouin.intraclass_corr(long, "t", "r", "v").set_index("Type")["ICC"]
        for key, names in (("icc_c1", ("ICC(C,1)", "ICC3")), ("icc_a1", ("ICC(A,1)", "ICC2")),
                           ("icc_ck", ("ICC(C,k)", "ICC3k")), ("icc_ak", ("ICC(A,k)", "ICC2k"))):
            name = next(n for n in names if n in ref.index)
            assert row[key] == pytest.approx(ref[name], abs=1e-9), key
            assert row[f"{key}_low"] <= row[key] <= row[f"{key}_high"]
        cell = shown[headers.index("ICC C/A")]
        assert cell == f"{row['icc_c1']:.2f}/{row['icc_a1']:.2f}"
