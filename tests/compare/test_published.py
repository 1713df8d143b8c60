"""Published judges in compare, kappas on a scale's own categories, and ``reproduce``."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from synthetic_logs import sample, write_log

from inspect_empathy.cli import main
from inspect_empathy.compare import compare_logs
from inspect_empathy.compare.kappa import kappa_test, paper_kappa, standard_kappa
from inspect_empathy.compare.published import PREFIX, reproduce
from inspect_empathy.stats._agreement import quadratic_weighted_kappa

sys.path.insert(0, str(Path(__file__).parents[1] / "dataset" / "loaders"))
from published_files import CROWD, EXPERT1, EXPERT2, EXPERT3, GEMINI, IDS, corpus  # noqa: E402


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "published"
    monkeypatch.setenv("TOY_ROOT", str(root))
    return corpus(root)


# --------------------------------------------------------------------------- kappas


def test_standard_kappa_is_the_plugins_qwk_on_1_5_and_on_the_own_categories() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.integers(1, 6, 40), rng.integers(1, 6, 40)
    assert standard_kappa(a, b, (1, 5)) == pytest.approx(quadratic_weighted_kappa(a, b))
    # 0-2 mapped linearly onto 1-5 (1, 3, 5) keeps every category: the same kappa
    x, y = rng.integers(0, 3, 40), rng.integers(0, 3, 40)
    assert standard_kappa(x, y, (0, 2)) == pytest.approx(
        quadratic_weighted_kappa(1 + 2 * x, 1 + 2 * y)
    )


def test_mapping_1_7_onto_1_5_merges_categories_and_changes_qwk() -> None:
    a = np.array([1, 2, 3, 4, 5, 6, 7, 2, 3, 5, 6, 4])
    b = np.array([2, 3, 2, 4, 6, 5, 7, 2, 2, 6, 6, 3])
    own = standard_kappa(a, b, (1, 7))
    merged = quadratic_weighted_kappa(
        np.floor(1 + (a - 1) * 4 / 6 + 0.5), np.floor(1 + (b - 1) * 4 / 6 + 0.5)
    )
    assert abs(own - merged) > 0.01


def test_paper_kappa_spaces_weights_by_the_index_of_observed_values() -> None:
    # every category used: the same as the standard QWK
    a, b = [1, 2, 3, 4, 5, 3], [1, 3, 3, 5, 4, 2]
    assert paper_kappa(a, b) == pytest.approx(standard_kappa(a, b, (1, 5)))
    # nobody rated 2: 1 and 3 become neighbours (weights by index), the QWK keeps the gap
    a, b = [1, 3, 3, 4, 5, 1], [3, 1, 3, 5, 4, 1]
    table_std = standard_kappa(a, b, (1, 5))
    assert paper_kappa(a, b) == pytest.approx(
        standard_kappa([0, 1, 1, 2, 3, 0], [1, 0, 1, 3, 2, 0], (0, 3))
    )
    assert paper_kappa(a, b) != pytest.approx(table_std)
    # fractional ratings: the observed values x 100 are the categories
    assert math.isfinite(paper_kappa([1.5, 2.25, 3.0], [1.5, 2.0, 3.0]))


def test_kappa_test_gives_statsmodels_z_and_p() -> None:
    # expert1 vs expert2 of the toy corpus, by hand: kappa 0.75, se 0.17116 (the Fleiss,
    # Cohen and Everitt variance statsmodels uses; it reproduces Kumar et al.'s z-values)
    result = kappa_test(EXPERT1, EXPERT2, "paper")
    assert result["kappa"] == pytest.approx(0.75)
    assert result["se"] == pytest.approx(0.1711633, abs=1e-6)
    assert result["z"] == pytest.approx(0.75 / 0.1711633, abs=1e-4)
    with pytest.raises(ValueError, match="outside the scale"):
        kappa_test([1, 2, 6], [1, 2, 3], "standard", (1, 5))


# --------------------------------------------------------------------------- reproduce


def test_reproduce_prints_each_cell_beside_the_published_one(
    toy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cells = reproduce([toy])
    assert list(cells["pair"]) == ["('expert1', 'expert2')", "('experts', 'llm')",
                                   "('experts', 'crowd')"]  # fmt: skip
    assert (cells["diff"].abs() <= 0.005).all()
    # the crowd's fractional means: only the paper's kappa gives the published 0.92
    assert list(cells["needs_paper"]) == [False, False, True]
    assert cells["standard"].iloc[2] == pytest.approx(0.857, abs=1e-3)
    assert "fractional ratings" in cells["why"].iloc[2]
    assert main(["reproduce", str(toy)]) == 0
    out = capsys.readouterr().out
    assert "| Toy | level | ('experts', 'crowd') | 6 | 0.857 | 0.923 | 0.920 | +0.003 |" in out
    assert "3 cells: 3 equal to the published value" in out


def test_reproduce_root_option_sets_the_folder(
    toy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TOY_ROOT")
    assert main(["reproduce", str(toy.parent), "--root", str(toy.parent / "published")]) == 0
    assert "1 need the paper's kappa" in capsys.readouterr().out


# --------------------------------------------------------------------------- compare


def test_published_judges_alone_get_every_statistic(toy: Path) -> None:
    comparison = compare_logs([], resamples=0, published=[toy])
    names = set(comparison.judges["judge"])
    assert names == {PREFIX + "gemini", PREFIX + "gpt", PREFIX + "crowd"}
    assert len(comparison.pairs) == 3
    assert comparison.humans is not None and len(comparison.humans) == 6  # 3 pairs + 3 rest
    gemini = comparison.judges.set_index("judge").loc[PREFIX + "gemini"]
    human = np.median([EXPERT1, EXPERT2, EXPERT3], axis=0)
    assert gemini["qwk"] == pytest.approx(standard_kappa(GEMINI, human, (0, 2)))
    assert math.isfinite(gemini["qwk_calibrated"])


def test_an_inspect_judge_beside_the_published_ones(
    toy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [f"{s}/{r}" for s, r in IDS]
    human = np.median([EXPERT1, EXPERT2, EXPERT3], axis=0)
    scores = [1.0, 3.0, 5.0, 4.0, 2.0, 3.0, 4.0]
    rows = [sample(i, s, 1 + 2 * h) for i, s, h in zip(ids, scores, human, strict=False)]
    rows.append(sample("s7/r7", 4.0, 3.0))  # a dialog the published files do not have
    log = write_log(tmp_path / "logs" / "judge.eval", "openai/gpt-5", rows)
    comparison = compare_logs([log], resamples=50, published=[toy])
    judges = comparison.judges.set_index("judge")
    assert judges.loc["openai/gpt-5", "n_common"] == 6
    assert judges.loc[PREFIX + "gemini", "unscored"] == 1  # s7/r7: not in its file
    pairs = comparison.pairs
    mine = pairs[(pairs["judge_a"] == "openai/gpt-5") | (pairs["judge_b"] == "openai/gpt-5")]
    assert len(mine) == 3 and mine["p_value"].notna().all()
    assert any("1 of the logs' dialogs are not in the published files" in w
               for w in comparison.warnings)  # fmt: skip
    out = tmp_path / "report"
    code = main(["compare", str(log), "--published", str(toy), "--resamples", "0",
                 "--no-plots", "--out", str(out)])  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "On the scale's own categories (toy, dimension level, scale 0-2" in text
    assert "| openai/gpt-5 | raters | 6 |" in text
    assert (out / "scale_agreement.csv").is_file() and (out / "report.html").is_file()


def test_compare_without_logs_or_published_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["compare", "--resamples", "0"])
    assert info.value.code == 2
    assert "LOGS (or --published SPEC)" in capsys.readouterr().err


def test_crowd_fractional_means_are_scored_on_the_own_scale(toy: Path) -> None:
    comparison = compare_logs([], resamples=0, published=[toy])
    crowd = comparison.samples[comparison.samples["judge"] == PREFIX + "crowd"]
    assert list(crowd["score"]) == [1 + 2 * v for v in CROWD]


# --------------------------------------------------------------------------- multi-chatbot corpora

from wide_files import BOTS, contexts  # noqa: E402
from wide_files import corpus as multi_corpus  # noqa: E402


@pytest.fixture
def multi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "multi"
    monkeypatch.setenv("MULTI_ROOT", str(root))
    return multi_corpus(root)


def test_a_multi_chatbot_corpus_through_every_table_and_csv(
    multi: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One column per chatbot, judges' own replies left out, ids that hold / | , # : and
    non-ASCII letters: each table and CSV keeps every id whole."""
    import pandas as pd

    out = tmp_path / "report"
    assert main(["compare", "--published", str(multi), "--resamples", "40", "--no-plots",
                 "--out", str(out)]) == 0  # fmt: skip
    captured = capsys.readouterr()
    ids = {f"{c}/{b}" for c in contexts(14) for b in BOTS}
    samples = pd.read_csv(out / "samples.csv", dtype=str, keep_default_na=False)
    assert set(samples["id"]) == ids
    for name in ("disagreements.csv", "humans.csv", "judges_vs_humans.csv"):
        assert (out / name).is_file()
    worst = pd.read_csv(out / "disagreements.csv", dtype=str, keep_default_na=False)
    assert len(worst) and set(worst["id"]) <= ids
    own = samples.set_index("id")["unscored_reason: published:gpt-4o"]
    assert (own[[f"{c}/openai/gpt-4o" for c in contexts(14)]]
            == "its own model's reply (left out: own_replies)").all()  # fmt: skip
    scale = pd.read_csv(out / "scale_agreement.csv")
    responders = scale[scale["table"] == "responders"].set_index("judge")
    assert list(responders["responders"]) == [len(BOTS) - 1] * 2  # its own one left out
    assert list(responders["contexts"]) == [14, 14]
    assert list(responders["own_left_out"]) == [14, 14]
    assert (responders["ranking_low"] < responders["ranking_spearman"]).all()
    assert "gpt-4o: 14 rating(s) of its own model's replies (openai/gpt-4o) left out" in (
        captured.err)  # fmt: skip
    for report in ("report.md", "report.html"):
        text = (out / report).read_text(encoding="utf-8")
        assert ("Responders (multi: 5 of 6 responders, own replies left out, in 14 contexts)"
                in text)  # fmt: skip
        assert "own replies left out" in text


