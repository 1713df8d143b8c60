"""Mapping keys: unknown keys refused, and the keys on a dialog's text that every
generic format takes (``trailing_user``, ``unescape``, ``ratings``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...dialogs import MISSING_RATERS_KEY, TRAILING_KEY, DialogRecord
from ...errors import DatasetError
from ._problems import LoadReport
from ._ratings import Raters


def check_keys(format: str, mapping: Mapping[str, Any], allowed: Iterable[str]) -> None:
    """Refuse mapping keys a format does not know (a typo would be silently ignored)."""
    allowed = set(allowed)
    unknown = sorted(set(mapping) - allowed)
    if unknown:
        accepted = ", ".join(sorted(allowed)) or "none"
        raise DatasetError(
            f"format {format!r} does not take {', '.join(unknown)} (it takes: {accepted})"
        )


TRAILING_USER = ("error", "cut")
TRAILING_COUNT = "dialogs with trailing user turns cut"
UNESCAPES = {"empathetic_dialogues": "empathetic_dialogues", "ed": "empathetic_dialogues"}


def unescape_empathetic_dialogues(text: str) -> str:
    """EmpatheticDialogues' ``_comma_`` back to ``,``."""
    return text.replace("_comma_", ",")


@dataclass
class TextOptions:
    """Spec keys on a dialog's text that every generic format takes.

    ``trailing_user: cut`` cuts user turns after the last bot reply (kept in
    metadata as `TRAILING_KEY`, counted in the load summary); ``unescape:
    empathetic_dialogues`` turns ``_comma_`` back into ``,`` in every turn.
    """

    cut_trailing_user: bool = False
    unescape: Callable[[str], str] | None = None
    cut: int = 0
    raters_missing: Counter[str] | None = None
    raters: Raters | None = None

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> TextOptions:
        value = mapping.get("unescape")
        unescape = None
        if value is not None and str(value).strip().lower() not in ("", "none"):
            if UNESCAPES.get(str(value).strip().lower()) is None:
                raise DatasetError(f"unescape must be 'empathetic_dialogues', not {value!r}")
            unescape = unescape_empathetic_dialogues
        return cls(
            parse_trailing_user(mapping.get("trailing_user")),
            unescape,
            raters=Raters.from_mapping(mapping),
        )

    def count(self, report: LoadReport, record: DialogRecord) -> None:
        """Count a loaded record whose trailing user turns were cut, or that misses raters."""
        if self.cut_trailing_user and record.metadata.get(TRAILING_KEY):
            self.cut += 1
        missing = record.metadata.get(MISSING_RATERS_KEY) if record.metadata else None
        if missing:
            if self.raters_missing is None:
                self.raters_missing = Counter()
            self.raters_missing["*"] += 1
            self.raters_missing.update(missing)

    def summarise(self, report: LoadReport) -> None:
        if self.cut:
            report.adjust(TRAILING_COUNT, self.cut)
        if self.raters_missing:
            report.adjust("dialogs with some raters missing", self.raters_missing.pop("*"))
            for name, count in self.raters_missing.most_common():
                report.note(f"rater {name!r}: no rating for {count} dialog(s)")


def parse_trailing_user(value: Any) -> bool:
    """Whether ``trailing_user`` asks to cut trailing user turns (``cut``) or not (``error``)."""
    if value is None:
        return False
    text = str(value).strip().lower()
    if text not in TRAILING_USER:
        raise DatasetError(f"trailing_user must be 'error' or 'cut', not {value!r}")
    return text == "cut"
