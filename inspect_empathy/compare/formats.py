"""Formatting numbers and tables for the comparison's text outputs (terminal, Markdown)."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

DASH = "–"
"""What a missing or undefined figure shows as."""


def number(value: Any, digits: int = 3) -> str:
    """A float with ``digits`` decimals; a dash for NaN / missing."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return DASH
    try:
        if pd.isna(value):
            return DASH
    except (TypeError, ValueError):
        pass
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(value)
    return f"{float(value):.{digits}f}"


def significant(value: Any, digits: int = 3) -> str:
    """A small positive figure (a cost) to ``digits`` significant digits, never in
    scientific notation: ``0.00163``; a dash for NaN / missing."""
    if number(value) == DASH:
        return DASH
    value = float(value)
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def with_ci(value: Any, low: Any, high: Any, digits: int = 3) -> str:
    """``0.455 [0.306, 0.588]``, or the value alone without a CI."""
    text = number(value, digits)
    if text == DASH or number(low) == DASH or number(high) == DASH:
        return text
    return f"{text} [{number(low, digits)}, {number(high, digits)}]"


def p_value(value: Any) -> str:
    if number(value) == DASH:
        return DASH
    return "<0.001" if float(value) < 0.001 else f"{float(value):.3f}"


def _p_clause(value: Any) -> str:
    text = p_value(value)
    return text.replace("<", "< ") if text.startswith("<") else f"= {text}"


def percent(value: Any) -> str:
    """A share as a whole percent, with the decimals it takes not to show a share short of
    1 as 100% (998 of 999: 99.9%) or one above 0 as 0%."""
    if number(value) == DASH:
        return DASH
    share = float(value)
    for digits in range(4):
        text = f"{share:.{digits}%}"
        if not 0 < share < 1 or float(text[:-1]) not in (0.0, 100.0):
            return text
    return ">99.99%" if share > 0.5 else "<0.01%"


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~$])")
"""Characters that start emphasis, code, links, strikethrough or math, or end a table cell (HTML
is escaped separately; list and heading markers cannot occur inside a cell or list item)."""


def markdown_escape(text: str) -> str:
    """Text shown as itself in Markdown: no HTML, no emphasis, links or table breaks."""
    text = html.escape(str(text), quote=True)
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return " ".join(text.splitlines())


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub Markdown table with aligned columns, every cell escaped."""
    cells = [[markdown_escape(c) for c in row] for row in [list(headers), *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])


def plain_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """The same table for a terminal: no Markdown escaping, but a ``|`` in a cell (a judge's
    name may hold one) written ``\\|`` so that it does not split the cell."""
    cells = [
        [" ".join(str(c).splitlines()).replace("|", "\\|") for c in row]
        for row in [list(headers), *rows]
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])
