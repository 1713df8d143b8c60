"""G-Eval scoring: weight a judge's score by its logprobs, or average sampled scores."""

from __future__ import annotations

import difflib
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
from inspect_ai.util import collect

from ._score_text import FULLWIDTH_DIGITS, SCORES, ScoreMatch, ScoreParseError, parse_score

_TOKEN_MARKUP = re.compile(r"[*_`#>]")
_BPE_SPACES = str.maketrans({"Ġ": " ", "▁": " ", "Ċ": "\n"})
"""Raw tokenizer markers some servers return instead of the space or newline they stand for."""

Method = Literal["auto", "logprobs", "samples", "parse"]
METHODS: tuple[str, ...] = ("auto", "logprobs", "samples", "parse")
TOP_LOGPROBS = 20
DEFAULT_COMPLETIONS = 20
"""Completions per dialog for the ``samples`` method (G-Eval used 20)."""
MAX_TOKENS = 8
"""Default output bound for score-only answers: room for "Score: 4" (G-Eval used 5)."""
MAX_TOKENS_COT = 512
"""Default output bound for ``cot`` answers: a few sentences, then the score."""
LOW_MASS = 0.5
"""A logprobs score whose five score tokens held less probability than this is low-mass."""
MIN_PARSED = 0.5
"""Default minimum share of the requested completions that must hold a valid score."""
_MAX_LOGPROB = 1e-3


@dataclass
class Judgement:
    """What one judge said of one reply: the G-Eval value and how it was reached."""

    value: float | None
    method: str
    raw: str
    distribution: dict[int, float] | None = None
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


class LogprobsMissing(ScoreParseError):
    """The judge's output carries no usable logprobs at the score token."""


def token_score(token: str) -> int | None:
    """The score 1-5 that a single token stands for (" 4", "4", "**4", "４", "Ġ4"), if any.

    Number words ("four") are not score tokens: G-Eval weighs digit tokens only.
    """
    plain = token.translate(FULLWIDTH_DIGITS).translate(_BPE_SPACES)
    stripped = _TOKEN_MARKUP.sub("", plain).strip().rstrip(".:,)")
    stripped = stripped.lstrip(":(")
    if len(stripped) == 1 and stripped in "12345":
        return int(stripped)
    return None


def _token_bytes(token: Logprob) -> bytes:
    """A token's bytes: its ``bytes`` field, a ``bytes:\\xNN`` escape, or its UTF-8."""
    if token.bytes is not None:
        return bytes(token.bytes)
    if token.token.startswith("bytes:"):
        try:
            return token.token[len("bytes:") :].encode("latin-1").decode("unicode_escape").encode(
                "latin-1"
            )
        except (UnicodeError, ValueError):
            pass
    return token.token.translate(_BPE_SPACES).encode("utf-8", "surrogatepass")


def _covering(lengths: list[int], position: int) -> int | None:
    offset = 0
    for index, length in enumerate(lengths):
        if offset <= position < offset + length:
            return index
        offset += length
    return None


def score_token_index(tokens: list[Logprob], text: str, match: ScoreMatch) -> int:
    """Index of the token that wrote the parsed score.

    Tokens are aligned with the text by their bytes (which spell the text even
    where a token splits a multi-byte character), else by their strings; where
    neither spells the text (providers that return U+FFFD or escapes for split
    characters), by the longest matching blocks of bytes, accepted only where
    the score's own byte falls inside a matched block. Raises `LogprobsMissing`
    with the reason when no token can be shown to be the score's.
    """
    target_text = text.encode("utf-8", "surrogatepass")
    target = len(text[: match.start].encode("utf-8", "surrogatepass"))
    chunks = [_token_bytes(t) for t in tokens]
    index: int | None
    if b"".join(chunks) == target_text:
        index = _covering([len(c) for c in chunks], target)
    else:
        joined = b"".join(chunks)
        matcher = difflib.SequenceMatcher(None, joined, target_text, autojunk=False)
        index = None
        for a, b, size in matcher.get_matching_blocks():
            if b <= target < b + size:
                index = _covering([len(c) for c in chunks], a + target - b)
                break
        if index is None:
            raise LogprobsMissing(
                "the judge's tokens do not spell its text and cannot be aligned at the score"
            )
    if index is None:
        raise LogprobsMissing("no logprob token covers the score")
    if token_score(tokens[index].token) != match.score:
        raise LogprobsMissing(
            f"the token at the score, {tokens[index].token!r}, is not the score digit alone"
        )
    return index


