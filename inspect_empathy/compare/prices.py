"""Token prices (``compare --prices FILE``) and what each judge's scored dialog cost.

A run made with Inspect's ``--model-cost-config FILE`` (or on a model whose price Inspect
knows) records what each call cost (``total_cost`` in each call's usage); ``compare``
reads that (`_util.usage.Tally.cost`) and needs no price file. ``--prices FILE`` prices logs
that recorded no cost, or prices them again: the file is Inspect's own
``--model-cost-config`` format, YAML or JSON, each model's price per million tokens::

    openai/gpt-4o: {input: 2.50, output: 10.00, input_cache_read: 1.25, input_cache_write: 2.50}
    anthropic/claude-sonnet-4-6:
      {input: 3, output: 15, input_cache_read: 0.30, input_cache_write: 3.75}
    openai/gpt-5: {input: 1.25, output: 10.00, reasoning: 10.00}

so one file serves both. ``input_cache_read`` and ``input_cache_write`` (which Inspect
requires) may be left out here: cached input is then charged at the input price. The one
key Inspect's format lacks is ``reasoning``: providers count reasoning tokens among the
output tokens, so they are charged at the output price unless the file gives them one of
their own (never twice); Inspect ignores the key. A model named twice is refused (YAML and
JSON would keep the last silently). Every compared judge that made calls needs a price;
the offline baselines cost nothing, published judges have no usage. Every problem is one
line naming the file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._util.read import ReadError, json_file, yaml_file
from .._util.usage import member_model
from .comparison import CompareError, LogSource, is_baseline

if TYPE_CHECKING:
    import pandas as pd

KEYS = ("input", "output", "input_cache_read", "input_cache_write", "reasoning")
RENAMED = {"cache_read": "input_cache_read", "cache_write": "input_cache_write"}
"""Keys of the plugin's own format before it took Inspect's, and their names now."""
REQUIRED = ("input", "output")
PER = 1_000_000


@dataclass(frozen=True)
class Price:
    """Price per million input, output and (where it differs) reasoning tokens."""

    input: float
    output: float
    input_cache_read: float | None = None
    input_cache_write: float | None = None
    reasoning: float | None = None

    def cost(
        self, input: float, output: float, reasoning: float, read: float = 0, write: float = 0
    ) -> float:
        """What these tokens cost: input includes the cache's ``read`` and ``write`` tokens,
        output includes ``reasoning``, each charged once."""
        thinking = self.output if self.reasoning is None else self.reasoning
        answer = (output - reasoning) * self.output
        cached = read * _or(self.input_cache_read, self.input)
        cached += write * _or(self.input_cache_write, self.input)
        fresh = (input - read - write) * self.input
        return (fresh + cached + answer + reasoning * thinking) / PER


def _or(price: float | None, default: float) -> float:
    return default if price is None else price


@dataclass(frozen=True)
class Prices:
    """The prices read from ``file``, by model."""

    file: str
    models: dict[str, Price]


MAX_PRICE_BYTES = 1024 * 1024
"""A price file is a few lines a model: anything larger is refused unread."""


def load_prices(path: LogSource) -> Prices:
    """Read and check a price file (CompareError, one line naming the file): JSON or YAML
    read by the one reader of each kind (`_util.read`: no key twice, no alias, no tag)."""
    shown = str(path)
    reader = json_file if shown.lower().endswith(".json") else yaml_file
    try:
        data = reader(Path(path), MAX_PRICE_BYTES)
    except ReadError as ex:
        line = f"line {ex.line}: " if ex.line else ""
        raise CompareError(f"{shown}: {line}{ex.problem}") from None
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
    renamed = [str(k) for k in value if k in RENAMED]
    if renamed:
        raise CompareError(
            f"{file}: {model}: {', '.join(f'{k!r} is {RENAMED[k]!r}' for k in renamed)} in "
            "Inspect's --model-cost-config format, which price files use"
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
