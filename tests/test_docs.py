"""docs/ and README: every relative link resolves (the file, and its #anchor among the target's
headings), and every price file the docs show is read by both commands that take it: Inspect's
``--model-cost-config`` (its own loader) and ``inspect-empathy compare --prices``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """The page without its fenced blocks (a link or heading inside code is not one)."""
    return FENCE.sub("", text)


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, and a
    repeated heading numbered (-1, -2, ...)."""
    seen: dict[str, int] = {}
    anchors = set()
    for line in _prose(page.read_text("utf-8")).splitlines():
        heading = re.match(r"#{1,6} (.*)", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def relative_links() -> list[tuple[Path, str]]:
    found = []
    for page in PAGES:
        for target in LINK.findall(_prose(page.read_text("utf-8"))):
            if not re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                found.append((page, target))
    return found


def test_the_pages_have_relative_links() -> None:
    assert len(relative_links()) > 20


@pytest.mark.parametrize(
    ("page", "target"), relative_links(), ids=lambda v: v.name if isinstance(v, Path) else v
)
def test_every_relative_link_resolves(page: Path, target: str) -> None:
    path, _, anchor = target.partition("#")
    file = (page.parent / path).resolve() if path else page
    assert file.exists(), f"{page.name}: {target}: no {file}"
    if anchor:
        assert file.suffix == ".md", f"{page.name}: {target}: an anchor into a non-page"
        assert anchor in _anchors(file), f"{page.name}: {target}: no such heading"


def price_files() -> list[tuple[str, str, str]]:
    """(page, language, text) of each fenced YAML or JSON block that maps models to prices."""
    found = []
    for page in PAGES:
        for language, text in FENCE.findall(page.read_text("utf-8")):
            if language not in ("yaml", "json"):
                continue
            data: Any = yaml.safe_load(text)  # JSON is YAML
            if (
                isinstance(data, dict)
                and data
                and all(
                    isinstance(v, dict) and {"input", "output"} <= set(v) for v in data.values()
                )
            ):
                found.append((page.name, language, text))
    return found


def test_the_docs_show_a_price_file() -> None:
    assert price_files()


@pytest.mark.parametrize(("page", "language", "text"), price_files())
def test_every_docs_price_file_serves_both_commands(
    page: str, language: str, text: str, tmp_path: Path
) -> None:
    from inspect_ai._util.config import resolve_args
    from inspect_ai.model import ModelCost

    from inspect_empathy.compare.prices import load_prices

    path = tmp_path / f"prices.{language}"
    path.write_text(text, encoding="utf-8")
    # as `inspect eval --model-cost-config FILE` reads it (inspect_ai/_eval/eval.py)
    for model, cost in resolve_args(str(path)).items():
        try:
            ModelCost(**cost)  # a missing input_cache_read / input_cache_write fails here
        except ValueError as ex:
            pytest.fail(f"{page}: {model}: Inspect's --model-cost-config refuses it: {ex}")
    prices = load_prices(path)
    assert set(prices.models) == set(yaml.safe_load(text)), page
