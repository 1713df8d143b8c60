"""The fake judge APIs the tests use (OpenAI chat completions and Anthropic messages).

There is one fake judge server for the tests and the benchmarks, `benchmarks/fake_openai.py`:
standard library only and free of ``inspect_empathy``, because the benchmarks also run it as a
process of its own beside evals that must not import the plugin. This module puts
``benchmarks/`` on the import path and re-exports what the tests use.
"""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

from fake_openai import (  # noqa: E402
    DEFAULT_SCORE,
    FakeServer,
    Reply,
    Request,
    Rule,
    expected_logprob_score,
)

__all__ = ["DEFAULT_SCORE", "FakeServer", "Reply", "Request", "Rule", "expected_logprob_score"]
