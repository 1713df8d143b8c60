"""G-Eval scoring: weight a judge's score by its logprobs, or average sampled scores."""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from inspect_ai.model import (
    ChatCompletionChoice,
    GenerateConfig,
    Logprob,
    ModelOutput,
    ModelUsage,
)

from ._score_text import (
    FULLWIDTH_DIGITS,
    SCORES,
    ScoreMatch,
    ScoreParseError,
    clean_text,
    parse_score,
)

_TOKEN_MARKUP = re.compile(r"[*_`#>]")
_BPE_SPACES = str.maketrans({"Ġ": " ", "▁": " ", "Ċ": "\n"})
"""Raw tokenizer markers some servers return instead of the space or newline they stand for."""

Method = Literal["auto", "logprobs", "samples", "parse"]
METHODS: tuple[str, ...] = ("auto", "logprobs", "samples", "parse")
TOP_LOGPROBS = 20
DEFAULT_COMPLETIONS = 20
"""Completions per dialog for the ``samples`` method (G-Eval used 20)."""
MAX_TOKENS = 24
"""Default output bound for score-only answers: every answer the parse table accepts takes
at most 17 tokens and an end token under cl100k, o200k, Qwen2 and GPT-2's tokenizers
(benchmarks/results/answer_tokens.json); 24 leaves room for other tokenizers. A compliant
judge still writes one or two tokens: the bound is a ceiling, not a cost."""
MAX_TOKENS_COT = 512
"""Default output bound for ``cot`` answers: a few sentences, then the score."""
LOW_MASS = 0.5
"""A logprobs score whose five score tokens held less probability than this is low-mass."""
MIN_PARSED = 0.5
"""Default minimum share of the requested completions that must hold a valid score."""
_MAX_LOGPROB = 1e-3
_MAX_TOTAL_EXCESS = 0.01
"""How far above 1 the probabilities listed at one position may add up (providers round
each logprob) before the list is malformed."""
SAMPLING_KEY = "empathy_sampling"
"""ModelOutput metadata of a sequential draw (`_judge_call.draw_sequentially`): answers
drawn, calls, the posterior SD of the weighted score, why drawing stopped."""


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
    """A token's bytes: its ``bytes`` field, a ``bytes:\\xNN`` escape, or its UTF-8.

    A ``bytes`` field that holds Unicode code points (Together's logprobs: ``’`` is
    ``[8217]``) is read as the characters it spells; one that is neither is left aside
    for the token's string.
    """
    if token.bytes:
        if all(isinstance(b, int) and 0 <= b < 256 for b in token.bytes):
            return bytes(token.bytes)
        if all(isinstance(b, int) and 0 <= b <= 0x10FFFF for b in token.bytes):
            return "".join(map(chr, token.bytes)).encode("utf-8", "surrogatepass")
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
    if _probability(token.logprob, token.token) == 0.0:
        # the token the judge wrote cannot have had probability 0: the list is not its own
        raise LogprobsMissing(f"the chosen token {token.token!r} has logprob {token.logprob!r}")
    # an exact repeat (same string, same logprob) is one token listed twice; two tokens
    # that read alike but differ in logprob are two tokens (two ids), and both count
    alternatives = list(dict.fromkeys((t.token, t.logprob) for t in token.top_logprobs or []))
    if token.token not in {t for t, _ in alternatives}:
        alternatives.append((token.token, token.logprob))
    listed = 0.0
    for tok, logprob in alternatives:
        p = _probability(logprob, tok)
        listed += p
        k = token_score(tok)
        if k is not None:
            mass[k] += p
    if listed > 1.0 + _MAX_TOTAL_EXCESS:
        # the alternatives at one position are exclusive: together at most 1 (and rounding)
        raise LogprobsMissing(f"the top logprobs at the score add up to p = {listed:.3f} > 1")
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
    """Why a completion is no judgement: the judge refused (even if it wrote a digit first),
    by its stop reason or by the provider's refusal field (OpenAI's ``refusal``, which
    Inspect keeps as content marked ``refusal``)."""
    text = choice_text(choice).strip()
    shown = f": {text[:80]!r}" if text else ""
    if choice.stop_reason == "content_filter":
        return "the judge refused (stop reason content_filter)" + shown
    content = choice.message.content if choice.message is not None else None
    if isinstance(content, list) and any(getattr(c, "refusal", None) for c in content):
        return "the judge refused (the provider's refusal field)" + shown
    return None


