"""Ratings and scales: a scale from a spec, one rating on it, several raters combined."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...dialogs import HUMAN_RATINGS_KEY, MISSING_RATERS_KEY, Scale
from ...errors import DatasetError
from ._problems import NOT_NUMERIC, OUT_OF_SCALE, RecordProblem


def parse_scale(value: Any, where: str = "scale") -> Scale:
    """A (min, max) scale from ``[1, 3]``, ``"1-3"``, ``"1,3"`` or ``"1..3"``."""
    low: Any
    high: Any
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(-?[\d.]+)\s*(?:-|,|\.\.|to|:)\s*(-?[\d.]+)\s*", value)
        if not match:
            raise DatasetError(f"{where}: {value!r} is not a scale like 1-5 or [1, 5]")
        low, high = match.groups()
    elif isinstance(value, Mapping) and {"min", "max"} <= set(value):
        low, high = value["min"], value["max"]
    elif isinstance(value, list | tuple) and len(value) == 2:
        low, high = value
    else:
        raise DatasetError(f"{where}: {value!r} is not a scale like 1-5 or [1, 5]")
    try:
        scale = (float(low), float(high))
    except (TypeError, ValueError) as ex:
        raise DatasetError(f"{where}: {value!r} is not a scale like 1-5 or [1, 5]") from ex
    if not (math.isfinite(scale[0]) and math.isfinite(scale[1]) and scale[1] > scale[0]):
        raise DatasetError(f"{where}: {value!r} needs a finite min below its max")
    return scale


def parse_rating(value: Any, scale: Scale, name: str = "rating") -> float:
    """A rating as a float on ``scale``; numeric strings are accepted."""
    if isinstance(value, bool) or value is None:
        raise RecordProblem(NOT_NUMERIC, f"{name} {value!r} is not a number")
    if isinstance(value, int | float):
        rating = float(value)
    else:
        try:
            rating = float(str(value).strip())
        except ValueError:
            raise RecordProblem(NOT_NUMERIC, f"{name} {value!r} is not a number") from None
    if not math.isfinite(rating):
        raise RecordProblem(NOT_NUMERIC, f"{name} {value!r} is not a number")
    if rating < scale[0] or rating > scale[1]:
        raise RecordProblem(
            OUT_OF_SCALE, f"{name} {value!r} is outside the scale {scale[0]:g}-{scale[1]:g}"
        )
    return rating


AGGREGATES = ("median", "mean")
SOME_MISSING = "dialogs with some raters missing"


@dataclass(frozen=True)
class Raters:
    """The ``ratings: [col_a, col_b]`` and ``rater_aggregate`` spec keys."""

    names: tuple[str, ...]
    aggregate: str = "median"

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> Raters | None:
        """None without ``ratings``; a DatasetError for a bad list or aggregate."""
        value = mapping.get("ratings")
        how = str(mapping.get("rater_aggregate") or "median").strip().lower()
        if value is None:
            if mapping.get("rater_aggregate") is not None:
                raise DatasetError("rater_aggregate needs ratings: [column, column, ...]")
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple) or not value:
            raise DatasetError(f"ratings must list the raters' columns, not {value!r}")
        names = tuple(str(name) for name in value)
        if len(set(names)) != len(names):
            raise DatasetError(f"ratings lists a column twice: {list(names)}")
        if mapping.get("rating") is not None:
            raise DatasetError("give either rating (one column) or ratings (several), not both")
        if how not in AGGREGATES:
            raise DatasetError(f"rater_aggregate must be 'median' or 'mean', not {how!r}")
        return cls(names, how)

    def combine(
        self, values: Mapping[str, Any], scale: Scale
    ) -> tuple[float | None, dict[str, float], list[str]]:
        """(aggregate or None, present ratings by rater, missing raters) for one dialog.

        A rater is missing when the value is None or an empty cell; any other value must
        be a number on ``scale`` (a RecordProblem names the rater otherwise).
        """
        present: dict[str, float] = {}
        missing: list[str] = []
        for name in self.names:
            raw = values.get(name)
            if raw is None or (isinstance(raw, str) and not raw.strip()):
                missing.append(name)
            else:
                present[name] = parse_rating(raw, scale, f"rating {name!r}")
        if not present:
            return None, present, missing
        ratings = sorted(present.values())
        if self.aggregate == "mean":
            return sum(ratings) / len(ratings), present, missing
        middle = len(ratings) // 2
        if len(ratings) % 2:
            return ratings[middle], present, missing
        return (ratings[middle - 1] + ratings[middle]) / 2, present, missing


def rater_metadata(
    metadata: dict[str, Any], present: dict[str, float], missing: list[str]
) -> None:
    """Put each rater's rating (and who is missing, if anyone) into sample metadata."""
    metadata[HUMAN_RATINGS_KEY] = present
    if missing:
        metadata[MISSING_RATERS_KEY] = missing
