"""G-Eval scoring: parse a judge's score, weight it by logprobs, average samples."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    GenerateConfig,
    Logprob,
    Model,
    ModelOutput,
    ModelUsage,
)

Method = Literal["auto", "logprobs", "samples", "parse"]
METHODS: tuple[str, ...] = ("auto", "logprobs", "samples", "parse")
SCORES: tuple[int, ...] = (1, 2, 3, 4, 5)
TOP_LOGPROBS = 20
DEFAULT_SAMPLES = 20

_MARKUP = re.compile(r"[*_`#>]")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SCORE_LINE = re.compile(
    r"""^\s*
    (?:[A-Za-z][A-Za-z \-]{0,40}?\s*                # optional label: "Score:", "Rating =",
       (?:\(\s*1\s*(?:-|to)\s*5\s*\)\s*)?[:=]\s*)?   # "Empathetical responding (1-5):"
    (?P<score>\d+(?:\.\d+)?)                     # the score
    \s*(?:/\s*5(?:\.0)?|out\s+of\s+5)?           # "/5", "out of 5"
    \s*[.!]?\s*$""",
    re.IGNORECASE | re.VERBOSE,
)


class ScoreParseError(ValueError):
    """A judge's output holds no single valid 1-5 score."""


@dataclass(frozen=True)
class ScoreMatch:
    """A score found in a judge's output and where it stands in the text."""

    score: int
    start: int


@dataclass
class Judgement:
    """What one judge said of one reply: the G-Eval value and how it was reached."""

    value: float | None
    method: str
    raw: str
    distribution: dict[int, float] | None = None
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def scored(self) -> bool:
        return self.value is not None


def parse_score(text: str, cot: bool = False) -> ScoreMatch:
    """Find the judge's 1-5 score in its output.

    Score-only output must hold the score on its first non-empty line
    ("4", "4.", "Score: 4", "**4**", "4/5", "Rating: 4 out of 5"); with
    ``cot`` the score is taken from the last non-empty line. Anything
    ambiguous, fractional or outside 1-5 raises `ScoreParseError`.
    """
    lines = [(m.start(), m.group()) for m in re.finditer(r"[^\n]+", text) if m.group().strip()]
    if not lines:
        raise ScoreParseError("empty output: no score")
    offset, line = lines[-1] if cot else lines[0]
    # markup characters are blanked, not removed, so offsets stay valid
    plain = _MARKUP.sub(" ", line)
    match = _SCORE_LINE.match(plain)
    if match is None:
        numbers = _NUMBER.findall(plain)
        where = "last" if cot else "first"
        if not numbers:
            raise ScoreParseError(f"no score on the {where} line: {line.strip()[:80]!r}")
        raise ScoreParseError(f"no single score on the {where} line: {line.strip()[:80]!r}")
    number = match.group("score")
    value = float(number)
    if not value.is_integer():
        raise ScoreParseError(f"score {number} is not a whole number from 1 to 5")
    if int(value) not in SCORES:
        raise ScoreParseError(f"score {number} is outside 1-5")
    return ScoreMatch(score=int(value), start=offset + match.start("score"))


def token_score(token: str) -> int | None:
    """The score 1-5 that a single token stands for (" 4", "4", "**4"), if any."""
    stripped = _MARKUP.sub("", token).strip().rstrip(".:")
    if len(stripped) == 1 and stripped in "12345":
        return int(stripped)
    return None


def score_token_index(tokens: list[Logprob], text: str, match: ScoreMatch) -> int | None:
    """Index of the token that emitted the parsed score.

    Tokens are aligned with the text by their offsets when they spell it out;
    otherwise the first (score-only) or last (CoT) score token is taken.
    """
    position = 0
    if "".join(t.token for t in tokens) == text:
        for index, tok in enumerate(tokens):
            end = position + len(tok.token)
            if position <= match.start < end:
                return index if token_score(tok.token) == match.score else None
            position = end
        return None
    candidates = [i for i, tok in enumerate(tokens) if token_score(tok.token) == match.score]
    return candidates[0] if candidates else None


def logprob_distribution(token: Logprob) -> tuple[dict[int, float], float]:
    """p(k) for k = 1..5 at one token position, renormalised over the score tokens.

    Returns the distribution and the raw probability mass that the score tokens
    held before renormalising (how much of the judge's belief they cover).
    """
    mass: dict[int, float] = dict.fromkeys(SCORES, 0.0)
    seen: set[str] = set()
    alternatives = [(t.token, t.logprob) for t in token.top_logprobs or []]
    if token.token not in {t for t, _ in alternatives}:
        alternatives.append((token.token, token.logprob))
    for tok, logprob in alternatives:
        k = token_score(tok)
        if k is None or tok in seen:
            continue
        seen.add(tok)
        mass[k] += math.exp(logprob)
    total = sum(mass.values())
    if total <= 0:
        raise ScoreParseError("no score token among the top logprobs")
    return {k: p / total for k, p in mass.items()}, total


def expected_score(distribution: dict[int, float]) -> float:
    """Probability-weighted score, sum of p(k) * k."""
    return sum(k * p for k, p in distribution.items())


def choice_text(choice: ChatCompletionChoice) -> str:
    return choice.message.text


def refusal_reason(choice: ChatCompletionChoice) -> str | None:
    """Why a completion is no judgement: the judge refused (even if it wrote a digit first)."""
    if choice.stop_reason != "content_filter":
        return None
    text = choice_text(choice).strip()
    return "the judge refused (stop reason content_filter)" + (f": {text[:80]!r}" if text else "")


