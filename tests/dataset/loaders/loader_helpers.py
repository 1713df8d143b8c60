"""What the loader tests share: the fixture folders and the few helpers each used to repeat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspect_empathy import DatasetError, load_dialogs

ROOT = Path(__file__).resolve().parents[3]
"""The project checkout."""

FIXTURES = ROOT / "tests" / "fixtures" / "loaders"
"""Loader fixtures: files written for these tests (invented text)."""


def by_id(dataset: Any) -> dict:
    """A dataset's samples by id."""
    return {sample.id: sample for sample in dataset}


def load_error(path: Path, **kwargs: Any) -> str:
    """The DatasetError message of a load that must fail."""
    with pytest.raises(DatasetError) as info:
        load_dialogs(path, **kwargs)
    return str(info.value)
