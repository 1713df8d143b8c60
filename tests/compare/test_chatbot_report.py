"""Issue 49.6: when the logs compare chatbots (response mode), the report is about the
chatbots first: its title, its first findings and its first section."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixture_logs import LENGTH, LEXICON, respond

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
    headers, rows = logs_display(comparison)
    compared = [row[headers.index("compared")] for row in rows]
    assert all(cell.startswith("yes") for cell in compared), compared
