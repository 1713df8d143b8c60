"""Dialogs and datasets: users' files, public corpora and the hub, as Inspect samples.

- `_dataset`: `load_dialogs` and `DialogDataset`, the samples a task runs on;
- `loaders/`: one module per source format, each mapping onto `dialogs.DialogRecord`;
- `per_turn`: one record per bot turn of a conversation (``-T per_turn=true``);
- `_samples`: the Inspect `Sample` of a record (chat messages, or the rubric prompt).

The dialog records themselves are `inspect_empathy.dialogs`, shared by every layer.
"""

from __future__ import annotations

from typing import Any

from . import _dataset
from ._dataset import (
    BUNDLED,
    DatasetError,
    DialogDataset,
    bundled_path,
    load_dialogs,
    problem_report,
    skipped_summary,
)

__all__ = [
    "BUNDLED",
    "DatasetError",
    "DialogDataset",
    "bundled_path",
    "load_dialogs",
    "problem_report",
    "skipped_summary",
]


def __getattr__(name: str) -> Any:
    """The other names of the 0.1 module ``inspect_empathy.dataset``, now `_dataset`."""
    if not name.startswith("__") and hasattr(_dataset, name):
        return getattr(_dataset, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
