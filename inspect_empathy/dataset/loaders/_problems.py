"""What a load found: problem kinds, one problem with where it is, and the `LoadReport`.

`RecordProblem` (one invalid record, raised while mapping it) and the kinds of the dialog
rules come from the record model (`dialogs`) and are named here with the others."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ...dialogs import EMPTY_DIALOG as EMPTY_DIALOG  # re-exported: every kind named here
from ...dialogs import NO_BOT_REPLY as NO_BOT_REPLY
from ...dialogs import DialogRecord
from ...dialogs import RecordProblem as RecordProblem

# Problem kinds: the key is stable (tests, summaries), the label reads well in a log.
UNREADABLE = "unreadable file"
BAD_JSON = "bad JSON"
MISSING_FIELD = "missing field"
UNKNOWN_ROLE = "unknown role label"
NOT_NUMERIC = "rating not numeric"
OUT_OF_SCALE = "rating outside the scale"
DUPLICATE_ID = "duplicate id"
BAD_VALUE = "bad value"
RESERVED_KEY = "reserved metadata key"
BAD_TEXT = "invalid Unicode"
CONTROL_CHARACTER = "control character"
CONFLICT = "conflicting rows"

PROBLEM_LIMIT = 20
"""How many problems an error message lists before it gives only a count."""

Located = tuple[str, DialogRecord]
"""A record with where it came from (``file:line`` or ``file: record N``)."""


class RecordBlock:
    """A run of valid records in file order whose ids differ from each other, with where
    each came from (``where(i)``, asked only for a message).

    A loader that checked many rows at once yields one instead of a `Located` per
    record; `dataset._unique` takes the records in one step unless it must look at each
    (an id seen before, a text check), then it reads them as `located`.
    """

    __slots__ = ("records", "_ids", "where", "_positions")

    def __init__(
        self,
        records: list[DialogRecord],
        ids: list[str] | Callable[[], list[str]],
        where: Callable[[int], str],
    ) -> None:
        self.records = records
        self._ids = ids
        self.where = where
        self._positions: dict[str, int] | None = None

    @property
    def ids(self) -> list[str]:
        """The records' ids, in order (``ids`` may be given as a function, called once)."""
        if callable(self._ids):
            self._ids = self._ids()
        return self._ids

    def __len__(self) -> int:
        return len(self.records)

    def located(self) -> Iterator[Located]:
        """The records one by one, with where each came from."""
        for index, record in enumerate(self.records):
            yield self.where(index), record

    def where_of(self, record_id: str) -> str:
        """Where the record with this id came from."""
        if self._positions is None:
            self._positions = {i: index for index, i in enumerate(self.ids)}
        return self.where(self._positions[record_id])


@dataclass(frozen=True, slots=True)
class Problem:
    """Where a record is (file and line or record number), the kind and what is wrong."""

    where: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.where}: {self.detail}"


class LoadReport:
    """What a load found: problems (invalid records), exclusions by design, notes."""

    def __init__(self, source: str, format: str) -> None:
        self.source = source
        self.format = format
        self.problems: list[Problem] = []
        self.excluded: Counter[str] = Counter()
        self.adjusted: Counter[str] = Counter()
        self.notes: list[str] = []
        self.loaded = 0
        self.skipped = False
        self.sha256 = ""
        """The content hash of the records loaded (`_dataset.content_hash`): what a
        resumed run is pinned to (the task adds it to the log's dataset summary)."""

    def problem(self, where: str, kind: str, detail: str) -> None:
        self.problems.append(Problem(where, kind, detail))

    def exclude(self, reason: str, count: int = 1) -> None:
        """Count records left out on purpose (no label, repeated row), never invalid ones."""
        self.excluded[reason] += count

    def adjust(self, what: str, count: int = 1) -> None:
        """Count records loaded with a change asked for (e.g. trailing user turns cut)."""
        self.adjusted[what] += count

    def note(self, text: str) -> None:
        self.notes.append(text)

    def error_message(self, limit: int = PROBLEM_LIMIT) -> str:
        """The first ``limit`` problems and how many there were, one per line."""
        head = f"{self.source}: {len(self.problems)} invalid record(s)"
        counts = Counter(p.kind for p in self.problems)
        kinds = ", ".join(f"{kind}: {n}" for kind, n in counts.most_common())
        shown = "\n".join(f"  - {p}" for p in self.problems[:limit])
        more = len(self.problems) - limit
        tail = f"\n  ... and {more} more" if more > 0 else ""
        hint = "\nFix these records, or load only the valid ones with on_invalid=skip."
        return f"{head} ({kinds})\n{shown}{tail}{hint}"

    def summary(self) -> dict[str, Any]:
        """Counts for the eval log: loaded, skipped by reason, excluded by reason, notes."""
        skipped = Counter(p.kind for p in self.problems) if self.skipped else Counter()
        return {
            "source": self.source,
            "format": self.format,
            "loaded": self.loaded,
            "skipped": dict(skipped.most_common()),
            "skipped_total": sum(skipped.values()),
            "skipped_examples": [str(p) for p in self.problems[:PROBLEM_LIMIT]]
            if self.skipped
            else [],
            "excluded": dict(self.excluded.most_common()),
            "adjusted": dict(self.adjusted.most_common()),
            "notes": list(self.notes),
        }
