"""The comparison on the logs people have: coverage, errors, several judges, every log kind.

One fixture folder of real logs: two judges that agree exactly where both scored,
one of which refuses the dialogs it would get most wrong (lower coverage), a
judge whose API fails on four dialogs (errored samples), the offline lexicon
baseline, a response-mode log, a re-scored log and logs over a second dataset
with the same file name.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
from fixture_logs import (
    JUDGES_JSONL,
    LENGTH,
    LEXICON,
    RESPONSE_JSONL,
    judge,
    records,
    reply,
    rescore,
    respond,
    write_jsonl,
)

from inspect_empathy.compare import compare_logs, load_scores, write_report

FULL = "cmpfix/full"
PARTIAL = "cmpfix/partial"
FLAKY = "cmpfix/flaky"
REFUSED = 8
FAILED = 4


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("kinds")
    rows = records()
    full = judge(root / "judges", JUDGES_JSONL, FULL)
    # the partial judge refuses the dialogs the full judge scores furthest from the humans
    error = {
        s.id: abs(float(s.scores["empathy_scorer"].value) - s.metadata["human_rating"])
        for s in full.samples or []
    }
    hardest = sorted(error, key=lambda i: -error[i])[:REFUSED]
    hard = [reply(r) for r in rows if r["id"] in hardest]
    judge(root / "judges", JUDGES_JSONL, PARTIAL, refuse=hard)
    flaky = [reply(r) for r in rows[:FAILED]]
    judge(root / "more", JUDGES_JSONL, FLAKY, fail=flaky)
    judge(root / "baseline", JUDGES_JSONL, LEXICON)
    response = respond(root / "response", "empathy_baseline/length", LEXICON)
    rescore(response, LENGTH, root / "rescored" / "rescored.eval")
    respond(root / "response2", LEXICON, LEXICON)
    # same file name, other dialogs (every reply changed) / same dialogs (a copy)
    other = [
        r | {"turns": [*r["turns"][:-1], {"role": "assistant", "content": f"Okay {i}."}]}
        for i, r in enumerate(rows)
    ]
    judge(root / "a", write_jsonl(root / "data_a" / "judges.jsonl", other), FULL)
    copy = root / "data_b" / "judges.jsonl"
    copy.parent.mkdir()
    shutil.copy(JUDGES_JSONL, copy)
    judge(root / "b", copy, LEXICON)
    return {
        "root": root,
        "judges": root / "judges",
        "more": root / "more",
        "baseline": root / "baseline",
        "response": root / "response",
        "rescored": root / "rescored",
        "response2": root / "response2",
        "a": root / "a",
        "b": root / "b",
        "hardest": hardest,  # type: ignore[dict-item]
    }


# --- issue 12.1: rank on the common set ------------------------------------------------------


@pytest.mark.slow
def test_a_judge_that_refuses_hard_dialogs_does_not_top_the_table(logs: dict[str, Path]) -> None:
    comparison = compare_logs(logs["judges"], resamples=300)
    table = comparison.judges.set_index("judge")
    # on its own scored subset the refusing judge looks better ...
    assert table.loc[PARTIAL, "spearman_own"] > table.loc[FULL, "spearman_own"]
    # ... but both are ranked on the dialogs both scored, where they agree exactly
    assert comparison.common == 30 - REFUSED
    assert (table["n_common"] == 30 - REFUSED).all()
    assert table.loc[PARTIAL, "spearman"] == pytest.approx(table.loc[FULL, "spearman"])
    assert comparison.judge_names == [FULL, PARTIAL]  # tie: the better covered first
    assert table.loc[FULL, "coverage"] == 1.0
    assert table.loc[PARTIAL, "coverage"] == pytest.approx((30 - REFUSED) / 30)
    assert list(table["low_coverage"]) == [False, True]
    assert any(PARTIAL in w and "coverage 73%" in w for w in comparison.warnings)
    assert "Best agreement with humans: cmpfix/full" in " ".join(
        __import__("inspect_empathy.compare.report", fromlist=["headline"]).headline(comparison)
    )


# --- issue 12.2: errored is not unscored ------------------------------------------------------


def test_errored_and_unscored_are_separate_and_the_log_to_retry_is_named(
    logs: dict[str, Path],
) -> None:
    comparison = compare_logs([logs["judges"], logs["more"]], resamples=0)
    table = comparison.judges.set_index("judge")
    assert (table.loc[FLAKY, "errored"], table.loc[FLAKY, "unscored"]) == (FAILED, 0)
    assert (table.loc[PARTIAL, "errored"], table.loc[PARTIAL, "unscored"]) == (0, REFUSED)
    assert table.loc[FLAKY, "scored"] == 30 - FAILED
    # tokens per sample over the samples that completed (not diluted by the failed ones)
    samples = comparison.samples.set_index(["judge", "id"])
    completed = samples.loc[FLAKY].index[samples.loc[FLAKY, "status"] != "errored"]
    expected = samples.loc[FULL].loc[completed, "tokens"].mean()
    assert table.loc[FLAKY, "tokens_per_sample"] == pytest.approx(expected)
    [flaky_log] = list(logs["more"].glob("*.eval"))
    retry = [w for w in comparison.warnings if "inspect eval-retry" in w]
    assert len(retry) == 1 and str(flaky_log) in retry[0] and f"{FAILED} sample(s)" in retry[0]
    log_row = comparison.logs.set_index("judges").loc[FLAKY]
    assert log_row["errored"] == FAILED and log_row["status"] == "success"
    statuses = comparison.samples.groupby("judge")["status"].value_counts()
    assert statuses[(FLAKY, "errored")] == FAILED
    assert statuses[(PARTIAL, "unscored")] == REFUSED


# --- issue 12.3: several comparisons ----------------------------------------------------------


def test_holm_adjusted_p_and_pair_figures_stable_when_judges_are_added(
    logs: dict[str, Path],
) -> None:
    two = compare_logs(logs["judges"], resamples=400, seed=3).pairs
    three = compare_logs([logs["judges"], logs["baseline"]], resamples=400, seed=3).pairs
    assert len(two) == 1 and len(three) == 3
    columns = ["n_common", "n_human", "diff", "diff_low", "diff_high", "p_value"]
    before = two.set_index(["judge_a", "judge_b"]).loc[(FULL, PARTIAL), columns]
    after = three.set_index(["judge_a", "judge_b"]).loc[(FULL, PARTIAL), columns]
    pd.testing.assert_series_equal(before, after)
    tested = three.dropna(subset=["p_value"])
    assert (tested["p_holm"] >= tested["p_value"]).all()
    smallest = tested["p_value"].min()
    assert tested["p_holm"].min() == pytest.approx(min(1.0, len(tested) * smallest))
    assert list(tested["significant"]) == list(tested["p_holm"] < 0.05)


def test_per_emotion_spearman_has_a_ci(logs: dict[str, Path]) -> None:
    emotions = compare_logs(logs["judges"], resamples=300).emotions
    assert {"spearman_low", "spearman_high", "n_human"} <= set(emotions.columns)
    finite = emotions.dropna(subset=["spearman_low"])
    assert len(finite) >= 5
    assert (finite["spearman_low"] <= finite["spearman"] + 1e-9).all()
    assert (finite["spearman"] <= finite["spearman_high"] + 1e-9).all()


# --- issue 12.4: every log kind ---------------------------------------------------------------


def test_response_mode_logs_compare_graders(logs: dict[str, Path]) -> None:
    comparison = compare_logs(logs["response"], resamples=0)
    assert comparison.judge_names == [LEXICON]  # the grader, not the reply model
    assert not comparison.has_human
    log = comparison.logs.iloc[0]
    assert log["mode"] == "response" and log["reply_model"] == LENGTH


def test_response_mode_reply_models_side_by_side_never_joined(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    comparison = compare_logs([logs["response"], logs["response2"]], resamples=0)
    replies = comparison.replies
    assert replies is not None
    assert set(replies["reply_model"]) == {LENGTH, LEXICON}
    assert set(replies["grader"]) == {LEXICON} and (replies["dialogs"] == 6).all()
    # each reply model wrote its own replies: the logs are not joined dialog by dialog
    [apart] = [r for r in comparison.logs["set_apart"] if r]
    assert "other replies" in apart
    written = write_report(comparison, tmp_path, plots=False)
    assert "replies.csv" in written
    assert "Chatbots (reply models, response mode)" in written["report.md"].read_text()


def test_rescored_log_is_attributed_to_the_grader_in_the_scores(logs: dict[str, Path]) -> None:
    # the header still binds the grader role to the lexicon judge; the scores say length
    comparison = compare_logs(logs["rescored"], resamples=0)
    assert comparison.judge_names == [LENGTH]
    # the re-scored log grades the same replies as the original: its grader is compared
    both = compare_logs([logs["response"], logs["rescored"]], resamples=0)
    assert sorted(both.judge_names) == [LENGTH, LEXICON]
    assert both.pairs.iloc[0]["n_common"] == 6


def test_logs_of_other_dialogs_are_set_apart_not_merged(logs: dict[str, Path]) -> None:
    comparison = compare_logs(
        [logs["judges"], logs["a"], logs["b"], logs["response"]], resamples=0
    )
    frame = comparison.logs
    compared = frame[frame["set_apart"] == ""]
    apart = frame[frame["set_apart"] != ""].set_index("judges")
    # a/judges.jsonl: same file name and ids, other replies: set apart, with the reason
    [other_dialogs] = [w for w in apart["set_apart"] if "other dialogs" in w]
    assert "judges" in other_dialogs
    assert any("response-mode" in w for w in apart["set_apart"])
    # b/judges.jsonl: a copy of the compared file elsewhere: same content, compared
    assert LEXICON in set(compared["judges"])
    assert len(set(compared["fingerprint"])) == 1
    assert set(comparison.samples["judge"]) == {FULL, PARTIAL, LEXICON}
    assert comparison.samples.groupby("judge").size().eq(30).all()
    assert sum("set apart" in w for w in comparison.warnings) == 2
    # the other dataset can be chosen explicitly
    [other_fp] = frame.loc[frame["set_apart"].str.contains("other dialogs"), "fingerprint"]
    chosen = compare_logs([logs["judges"], logs["a"]], resamples=0, dataset=other_fp[:6])
    assert chosen.judge_names == [FULL]
    assert set(chosen.samples["dataset"]) == {"judges"}


def test_every_input_kind_of_log_shares_the_dataset(logs: dict[str, Path]) -> None:
    """``-T input=prompt`` and ``dialog`` logs match the default (``conversation``) log's
    dialogs: same fingerprint, same canonical dialog and rated reply per sample."""
    from inspect_ai import eval

    from inspect_empathy.tasks import empathy

    found = {"conversation": load_scores(logs["baseline"])}
    for kind in ("prompt", "dialog"):
        root = logs["root"] / kind
        eval(
            empathy(dataset=str(JUDGES_JSONL), input=kind), model=LENGTH, log_dir=str(root),
            display="none",
        )  # fmt: skip
        found[kind] = load_scores(root)
    prints = {kind: scores.logs.iloc[0]["fingerprint"] for kind, scores in found.items()}
    assert len(set(prints.values())) == 1, prints
    texts = {
        kind: scores.samples.set_index("id")[["dialog", "reply"]].sort_index()
        for kind, scores in found.items()
    }
    assert texts["conversation"]["dialog"].str.startswith("user: ").all()
    assert texts["conversation"]["reply"].notna().all()
    for kind in ("prompt", "dialog"):
        assert texts[kind].equals(texts["conversation"]), kind


# --- issue 12.5: baselines are floors ---------------------------------------------------------


def test_baselines_are_floors_not_best(logs: dict[str, Path], tmp_path: Path) -> None:
    comparison = compare_logs([logs["judges"], logs["baseline"]], resamples=200)
    table = comparison.judges.set_index("judge")
    assert bool(table.loc[LEXICON, "baseline"]) and not table.loc[FULL, "baseline"]
    written = write_report(comparison, tmp_path, plots=False)
    html = written["report.html"].read_text().replace("<wbr>", "")
    assert f"Best agreement with humans: {FULL}" in html
    assert f"Best agreement with humans: {LEXICON}" not in html
    assert f"Floor: {LEXICON} is an offline baseline" in html
    assert f"{LEXICON} [floor]" in html


# --- issue 14.9 / 14.10: bad logs, hostile text -----------------------------------------------


def test_bad_logs_are_skipped_with_a_warning_naming_them(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    folder = tmp_path / "logs"
    shutil.copytree(logs["judges"], folder)
    good = sorted(folder.glob("*.eval"))[0]
    truncated = folder / "2026-01-01T00-00-00-00-00_empathy_truncated.eval"
    truncated.write_bytes(good.read_bytes()[:300])
    empty = folder / "2026-01-01T00-00-00-00-00_empathy_empty.eval"
    empty.write_bytes(b"")
    from inspect_ai.log import read_eval_log, write_eval_log

    no_samples = read_eval_log(str(good))
    no_samples.samples = []
    no_samples.eval.task_id = "no-samples"
    write_eval_log(no_samples, str(folder / "2026-01-01T00-00-00-00-00_empathy_nosamples.eval"))

    comparison = compare_logs(folder, resamples=0)
    assert comparison.judge_names == [FULL, PARTIAL]
    for name in ("truncated", "empty", "nosamples"):
        [warning] = [w for w in comparison.warnings if f"empathy_{name}.eval" in w]
        assert "skipped" in warning
    written = write_report(comparison, tmp_path / "report")
    assert "empathy_truncated.eval" in written["report.html"].read_text().replace("<wbr>", "")


def test_hostile_labels_and_ids_are_escaped_in_every_output(tmp_path: Path) -> None:
    rows = records()
    emotions = [r"$\foo$", "<script>alert(1)</script>", "*bold* [x](javascript:y)"]
    for i, row in enumerate(rows):
        row["metadata"]["emotion"] = emotions[i % 3]
        if i == 0:
            row["id"] = '=HYPERLINK("http://evil","x")'
        if i == 1:
            row["id"] = "@SUM(A1)"
    data = write_jsonl(tmp_path / "hostile.jsonl", rows)
    judge(tmp_path / "logs", data, FULL)
    judge(tmp_path / "logs", data, LEXICON)
    comparison = compare_logs(tmp_path / "logs", resamples=100)
    written = write_report(comparison, tmp_path / "report")
    # mathtext in a label does not kill the plots: every plot is there, none left out
    assert "emotions.png" in written and "heatmap.png" in written
    assert not [w for w in comparison.warnings if "plot" in w]
    markdown = written["report.md"].read_text() + written["emotions.md"].read_text()
    assert "<script>" not in markdown and "&lt;script&gt;" in markdown
    assert "[x](javascript" not in markdown
    assert r"\$\\foo\$" in markdown  # no Markdown math either
    assert "<script>" not in written["report.html"].read_text()
    samples = pd.read_csv(written["samples.csv"], dtype=str, keep_default_na=False)
    ids = set(samples["id"])
    assert """'=HYPERLINK("http://evil","x")""" in ids and "'@SUM(A1)" in ids
    for name in written:
        if name.endswith(".csv"):
            text = pd.read_csv(written[name], dtype=str, keep_default_na=False)
            cells = [c for column in text.columns for c in text[column]]
            assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")], name
            assert not [c for c in cells if c.startswith("-") and not _number(c)], name
    summary = json.loads(written["summary.json"].read_text())
    assert summary["dataset"].startswith("hostile@")


