"""Token prices (``compare --prices FILE``) and what each judge's scored dialog cost.

No price is built in: they change. The file, YAML or JSON, maps each judge model to its
price per million tokens::

    openai/gpt-4o: {input: 2.50, output: 10.00, cache_read: 1.25}
    openai/gpt-5: {input: 1.25, output: 10.00, reasoning: 10.00}
    anthropic/claude-sonnet-4-6: {input: 3, output: 15, cache_read: 0.30, cache_write: 3.75}

``reasoning`` is optional: providers count reasoning tokens among the output tokens, so
they are charged at the output price unless the file gives them one of their own (never
twice). ``cache_read`` and ``cache_write`` are optional too: the input tokens the provider
read from or wrote to its prompt cache (Inspect's ``input_tokens_cache_read`` /
``_write``) are charged at the input price unless the file gives them their own.
Every compared judge that made calls needs a price; the offline baselines cost nothing,
published judges have no usage. Every problem is one line naming the file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._usage import member_model
from .comparison import CompareError, LogSource, is_baseline

if TYPE_CHECKING:
    import pandas as pd

KEYS = ("input", "output", "reasoning", "cache_read", "cache_write")
REQUIRED = ("input", "output")
PER = 1_000_000


@dataclass(frozen=True)
class Price:
    """Price per million input, output and (where it differs) reasoning tokens."""

    input: float
    output: float
    reasoning: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None

    def cost(
        self, input: float, output: float, reasoning: float, read: float = 0, write: float = 0
    ) -> float:
        """What these tokens cost: input includes the cache's ``read`` and ``write`` tokens,
        output includes ``reasoning``, each charged once."""
        thinking = self.output if self.reasoning is None else self.reasoning
        answer = (output - reasoning) * self.output
        cached = read * _or(self.cache_read, self.input) + write * _or(self.cache_write, self.input)
        fresh = (input - read - write) * self.input
        return (fresh + cached + answer + reasoning * thinking) / PER


def _or(price: float | None, default: float) -> float:
    return default if price is None else price


@dataclass(frozen=True)
class Prices:
    """The prices read from ``file``, by model."""

    file: str
    models: dict[str, Price]


def load_prices(path: LogSource) -> Prices:
    """Read and check a price file (CompareError, one line naming the file)."""
    shown = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as ex:
        raise CompareError(f"{shown}: cannot read the price file ({_first_line(ex)})") from None
    try:
        if shown.lower().endswith(".json"):
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as ex:  # noqa: BLE001 - any parse error is one line
        kind = "JSON" if shown.lower().endswith(".json") else "YAML"
        raise CompareError(f"{shown}: not valid {kind} ({_first_line(ex)})") from None
    if not isinstance(data, Mapping) or not data:
        raise CompareError(
            f"{shown}: a price file maps each judge model to its price per million tokens, "
            "e.g. 'openai/gpt-4o: {input: 2.5, output: 10}'"
        )
    return Prices(shown, {str(model): _price(shown, str(model), v) for model, v in data.items()})


def _price(file: str, model: str, value: Any) -> Price:
    if not isinstance(value, Mapping):
        raise CompareError(
            f"{file}: {model}: a price is a mapping of {', '.join(KEYS)} (per million tokens), "
            f"not {value!r}"
        )
    unknown = [str(k) for k in value if k not in KEYS]
    if unknown:
        raise CompareError(
            f"{file}: {model}: unknown key {', '.join(map(repr, unknown))} "
            f"(allowed: {', '.join(KEYS)})"
        )
    missing = [k for k in REQUIRED if k not in value]
    if missing:
        raise CompareError(f"{file}: {model}: no {' and no '.join(missing)} price")
    numbers: dict[str, float] = {}
    for key, number in value.items():
        ok = isinstance(number, int | float) and not isinstance(number, bool)
        if not ok or not math.isfinite(number) or number < 0:
            raise CompareError(
                f"{file}: {model}: {key} must be a number >= 0 (per million tokens), not {number!r}"
            )
        numbers[str(key)] = float(number)
    return Price(**numbers)


def _first_line(ex: BaseException) -> str:
    text = str(ex).strip()
    return text.splitlines()[0] if text else type(ex).__name__


def priced_models(samples: pd.DataFrame) -> set[str]:
    """The models that need a price: every judge model (a panel's members) that made
    calls, except the offline baselines."""
    needed: set[str] = set()
    if "input_tokens" not in samples:
        return needed
    spent = samples[samples["input_tokens"].notna()]
    members_of = spent["members_usage"] if "members_usage" in spent else [None] * len(spent)
    for model, members in zip(spent["model"], members_of, strict=True):
        needed.update(members if isinstance(members, dict) else [str(model)])
    return {member_model(m) for m in needed if not is_baseline(member_model(m))}


def check_prices(prices: Prices, samples: pd.DataFrame) -> None:
    """CompareError naming the file and every compared judge model it has no price for."""
    missing = sorted(priced_models(samples) - set(prices.models))
    if missing:
        raise CompareError(
            f"{prices.file}: no price for {', '.join(missing)} (every compared judge model "
            "needs one; offline baselines and published judges do not)"
        )


SPENT = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens",
         "cache_write_tokens")  # fmt: skip
"""A row's tokens as `Price.cost` takes them (a panel seat's: `logs._spent`)."""


def _count(value: Any) -> float:
    """A token count of a row; 0 where the row has none (a log from before the column)."""
    return 0.0 if value is None or (isinstance(value, float) and math.isnan(value)) else value


def sample_costs(samples: pd.DataFrame, prices: Prices) -> pd.Series:
    """What each row (judge and dialog, every epoch) cost; NaN where nothing is known
    (published judges), 0 for an unpriced baseline."""
    import pandas as pd

    def cost(row: pd.Series) -> float:
        if pd.isna(row.get("input_tokens", math.nan)):
            return math.nan
        members = row.get("members_usage")
        spent = members if isinstance(members, dict) else {
            str(row["model"]): tuple(_count(row.get(c)) for c in SPENT)
        }  # fmt: skip
        total = 0.0
        for seat, tokens in spent.items():
            model = member_model(seat)  # a model's second seat on a panel: name#2
            price = prices.models.get(model)
            if price is None:
                if is_baseline(model):
                    continue
                return math.nan
            total += price.cost(*(float(t) for t in tokens))
        return total

    return samples.apply(cost, axis=1) if len(samples) else pd.Series(dtype=float)
