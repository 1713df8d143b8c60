"""The HTML comparison report in real headless Chromium: every table fits a 1400 px window.

Five judges with long model names (the widest judges table the report makes
with plain names), rendered at 1400 x 1000; the sizes are measured in the page
with JavaScript (no column hidden, nothing scrolls sideways) and a screenshot
is taken. Skipped where Chromium is not installed.

The same code makes the docs screenshot::

    python tests/compare/test_compare_report_screenshot.py docs/comparison_report.png
"""

from __future__ import annotations

import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
sys.path.insert(0, str(Path(__file__).parent))

from fixture_logs import JUDGES_JSONL, LENGTH, LEXICON, judge, records, reply  # noqa: E402
from test_viewer_screenshot import Browser, find_chromium  # noqa: E402

from inspect_empathy.compare import compare_logs, write_report  # noqa: E402

WIDTH = 1400
LONG = "cmpfix/a-judge-with-a-rather-long-model-name-2025-06-01-preview"

MEASURE_JS = """
(() => {
  const view = document.documentElement.clientWidth;
  const tables = [...document.querySelectorAll('table')].map((t) => {
    const box = t.getBoundingClientRect();
    const cells = [...t.querySelectorAll('th, td')];
    const rightmost = Math.max(...cells.map((c) => c.getBoundingClientRect().right));
    return {left: box.left, right: box.right, width: box.width, scroll: t.scrollWidth,
            rightmost: rightmost, columns: t.querySelectorAll('th').length,
            heading: (t.previousElementSibling || {}).textContent || ''};
  });
  return {view: view, page: document.documentElement.scrollWidth,
          body: document.body.getBoundingClientRect().right, tables: tables,
          height: document.documentElement.scrollHeight};
})()
"""


def make_report(root: Path) -> Path:
    """Five judges (three with long names), compared and written as report.html."""
    rows = records()
    judge(root / "logs", JUDGES_JSONL, LONG)
    judge(root / "logs", JUDGES_JSONL, LONG + "-partial", refuse=[reply(r) for r in rows[:5]])
    judge(root / "logs", JUDGES_JSONL, LONG + "-flaky", fail=[reply(r) for r in rows[5:8]])
    judge(root / "logs", JUDGES_JSONL, LEXICON)
    judge(root / "logs", JUDGES_JSONL, LENGTH)
    comparison = compare_logs(root / "logs", resamples=300)
    return write_report(comparison, root / "report")["report.html"]


def render(
    report: Path, chromium: str, png: Path, height: int = 1000
) -> dict[str, Any]:
    """Open ``report`` at WIDTH x height, measure it, screenshot it."""
    browser = Browser(chromium, WIDTH, height)
    try:
        browser.call("Page.navigate", {"url": report.resolve().as_uri()}, page=True)
        deadline = time.monotonic() + 30
        while browser.evaluate("document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise TimeoutError("report.html did not load")
            time.sleep(0.2)
        sizes = browser.evaluate(MEASURE_JS)
        browser.screenshot(png)
    finally:
        browser.close()
    return sizes


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


CHROMIUM = find_chromium()


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
def test_report_tables_fit_a_1400px_window(tmp_path: Path) -> None:
    assert CHROMIUM is not None
    report = make_report(tmp_path)
    png = tmp_path / "report.png"
    sizes = render(report, CHROMIUM, png)

    view = sizes["view"]  # the window less its vertical scroll bar
    assert WIDTH - 20 <= view <= WIDTH
    assert sizes["page"] <= view, "the page scrolls sideways"
    assert len(sizes["tables"]) >= 5
    for table in sizes["tables"]:
        where = table["heading"]
        assert table["left"] >= 0 and table["right"] <= view, where
        assert table["scroll"] <= table["width"] + 1, f"{where}: columns overflow the table"
        assert table["rightmost"] <= view, f"{where}: a column is outside the window"
    judges_table = sizes["tables"][0]
    assert judges_table["columns"] >= 16  # every judges column is there, none dropped
    # the judge's tokens moved from the judges table to the cost table, beside Spearman
    assert sizes["tables"][1]["heading"].startswith("Cost per scored dialog")
    assert sizes["tables"][1]["columns"] >= 7
    assert png_size(png) == (WIDTH, 1000)
    text = report.read_text().replace("<wbr>", "")
    assert f"{LONG}-partial [low coverage]" in text and f"{LEXICON} [floor]" in text


if __name__ == "__main__":
    if CHROMIUM is None or len(sys.argv) != 2:
        sys.exit("usage (needs chromium): python " + __file__ + " OUT.png")
    with tempfile.TemporaryDirectory() as tmp:
        sizes = render(make_report(Path(tmp)), CHROMIUM, Path(sys.argv[1]), height=1300)
        print({k: v for k, v in sizes.items() if k != "tables"})