def _probability(logprob: float, token: str) -> float:
    if math.isnan(logprob) or logprob > _MAX_LOGPROB:
        raise LogprobsMissing(f"malformed logprob {logprob!r} for token {token!r}")
    return math.exp(min(logprob, 0.0))


def logprob_distribution(token: Logprob) -> tuple[dict[int, float], float]:
    """p(k) for k = 1..5 at one token position, renormalised over the score tokens.

    Returns the distribution and the raw probability mass that the score tokens
    held before renormalising (how much of the judge's belief they cover).
    Raises `LogprobsMissing` for malformed logprobs (NaN, positive) and
    `ScoreParseError` when no score token is among them.
    """
    mass: dict[int, float] = dict.fromkeys(SCORES, 0.0)
    seen: set[str] = set()
    _probability(token.logprob, token.token)
    alternatives = [(t.token, t.logprob) for t in token.top_logprobs or []]
    if token.token not in {t for t, _ in alternatives}:
        alternatives.append((token.token, token.logprob))
    for tok, logprob in alternatives:
        p = _probability(logprob, tok)
        k = token_score(tok)
        if k is None or tok in seen:
            continue
        seen.add(tok)
        mass[k] += p
    total = sum(mass.values())
    if total <= 0:
        raise ScoreParseError("no score token among the top logprobs")
    return {k: p / total for k, p in mass.items()}, total


def expected_score(distribution: dict[int, float]) -> float:
    """Probability-weighted score, sum of p(k) * k."""
    return sum(k * p for k, p in distribution.items())


def choice_text(choice: ChatCompletionChoice) -> str:
    return choice.message.text if choice.message is not None else ""


def refusal_reason(choice: ChatCompletionChoice) -> str | None:
    """Why a completion is no judgement: the judge refused (even if it wrote a digit first)."""
    if choice.stop_reason != "content_filter":
        return None
    text = choice_text(choice).strip()
    return "the judge refused (stop reason content_filter)" + (f": {text[:80]!r}" if text else "")


def cut_off_reason(choice: ChatCompletionChoice, cot: bool) -> str | None:
    """Why a completion stopped by the output bound is no judgement.

    A reasoned (``cot``) answer cut off by ``max_tokens`` never reached its score;
    a score-only answer is read as far as it goes, unless it holds nothing yet.
    """
    if choice.stop_reason != "max_tokens":
        return None
    if cot:
        return "cut off by max_tokens before the score (stop reason max_tokens)"
    if not choice_text(choice).strip():
        return (
            "cut off by max_tokens before any output (reasoning models spend the bound on "
            "reasoning: raise --max-tokens)"
        )
    return None


def _cut_after(choice: ChatCompletionChoice, match: ScoreMatch) -> bool:
    """A score-only answer cut off right after its score: "1" may have been "10"."""
    text = choice_text(choice)
    return choice.stop_reason == "max_tokens" and not text[match.end :].strip()


