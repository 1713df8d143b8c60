"""Issue 49.6: when the logs compare chatbots (response mode), the report is about the
chatbots first: its title, its first findings and its first section."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fixture_logs import LENGTH, LEXICON, RESPONSE_JSONL, respond

from inspect_empathy.compare import compare_logs, write_report
from inspect_empathy.compare.report import headline


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("chatbots")
    respond(root, LENGTH, LEXICON)
    respond(root, LEXICON, LEXICON)
    return root


def test_the_report_on_chatbots_is_about_the_chatbots_first(logs: Path, tmp_path: Path) -> None:
    comparison = compare_logs(logs, resamples=50)
    assert comparison.replies is not None and len(comparison.replies) == 2
    assert headline(comparison)[0].startswith("Reply models graded by")
    written = write_report(comparison, tmp_path / "report", plots=False)
    md = written["report.md"].read_text(encoding="utf-8")
    assert md.startswith("# Chatbot comparison (response mode)")
    assert md.index("## Chatbots (reply models") < md.index("## Judges")
    html = written["report.html"].read_text(encoding="utf-8")
    assert "<title>Chatbot comparison (response mode)</title>" in html
    assert html.index("<h2>Chatbots (reply models") < html.index("<h2>Judges")


def test_a_ranked_chatbots_log_is_never_said_to_be_set_apart(logs: Path) -> None:
    from inspect_empathy.compare.report import logs_display

    comparison = compare_logs(logs, resamples=0)
    assert not any("set apart" in line for line in headline(comparison))
    assert not any("not compared" in warning for warning in comparison.warnings)
    headers, rows = logs_display(comparison)
    compared = [row[headers.index("compared")] for row in rows]
    assert all(cell.startswith("yes") for cell in compared), compared


def _spent_by_chatbot(log_dir: Path) -> dict[str, tuple[int, int, int]]:
    """Per chatbot: (input, output tokens it spent, dialogs scored), from each log's model
    usage (its grader's usage, by role, taken out where the grader is the same model)."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    found = {}
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info, header_only=True)
        model = log.eval.model
        usage = log.stats.model_usage[model]
        spent = [usage.input_tokens, usage.output_tokens]
        grader = (log.eval.model_roles or {})["grader"].model
        if grader == model:
            graded = log.stats.role_usage["grader"]
            spent = [spent[0] - graded.input_tokens, spent[1] - graded.output_tokens]
        assert log.results is not None
        found[model] = (spent[0], spent[1], log.results.scores[0].scored_samples)
    return found


def test_each_chatbot_s_own_cost_per_scored_dialog(logs: Path, tmp_path: Path) -> None:
    """The reply model's calls, tokens and cost per scored dialog beside its score; the
    grader's spending stays the judges' (issue 49)."""
    prices = tmp_path / "prices.yaml"
    prices.write_text(f"{LENGTH}: {{input: 1, output: 2}}\n{LEXICON}: {{input: 3, output: 5}}\n")
    comparison = compare_logs(logs, resamples=0, prices=prices)
    assert comparison.replies is not None
    table = comparison.replies.set_index("reply_model")
    per_million = {LENGTH: (1, 2), LEXICON: (3, 5)}
    for model, (input_, output, scored) in _spent_by_chatbot(logs).items():
        row = table.loc[model]
        assert row["reply_calls_per_dialog"] == 1
        assert row["reply_tokens_per_dialog"] == pytest.approx((input_ + output) / scored)
        cost = (input_ * per_million[model][0] + output * per_million[model][1]) / 1e6
        assert row["reply_cost_per_dialog"] == pytest.approx(cost / scored)
    written = write_report(comparison, tmp_path / "report", plots=False)
    md = written["report.md"].read_text(encoding="utf-8")
    chatbots = md[md.index("## Chatbots (reply models") :]
    header = chatbots.splitlines()[2]
    assert "tok/ reply" in header and "cost/ reply" in header
    assert "tokens a reply" in headline(comparison)[0]
    assert any(
        line.startswith("The grader spent per scored dialog") for line in headline(comparison)
    )


def test_a_plot_with_nothing_to_show_is_left_out(tmp_path: Path) -> None:
    """A chatbot whose replies are all one length: no length correlation to draw (it would
    read ρ=nan), so no length plot; the report says nan nowhere."""
    from inspect_ai import eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from inspect_empathy import empathy_response

    def same_reply(*_: object) -> ModelOutput:
        output = ModelOutput.from_content("mockllm/model", "I hear you, and I am here.")
        output.usage = ModelUsage(input_tokens=20, output_tokens=7, total_tokens=27)
        return output

    chatbot = get_model("mockllm/model", custom_outputs=same_reply, memoize=False)
    [log] = eval(empathy_response(dataset=str(RESPONSE_JSONL)), model=chatbot,
                 model_roles={"grader": LEXICON}, log_dir=str(tmp_path / "logs"),
                 display="none")  # fmt: skip
    assert log.status == "success", log.error
    comparison = compare_logs(tmp_path / "logs", resamples=0)
    written = write_report(comparison, tmp_path / "report", plots=True)
    assert "length.png" not in written and "histograms.png" in written
    for name in ("report.md", "report.html"):
        text = re.sub(r"base64,[A-Za-z0-9+/=]+", "", written[name].read_text(encoding="utf-8"))
        assert not re.search(r"\bnan\b", text, re.IGNORECASE)
