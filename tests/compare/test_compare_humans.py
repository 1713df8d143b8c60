"""Issue 16 in the comparison: the human ceiling (humans.csv), each judge beside it, the
cross-fitted calibrated columns of judges.csv, and ``inspect-empathy calibrate``.

The fixture is tests/fixtures/compare/three_raters.csv: 24 dialogs rated by three raters
on a 0-4 scale (four ratings missing), judged by two offline judges. Every figure the
comparison reports is checked against stats/humans.py / calibration.py computed directly from
the fixture file's ratings.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fixture_logs import (
    JUDGES_JSONL,
    LENGTH,
    LEXICON,
    RESPONSE_JSONL,
    records,
    reply,
    run_judges,
)
from inspect_ai import eval
from inspect_ai.log import read_eval_log

from inspect_empathy.cli import main
from inspect_empathy.compare import compare_logs
from inspect_empathy.compare.ceiling import CALIBRATED_COLUMNS
from inspect_empathy.compare.fit import CalibrateError, calibrate_logs
from inspect_empathy.compare.stats import seed_for
from inspect_empathy.stats import calibration, humans
from inspect_empathy.tasks import empathy, empathy_response

FIXTURES = Path(__file__).parents[1] / "fixtures" / "compare"
SPEC = FIXTURES / "three_raters.yaml"
RATERS = ["ann_a", "ann_b", "ann_c"]
RESAMPLES = 200


def expected_ratings() -> pd.DataFrame:
    """The raters' ratings straight from the fixture file, 0-4 mapped onto 1-5."""
    raw = pd.read_csv(FIXTURES / "three_raters.csv", index_col="id")[RATERS]
    return humans.validate_ratings(raw.astype(float) + 1.0)


@pytest.fixture(scope="module")
def rated_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log_dir = tmp_path_factory.mktemp("three_raters")
    run_judges(log_dir, SPEC, [LEXICON, LENGTH])
    return log_dir


@pytest.fixture(scope="module")
def comparison(rated_logs: Path):  # noqa: ANN201
    return compare_logs(rated_logs, resamples=RESAMPLES)


def judge_scores(comparison, judge: str) -> pd.Series:  # noqa: ANN001
    rows = comparison.samples[comparison.samples["judge"] == judge]
    return rows.set_index("id")["score"].rename(judge)


def test_the_fixture_has_three_raters_with_gaps() -> None:
    ratings = expected_ratings()
    assert list(ratings.columns) == RATERS and len(ratings) == 24
    assert int(ratings.isna().sum().sum()) == 4


def test_humans_table_equals_humans_py(comparison) -> None:  # noqa: ANN001
    expected = humans.humans_table(expected_ratings(), "median", RESAMPLES, 0)
    assert len(expected) == 6  # three pairs, three raters against the rest
    pd.testing.assert_frame_equal(comparison.humans.reset_index(drop=True), expected)
    alpha = humans.ordinal_alpha(expected_ratings(), RESAMPLES, 0)
    assert comparison.human_alpha == pytest.approx(alpha, nan_ok=True)


def test_judges_beside_the_ceiling_equal_judge_vs_aggregate(comparison) -> None:  # noqa: ANN001
    ratings = expected_ratings()
    assert comparison.common == 24
    frames = [
        humans.judge_vs_aggregate(judge_scores(comparison, j), ratings, "median", RESAMPLES, 0)
        for j in comparison.judge_names
    ]
    expected = pd.concat(frames, ignore_index=True)
    pd.testing.assert_frame_equal(comparison.beside.reset_index(drop=True), expected)
    judges = comparison.judges.set_index("judge")
    for judge in comparison.judge_names:
        summary = humans.judge_summary(judge_scores(comparison, judge), ratings)
        assert judges.loc[judge, "vs_rest_qwk"] == pytest.approx(summary["rest_qwk_median"])
        assert judges.loc[judge, "vs_rest_spearman"] == pytest.approx(
            summary["rest_spearman_median"]
        )


