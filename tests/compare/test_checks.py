"""A sample recorded more than once in a log (`checks.one_record_each`): a re-run after an
attempt that did not finish counts its later record, copies of one result count once, and
records that differ (or a sample in an epoch its run did not have) are named, not averaged
as epochs."""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path
from typing import Any

import pytest
from synthetic_logs import sample, samples, write_log

from inspect_empathy.compare import compare_logs
from inspect_empathy.compare._logged import LoggedSample, LoggedScore
from inspect_empathy.compare.checks import LogProblem, one_record_each, record
from inspect_empathy.compare.comparison import CompareError
from inspect_empathy.compare.report import logs_display

REST = [sample("d2", 3.0, 4.0), sample("d3", 5.0, 5.0), sample("d4", 1.0, 1.0)]
SCORE = 3.874371859296482
NEXT = math.nextafter(SCORE, 5.0)
"""A logprob-weighted score, and the next float: two scores."""


@pytest.mark.slow
def test_a_sample_in_an_epoch_the_run_did_not_have_is_named(tmp_path: Path) -> None:
    """A one-epoch log holding d1 at epochs 1 and 2 (two runs merged into one file) was
    averaged as if the run had two epochs (d1 scored 3.0), without a word."""
    merged = [sample("d1", 2.0, 3.0), sample("d1", 4.0, 3.0, epoch=2), *REST]
    write_log(tmp_path / "logs" / "a.eval", "judge/a", merged)
    with pytest.raises(CompareError) as info:
        compare_logs([str(tmp_path / "logs")], resamples=0)
    message = str(info.value)
    assert "a.eval: skipped (sample id 'd1' appears in epoch(s) 1, 2 of a run of 1 epoch " in (
        message
    )
    assert "(scores 2, 4)" in message and "edited or merged" in message


def test_epochs_the_run_had_are_averaged_as_before(tmp_path: Path) -> None:
    log = write_log(tmp_path / "logs" / "a.eval", "judge/a", [
        sample("d1", 2.0, 3.0), sample("d1", 4.0, 3.0, epoch=2),
        *[sample(s.id, float(s.scores["empathy_scorer"].value), 4.0, epoch=e)  # type: ignore[arg-type,index]
          for s in REST for e in (1, 2)],
    ])  # fmt: skip
    from inspect_ai.log import read_eval_log, write_eval_log

    two = read_eval_log(str(log))
    two.eval.config.epochs = 2
    write_eval_log(two, str(log))
    samples = compare_logs([str(tmp_path / "logs")], resamples=0).samples
    assert float(samples.set_index("id").loc["d1", "score"]) == 3.0


# --- the rule, record by record ------------------------------------------------------------


def _logged(
    id: Any, value: Any = 4.0, epoch: int = 1, answer: Any = "4", error: str | None = None
) -> LoggedSample:
    """A record as the readers give it: scored, or an attempt that did not finish (``error``:
    what Inspect's recovery writes for a sample in flight at a kill is ``cancelled``)."""
    scores = {} if error else {"empathy_scorer": LoggedScore(value, answer, "why", {})}
    return LoggedSample(str(id), epoch, "USER: hi\nBOT: hello", {}, scores, {}, error, [])


def _kept(*logged: LoggedSample, epochs: int = 1) -> tuple[list[int], str]:
    records = [record(s) for s in logged]
    repeats = one_record_each(records, epochs)
    return [i for i in range(len(records)) if i not in repeats.drop], repeats.note()


def test_a_sample_re_run_after_an_attempt_that_did_not_finish_counts_its_later_record() -> None:
    # in flight at a kill (Inspect's recovery writes it cancelled), re-run on resume; d2 twice,
    # its second re-run after an error too; in two epochs
    kept, note = _kept(
        _logged("d1", error="cancelled"), _logged("d2", error="cancelled"), _logged("d3"),
        _logged("d2", error="HTTP 500"), _logged("d1"), _logged("d2", 3.0),
        _logged("d1", epoch=2, error="cancelled"), _logged("d1", 5.0, epoch=2),
        epochs=2,
    )  # fmt: skip
    assert kept == [2, 4, 5, 7]
    assert note.startswith("3 sample(s) re-run after an attempt that did not finish")


