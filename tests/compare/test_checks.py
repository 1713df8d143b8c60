"""A log that holds a sample more often than its run could (edited or merged) is named,
not averaged as epochs (`checks.repeated_ids`)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from synthetic_logs import sample, write_log

from inspect_empathy.compare import compare_logs
from inspect_empathy.compare.checks import LogProblem, repeated_ids
from inspect_empathy.compare.comparison import CompareError

REST = [sample("d2", 3.0, 4.0), sample("d3", 5.0, 5.0), sample("d4", 1.0, 1.0)]


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


def test_ids_that_read_alike_are_one_dialog() -> None:
    with pytest.raises(LogProblem, match="sample id '1' appears 2 times in epoch 1"):
        repeated_ids([(1, 1), ("1", 1)], 1, ["1", "1"], [2.0, 4.0])
    repeated_ids([(1, 1), ("2", 1), (1, 2)], 2, ["1", "2", "1"], [2.0, math.nan, 4.0])
