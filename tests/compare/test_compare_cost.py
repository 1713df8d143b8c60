"""What each judge spent per scored dialog (issue 29 item 4): calls and tokens in the
comparison and the end-of-run line, checked against a hand count over the logs read with
Inspect (``model_usage`` / ``role_usage`` per model, ``ModelEvent``s per call), and the
price file's errors."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

import pytest
from fixture_logs import JUDGES_JSONL, LENGTH, LEXICON, RESPONSE_JSONL
from inspect_ai import eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

from inspect_empathy._util.summary import cost_lines
from inspect_empathy.cli import main
from inspect_empathy.compare import CompareError, compare_logs
from inspect_empathy.judge.baseline import EmpathyBaselineAPI
from inspect_empathy.tasks import empathy, empathy_response

NO_N = "costfix/no-n"
THINKS = 3
"""Reasoning tokens the ``costfix`` judge reports on each answer."""


class RefusedN(Exception):
    """A provider's 400 for ``n`` > 1 (the plugin learns it and draws one answer a call)."""

    status_code = 400
    provider_message = "n must be 1 for this model"


class NamedLexicon(EmpathyBaselineAPI):
    """The lexicon baseline under the model name it is given (the services below)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008
        **model_args: Any,
    ) -> None:
        super().__init__("lexicon", base_url, api_key, config)
        self.model_name = model_name


@modelapi(name="costfix")
class NoChoicesAPI(NamedLexicon):
    """The lexicon baseline behind a service that refuses ``n`` and reasons a little."""

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:  # fmt: skip
        if (config.num_choices or 1) > 1:
            raise RefusedN("n must be 1 for this model")
        output = await super().generate(input, tools, tool_choice, config)
        assert output.usage is not None
        output.usage = ModelUsage(
            input_tokens=output.usage.input_tokens,
            output_tokens=output.usage.output_tokens + THINKS,
            total_tokens=output.usage.total_tokens + THINKS,
            reasoning_tokens=THINKS,
        )
        return output


def _eval(task: Any, log_dir: Path, model: str, **kwargs: Any) -> EvalLog:
    [log] = eval(task, model=model, log_dir=str(log_dir), log_format="eval", display="none",
                 **kwargs)  # fmt: skip
    assert log.status == "success"
    return read_eval_log(str(log.location))


def hand_count(log: EvalLog, model: str, role: str | None = None) -> dict[str, float]:
    """Per scored sample: the model's calls (ModelEvents that returned) and its usage
    (``role_usage[role]`` where given, else ``model_usage[model]``), over every sample."""
    calls = tokens_in = tokens_out = thinking = 0
    scored = 0
    for sample in log.samples or []:
        usage = (sample.role_usage if role else sample.model_usage).get(role or model)
        if usage is not None:
            tokens_in += usage.input_tokens
            tokens_out += usage.output_tokens
            thinking += usage.reasoning_tokens or 0
        calls += sum(
            1
            for e in sample.events
            if isinstance(e, ModelEvent) and e.model == model and e.error is None
            and (role is None or e.role == role)
        )  # fmt: skip
        scored += not math.isnan(float(sample.scores["empathy_scorer"].value))  # type: ignore[arg-type]
    return {
        "calls": calls / scored,
        "input": tokens_in / scored,
        "output": tokens_out / scored,
        "reasoning": thinking / scored,
        "scored": scored,
    }


@pytest.fixture(scope="module")
def judge_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("cost")
    logs = root / "judges"
    drawn = _eval(empathy(dataset=str(JUDGES_JSONL), method="samples"), logs, NO_N)
    lexicon = _eval(empathy(dataset=str(JUDGES_JSONL)), logs, LEXICON)
    return {"root": root, "logs": logs, "drawn": drawn, "lexicon": lexicon}


def test_judge_mode_calls_and_tokens_per_scored_dialog(judge_logs: dict[str, Any]) -> None:
    drawn: EvalLog = judge_logs["drawn"]
    # the refusal made one failed call (not billed, not counted); then single calls
    refused = [e for s in drawn.samples or [] for e in s.events
               if isinstance(e, ModelEvent) and e.error is not None]  # fmt: skip
    assert refused
    table = compare_logs(judge_logs["logs"], resamples=0).judges.set_index("judge")
    for log, judge in ((drawn, NO_N), (judge_logs["lexicon"], LEXICON)):
        expected = hand_count(log, judge)
        row = table.loc[judge]
        assert row["scored"] == expected["scored"] == 30
        assert row["calls_per_dialog"] == pytest.approx(expected["calls"])
        assert row["input_tokens_per_dialog"] == pytest.approx(expected["input"])
        assert row["output_tokens_per_dialog"] == pytest.approx(expected["output"])
        assert row["reasoning_tokens_per_dialog"] == pytest.approx(expected["reasoning"])
    # sequential sampling drew several single calls per dialog; the logprobs judge one
    assert table.loc[NO_N, "calls_per_dialog"] > 3
    assert table.loc[NO_N, "reasoning_tokens_per_dialog"] == pytest.approx(
        THINKS * table.loc[NO_N, "calls_per_dialog"]
    )
    assert table.loc[LEXICON, "calls_per_dialog"] == 1
    assert table.loc[LEXICON, "reasoning_tokens_per_dialog"] == 0
    # the calls the sequential draw recorded on each answer agree with the events
    recorded = sum(
        (s.output.metadata or {})["empathy_sampling"]["calls"] for s in drawn.samples or []
    )
    assert table.loc[NO_N, "calls_per_dialog"] == pytest.approx(recorded / 30)


def test_response_mode_counts_the_grader_never_the_reply_model(tmp_path: Path) -> None:
    task = empathy_response(dataset=str(RESPONSE_JSONL))
    other = _eval(task, tmp_path / "other", LENGTH, model_roles={"grader": LEXICON})
    self_graded = _eval(task, tmp_path / "self", LEXICON, model_roles={"grader": LEXICON})
    for log, folder, role in ((other, "other", None), (self_graded, "self", "grader")):
        [row] = compare_logs(tmp_path / folder, resamples=0).judges.to_dict("records")
        expected = hand_count(log, LEXICON, role)
        assert row["judge"] == LEXICON
        assert row["calls_per_dialog"] == pytest.approx(expected["calls"]) == 1
        assert row["input_tokens_per_dialog"] == pytest.approx(expected["input"])
        assert row["output_tokens_per_dialog"] == pytest.approx(expected["output"])
    # self-grading: the model's usage holds its replies too; the grader's share is less
    sample = (self_graded.samples or [])[0]
    assert sample.model_usage[LEXICON].input_tokens > sample.role_usage["grader"].input_tokens


# --- prices -----------------------------------------------------------------------------


def test_cost_per_scored_dialog_from_a_price_file(judge_logs: dict[str, Any]) -> None:
    prices = judge_logs["root"] / "prices.json"
    prices.write_text(json.dumps({NO_N: {"input": 2.5, "output": 10, "reasoning": 40}}))
    table = compare_logs(judge_logs["logs"], resamples=0, prices=prices).judges
    row = table.set_index("judge").loc[NO_N]
    used = hand_count(judge_logs["drawn"], NO_N)
    by_hand = (
        used["input"] * 2.5 + (used["output"] - used["reasoning"]) * 10 + used["reasoning"] * 40
    ) / 1e6
    assert row["cost_per_dialog"] == pytest.approx(by_hand)
    assert table.set_index("judge").loc[LEXICON, "cost_per_dialog"] == 0  # a free baseline
    columns = list(table.columns)  # beside Spearman
    assert columns.index("calls_per_dialog") == columns.index("spearman_high") + 1
    assert columns.index("cost_per_dialog") == columns.index("reasoning_tokens_per_dialog") + 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (f"{NO_N}: {{input: 1, output: 2, cached: 0.5}}", f"{NO_N}: unknown key 'cached'"),
        (f"{NO_N}: {{input: -1, output: 2}}", "input must be a number >= 0"),
        (f"{NO_N}: {{input: 1}}", f"{NO_N}: no output price"),
        (f"{NO_N}: {{input: true, output: 2}}", "input must be a number >= 0"),
        ("- just a list", "maps each judge model to its price"),
        (f"{NO_N}: {{input: [1, output: 2}}", "bad YAML"),
        (f"{NO_N}: 3", "a price is a mapping of input, output, input_cache_read"),
        (
            f"{NO_N}: {{input: 1, output: 2, cache_read: 0.5}}",
            "'cache_read' is 'input_cache_read' in Inspect's --model-cost-config format",
        ),
        (
            f"{NO_N}: {{input: 1, output: 2}}\n{NO_N}: {{input: 100, output: 200}}",
            f"key '{NO_N}' given twice (line 1 and line 2)",
        ),
        (f"{NO_N}: {{input: 1, output: 2, input: 3}}", "key 'input' given twice"),
        # issue 48.10: an alias bomb nested in a value ended in MemoryError
        (f"a: &a [x, x]\nb: &b [*a, *a]\n{NO_N}: {{input: *b, output: 2}}",
         "line 2: bad YAML: aliases (*name) are not allowed"),
        (f"{NO_N}: !!python/object:os.system {{input: 1}}", "bad YAML: tags"),
        ("someone/else: {input: 1, output: 2}", f"no price for {NO_N}"),
    ],
)
def test_price_file_errors_are_one_line_naming_the_file(
    judge_logs: dict[str, Any], content: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = judge_logs["root"] / "prices.yaml"
    path.write_text(content + "\n")
    with pytest.raises(CompareError) as raised:
        compare_logs(judge_logs["logs"], resamples=0, prices=path)
    text = str(raised.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text
    code = main(["compare", str(judge_logs["logs"]), "--quiet", "--resamples", "0",
                 "--prices", str(path)])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 1 and err == f"inspect-empathy compare: {text}"


def test_the_report_shows_cost_beside_spearman(
    judge_logs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    prices = judge_logs["root"] / "prices.yaml"
    prices.write_text(f"{NO_N}: {{input: 2.5, output: 10}}\n")
    out = judge_logs["root"] / "report"
    code = main(["compare", str(judge_logs["logs"]), "--resamples", "0", "--no-plots",
                 "--out", str(out), "--prices", str(prices)])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    for text in ((out / "report.md").read_text(), (out / "report.html").read_text()):
        header = next(line for line in text.splitlines() if "calls/ dialog" in line)
        headline = header.index("somers")
        assert headline < header.index("calls/ dialog") < header.index("cost/ dialog")
        assert "Cost per scored dialog" in text
    # the terminal's judges table: the cost beside the headline
    header = next(line for line in printed.splitlines() if "cost/dialog" in line)
    assert header.index("somers_d_all") < header.index("cost/dialog")
    assert "Spent per scored dialog:" in printed
    assert str(prices) in (out / "report.md").read_text().replace("\\", "")
    summary = json.loads((out / "summary.json").read_text())
    assert {j["judge"]: j["cost_per_dialog"] for j in summary["judges"]}[LEXICON] == 0


# --- the end-of-run line ---------------------------------------------------------------


def test_the_end_of_run_line_says_what_the_judge_spent(
    judge_logs: dict[str, Any], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    drawn = judge_logs["drawn"]
    used = hand_count(drawn, NO_N)
    [line] = cost_lines(drawn)

    def amount(value: float) -> str:
        return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"

    assert line == (
        f"judge {NO_N}: {amount(used['calls'])} calls, {used['input']:.0f} input, "
        f"{amount(used['output'])} output, {used['reasoning']:.0f} reasoning tokens per scored "
        "dialog (empathy_scorer, 30 scored)"
    )
    # printed by the hook at the end of the run, the grader's in response mode: labelled
    # INFO (information), shown at Inspect's default level
    with caplog.at_level(logging.WARNING, logger="inspect_empathy"):
        log = _eval(empathy_response(dataset=str(RESPONSE_JSONL)), tmp_path, LENGTH,
                    model_roles={"grader": LEXICON})  # fmt: skip
    grader = hand_count(log, LEXICON)
    expected = (
        f"grader {LEXICON}: 1 call, {grader['input']:.0f} input, "
        f"{amount(grader['output'])} output, 0 reasoning tokens per scored dialog"
    )
    [said] = [r for r in caplog.records if r.getMessage().startswith(expected)]
    assert said.levelname == "INFO" and said.levelno >= logging.WARNING
    # a per-turn run counts per scored turn
    [turns] = cost_lines(_eval(empathy(dataset=str(JUDGES_JSONL), per_turn=True),
                               tmp_path / "turns", LEXICON, limit=3))  # fmt: skip
    assert turns.startswith(f"judge {LEXICON}: 1 call, ") and "per scored turn (" in turns


# --- whose calls: seats of one model, scorings of one grader ------------------------------


def test_a_model_sitting_twice_on_a_panel_is_two_seats(tmp_path: Path) -> None:
    """Each seat (``name``, ``name#2``) gets its own calls (Inspect's ``collect()`` span of
    the member), not one both and the other none, and is priced as its model."""
    log = _eval(empathy_response(dataset=str(RESPONSE_JSONL)), tmp_path / "twice", LENGTH,
                model_roles={"grader": [NO_N, NO_N]})  # fmt: skip
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({NO_N: {"input": 2.5, "output": 10}}))
    table = compare_logs(tmp_path / "twice", resamples=0, prices=prices).judges.set_index("judge")
    both = hand_count(log, NO_N)  # the two seats' calls together: the panel's
    second, panel = f"{NO_N}#2", f"panel({NO_N}, {NO_N}#2)"
    assert table.loc[panel, "calls_per_dialog"] == pytest.approx(both["calls"]) == 2
    for seat in (NO_N, second):
        assert table.loc[seat, "calls_per_dialog"] == pytest.approx(both["calls"] / 2)
        assert table.loc[seat, "input_tokens_per_dialog"] == pytest.approx(both["input"] / 2)
        assert table.loc[seat, "cost_per_dialog"] == pytest.approx(
            table.loc[panel, "cost_per_dialog"] / 2
        )


def test_a_log_rescored_by_its_grader_holds_two_scorings_each_with_its_calls(
    tmp_path: Path,
) -> None:
    """Re-scoring with the same grader is a second judge (named with its scorer), not a
    second epoch, and each scoring counts only the calls made in its own scorer; a judge-mode
    log re-scored by its own judge model: the new scorer made no call and scored nothing."""
    from inspect_ai import score
    from inspect_ai.log import write_eval_log

    from inspect_empathy.scorer import empathy_scorer

    replies = _eval(empathy_response(dataset=str(RESPONSE_JSONL)), tmp_path / "response",
                    LENGTH, model_roles={"grader": LEXICON})  # fmt: skip
    write_eval_log(score(replies, empathy_scorer(model=LEXICON), action="append", display="none"))
    rescored = read_eval_log(str(replies.location))
    assert hand_count(rescored, LEXICON)["calls"] == 2  # two scorings, one call each
    table = compare_logs(tmp_path / "response", resamples=0).judges.set_index("judge")
    again = f"{LEXICON} (empathy_scorer1)"
    assert set(table.index) == {LEXICON, again}
    for judge in (LEXICON, again):
        assert table.loc[judge, "calls_per_dialog"] == 1
        assert table.loc[judge, "scored"] == len(replies.samples or [])

    judged = _eval(empathy(dataset=str(RESPONSE_JSONL)), tmp_path / "judge", LEXICON)
    write_eval_log(score(judged, empathy_scorer(model=LEXICON), action="append", display="none"))
    judged_again = compare_logs(tmp_path / "judge", resamples=0)
    table = judged_again.judges.set_index("judge")
    assert f"{again} scored none of the 6 dialogs: no agreement" in " ".join(judged_again.warnings)
    assert table.loc[LEXICON, "calls_per_dialog"] == 1
    assert table.loc[again, "scored"] == 0 and math.isnan(table.loc[again, "spearman"])
    lines = cost_lines(read_eval_log(str(judged.location)))
    assert len(lines) == 1 and lines[0].startswith(f"judge {LEXICON}: 1 call,"), lines


@modelapi(name="cachefix")
class CachedPromptAPI(NamedLexicon):
    """The lexicon baseline behind a service that reads most of each prompt from its cache
    and writes some of it (Inspect's ``input_tokens_cache_read`` / ``_write``)."""

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:  # fmt: skip
        output = await super().generate(input, tools, tool_choice, config)
        assert output.usage is not None
        output.usage = ModelUsage(
            input_tokens=40, output_tokens=1, total_tokens=341,
            input_tokens_cache_read=250, input_tokens_cache_write=50,
        )  # fmt: skip
        return output


def test_cached_input_is_priced_as_the_file_says(tmp_path: Path) -> None:
    """Input read from or written to the prompt cache counts in the input tokens and is
    charged at ``input_cache_read`` / ``input_cache_write`` (Inspect's names) where the price
    file gives them (at the input price where it does not)."""
    model = "cachefix/judge"
    _eval(empathy(dataset=str(JUDGES_JSONL)), tmp_path / "logs", model)
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        f"{model}: {{input: 3, output: 15, input_cache_read: 0.3, input_cache_write: 3.75}}\n"
    )
    row = compare_logs(tmp_path / "logs", resamples=0, prices=prices).judges.iloc[0]
    assert row["calls_per_dialog"] == 1 and row["input_tokens_per_dialog"] == 340
    assert row["cost_per_dialog"] == pytest.approx((40 * 3 + 250 * 0.3 + 50 * 3.75 + 15) / 1e6)
    prices.write_text(f"{model}: {{input: 3, output: 15}}\n")
    row = compare_logs(tmp_path / "logs", resamples=0, prices=prices).judges.iloc[0]
    assert row["cost_per_dialog"] == pytest.approx((340 * 3 + 15) / 1e6)


