"""The Jinja2 environment that renders the report's templates (``templates/``).

``report.html.j2`` (self-contained HTML, autoescaped), ``report.md.j2`` (Markdown; cells and
lines pass through ``markdown_escape``) and ``report.css`` (included in the HTML). The
templates get display strings only (``report.report_context``): every number is formatted
and every text from the logs is escaped by the template engine (HTML) or the ``md`` filter
(Markdown), never concatenated into markup in Python.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jinja2 import Environment

TEMPLATES = "templates"
"""Package folder of the templates (shipped in the wheel as package data)."""


def breakable(text: Any) -> Any:
    """``text`` HTML-escaped, with a line-break opportunity after each / and _ (model
    names and paths wrap instead of widening the table)."""
    from markupsafe import Markup, escape

    escaped = str(escape(str(text)))
    return Markup(escaped.replace("/", "/<wbr>").replace("_", "_<wbr>"))


@functools.cache
def environment() -> Environment:
    """The report's Jinja2 environment (HTML templates autoescaped, Markdown not)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    from .formats import markdown_escape, markdown_table

    env = Environment(
        loader=PackageLoader("inspect_empathy.compare", TEMPLATES),
        autoescape=lambda name: bool(name) and name.endswith(".html.j2"),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=StrictUndefined,
    )
    env.filters["md"] = markdown_escape
    env.filters["breakable"] = breakable
    env.globals["markdown_table"] = markdown_table
    return env


def render(name: str, **context: Any) -> str:
    """Render the template ``name`` (in ``templates/``) with ``context``."""
    return environment().get_template(name).render(**context)
