"""The three dialogs of the provider matrices and how their outcomes are read: shared by
tests/judge/test_provider_matrix.py, tests/judge/test_grok_matrix.py and
tests/test_batch_matrix.py (a module of tests/, so each of them collects on its own)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog

SCORES = (2, 4, 5)
"""The dialogs ask the healthy fake judge for these scores (``[judge-says:N]``)."""


def dialogs(path: Path, scores: tuple[int, ...] = SCORES) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for k in scores:
            turns = [
                {"role": "user", "content": f"[judge-says:{k}] I failed my exam today."},
                {"role": "assistant", "content": "That sounds really hard. I'm sorry."},
            ]
            f.write(json.dumps({"id": f"d{k}", "turns": turns, "rating": k}) + "\n")
    return path



def outcomes(log: EvalLog) -> dict[str, tuple[float, str, dict[str, Any]]]:
    """Per sample: value (NaN if unscored), method, metadata; errored samples fail here."""
    assert log.samples is not None
    errors = [f"{s.id}: {s.error.message[:300]}" for s in log.samples if s.error]
    assert not errors, errors
    found = {}
    for s in log.samples:
        score = s.scores["empathy_scorer"]  # type: ignore[index]
        metadata = score.metadata or {}
        found[str(s.id)] = (float(score.value), metadata.get("method"), metadata)  # type: ignore[arg-type]
    return found