def test_calibrated_columns_equal_calibrated_agreement(comparison) -> None:  # noqa: ANN001
    human = expected_ratings().median(axis=1)
    judges = comparison.judges.set_index("judge")
    for judge in comparison.judge_names:
        x = judge_scores(comparison, judge).sort_index()
        expected = calibration.calibrated_agreement(
            x.to_numpy(), human.reindex(x.index).to_numpy(), "shift",
            seed=seed_for(judge, seed=0), resamples=RESAMPLES,
            resample_seed=seed_for("pairs", seed=0),
        )  # fmt: skip
        row = judges.loc[judge]
        assert row["calibration_method"] == "shift"
        for key in CALIBRATED_COLUMNS:
            assert row[key] == pytest.approx(expected[key], nan_ok=True), (judge, key)
        # beside the raw figures, never instead of them
        assert row["mae"] == pytest.approx(expected["mae"])
        assert row["qwk"] == pytest.approx(expected["qwk"])
    # the length judge sits off the humans' scale: the shift moves its MAE
    assert judges.loc[LENGTH, "mae_calibrated"] != pytest.approx(judges.loc[LENGTH, "mae"])


def test_calibration_uses_the_common_set(tmp_path: Path) -> None:
    """A judge that leaves dialogs unscored shrinks the common set for every judge."""
    refused = [reply(r) for r in records(JUDGES_JSONL)[:3]]  # tr-001..tr-003
    eval(
        empathy(dataset=str(SPEC)),
        model=[LEXICON],
        log_dir=str(tmp_path),
        log_format="eval",
        display="none",
    )
    eval(
        empathy(dataset=str(SPEC)),
        model="cmpfix/refuser",
        model_args={"refuse": refused},
        log_dir=str(tmp_path),
        log_format="eval",
        display="none",
    )
    result = compare_logs(tmp_path, resamples=0, calibration_method="linear")
    assert result.common == 21
    human = expected_ratings().median(axis=1)
    row = result.judges.set_index("judge").loc[LEXICON]
    x = judge_scores(result, LEXICON).drop(["tr-001", "tr-002", "tr-003"]).sort_index()
    expected = calibration.calibrated_agreement(
        x.to_numpy(), human.reindex(x.index).to_numpy(), "linear",
        seed=seed_for(LEXICON, seed=0), resamples=0,
    )  # fmt: skip
    assert row["calibration_method"] == "linear"
    assert row["mae_calibrated"] == pytest.approx(expected["mae_calibrated"])
    assert row["qwk_calibrated"] == pytest.approx(expected["qwk_calibrated"])
    # the judges beside the ceiling are on the same 21 dialogs (all raters row)
    everyone = result.beside[result.beside["rater_b"] == humans.ALL_RATERS]
    assert set(everyone["n"]) == {21}