def test_compare_reads_the_cost_inspect_recorded(tmp_path: Path) -> None:
    """A run with Inspect's ``--model-cost-config`` records each call's cost in the log;
    compare reads it without a price file, and the same file (Inspect's format) given as
    ``--prices`` prices the log to the same figure."""
    from inspect_ai.model import ModelCost, ModelInfo, set_model_info

    model = "cachefix/judge"
    set_model_info(model, ModelInfo(organization="test"))  # Inspect prices known models only
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        f"{model}: {{input: 3, output: 15, input_cache_read: 0.3, input_cache_write: 3.75}}\n"
    )
    _eval(empathy(dataset=str(JUDGES_JSONL)), tmp_path / "plain", model)
    assert not compare_logs(tmp_path / "plain", resamples=0).prices  # nothing recorded
    cost = ModelCost(input=3, output=15, input_cache_read=0.3, input_cache_write=3.75)
    _eval(empathy(dataset=str(JUDGES_JSONL)), tmp_path / "logs", model,
          model_cost_config={model: cost})  # fmt: skip
    by_hand = (40 * 3 + 250 * 0.3 + 50 * 3.75 + 15) / 1e6
    recorded = compare_logs(tmp_path / "logs", resamples=0)
    assert recorded.judges.iloc[0]["cost_per_dialog"] == pytest.approx(by_hand)
    assert "Inspect recorded" in recorded.prices
    filed = compare_logs(tmp_path / "logs", resamples=0, prices=prices)
    assert filed.judges.iloc[0]["cost_per_dialog"] == pytest.approx(by_hand)
    # the file is one Inspect reads too
    [log] = eval(empathy(dataset=str(JUDGES_JSONL)), model=model, display="none", limit=2,
                 log_dir=str(tmp_path / "again"), model_cost_config=str(prices))  # fmt: skip
    assert log.status == "success"
    assert any(u.total_cost for s in log.samples or [] for u in s.model_usage.values())