def judge_logprobs(choice: ChatCompletionChoice, cot: bool, low_mass: str = "keep") -> Judgement:
    """G-Eval score of one completion from the logprobs at its score token."""
    text = choice_text(choice)
    match = parse_score(text, cot)
    if _cut_after(choice, match):
        raise ScoreParseError(f"cut off by max_tokens right after {text[match.start:].strip()!r}")
    if match.word:
        raise LogprobsMissing(
            f"the score is written as a word ({text[match.start : match.end]!r}); "
            "logprobs weigh digit tokens only"
        )
    if choice.logprobs is None or not choice.logprobs.content:
        raise LogprobsMissing("the judge returned no logprobs")
    tokens = choice.logprobs.content
    index = score_token_index(tokens, text, match)
    if not tokens[index].top_logprobs:
        raise LogprobsMissing("the judge returned no top_logprobs at the score token")
    distribution, mass = logprob_distribution(tokens[index])
    details: dict[str, Any] = {"parsed": match.score, "score_token_mass": round(mass, 6)}
    if mass < LOW_MASS:
        details["low_mass"] = True
        if low_mass == "unscored":
            reason = (
                f"low-mass score: the score tokens held {mass:.1%} of the probability "
                f"(below {LOW_MASS:.0%})"
            )
            return Judgement(None, "logprobs", text, distribution, reason, details)
    return Judgement(
        value=expected_score(distribution),
        method="logprobs",
        raw=text,
        distribution=distribution,
        details=details,
    )


def judge_samples(
    choices: list[ChatCompletionChoice], cot: bool, n: int, min_parsed: float = MIN_PARSED
) -> Judgement:
    """G-Eval score estimated from n sampled completions: the mean of parsed scores.

    Unscored when fewer than ``min_parsed`` of the ``n`` requested completions hold a
    valid score; a score from fewer than all ``n`` is marked ``partial``.
    """
    texts = [choice_text(c) for c in choices[:n]]
    parsed: list[int] = []
    failures: list[str] = []
    for choice, text in zip(choices[:n], texts, strict=True):
        problem = refusal_reason(choice) or cut_off_reason(choice, cot)
        if problem:
            failures.append(problem)
            continue
        try:
            match = parse_score(text, cot)
            if _cut_after(choice, match):
                raise ScoreParseError(f"cut off by max_tokens right after {match.score}")
            parsed.append(match.score)
        except ScoreParseError as ex:
            failures.append(str(ex))
    details: dict[str, Any] = {
        "n_requested": n,
        "n_received": len(texts),
        "n_parsed": len(parsed),
        "scores": parsed,
    }
    if failures:
        details["parse_failures"] = failures
    if len(parsed) < n:
        details["partial"] = True
    raw = texts[0] if texts else ""
    if not parsed:
        reason = f"none of {len(texts)} completions held a valid score"
        return Judgement(None, "samples", raw, reason=reason, details=details)
    if len(parsed) < min_parsed * n:
        reason = (
            f"only {len(parsed)} of {n} completions held a valid score "
            f"(at least {min_parsed:.0%} needed)"
        )
        return Judgement(None, "samples", raw, reason=reason, details=details)
    distribution = {k: parsed.count(k) / len(parsed) for k in SCORES}
    return Judgement(
        value=sum(parsed) / len(parsed),
        method="samples",
        raw=raw,
        distribution=distribution,
        details=details,
    )


def judge_output(
    output: ModelOutput,
    method: Method,
    completions: int,
    cot: bool,
    low_mass: str = "keep",
    min_parsed: float = MIN_PARSED,
) -> Judgement:
    """Turn a judge's output into a G-Eval judgement with the chosen method
    (``completions``: how many completions the ``samples`` method reads)."""
    choices = [c for c in output.choices if c.message is not None]
    if not choices:
        reason = output.error or "the judge returned no completion"
        return Judgement(None, method, "", reason=reason)
    if method == "samples":
        return judge_samples(choices, cot, completions, min_parsed)
    choice = choices[0]
    text = choice_text(choice)
    problem = refusal_reason(choice) or cut_off_reason(choice, cot)
    if problem:
        return Judgement(None, method, text, reason=problem)
    fallback: str | None = None
    if method in ("logprobs", "auto"):
        try:
            return judge_logprobs(choice, cot, low_mass)
        except LogprobsMissing as ex:
            if method == "logprobs":
                return Judgement(None, "logprobs", text, reason=str(ex))
            fallback = str(ex)
        except ScoreParseError as ex:
            return Judgement(None, method, text, reason=str(ex))
    try:
        match = parse_score(text, cot)
        if _cut_after(choice, match):
            raise ScoreParseError(f"cut off by max_tokens right after {match.score}")
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


