"""docs/scoring.md's table of finished stops is `_providers.NATURAL_ENDS`, and its note on
stops that can stand for a cut answer names `_providers.UNTRUSTED_STOPS`: the code's tables
hold the facts with their sources, the page shows them, and the two cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

from inspect_empathy.judge._providers import NATURAL_ENDS, UNTRUSTED_STOPS

SCORING = Path(__file__).resolve().parents[2] / "docs" / "scoring.md"
HEADER = "| service | finished | not finished (unscored; a cut is asked again) |"


def table_rows() -> dict[str, list[str]]:
    """The table's rows: the service cell, and the finished cell's backticked values."""
    lines = SCORING.read_text(encoding="utf-8").splitlines()
    start = lines.index(HEADER) + 2
    rows: dict[str, list[str]] = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        service, finished = (cell.strip() for cell in line.strip("|").split(" | ")[:2])
        rows[service] = re.findall(r"`([^`]+)`", finished.split("(")[0])
    return rows


def test_the_table_of_finished_stops_is_natural_ends() -> None:
    rows = table_rows()
    for service, stops, source in NATURAL_ENDS:
        assert service in rows, f"docs/scoring.md has no row for {service!r}"
        assert rows[service] == list(stops), service
        assert source.startswith("inspect_ai/"), service  # each fact names where it is read
    # the one row beyond the services: the local judges that set no stop reason
    extra = [s for s in rows if s not in {service for service, _, _ in NATURAL_ENDS}]
    assert len(extra) == 1 and extra[0].startswith("Local Transformers"), extra


def test_the_note_on_untrusted_stops_names_each_service() -> None:
    text = SCORING.read_text(encoding="utf-8")
    note = text[text.index("An answer whose call used every output token it was allowed") :]
    note = note[: note.index("\n\n")]
    for service, _ in UNTRUSTED_STOPS:
        assert service.split()[-1] in note, service  # "Gemini", "Mistral"