def too_long_reason(choice: ChatCompletionChoice) -> str | None:
    """Why an output Inspect made of a provider's "prompt too long" refusal is no answer
    (stop reason ``model_length`` with the provider's message as its text): never parsed."""
    if choice.stop_reason != "model_length":
        return None
    text = " ".join(choice_text(choice).split())[:160]
    return (
        "the prompt is too long for the judge's context (stop reason model_length"
        + (f": {text!r}" if text else "")
        + "): shorten the dialogs with -T max_turns=N or use a judge with a longer context"
    )


def cut_off_reason(choice: ChatCompletionChoice, cot: bool) -> str | None:
    """Why a completion stopped by the output bound is no judgement, before reading it.

    A reasoned (``cot``) answer cut off by ``max_tokens`` never reached its score; a
    score-only answer is read as far as it goes (`cut_verdict`), unless it holds nothing.
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


_LIST_ITEM = re.compile(r"[.)]\s+\S")


_UNFINISHED = re.compile(
    r"[\s*_`]*(?:/|out(?:\s+of)?|of|or|to|and|-|–|—|,|\.)\s*", re.IGNORECASE
)
"""What may follow a score in a cut answer and still go on to change it."""


def cut_verdict(choice: ChatCompletionChoice, match: ScoreMatch) -> None:
    """Refuse the score of a score-only answer the bound cut, unless it is a verdict.

    In a cut answer the score counts only where the answer opens with it (``4``,
    ``**4** - warm``) or where it follows an overall label (``Score: 4 because``); a
    number in reasoning that the bound cut before its verdict (``1. Read the
    conversation``, ``Step 1:``, ``anxious about 2 exams``) is never the score, nor is a
    number the cut may have ended early (``Score: 1`` of ``Score: 10``).
    """
    if choice.stop_reason != "max_tokens":
        return
    text = choice_text(choice)
    after = text[match.end :]
    if not after.strip() or _UNFINISHED.fullmatch(after):
        # "Score: 4/" may have gone on "10", "3 or" on "4", "3." on "5"
        raise ScoreParseError(f"cut off by max_tokens right after {text[match.start:].strip()!r}")
    if match.label == "overall":
        return
    opening = not clean_text(text)[: match.start].strip()
    if not opening:
        raise ScoreParseError(
            f"cut off by max_tokens before a verdict ({text.strip()[:60]!r}): a number in "
            "a cut answer is its score only at its start or after a score label"
        )
    if _LIST_ITEM.match(after):
        raise ScoreParseError(
            f"cut off by max_tokens in a numbered list ({text.strip()[:60]!r}), before a verdict"
        )


def judge_logprobs(
    choice: ChatCompletionChoice,
    cot: bool,
    low_mass: str = "keep",
    certain_if_dropped: bool = False,
) -> Judgement:
    """G-Eval score of one completion from the logprobs at its score token.

    ``certain_if_dropped``: the service omits a logprob of 0 (p = 1) and Inspect then
    drops the token, so a score whose token alone is missing was certain.
    """
    text = choice_text(choice)
    match = parse_score(text, cot)
    cut_verdict(choice, match)
    if match.word:
        raise LogprobsMissing(
            f"the score is written as a word ({text[match.start : match.end]!r}); "
            "logprobs weigh digit tokens only"
        )
    if choice.logprobs is None or not choice.logprobs.content:
        raise LogprobsMissing("the judge returned no logprobs")
    tokens = choice.logprobs.content
    try:
        index = score_token_index(tokens, text, match)
    except LogprobsMissing:
        if certain_if_dropped and _dropped_at(tokens, text, match):
            return Judgement(
                value=float(match.score),
                method="logprobs",
                raw=text,
                distribution={k: float(k == match.score) for k in SCORES},
                details={"parsed": match.score, "score_token_mass": 1.0, "certain": True},
            )
        raise
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


def _dropped_at(tokens: list[Logprob], text: str, match: ScoreMatch) -> bool:
    """True when the tokens spell the text except for a gap at the score: the score's
    token was left out (not replaced by other text)."""
    target_text = text.encode("utf-8", "surrogatepass")
    start = len(text[: match.start].encode("utf-8", "surrogatepass"))
    joined = b"".join(_token_bytes(t) for t in tokens)
    matcher = difflib.SequenceMatcher(None, joined, target_text, autojunk=False)
    for tag, _a1, _a2, b1, b2 in matcher.get_opcodes():
        if b1 <= start < b2:
            gap = target_text[b1:b2].decode("utf-8", "replace")
            return tag == "insert" and gap.strip(" *:") == text[match.start : match.end]
    return False


def _read_samples(choices: list[ChatCompletionChoice], cot: bool) -> tuple[list[int], list[str]]:
    """The valid scores of sampled completions, and why the others hold none."""
    parsed: list[int] = []
    failures: list[str] = []
    for choice in choices:
        problem = too_long_reason(choice) or refusal_reason(choice) or cut_off_reason(choice, cot)
        if problem:
            failures.append(problem)
            continue
        try:
            match = parse_score(choice_text(choice), cot)
            cut_verdict(choice, match)
            parsed.append(match.score)
        except ScoreParseError as ex:
            failures.append(str(ex))
    return parsed, failures


def sampled_scores(choices: list[ChatCompletionChoice], cot: bool) -> list[int]:
    """The valid scores among sampled completions (as `judge_samples` reads them)."""
    return _read_samples(choices, cot)[0]


def judge_samples(
    choices: list[ChatCompletionChoice],
    cot: bool,
    n: int,
    min_parsed: float = MIN_PARSED,
    sampling: dict[str, Any] | None = None,
) -> Judgement:
    """G-Eval score estimated from n sampled completions: the mean of parsed scores.

    Unscored when fewer than ``min_parsed`` of the ``n`` requested completions hold a
    valid score; a score from fewer than all ``n`` is marked ``partial``. ``sampling``:
    a sequential draw stopped by its rule (``drawn`` answers, their ``posterior_sd``):
    ``n`` is then the number drawn, and the draw is recorded in the details.
    """
    if sampling is not None:
        n = min(n, int(sampling.get("drawn", n)))
    texts = [choice_text(c) for c in choices[:n]]
    parsed, failures = _read_samples(choices[:n], cot)
    details: dict[str, Any] = {
        "n_requested": n,
        "n_received": len(texts),
        "n_parsed": len(parsed),
        "scores": parsed,
    }
    if sampling is not None:
        details["sequential"] = dict(sampling)
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
    no_logprobs: str | None = None,
    certain_if_dropped: bool = False,
) -> Judgement:
    """Turn a judge's output into a G-Eval judgement with the chosen method
    (``completions``: how many completions the ``samples`` method reads).

    ``no_logprobs``: why logprobs were not asked for (``auto`` then parses, with that
    reason); ``certain_if_dropped``: see `judge_logprobs`.
    """
    choices = [c for c in output.choices if c.message is not None]
    if not choices:
        reason = output.error or "the judge returned no completion"
        return Judgement(None, method, "", reason=reason)
    if method == "samples":
        sampling = (output.metadata or {}).get(SAMPLING_KEY)
        return judge_samples(choices, cot, completions, min_parsed, sampling)
    choice = choices[0]
    text = choice_text(choice)
    problem = too_long_reason(choice) or refusal_reason(choice) or cut_off_reason(choice, cot)
    if problem:
        return Judgement(None, method, text, reason=problem)
    fallback: str | None = no_logprobs if method == "auto" else None
    if method in ("logprobs", "auto") and fallback is None:
        try:
            return judge_logprobs(choice, cot, low_mass, certain_if_dropped)
        except LogprobsMissing as ex:
            if method == "logprobs":
                return Judgement(None, "logprobs", text, reason=str(ex))
            fallback = str(ex)
        except ScoreParseError as ex:
            return Judgement(None, method, text, reason=str(ex))
        except (ValueError, TypeError, OverflowError, IndexError, AttributeError) as ex:
            # a logprob field of a shape no service documents: unusable, never a crash
            reason = f"malformed logprobs ({type(ex).__name__}: {ex})"
            if method == "logprobs":
                return Judgement(None, "logprobs", text, reason=reason)
            fallback = reason
    try:
        match = parse_score(text, cot)
        cut_verdict(choice, match)
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


def add_usage(a: ModelUsage | None, b: ModelUsage | None) -> ModelUsage | None:
    if a is None or b is None:
        return a or b
    return a + b
