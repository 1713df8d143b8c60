"""Issue 26, items 9-13: what a team reads and acts on in the comparison report.

Small logs built in-process (``synthetic_logs``): the disagreements table and CSV, the
texts and unscored reasons of samples.csv, MAE / QWK CIs in the ranked table, response
mode comparing the replying models under one grader, and the ``--fail-under`` gate.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageUser
from inspect_ai.scorer import Score
from synthetic_logs import HUMAN, samples, write_log

from inspect_empathy.cli import main
from inspect_empathy.compare import compare_logs, write_report
from inspect_empathy.compare.disagreements import disagreements
from inspect_empathy.compare.replying import reply_pairs, reply_table

CLOSE = (4.8, 1.2, 4.1, 2.2, 3.0, 4.9)
"""Judge A: near the human ratings (5, 1, 4, 2, 3, 5) except d5 by 0 and d2 by 0.2."""


def _answered(rows: list[EvalSample], answers: dict[str, str]) -> list[EvalSample]:
    for row in rows:
        if str(row.id) in answers:
            row.scores["empathy_scorer"].answer = answers[str(row.id)]
    return rows


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("items")
    far = list(CLOSE)
    far[1] = 4.0  # d2: human 1, judge B 4 -> its largest gap
    b_rows = _answered(samples(far), {"d2": "4: the reply is warm and validating."})
    b_rows[3].scores["empathy_scorer"] = Score(
        value=math.nan, explanation="the judge refused to rate this dialog"
    )
    write_log(root / "a.eval", "judge/a", _answered(samples(CLOSE), {"d1": "5"}))
    write_log(root / "b.eval", "judge/b", b_rows)
    return root


@pytest.fixture(scope="module")
def comparison(logs: Path):  # noqa: ANN201
    return compare_logs(logs, resamples=200)


# --- item 9: where each judge disagrees most ----------------------------------------------


def test_disagreements_largest_gap_first_with_the_texts(comparison) -> None:  # noqa: ANN001
    table = disagreements(comparison)
    b = table[table["judge"] == "judge/b"].reset_index(drop=True)
    first = b.iloc[0]
    assert first["id"] == "d2" and first["rank"] == 1
    assert first["human"] == 1.0 and first["score"] == 4.0 and first["difference"] == 3.0
    assert first["reply"] == "I am sorry, that sounds hard (d2)."
    assert first["answer"] == "4: the reply is warm and validating."
    assert first["dialog"] == (
        "user: Dialog d2: something sad happened to me today.\nbot: " + first["reply"]
    )
    assert "d4" not in set(b["id"])  # unscored: no gap to show
    gaps = b["difference"].abs().to_numpy()
    assert (np.diff(gaps) <= 0).all()
    assert list(dict.fromkeys(table["judge"])) == comparison.judge_names


def test_disagreements_in_the_report_and_a_csv(comparison, tmp_path: Path) -> None:  # noqa: ANN001
    written = write_report(comparison, tmp_path / "report", plots=False)
    csv = pd.read_csv(written["disagreements.csv"])
    assert {"judge", "rank", "id", "human", "score", "reply", "answer", "dialog"} <= set(csv)
    html = written["report.html"].read_text()
    md = written["report.md"].read_text()
    for text in (html, md):
        assert "Where each judge disagrees most with people" in text
        assert "the reply is warm and validating." in text
        assert "I am sorry, that sounds hard (d2)." in text


def test_no_disagreements_without_human_ratings(tmp_path: Path) -> None:
    write_log(tmp_path / "a.eval", "judge/a", samples(CLOSE, [None] * 6))
    comparison = compare_logs(tmp_path, resamples=0)
    assert disagreements(comparison).empty
    written = write_report(comparison, tmp_path / "report", plots=False)
    assert "disagreements.csv" not in written
    assert "disagrees most" not in written["report.md"].read_text()


# --- item 10: samples.csv ---------------------------------------------------------------------


def test_samples_csv_has_texts_and_unscored_reasons(comparison, tmp_path: Path) -> None:  # noqa: ANN001
    written = write_report(comparison, tmp_path / "report", plots=False)
    frame = pd.read_csv(written["samples.csv"], dtype=str, keep_default_na=False)
    row = frame.set_index("id").loc["d4"]
    assert row["unscored_reason: judge/b"] == "the judge refused to rate this dialog"
    assert row["unscored_reason: judge/a"] == ""
    assert row["reply"] == "I am sorry, that sounds hard (d4)."
    assert row["dialog"] == (
        "user: Dialog d4: something sad happened to me today.\n"
        "bot: I am sorry, that sounds hard (d4)."
    )
    assert list(frame.columns)[-2:] == ["reply", "dialog"]


# --- item 11: QWK and MAE with their CIs in the ranked table ---------------------------------


def test_ranked_table_shows_mae_and_qwk_cis(comparison) -> None:  # noqa: ANN001
    from inspect_empathy.compare.report import judges_display, with_ci

    headers, rows = judges_display(comparison)
    assert "MAE [95% CI]" in headers and "QWK [95% CI]" in headers
    shown = []
    for (_, judge), row in zip(comparison.judges.iterrows(), rows, strict=True):
        for key, header in (("mae", "MAE [95% CI]"), ("qwk", "QWK [95% CI]")):
            cell = row[headers.index(header)]
            assert cell == with_ci(judge[key], judge[f"{key}_low"], judge[f"{key}_high"])
            shown.append(cell)
    assert sum("[" in cell for cell in shown) >= 2  # (a perfect QWK has no interval)


# --- item 12: response mode compares the replying models --------------------------------------


def _response_rows(scores: list[float], grader: str, word: str) -> list[EvalSample]:
    rows = []
    for i, value in enumerate(scores):
        rows.append(
            EvalSample(
                id=f"p{i + 1}",
                epoch=1,
                input=[ChatMessageUser(content=f"Prompt {i + 1}: my cat is ill.")],
                target="",
                metadata={"emotion": "worry"},
                scores={
                    "empathy_scorer": Score(
                        value=value,
                        metadata={
                            "method": "parse",
                            "grader": grader,
                            "judged_dialog": f"USER: Prompt {i + 1}: my cat is ill.\n"
                            f"BOT: {word} reply {i + 1}",
                        },
                    )
                },
            )
        )
    return rows


def _response_log(path: Path, reply_model: str, rows: list[EvalSample]) -> Path:
    path = write_log(path, reply_model, rows)
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(path))
    log.eval.metadata = {"mode": "response"}
    write_eval_log(log, str(path))
    return path


WARM = [4.0, 5.0, 4.0, 4.5, 5.0, 4.0, 3.5, 5.0]
COLD = [2.0, 3.0, 2.5, 2.0, 4.0, 1.5, 2.0, 3.0]


def test_response_mode_compares_reply_models_under_one_grader(tmp_path: Path) -> None:
    _response_log(tmp_path / "warm.eval", "reply/warm", _response_rows(WARM, "grader/g", "Warm"))
    _response_log(tmp_path / "cold.eval", "reply/cold", _response_rows(COLD, "grader/g", "Cold"))
    _response_log(tmp_path / "other.eval", "reply/cold", _response_rows(WARM, "grader/h", "Cold"))
    comparison = compare_logs(tmp_path, resamples=500)
    assert comparison.judges["rank"].isna().all()  # no agreement to rank graders by
    replies = comparison.replies
    g = replies[replies["grader"] == "grader/g"].set_index("reply_model")
    assert list(g.index) == ["reply/warm", "reply/cold"] and list(g["rank"]) == [1, 2]
    assert g.loc["reply/warm", "mean_score"] == pytest.approx(np.mean(WARM))
    assert g.loc["reply/warm", "share_ge_4"] == pytest.approx(np.mean(np.array(WARM) >= 3.5))
    assert g.loc["reply/cold", "share_ge_4"] == pytest.approx(np.mean(np.array(COLD) >= 3.5))
    low, high = g.loc["reply/warm", ["mean_low", "mean_high"]]
    assert low <= np.mean(WARM) <= high
    pairs = comparison.reply_pairs
    [pair] = pairs[pairs["grader"] == "grader/g"].to_dict("records")
    assert (pair["model_a"], pair["model_b"], pair["n"]) == ("reply/warm", "reply/cold", 8)
    assert pair["diff"] == pytest.approx(np.mean(WARM) - np.mean(COLD))
    assert pair["diff_low"] > 0 and pair["significant"]
    from scipy.stats import wilcoxon

    assert pair["p_wilcoxon"] == pytest.approx(wilcoxon(WARM, COLD).pvalue)
    # grader h graded one reply model: nothing to pair, never compared across graders
    assert set(pairs["grader"]) == {"grader/g"}
    written = write_report(comparison, tmp_path / "report", plots=False)
    md = written["report.md"].read_text()
    assert "Chatbots compared in pairs" in md and "Judges (ranked)" not in md
    assert "reply\\_pairs" not in md and "reply_pairs.csv" in written
    assert "Reply models graded by grader/g" in written["report.html"].read_text()


def test_reply_pairs_only_on_the_same_prompts() -> None:
    scores = pd.DataFrame(
        {
            "dataset": "d",
            "grader": "g",
            "reply_model": ["a", "a", "a", "b", "b", "b"],
            "id": ["1", "2", "3", "1", "2", "3"],
            "prompt": ["x", "y", "z", "x", "y", "OTHER"],
            "score": [5.0, 4.0, 4.0, 1.0, 2.0, 2.0],
        }
    )
    [pair] = reply_pairs(scores, 100, 0).to_dict("records")
    assert pair["n"] == 2 and pair["diff"] == pytest.approx(3.0)
    assert list(reply_table(scores, 0, 0)["reply_model"]) == ["a", "b"]


# --- item 13: the CI gate ---------------------------------------------------------------------


def test_gate_passes_and_fails_with_the_reason(
    logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["compare", str(logs), "--quiet", "--resamples", "50"]
    assert main([*base, "--fail-under", "spearman=0.5"]) == 0
    capsys.readouterr()
    out = tmp_path / "report"
    assert main([*base, "--out", str(out), "--fail-under", "spearman=0.999"]) == 3
    err = capsys.readouterr().err
    assert "gate failed: judge/b: spearman" in err and "< 0.999" in err
    assert (out / "report.html").is_file()  # the report is written before the gate
    assert main([*base, "--fail-over", "mae=0.01", "--gate-judge", "judge/a"]) == 3
    err = capsys.readouterr().err
    assert "judge/a: mae" in err and "gate failed: judge/b" not in err
    assert main([*base, "--fail-under", "coverage=1", "--gate-judge", "judge/a"]) == 0
    assert main([*base, "--fail-under", "coverage=1"]) == 3
    assert "judge/b: coverage 0.833 < 1" in capsys.readouterr().err


def test_gate_fails_on_a_missing_figure_and_bad_specs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_log(tmp_path / "a.eval", "judge/a", samples(CLOSE, [None] * 6))
    argv = ["compare", str(tmp_path), "--quiet", "--resamples", "0"]
    assert main([*argv, "--fail-under", "spearman=0.6"]) == 3
    assert "spearman cannot be computed (no human ratings)" in capsys.readouterr().err
    for bad in (["--fail-under", "mae=1"], ["--fail-under", "spearman"], ["--fail-over", "x=1"]):
        with pytest.raises(SystemExit) as exit_:
            main([*argv, *bad])
        assert exit_.value.code == 2
    assert HUMAN  # the synthetic ratings the other tests rely on


def test_tables_keep_their_columns_whatever_a_judge_is_called() -> None:
    """A ``|`` in a judge's name splits no cell: escaped in the Markdown table, written
    ``\\|`` in the terminal's; each row has as many cell borders as the header."""
    from inspect_empathy.compare.formats import markdown_table, plain_table

    rows = [["probe/we_ird|na<me>#1*x", "0.5"], ["plain", "0.4"]]
    for table in (plain_table(["judge", "rho"], rows), markdown_table(["judge", "rho"], rows)):
        borders = [line.replace("\\|", "").count("|") for line in table.splitlines()]
        assert set(borders) == {3}, table