def _number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def test_json_format_logs_are_read_like_eval_logs(logs: dict[str, Path], tmp_path: Path) -> None:
    from inspect_ai import eval

    from inspect_empathy.tasks import empathy

    eval(
        empathy(dataset=str(JUDGES_JSONL)), model=LEXICON, log_dir=str(tmp_path),
        log_format="json", display="none",
    )  # fmt: skip
    json_rows = load_scores(tmp_path).samples.set_index("id")
    eval_rows = load_scores(logs["baseline"]).samples.set_index("id")
    assert len(json_rows) == 30
    pd.testing.assert_series_equal(json_rows["score"], eval_rows.loc[json_rows.index, "score"])


def _long_dialogs(path: Path) -> list[dict[str, object]]:
    """Dialogs longer than the 5,120 characters of input (and the 1,024 of each metadata
    string) that Inspect keeps in a sample's summary, each ending on a distinct reply."""
    rows = []
    for i in range(3):
        story = " ".join(f"Day {d}: I keep thinking about what happened ({i})." for d in range(120))
        rows.append(
            {
                "id": f"long-{i}",
                "turns": [
                    {"role": "user", "content": story},
                    {"role": "assistant", "content": "That sounds exhausting. What helps?"},
                    {"role": "user", "content": story[::-1]},
                    {"role": "assistant", "content": f"I hear you; carrying this is heavy ({i})."},
                ],
                "rating": 4,
            }
        )
    write_jsonl(path, rows)
    return rows


