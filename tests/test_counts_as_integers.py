"""Issue 49: counts are whole numbers. Inspect prints every metric with three decimals
(``n_human 135.000``), so the empathy scorer reports no count as a metric: the end-of-task
line gives them (scored, by method, with human ratings, conversations, epochs), as
integers, and the headline stays the first metric."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval, eval_retry
from inspect_ai.log import headline_metric
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi

from inspect_empathy import empathy
from inspect_empathy._util.summary import summary_lines

COUNTS = {
    "n_human", "scored", "by_logprobs", "by_parse", "by_samples", "by_panel", "fallback",
    "low_mass", "short_list", "partial", "conversations", "conv_rated", "conv_partial",
    "self_dialogs", "self_epochs",
}  # fmt: skip
JUDGE = "empathy_baseline/lexicon"
IEVAL = Path(__file__).parents[1] / "examples" / "ieval_data.json"


def test_no_count_is_a_metric_and_the_line_gives_them_whole(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="inspect_empathy"):
        [log] = eval(empathy(), model=JUDGE, limit=12, log_dir=str(tmp_path), display="none")
    assert log.status == "success" and log.results is not None
    [result] = log.results.scores
    assert list(result.metrics)[0] == "somers_d_all"  # the headline leads
    assert not COUNTS & set(result.metrics)
    said = "empathy_scorer (judge: empathy_baseline/lexicon): 12 of 12 samples scored " \
        "(logprobs 12), 12 with human ratings"  # fmt: skip
    assert summary_lines(log) == [said]
    # printed when the task ends, as information: nothing is amiss
    [record] = [r for r in caplog.records if "samples scored" in r.getMessage()]
    assert record.getMessage() == said and record.levelname == "INFO"


def test_conversations_and_epochs_are_counted_in_the_line(tmp_path: Path) -> None:
    [log] = eval(empathy(dataset=str(IEVAL), per_turn=True), model=JUDGE, limit=7, epochs=2,
                 log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "success" and log.results is not None
    headline = headline_metric(log)
    assert headline is not None and headline.name == "conv_spearman"  # rated per conversation
    assert not COUNTS & set(log.results.scores[0].metrics)
    [line] = summary_lines(log)
    assert line.endswith(": 7 of 7 samples scored (logprobs 7); 3 conversations (3 rated); "
                         "7 scored in two epochs or more; conv_partial 1")  # fmt: skip


class _Flaky(ModelAPI):
    """Answers "3"; while `BROKEN` holds, fails every other call."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **args: Any) -> None:  # noqa: B008
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001
        BROKEN["calls"] += 1
        if BROKEN["on"] and BROKEN["calls"] % 2:
            raise RuntimeError("judge unreachable")
        output = ModelOutput.from_content(self.model_name, "3")
        output.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)
        return output


BROKEN = {"on": True, "calls": 0}


@modelapi(name="countsflaky")
def _flaky() -> type[ModelAPI]:
    return _Flaky


def test_an_eval_retry_counts_the_samples_it_reused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The retried run's hooks see only the samples run again; the line counts the log's."""
    BROKEN.update(on=True, calls=0)
    [failed] = eval(empathy(), model="countsflaky/judge", limit=12, log_dir=str(tmp_path),
                    display="none", fail_on_error=False, max_connections=1)  # fmt: skip
    reused = sum(1 for s in failed.samples or [] if s.error is None)
    assert failed.status == "success" and 0 < reused < 12
    BROKEN["on"] = False
    with caplog.at_level(logging.INFO, logger="inspect_empathy"):
        caplog.clear()
        [log] = eval_retry(failed, log_dir=str(tmp_path), display="none")
    assert log.status == "success" and BROKEN["calls"] == 12 + (12 - reused)
    [record] = [r for r in caplog.records if "samples scored" in r.getMessage()]
    assert ": 12 of 12 samples scored (parse 12), 12 with human ratings" in record.getMessage()