def test_own_replies_left_out_are_outside_the_judges_coverage_and_headline(
    multi: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reply left out by design is not one the judge failed to score: with gpt-4o's own
    replies left out (and claude's kept), gpt-4o scored every dialog it was to score
    (coverage 100%, no low-coverage mark), its headline is Somers' D over those dialogs
    with none counted against it, and the tables show the count beside its coverage."""
    import pandas as pd

    from inspect_empathy.stats._agreement import somers_d_all

    text = multi.read_text(encoding="utf-8")
    own = 'own_replies: {gpt-4o: openai/gpt-4o, claude: "claude|3.7"}'
    assert own in text
    multi.write_text(text.replace(own, "own_replies: {gpt-4o: openai/gpt-4o}"), encoding="utf-8")
    out = tmp_path / "report"
    assert main(["compare", "--published", str(multi), "--resamples", "40", "--no-plots",
                 "--out", str(out), "--fail-under", "coverage=1"]) == 0  # fmt: skip
    captured = capsys.readouterr()
    judges = pd.read_csv(out / "judges.csv").set_index("judge")
    gpt, claude = judges.loc[PREFIX + "gpt-4o"], judges.loc[PREFIX + "claude"]
    n = 14 * len(BOTS)
    assert (gpt["dialogs"], gpt["scored"], gpt["unscored"], gpt["left_out"]) == (n - 14, n - 14,
                                                                                 0, 14)  # fmt: skip
    assert (claude["dialogs"], claude["scored"], claude["left_out"]) == (n, n, 0)
    assert gpt["coverage"] == claude["coverage"] == 1.0
    assert not gpt["low_coverage"] and "low coverage" not in captured.err + captured.out
    samples = pd.read_csv(out / "samples.csv", dtype={"id": str}, keep_default_na=False)
    samples = samples.replace("", math.nan)
    x = pd.to_numeric(samples[PREFIX + "gpt-4o"]).to_numpy(float)
    h = pd.to_numeric(samples["human"]).to_numpy(float)
    mine = np.isfinite(x)
    assert set(samples.loc[~mine, "id"]) == {f"{c}/openai/gpt-4o" for c in contexts(14)}
    assert gpt["somers_d_all"] == pytest.approx(somers_d_all(x[mine], h[mine], 0))
    assert gpt["somers_d_all"] != pytest.approx(somers_d_all(x[mine], h[mine], 14))
    # the common set leaves the left-out replies out for every judge: the same dialogs
    assert gpt["n_common"] == claude["n_common"] == n - 14
    assert "(14 own left out)" in captured.out  # the terminal's coverage cell
    assert "left out by design and not counted against it: published:gpt-4o 14)" in " ".join(
        captured.out.split())  # fmt: skip
    html = (out / "report.html").read_text(encoding="utf-8")
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "<th>errored</th><th>own replies left out</th><th>coverage</th>" in html
    # an earlier report of a spec is an earlier report: written over, not refused
    assert main(["compare", "--published", str(multi), "--resamples", "0", "--no-plots",
                 "--out", str(out)]) == 0  # fmt: skip
    assert re.search(r"\| errored \| own replies left out \| coverage \|", md)
    assert "low coverage" not in html + md


def test_people_only_gives_the_ceiling_and_each_responders_mean(
    multi: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = multi.read_text(encoding="utf-8")
    text = text.split("judges:")[0]  # raters, no judges
    people = multi.with_name("people.yaml")
    people.write_text(text, encoding="utf-8")
    out = tmp_path / "people"
    assert main(["compare", "--published", str(people), "--resamples", "40",
                 "--out", str(out)]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "Human ceiling" in printed and "| rater1 | rater2 | 84 |" in printed
    assert "Each responder's mean rating by people" in printed
    means = __import__("pandas").read_csv(out / "people_responders.csv")
    assert sorted(means["responder"]) == sorted(BOTS)
    assert (means["low"] <= means["mean_human"]).all()
    assert (means["mean_human"] <= means["high"]).all()
    assert (out / "humans.csv").is_file()


def test_a_bad_rater_cell_stops_compare_and_reproduce_as_it_stops_the_load(
    toy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from published_files import ratings

    ratings(toy.parent / "published" / "annotations" / "toy" / "expert2_ratings.csv",
            [0, 1, 2, 1, 0, 9])  # fmt: skip
    assert main(["compare", "--published", str(toy), "--resamples", "0"]) == 1
    err = capsys.readouterr().err
    assert "expert2_ratings.csv: row 7, column level: 9 is outside the scale 0-2" in err
    assert main(["reproduce", str(toy)]) == 1
    assert "expert2_ratings.csv: row 7, column level" in capsys.readouterr().err
    toy.write_text(toy.read_text(encoding="utf-8") + "missing_values: [9]\n", encoding="utf-8")
    assert main(["reproduce", str(toy)]) in (0, 3)
    assert "1 cell(s) marked missing (missing_values)" in capsys.readouterr().err


def test_reproduce_exits_3_when_a_cell_is_not_reproduced(
    toy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = toy.parent / "published" / "annotations" / "table_kappa.csv"
    table.write_text(table.read_text(encoding="utf-8").replace("0.92", "0.50"), encoding="utf-8")
    assert main(["reproduce", str(toy)]) == 3
    assert "1 of 3 cell(s) not reproduced" in capsys.readouterr().err


def test_reproduce_of_a_spec_that_does_not_exist_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["reproduce", str(tmp_path / "nope.yaml")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.yaml: no such spec file or folder" in err


def test_reproduce_finds_the_shipped_spec_folders_by_name() -> None:
    from inspect_empathy.cli.published import spec_files

    names = [p.name for p in spec_files(["kumar2025"])]
    assert names == ["empatheticdialogues.yaml", "epitome.yaml", "lend_an_ear.yaml",
                     "perceived_empathy.yaml"]  # fmt: skip
    assert [p.name for p in spec_files(["kumar2025/epitome"])] == ["epitome.yaml"]


def test_a_judge_that_scored_998_of_999_is_not_shown_at_100_percent(tmp_path: Path) -> None:
    from inspect_empathy.compare.report import terminal_text

    rng = np.random.default_rng(0)
    people = rng.integers(1, 6, 999)
    rows = "\n".join(f"d{i},{v}" for i, v in enumerate(people))
    (tmp_path / "people.csv").write_text("id,v\n" + rows + "\n", encoding="utf-8")
    (tmp_path / "all.csv").write_text("id,v\n" + rows + "\n", encoding="utf-8")
    (tmp_path / "most.csv").write_text("id,v\n" + rows.rsplit("\n", 1)[0] + "\n",
                                       encoding="utf-8")  # fmt: skip
    spec = tmp_path / "cover.yaml"
    spec.write_text("format: raters\npath: .\nid: id\ndimension: v\nscale: [1, 5]\n"
                    "raters: {people: people.csv}\njudges: {all: all.csv, most: most.csv}\n",
                    encoding="utf-8")  # fmt: skip
    comparison = compare_logs([], resamples=0, published=[spec])
    most = comparison.judges.set_index("judge").loc[PREFIX + "most"]
    assert most["scored"] == 998 and bool(most["low_coverage"])
    text = terminal_text(comparison)
    line = next(x for x in text.splitlines() if "| published:most [low coverage] |" in x)
    assert "| 99.9%" in line and "100%" not in line


def test_scale_agreement_files_neutralise_and_escape_names(tmp_path: Path) -> None:
    """Issue 48.9: scale_agreement.csv kept judge, rater and spec names raw (a formula in a
    spreadsheet), and a '|' in a name split scale_agreement.md's table."""
    from inspect_empathy.cli.published import ScaleSection, _cell

    hostile = ['=HYPERLINK("http://x")', "@SUM(1)", "-2+3+cmd", "a|b"]
    frame = pd.DataFrame({"spec": hostile, "a": hostile, "b": hostile[::-1],
                          "n": [3] * 4, "kappa": [0.5] * 4, "p": [0.1] * 4})  # fmt: skip
    text = "| a | b |\n|---|---|\n" + "\n".join(f"| {_cell(x)} | {_cell(x)} |" for x in hostile)
    ScaleSection(text, [frame]).write(tmp_path)
    written = pd.read_csv(tmp_path / "scale_agreement.csv", dtype=str, keep_default_na=False)
    for column in ("spec", "a", "b"):
        assert all(c.startswith("'") or c == "a|b" for c in written[column])
    rows = (tmp_path / "scale_agreement.md").read_text(encoding="utf-8").splitlines()[2:]
    assert all(len(row.replace("\\|", "").split("|")) == 4 for row in rows)


def test_bad_cells_as_published_keeps_the_authors_arithmetic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """MentalAlign's authors averaged all-zero placeholders and a 6 into their per-model
    means: ``bad_cells: as_published`` reproduces those means, counting the cells in the
    notes; ``missing`` leaves them out (another mean), and a load for inspect eval refuses
    it."""
    from inspect_empathy.cli import main
    from inspect_empathy.compare.published import load_published
    from inspect_empathy.compare.responders import people_means, published_responders
    from inspect_empathy.dataset.loaders.raters import read_rated
    from inspect_empathy.errors import DatasetError

    (tmp_path / "r1.csv").write_text("ctx,a,b\nc1,4,0\nc2,5,2\nc3,6,3\n", encoding="utf-8")
    (tmp_path / "r2.csv").write_text("ctx,a,b\nc1,4,0\nc2,3,2\nc3,5,3\n", encoding="utf-8")
    spec = tmp_path / "ma.yaml"
    base = ("format: raters\npath: .\nid: ctx\nresponders: [a, b]\nscale: [1, 5]\n"
            "rater_aggregate: mean\nraters: {r1: r1.csv, r2: r2.csv}\n")  # fmt: skip
    spec.write_text(base + "bad_cells: as_published\n", encoding="utf-8")
    pub = load_published(spec)
    means = people_means(published_responders(pub), resamples=0).set_index("responder")
    assert means.loc["a", "mean_human"] == pytest.approx((4 + 5 + 6 + 4 + 3 + 5) / 6)
    assert means.loc["b", "mean_human"] == pytest.approx((0 + 2 + 3 + 0 + 2 + 3) / 6)
    notes = pub.table.notes()
    assert any("3 rater cell(s) outside the scale 1-5 kept at their published values "
               "(bad_cells: as_published: 2 at 0, 1 at 6)" in n for n in notes)  # fmt: skip
    assert not any(n.startswith("bad cell:") for n in notes)

    spec.write_text(base + "bad_cells: missing\n", encoding="utf-8")
    missing = people_means(published_responders(load_published(spec)), resamples=0)
    assert missing.set_index("responder").loc["b", "mean_human"] == pytest.approx(2.5)

    spec.write_text(base + "bad_cells: as_published\n", encoding="utf-8")
    assert main(["compare", "--published", str(spec), "--resamples", "0"]) == 0
    out = capsys.readouterr().out
    assert "kept at their published values" in out and "| b | 3 | 3 | 1.667 |" in out
    (tmp_path / "d.csv").write_text("ctx,prompt,a reply,b reply\nc1,x,y,z\nc2,x,y,z\n"
                                    "c3,x,y,z\n", encoding="utf-8")  # fmt: skip
    with pytest.raises(DatasetError, match="as_published .* use bad_cells: missing"):
        read_rated(tmp_path, {"id": "ctx", "responders": ["a", "b"], "scale": [1, 5],
                              "bad_cells": "as_published", "raters": {"r1": "r1.csv"},
                              "dialogs": {"file": "d.csv", "context": "prompt",
                                          "response": "{responder} reply"}})  # fmt: skip