def test_long_dialogs_keep_their_reply_and_fingerprint(tmp_path: Path) -> None:
    """Past the summary's limits, every input kind still gives the exact rated reply and
    one fingerprint: compare reads the whole sample, not Inspect's thinned summary."""
    from inspect_ai import eval

    from inspect_empathy.tasks import empathy

    rows = _long_dialogs(tmp_path / "long.jsonl")
    assert all(len(json.dumps(r)) > 6000 for r in rows)
    found = {}
    for kind in ("conversation", "prompt", "dialog"):
        eval(
            empathy(dataset=str(tmp_path / "long.jsonl"), input=kind), model=LENGTH,
            log_dir=str(tmp_path / kind), display="none",
        )  # fmt: skip
        found[kind] = load_scores(tmp_path / kind)
    prints = {kind: scores.logs.iloc[0]["fingerprint"] for kind, scores in found.items()}
    assert len(set(prints.values())) == 1, prints
    for kind, scores in found.items():
        got = scores.samples.set_index("id")["reply"].to_dict()
        assert got == {r["id"]: r["turns"][-1]["content"] for r in rows}, kind


def test_response_logs_carry_the_graded_reply(tmp_path: Path) -> None:
    """A response-mode row's reply is the reply the model wrote and the grader rated
    (Inspect's summary collapses and cuts the Score's ``judged_dialog``; compare must not
    read the reply from there). A ``.json`` log: read through Inspect, not as a zip."""
    from inspect_ai import eval

    from inspect_empathy.tasks import empathy_response

    rows = _long_dialogs(tmp_path / "long.jsonl")
    [log] = eval(
        empathy_response(dataset=str(tmp_path / "long.jsonl")), model=LEXICON,
        model_roles={"grader": LENGTH}, log_dir=str(tmp_path / "logs"), display="none",
        log_format="json",
    )  # fmt: skip
    assert log.status == "success"
    written = {str(s.id): s.output.completion for s in log.samples or []}
    assert all(len(text.split()) > 3 for text in written.values()), written
    samples = load_scores(tmp_path / "logs").samples.set_index("id")
    assert samples["reply"].to_dict() == {i: " ".join(t.split()) for i, t in written.items()}
    assert samples["reply_words"].to_dict() == {i: len(t.split()) for i, t in written.items()}
    assert len(samples) == len(rows)