def test_compare_cli_writes_humans_csv_and_calibrated_columns(
    rated_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    code = main(
        ["compare", str(rated_logs), "--out", str(out), "--resamples", str(RESAMPLES),
         "--calibration-method", "isotonic", "--no-plots", "--quiet"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    written = pd.read_csv(out / "humans.csv")
    assert list(written.columns) == humans.COLUMNS
    expected = humans.humans_table(expected_ratings(), "median", RESAMPLES, 0)
    np.testing.assert_allclose(
        written[humans.COLUMNS[2:]].to_numpy(float),
        expected[humans.COLUMNS[2:]].to_numpy(float),
        rtol=1e-5,
    )
    assert list(written["rater_b"]) == ["ann_b", "ann_c", "ann_c", "rest", "rest", "rest"]
    beside = pd.read_csv(out / "judges_vs_humans.csv")
    assert set(beside["rater_b"]) == {"rest of ann_a", "rest of ann_b", "rest of ann_c",
                                      "all raters"}  # fmt: skip
    judges = pd.read_csv(out / "judges.csv")
    for column in ["mae", "qwk", *CALIBRATED_COLUMNS, "calibration_method", "vs_rest_qwk"]:
        assert column in judges.columns
    assert set(judges["calibration_method"]) == {"isotonic"}
    assert judges["qwk_calibrated"].notna().all()
    report = (out / "report.md").read_text()
    assert "## Human ceiling" in report and "## Judges beside the ceiling" in report
    assert "MAE calibrated (isotonic)" in report
    html = (out / "report.html").read_text().replace("<wbr>", "")
    assert "Judges beside the ceiling" in html and "rest of ann_b" in html
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["humans"]) == 6 and summary["calibration_method"] == "isotonic"


def test_compare_prints_the_ceiling(
    rated_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    assert main(["compare", str(rated_logs), "--resamples", "0", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    # the terminal says it in a sentence (its 100 columns); the tables are in the report
    assert "Raters against the rest: Spearman" in text
    report = (out / "report.md").read_text().replace("\\", "")
    beside = report.split("Judges beside the ceiling")[1]
    # each rater's row is followed by the judges on the same footing
    rater = beside.index("| rater ann_b")
    judge = beside.index(f"| judge {LEXICON} | rest of ann_b")
    assert rater < judge < beside.index("| rater ann_c")
    assert "MAE calibrated (shift)" in report


def test_without_several_raters_nothing_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = tmp_path / "logs"
    run_judges(logs, JUDGES_JSONL, [LEXICON, LENGTH])
    out = tmp_path / "report"
    assert main(["compare", str(logs), "--out", str(out), "--resamples", "0", "--no-plots"]) == 0
    text = capsys.readouterr().out
    assert not (out / "humans.csv").exists()
    assert not (out / "judges_vs_humans.csv").exists()
    note = "No human ceiling (no humans.csv): no dialog carries several raters' ratings"
    assert note in text
    assert "No human ceiling (no humans.csv): no dialog carries several raters" in (
        out / "report.md"
    ).read_text()
    judges = pd.read_csv(out / "judges.csv")
    assert "vs_rest_qwk" not in judges.columns
    assert judges["mae_calibrated"].notna().all()  # calibration needs one rating only


def test_rejects_an_unknown_calibration_method(rated_logs: Path) -> None:
    from inspect_empathy.compare import CompareError

    with pytest.raises(CompareError, match="calibration method must be one of"):
        compare_logs(rated_logs, resamples=0, calibration_method="quadratic")


# --- inspect-empathy calibrate -------------------------------------------------------------


def test_calibrate_then_apply_with_the_baseline_judge(
    rated_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "calibration.json"
    code = main(["calibrate", str(rated_logs), "--out", str(out), "--judge", LEXICON])
    assert code == 0, capsys.readouterr().err
    fitted = calibration.Calibration.from_json(out)
    # the fit equals fit_calibration on the lexicon judge's scores and the human ratings
    comparison = compare_logs(rated_logs, resamples=0)
    scores = judge_scores(comparison, LEXICON).sort_index()
    human = expected_ratings().median(axis=1).reindex(scores.index)
    expected = calibration.fit_calibration(scores.to_numpy(), human.to_numpy(), "shift")
    assert fitted.method == "shift" and fitted.n == 24
    assert fitted.parameters["offset"] == pytest.approx(expected.parameters["offset"])
    assert abs(fitted.parameters["offset"]) > 0.05  # the map does move the scores
    lexicon_log = comparison.logs[comparison.logs["judges"] == LEXICON]["log"].iloc[0]
    assert fitted.fitted_on == (Path(lexicon_log).name,)

    applied = tmp_path / "applied"
    [log] = eval(
        empathy(dataset=str(JUDGES_JSONL), calibration=str(out)),
        model=LEXICON,
        log_dir=str(applied),
        log_format="eval",
        display="none",
    )
    assert log.status == "success"
    log = read_eval_log(log.location)
    assert log.eval.metadata["calibration"]["fitted_on"] == list(fitted.fitted_on)
    assert log.eval.metadata["calibration"]["n"] == 24
    mapped = 0
    for sample in log.samples or []:
        score = sample.scores["empathy_scorer"]
        raw = score.metadata["uncalibrated"]
        expected_value = min(5.0, max(1.0, raw + fitted.parameters["offset"]))
        assert score.value == pytest.approx(expected_value)
        mapped += score.value != raw
    assert mapped > 0
    # calibrating on the calibrated log fits on its raw scores: the map of a plain run
    plain = tmp_path / "plain"
    run_judges(plain, JUDGES_JSONL, [LEXICON])
    again = calibrate_logs([applied], judge=LEXICON)[0]
    raw_fit = calibrate_logs([plain], judge=LEXICON)[0]
    assert again.n == raw_fit.n == 30
    assert again.parameters["offset"] == pytest.approx(raw_fit.parameters["offset"])
    # the two logs judged the same 30 dialogs: 30 points, not 60, both logs named
    both = calibrate_logs([applied, plain], judge=LEXICON)[0]
    assert both.n == 30 and len(both.fitted_on) == 2
    assert (both.judge, both.rubric) == (LEXICON, "seed")  # whose scores: checked when applied
    assert '"judge": "empathy_baseline/lexicon"' in both.to_json()
    assert both.parameters["offset"] == pytest.approx(raw_fit.parameters["offset"])
    # a map fits one rubric: logs of two rubrics are refused, naming them
    other = tmp_path / "anchored"
    eval(empathy(dataset=str(JUDGES_JSONL), rubric="anchored"), model=LEXICON,
         log_dir=str(other), display="none")  # fmt: skip
    with pytest.raises(CalibrateError, match="different rubrics .*anchored"):
        calibrate_logs([plain, other], judge=LEXICON)


def test_calibrate_methods_and_judge_choice(rated_logs: Path) -> None:
    for method in ("linear", "isotonic"):
        fitted, judge = calibrate_logs([rated_logs], method=method, judge=LEXICON)
        assert fitted.method == method and judge == LEXICON and fitted.n == 24
    # the length judge ranks these dialogs against the humans: no order-keeping map
    with pytest.raises(CalibrateError, match=f"^{LENGTH} in .*no linear map that keeps"):
        calibrate_logs([rated_logs], method="linear", judge=LENGTH)


def test_calibrate_errors_are_one_line(
    rated_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "c.json")

    def error(*args: str) -> str:
        assert main(["calibrate", *args, "--out", out]) == 1
        message = capsys.readouterr().err.strip()
        assert "\n" not in message and message.startswith("inspect-empathy calibrate: ")
        return message

    several = error(str(rated_logs))
    assert "the logs hold 2 judges" in several and "pick one with --judge" in several
    assert "no judge 'nobody'" in error(str(rated_logs), "--judge", "nobody")
    bad = tmp_path / "broken.eval"
    bad.write_bytes(b"not a zip")
    assert "broken.eval: cannot calibrate on it (unreadable log" in error(str(bad))
    assert "no such log file or folder" in error(str(tmp_path / "missing"))
    unlabelled = tmp_path / "unlabelled.jsonl"
    unlabelled.write_text(
        "".join(
            json.dumps({k: v for k, v in r.items() if k != "rating"}) + "\n"
            for r in records(JUDGES_JSONL)[:4]
        )
    )
    run_judges(tmp_path / "unlabelled", unlabelled, [LEXICON])
    assert "no labelled samples" in error(str(tmp_path / "unlabelled"))
    eval(
        empathy_response(dataset=str(RESPONSE_JSONL)),
        model=LEXICON,
        model_roles={"grader": LEXICON},
        log_dir=str(tmp_path / "response"),
        log_format="eval",
        display="none",
        limit=2,
    )
    assert "response-mode log" in error(str(tmp_path / "response"))
    assert not Path(out).exists()


def test_calibrate_rejects_an_unknown_method(rated_logs: Path) -> None:
    with pytest.raises(CalibrateError, match="--method must be one of"):
        calibrate_logs([rated_logs], method="cubic", judge=LEXICON)
    assert math.isfinite(calibrate_logs([rated_logs], judge=LEXICON)[0].parameters["offset"])


def test_calibrate_never_writes_over_a_log_it_reads(
    rated_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 48.1: ``--out`` naming one of the input logs (by its name or through a link)
    replaced the paid run's log with a small JSON map, exit 0. It is refused in one line
    before any log is read, and the log is left as it was."""
    log = sorted(rated_logs.glob("*.eval"))[0]
    before = log.read_bytes()
    link = tmp_path / "map.json"
    link.symlink_to(log)
    for out in (log, link):
        assert main(["calibrate", str(rated_logs), "--judge", LEXICON, "--out", str(out)]) == 1
        message = capsys.readouterr().err.strip()
        assert "\n" not in message and "one of the files this command reads" in message
        assert log.read_bytes() == before
    assert main(["calibrate", str(rated_logs), "--judge", LEXICON, "--out", str(link)]) == 1
    link.unlink()
    assert main(["calibrate", str(rated_logs), "--judge", LEXICON, "--out", str(link)]) == 0
    assert json.loads(link.read_text())["method"] == "shift" and log.read_bytes() == before