def test_the_report_draws_agreement_against_cost(judge_logs: dict[str, Any]) -> None:
    """One point per judge: its headline (somers_d_all, with its CI) against its cost per
    scored dialog; the figure is in the report beside the cost table."""
    from inspect_empathy.compare import write_report
    from inspect_empathy.compare.plots import choice_points

    prices = judge_logs["root"] / "choice_prices.yaml"
    prices.write_text(f"{NO_N}: {{input: 2.5, output: 10, reasoning: 40}}\n")
    comparison = compare_logs(judge_logs["logs"], resamples=100, prices=prices)
    found = choice_points(comparison)
    assert found is not None
    points, label = found
    assert label == "cost per scored dialog"
    table = comparison.judges.set_index("judge")
    assert set(points["judge"]) == set(table.index)
    for row in points.itertuples():
        assert row.x == pytest.approx(table.loc[row.judge, "cost_per_dialog"])
        assert row.y == pytest.approx(table.loc[row.judge, "somers_d_all"])
        assert row.low <= row.y <= row.high
    out = write_report(comparison, judge_logs["root"] / "choice_report")
    assert out["choice.png"].stat().st_size > 1000
    html = out["report.html"].read_text()
    assert html.index("Cost per scored dialog") < html.index('alt="choice"')
    # without prices: the tokens per scored dialog
    points, label = choice_points(compare_logs(judge_logs["logs"], resamples=0))  # type: ignore[misc]
    assert label.startswith("tokens per scored dialog")