@pytest.mark.slow
def test_metadata_past_the_summary_limit_is_read_whole(tmp_path: Path) -> None:
    """Inspect drops from a sample's summary any metadata value whose JSON passes 1,024
    characters: a four-judge panel's ``judges`` and a crowd's ``human_ratings``. compare
    still gets every panel member's row and every rater."""
    from inspect_ai import eval
    from inspect_ai.log import read_eval_log_sample_summaries

    from inspect_empathy.tasks import empathy, empathy_response

    panel = [LEXICON, LENGTH, "cmpfix/third", "cmpfix/fourth"]
    [log] = eval(
        empathy_response(dataset=str(RESPONSE_JSONL)), model=LEXICON,
        model_roles={"grader": panel}, log_dir=str(tmp_path / "panel"), display="none",
        limit=3,
    )  # fmt: skip
    [summary, *_] = read_eval_log_sample_summaries(log.location)
    assert "removed" in str(summary.scores["empathy_scorer"].metadata["judges"])  # Inspect's cut
    rows = load_scores(tmp_path / "panel").samples
    assert set(rows["judge"]) == {*panel, "panel(" + ", ".join(panel) + ")"}
    assert rows.groupby("judge").size().eq(3).all()
    members = rows[rows["method"] != "panel"]
    expected = {
        (str(s.id), name): j["value"]
        for s in log.samples or []
        for name, j in s.scores["empathy_scorer"].metadata["judges"].items()
    }
    keys = zip(members["id"], members["judge"], strict=True)
    assert dict(zip(keys, members["score"], strict=True)) == expected

    raters = [f"crowd_worker_{k:03d}" for k in range(60)]
    frame = pd.DataFrame(
        [{"id": f"d{i}", "transcript": f"User: I lost my job ({i}).\nBot: That is hard.",
          **{r: 1 + (i + k) % 5 for k, r in enumerate(raters)}} for i in range(4)]
    )  # fmt: skip
    frame.to_csv(tmp_path / "crowd.csv", index=False)
    (tmp_path / "crowd.yaml").write_text(f"path: crowd.csv\nratings: [{', '.join(raters)}]\n")
    [crowd] = eval(
        empathy(dataset=str(tmp_path / "crowd.yaml")), model=LENGTH,
        log_dir=str(tmp_path / "crowd"), display="none",
    )  # fmt: skip
    [summary, *_] = read_eval_log_sample_summaries(crowd.location)
    assert "removed" in str(summary.metadata["human_ratings"])  # Inspect's cut
    samples = load_scores(tmp_path / "crowd").samples.set_index("id")
    for i in range(4):
        expected_raters = {r: float(1 + (i + k) % 5) for k, r in enumerate(raters)}
        assert samples.loc[f"d{i}", "ratings"] == expected_raters