def test_records_of_one_result_count_once_and_differing_ones_are_named() -> None:
    kept, note = _kept(_logged("d1"), _logged("d2"), _logged("d1"))
    assert kept == [1, 2]
    assert note.startswith("1 sample(s) recorded more than once with the same answer and score")
    assert _kept(_logged("d1", error="cancelled"))[0] == [0]  # an attempt alone: kept
    refused = [
        # another score; the score as stored (one float apart); another answer, same value
        ((_logged("d1", 1.0), _logged("d1", 5.0)), "(1, 5)"),
        ((_logged("d1", SCORE), _logged("d1", NEXT)),
         f"({SCORE!r} (answer '4'), {NEXT!r} (answer '4'))"),
        ((_logged("d1", 4.0, answer="4"), _logged("d1", 4.0, answer="5")),
         "(4.0 (answer '4'), 4.0 (answer '5'))"),
        # a result, then a failed attempt after it: not a re-run Inspect writes
        ((_logged("d1", 2.0), _logged("d1", error="cancelled")), "(2, none (error: cancelled))"),
    ]  # fmt: skip
    for logged, scores in refused:
        with pytest.raises(LogProblem) as info:
            _kept(*logged)
        assert f"sample id 'd1' appears 2 times in epoch 1 with different scores {scores}" in (
            str(info.value)
        )


def test_ids_that_read_alike_are_one_dialog() -> None:
    with pytest.raises(LogProblem, match="sample id '1' appears 2 times in epoch 1 with diff"):
        _kept(_logged(1, 2.0), _logged("1", 4.0))
    assert _kept(_logged(1), _logged("2"), _logged(1, math.nan, epoch=2), epochs=2)[0] == [0, 1, 2]
    assert _kept(_logged(1), _logged("1"))[0] == [1]


# --- in a log --------------------------------------------------------------------------------


def test_the_logs_section_says_what_a_log_held_twice(tmp_path: Path) -> None:
    """An ``.eval`` log holding d1's cancelled attempt before its result under one member name
    (as a resumed eval set writes it), and a ``.json`` log holding d2's result twice."""
    rows = samples((4.8, 1.2, 3.9, 2.2, 3.1, 4.5))
    resumed = write_log(tmp_path / "a.eval", "judge/a", rows)
    with zipfile.ZipFile(resumed) as archive:
        result = archive.read("samples/d1_epoch_1.json")
    error = {"message": "cancelled", "traceback": "", "traceback_ansi": ""}
    attempt = json.loads(result) | {"scores": {}, "error": error}
    _rewrite(resumed, [("samples/d1_epoch_1.json", json.dumps(attempt).encode()),
                       ("samples/d1_epoch_1.json", result)])  # fmt: skip
    copied = write_log(tmp_path / "b.json", "judge/b", samples((3, 1, 4, 3, 3, 4)))
    data = json.loads(copied.read_text())
    data["samples"].append(data["samples"][1])
    copied.write_text(json.dumps(data))

    comparison = compare_logs([resumed, copied], resamples=0)
    assert sorted(comparison.judge_names) == ["judge/a", "judge/b"]
    assert len(comparison.samples) == 12
    notes = dict(zip(comparison.logs["log"], comparison.logs["records"], strict=True))
    assert notes[str(resumed)].startswith("1 sample(s) re-run after an attempt that did not")
    assert notes[str(copied)].startswith("1 sample(s) recorded more than once with the same")
    _, table = logs_display(comparison)
    compared = {row[-1]: row[-2] for row in table}
    assert compared[str(resumed)] == f"yes ({notes[str(resumed)]})"


def _rewrite(log: Path, members: list[tuple[str, bytes]]) -> None:
    """The log with ``members`` written in place of the ones of their names, in this order."""
    names = {name for name, _ in members}
    with zipfile.ZipFile(log) as archive:
        kept = [(i.filename, archive.read(i)) for i in archive.infolist()]
    kept = [(name, data) for name, data in kept if name not in names]
    with zipfile.ZipFile(log, "w") as archive, pytest.warns(UserWarning, match="Duplicate"):
        for name, data in [*kept, *members]:
            archive.writestr(name, data)