def check_method(method: str, completions: int = DEFAULT_COMPLETIONS) -> None:
    """Raise a one-line ``ValueError`` for an unknown method or, for ``samples``, a
    completion count below 1."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    if method == "samples" and (isinstance(completions, bool) or completions < 1):
        raise ValueError(f"completions must be at least 1, not {completions!r}")


def method_config(
    method: Method, completions: int = DEFAULT_COMPLETIONS, cot: bool = False
) -> GenerateConfig:
    """Generation settings a method needs (explicit user settings take precedence).

    Every method bounds the output: `MAX_TOKENS` for score-only answers,
    `MAX_TOKENS_COT` with ``cot``.
    """
    check_method(method, completions)
    bound = MAX_TOKENS_COT if cot else MAX_TOKENS
    if method == "samples":
        return GenerateConfig(num_choices=completions, temperature=1.0, max_tokens=bound)
    if method == "parse":
        return GenerateConfig(temperature=0.0, max_tokens=bound)
    return GenerateConfig(
        temperature=0.0, logprobs=True, top_logprobs=TOP_LOGPROBS, max_tokens=bound
    )


async def complete_choices(
    model: Model,
    prompt: list[ChatMessage],
    output: ModelOutput,
    n: int,
    config: GenerateConfig,
    seed: int | None,
) -> ModelOutput:
    """Top up an output to n choices, for providers that ignore ``n``.

    The missing completions are asked for concurrently, in calls of as many
    choices as the first call returned, with the caller's settings; when a seed
    is set each call gets its own (seed + 1, seed + 2, ...), so a provider that
    honours seeds does not return one completion n times.
    """
    choices = list(output.choices)
    usage = output.usage
    batch = max(1, len(choices))
    calls = 0
    for _ in range(3):
        missing = n - len(choices)
        if missing <= 0 or not choices:
            break
        sizes = [min(batch, missing - i) for i in range(0, missing, batch)]
        requests = []
        for size in sizes:
            calls += 1
            extra = GenerateConfig(num_choices=size)
            if seed is not None:
                extra.seed = seed + calls
            requests.append(model.generate(prompt, config=config.merge(extra)))
        outputs = await collect(*requests)
        added = [c for more in outputs for c in more.choices]
        if not added:
            break
        choices.extend(added)
        for more in outputs:
            usage = add_usage(usage, more.usage)
    return output.model_copy(update={"choices": choices[:n], "usage": usage})


def add_usage(a: ModelUsage | None, b: ModelUsage | None) -> ModelUsage | None:
    if a is None or b is None:
        return a or b
    return a + b


async def generate_judgement(
    model: Model,
    prompt: list[ChatMessage],
    method: Method,
    completions: int,
    cot: bool,
    low_mass: str = "keep",
    min_parsed: float = MIN_PARSED,
) -> tuple[Judgement, ModelOutput]:
    """Ask a judge model for its rating and score it with the chosen method
    (``completions``: how many the ``samples`` method asks for)."""
    config = method_config(method, completions, cot).merge(explicit_config(model.config))
    output = await model.generate(prompt, config=config)
    if method == "samples" and output.choices and len(output.choices) < completions:
        output = await complete_choices(model, prompt, output, completions, config, config.seed)
    return judge_output(output, method, completions, cot, low_mass, min_parsed), output


def explicit_config(config: GenerateConfig) -> GenerateConfig:
    """The settings a user gave a model explicitly (they override method defaults)."""
    return GenerateConfig(**config.model_dump(exclude_none=True))