def test_the_end_of_run_line_says_how_much_input_was_read_from_the_cache() -> None:
    """Cached input (Inspect's ``input_tokens_cache_read``) is counted in the input and named
    beside it; a line without cache reads keeps its words."""
    from types import SimpleNamespace

    from inspect_empathy._util.usage import Tally

    result = SimpleNamespace(name="empathy_scorer", scorer="empathy_scorer",
                             params={"from_output": True}, scored_samples=2)  # fmt: skip
    log = SimpleNamespace(
        results=SimpleNamespace(scores=[result]),
        eval=SimpleNamespace(model="openai/gpt-4o", task_args={"per_turn": True}, scorers=[],
                             metadata={"mode": "judge"}),
    )
    cached = {("openai/gpt-4o", None, None): Tally(calls=2, input=3000, output=2,
                                                   cache_read=2048, priced=2)}  # fmt: skip
    [line] = cost_lines(log, cached)  # type: ignore[arg-type]
    assert line.startswith("judge openai/gpt-4o: 1 call, 1500 input (1024 cached), 1 output")
    assert "per scored turn" in line
    fresh = {("openai/gpt-4o", None, None): Tally(calls=2, input=3000, output=2)}
    [line] = cost_lines(log, fresh)  # type: ignore[arg-type]
    assert "cached" not in line and ", 1500 input, 1 output" in line
