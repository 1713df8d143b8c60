"""Logs that must not become a number (issue 25 items 1, 5, 9, 10): logs that disagree
on the human ratings, a sample repeated within an epoch, values off the 1-5 scale,
unfinished runs. Each is refused or set apart with a message naming the log and
the samples."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log, write_eval_log
from synthetic_logs import HUMAN, sample, samples, write_log

from inspect_empathy.cli import main
from inspect_empathy.compare import CompareError, compare_logs
from inspect_empathy.compare.fit import CalibrateError, calibrate_logs

GOOD = (4.8, 1.2, 3.9, 2.2, 3.1, 4.5)
OTHER = (3.0, 2.0, 4.0, 3.0, 3.0, 4.0)


def _good(folder: Path) -> Path:
    return write_log(folder / "a.eval", "judge/a", samples(GOOD))


def _one_line_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


# --- item 1: logs that disagree on the human ratings -------------------------------------------


def test_logs_that_disagree_on_human_ratings_are_refused(tmp_path: Path) -> None:
    _good(tmp_path)
    corrected = [6 - h for h in HUMAN[:2]] + list(HUMAN[2:])
    write_log(tmp_path / "b.eval", "judge/b", samples(OTHER, corrected))
    with pytest.raises(CompareError) as raised:
        compare_logs(tmp_path, resamples=0)
    message = str(raised.value)
    assert "disagree on the human rating of 2 dialog(s)" in message
    assert "'d1': 5 in a.eval vs 1 in b.eval" in message
    assert "'d2': 1 in a.eval vs 5 in b.eval" in message and "'d3'" not in message


def test_a_rating_missing_in_one_log_is_a_disagreement_too(tmp_path: Path) -> None:
    _good(tmp_path)
    write_log(tmp_path / "b.eval", "judge/b", samples(OTHER, [None, *HUMAN[1:]]))
    with pytest.raises(CompareError, match="'d1': 5 in a.eval vs none in b.eval"):
        compare_logs(tmp_path, resamples=0)


# --- item 5: a sample id repeated within one epoch ----------------------------------------------


def test_a_sample_repeated_within_an_epoch_is_set_apart_and_named(tmp_path: Path) -> None:
    good = _good(tmp_path)
    rows = samples(OTHER)
    rows.append(sample("d1", 1.0, HUMAN[0]))  # the same dialog again, another score
    # a JSON log keeps both (an .eval log keeps the last sample of an id and epoch)
    bad = write_log(tmp_path / "b.json", "judge/b", rows)
    comparison = compare_logs([good, bad], resamples=0)
    assert comparison.judge_names == ["judge/a"]
    [warning] = [w for w in comparison.warnings if "b.json" in w]
    assert (
        f"{bad}: skipped (sample id 'd1' appears 2 times in epoch 1 with different scores (3, 1)"
        in warning
    )
    with pytest.raises(CalibrateError, match="b.json: cannot calibrate on it .*'d1' appears 2"):
        calibrate_logs([bad])


def test_the_same_id_in_two_epochs_is_still_averaged(tmp_path: Path) -> None:
    rows = samples(GOOD) + [sample("d1", 4.0, HUMAN[0], epoch=2)]
    log = write_log(tmp_path / "a.eval", "judge/a", rows)
    two = read_eval_log(str(log))  # a run of two epochs (one beyond the run's is refused:
    two.eval.config.epochs = 2  # tests/compare/test_checks.py)
    write_eval_log(two, str(log))
    comparison = compare_logs(tmp_path, resamples=0)
    d1 = comparison.samples.set_index("id").loc["d1"]
    assert d1["score"] == pytest.approx(4.4) and d1["epochs"] == 2


# --- item 9: tampered values -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "human", "what"),
    [(99.0, HUMAN[0], "judge score 99 (judge/b)"), (-3.0, HUMAN[0], "judge score -3 (judge/b)"),
     (math.inf, HUMAN[0], "judge score inf (judge/b)"), (4.0, 99.0, "human rating 99")],
)  # fmt: skip
def test_a_score_or_rating_off_the_scale_is_named_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], score: float, human: float, what: str
) -> None:
    _good(tmp_path)
    rows = samples(OTHER)
    rows[0] = sample("d1", score, human)
    bad = write_log(tmp_path / "b.eval", "judge/b", rows)
    expected = f"sample 'd1' (epoch 1): {what} is outside 1-5"
    comparison = compare_logs(tmp_path, resamples=0)
    assert comparison.judge_names == ["judge/a"]
    assert any(w.startswith(f"{bad}: skipped (") and expected in w for w in comparison.warnings)
    err = _one_line_error(capsys, "compare", str(bad), "--quiet")
    assert str(bad) in err and expected in err
    out = str(tmp_path / "c.json")
    err = _one_line_error(capsys, "calibrate", str(bad), "--out", out)
    assert f"{bad}: cannot calibrate on it (" in err and expected in err


def test_out_that_is_a_file_or_not_writable_fails_before_the_comparison(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import inspect_empathy.compare as compare
    from inspect_empathy.compare import fit, folder

    log = _good(tmp_path / "logs")

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the logs were read before --out was checked")

    monkeypatch.setattr(compare, "compare_logs", never)
    monkeypatch.setattr(fit, "read_logs", never)
    a_file = tmp_path / "report.txt"
    a_file.write_text("not a folder")
    err = _one_line_error(capsys, "compare", str(log), "--out", str(a_file))
    assert f"--out {a_file} is a file, not a folder" in err
    err = _one_line_error(capsys, "calibrate", str(log), "--out", str(tmp_path))
    assert "is a folder" in err

    def read_only(*args: object, **kwargs: object) -> str:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(folder.tempfile, "mkdtemp", read_only)
    err = _one_line_error(capsys, "compare", str(log), "--out", str(tmp_path / "new" / "r"))
    assert f"cannot write the report to {tmp_path / 'new' / 'r'}: Read-only file system" in err
    err = _one_line_error(capsys, "calibrate", str(log), "--out", str(tmp_path / "c.json"))
    assert "cannot write the calibration file" in err and "Read-only file system" in err
    assert not (tmp_path / "new").exists()


# --- item 10: unfinished logs ------------------------------------------------------------------


@pytest.mark.parametrize("status", ["started", "cancelled", "error"])
def test_an_unfinished_log_is_set_apart_with_its_status_and_how_to_resume(
    tmp_path: Path, status: str
) -> None:
    _good(tmp_path)
    ids = [f"d{i}" for i in range(1, 7)]
    bad = write_log(
        tmp_path / "b.eval", "judge/b", samples(OTHER[:3], HUMAN[:3]), status, expected=ids
    )
    comparison = compare_logs(tmp_path, resamples=0)
    assert comparison.judge_names == ["judge/a"]
    row = comparison.logs.set_index("log").loc[str(bad)]
    assert row["status"] == status and row["samples"] == 3 and row["judges"] == "judge/b"
    assert row["set_apart"].startswith(f"unfinished: status {status} (")
    assert f"3 of 6 samples; resume it with `inspect eval-retry {bad}`" in row["set_apart"]
    assert "other dialogs" not in row["set_apart"]
    assert any(w.startswith(f"{bad}: set apart") and "eval-retry" in w for w in comparison.warnings)
    with pytest.raises(CalibrateError, match=f"unfinished: status {status}"):
        calibrate_logs([bad])


def test_only_unfinished_logs_is_an_error_that_says_how_to_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [f"d{i}" for i in range(1, 7)]
    started = write_log(
        tmp_path / "b.eval", "judge/b", samples(OTHER[:2], HUMAN[:2]), "started", expected=ids
    )
    empty = write_log(tmp_path / "c.eval", "judge/c", [], "cancelled", expected=ids)
    err = _one_line_error(capsys, "compare", str(tmp_path), "--quiet")
    assert f"{started}: unfinished: status started" in err
    assert f"inspect eval-retry {started}" in err
    assert f"{empty}: skipped (unfinished: status cancelled (cancelled), 0 of 6 samples" in err
    assert f"inspect eval-retry {empty}" in err


def test_an_error_status_log_with_every_sample_is_compared(tmp_path: Path) -> None:
    write_log(tmp_path / "a.eval", "judge/a", samples(GOOD), "error")
    comparison = compare_logs(tmp_path, resamples=0)
    assert comparison.judge_names == ["judge/a"]
    assert math.isfinite(comparison.judges.iloc[0]["spearman"])