def judge_logprobs(choice: ChatCompletionChoice, cot: bool) -> Judgement:
    """G-Eval score of one completion from the logprobs at its score token."""
    text = choice_text(choice)
    match = parse_score(text, cot)
    if choice.logprobs is None or not choice.logprobs.content:
        raise LogprobsMissing("the judge returned no logprobs")
    tokens = choice.logprobs.content
    index = score_token_index(tokens, text, match)
    if index is None:
        raise LogprobsMissing(f"no logprob token carries the score {match.score}")
    if not tokens[index].top_logprobs:
        raise LogprobsMissing("the judge returned no top_logprobs at the score token")
    distribution, mass = logprob_distribution(tokens[index])
    return Judgement(
        value=expected_score(distribution),
        method="logprobs",
        raw=text,
        distribution=distribution,
        details={"parsed": match.score, "score_token_mass": mass},
    )


class LogprobsMissing(ScoreParseError):
    """The judge's output carries no usable logprobs at the score token."""


def judge_samples(choices: list[ChatCompletionChoice], cot: bool, n: int) -> Judgement:
    """G-Eval score estimated from n sampled completions: the mean of parsed scores."""
    texts = [choice_text(c) for c in choices[:n]]
    parsed: list[int] = []
    failures: list[str] = []
    for choice, text in zip(choices[:n], texts, strict=True):
        refused = refusal_reason(choice)
        if refused:
            failures.append(refused)
            continue
        try:
            parsed.append(parse_score(text, cot).score)
        except ScoreParseError as ex:
            failures.append(str(ex))
    details: dict[str, Any] = {
        "n_requested": n,
        "n_received": len(texts),
        "n_parsed": len(parsed),
        "parse_failures": failures,
        "scores": parsed,
    }
    raw = texts[0] if texts else ""
    if not parsed:
        reason = f"none of {len(texts)} samples held a valid score"
        return Judgement(None, "samples", raw, reason=reason, details=details)
    distribution = {k: parsed.count(k) / len(parsed) for k in SCORES}
    return Judgement(
        value=sum(parsed) / len(parsed),
        method="samples",
        raw=raw,
        distribution=distribution,
        details=details,
    )


def judge_output(output: ModelOutput, method: Method, samples: int, cot: bool) -> Judgement:
    """Turn a judge's output into a G-Eval judgement with the chosen method."""
    if not output.choices:
        reason = output.error or "the judge returned no completion"
        return Judgement(None, method, "", reason=reason)
    if method == "samples":
        return judge_samples(output.choices, cot, samples)
    choice = output.choices[0]
    text = choice_text(choice)
    refused = refusal_reason(choice)
    if refused:
        return Judgement(None, method, text, reason=refused)
    if method in ("logprobs", "auto"):
        try:
            return judge_logprobs(choice, cot)
        except LogprobsMissing as ex:
            if method == "logprobs":
                return Judgement(None, "logprobs", text, reason=str(ex))
            fallback = str(ex)
        except ScoreParseError as ex:
            return Judgement(None, method, text, reason=str(ex))
    else:
        fallback = None
    try:
        match = parse_score(text, cot)
    except ScoreParseError as ex:
        return Judgement(None, "parse", text, reason=str(ex))
    details: dict[str, Any] = {"parsed": match.score}
    if fallback:
        details["logprobs_unavailable"] = fallback
    return Judgement(
        value=float(match.score),
        method="parse",
        raw=text,
        distribution={k: float(k == match.score) for k in SCORES},
        details=details,
    )


def method_config(method: Method, samples: int = DEFAULT_SAMPLES) -> GenerateConfig:
    """Generation settings a method needs; explicit user settings take precedence."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    if method == "samples":
        if samples < 1:
            raise ValueError(f"samples must be at least 1, not {samples}")
        return GenerateConfig(num_choices=samples, temperature=1.0)
    if method == "parse":
        return GenerateConfig(temperature=0.0)
    return GenerateConfig(temperature=0.0, logprobs=True, top_logprobs=TOP_LOGPROBS)


async def complete_choices(
    model: Model,
    prompt: list[ChatMessage],
    output: ModelOutput,
    n: int,
    config: GenerateConfig,
) -> ModelOutput:
    """Top up an output to n choices with further calls, for providers without ``n``."""
    choices = list(output.choices)
    usage = output.usage
    while len(choices) < n:
        more = await model.generate(
            prompt, config=config.merge(GenerateConfig(num_choices=n - len(choices)))
        )
        if not more.choices:
            break
        choices.extend(more.choices)
        usage = add_usage(usage, more.usage)
    return output.model_copy(update={"choices": choices, "usage": usage})


def add_usage(a: ModelUsage | None, b: ModelUsage | None) -> ModelUsage | None:
    if a is None or b is None:
        return a or b
    return a + b


async def generate_judgement(
    model: Model,
    prompt: list[ChatMessage],
    method: Method,
    samples: int,
    cot: bool,
) -> tuple[Judgement, ModelOutput]:
    """Ask a judge model for its rating and score it with the chosen method."""
    config = method_config(method, samples)
    config = config.merge(_explicit(model.config))
    output = await model.generate(prompt, config=config)
    if method == "samples":
        output = await complete_choices(model, prompt, output, samples, config)
    return judge_output(output, method, samples, cot), output


def _explicit(config: GenerateConfig) -> GenerateConfig:
    """The settings a user gave a model explicitly (they override method defaults)."""
    return GenerateConfig(**config.model_dump(exclude_none=True))
