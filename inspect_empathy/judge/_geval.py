"""G-Eval scoring: weight a judge's score by its logprobs, or average sampled scores."""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from typing import Any, Literal

from inspect_ai.model import (
    ChatCompletionChoice,
    GenerateConfig,
    Logprob,
    ModelOutput,
    ModelUsage,
)

from ._answer import (
    Answer,
    LogprobsMissing,
    NoAnswer,
    answer_tokens_start,
    choice_text,
    read_answer,
    score_token_index,
    token_bytes,
    token_score,  # noqa: F401  (the score a token stands for: read here by callers)
    verdict,
)
from ._score_text import SCORES, ScoreMatch, ScoreParseError

Method = Literal["auto", "logprobs", "samples", "parse"]
METHODS: tuple[str, ...] = ("auto", "logprobs", "samples", "parse")
TOP_LOGPROBS = 20
DEFAULT_COMPLETIONS = 20
"""Completions per dialog for the ``samples`` method (G-Eval used 20)."""
MAX_TOKENS = 24
"""Default output bound for score-only answers: every verdict form docs/scoring.md lists takes
at most 17 tokens and an end token under cl100k, o200k, Qwen2 and GPT-2's tokenizers
(benchmarks/results/answer_tokens.json); 24 leaves room for other tokenizers. A compliant
judge still writes one or two tokens: the bound is a ceiling, not a cost."""
MAX_TOKENS_COT = 512
"""Default output bound for ``cot`` answers: a few sentences, then the score."""
LOW_MASS = 0.5
"""A logprobs score whose five score tokens held less probability than this is low-mass."""
SHORT_LIST = 0.1
"""A logprobs score whose listed alternatives leave more of the probability than this
unlisted (a short list: one entry at p = 0.6 leaves 0.4) is flagged ``short_list``: the
tokens left out may be scores, and the weighted score cannot see them."""
MAX_SHIFT = 0.25
"""The most that the unreadable answers of a ``samples`` score could move it, at worst, on
the 1-5 scale: each could have said 1 or 5, so u unreadable out of n move the mean by at
most 4u/n (`unread_shift`)."""
MIN_PARSED = 1 - MAX_SHIFT / 4
"""Default least share of the answers drawn that must hold a valid score (15 of 16; 19 of
20): the share at which `MAX_SHIFT` holds."""
_MAX_LOGPROB = 1e-3
_MAX_TOTAL_EXCESS = 0.01
"""How far above 1 the probabilities listed at one position may add up (providers round
each logprob) before the list is malformed."""
ASKED_AGAIN = "empathy_asked_again"
"""ModelOutput metadata of a call sent again with room to finish (`_judge_call._generate`):
the first bound, the second, and how many of the first call's answers it cut."""
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


def judge_logprobs(
    choice: ChatCompletionChoice,
    low_mass: str = "keep",
    certain_if_dropped: bool = False,
    answer: Answer | None = None,
) -> Judgement:
    """G-Eval score of one completion from the logprobs at its score token.

    The completion must carry an answer (`_answer.read_answer`: a finished stop, the
    region after all reasoning) and a verdict in it; the score token is the one that
    wrote that verdict, found by spelling the answer with the tokens
    (`_answer.score_token_index`). ``certain_if_dropped``: the service
    omits a logprob of 0 (p = 1) and Inspect then drops the token, so a score whose token
    alone is missing was certain. ``answer``: the choice's `read_answer`, where the caller
    has read it already.
    """
    if answer is None:
        answer = read_answer(choice)
    text = answer.written
    match = verdict(answer)
    if match.word:
        raise LogprobsMissing(
            f"the score is written as a word ({text[match.start : match.end]!r}); "
            "logprobs weigh digit tokens only"
        )
    tokens = answer.tokens
    if not tokens:
        raise LogprobsMissing("the judge returned no logprobs")
    try:
        index = score_token_index(tokens, text, match, answer.reasoning)
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
    unlisted = 1.0 - _listed(tokens[index])
    if unlisted > SHORT_LIST:
        details["short_list"] = True
        details["unlisted_mass"] = round(unlisted, 6)
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


def _listed(token: Logprob) -> float:
    """The probability the alternatives listed at one position hold together (the
    chosen token counted once, as `logprob_distribution` counts it)."""
    alternatives = dict.fromkeys((t.token, t.logprob) for t in token.top_logprobs or [])
    if token.token not in {t for t, _ in alternatives}:
        alternatives[(token.token, token.logprob)] = None
    return math.fsum(_probability(lp, tok) for tok, lp in alternatives)


def _dropped_at(tokens: list[Logprob], text: str, match: ScoreMatch) -> bool:
    """True when the tokens after any reasoning spell the answer except for a gap at the
    score: the score's token was left out (not replaced by other text)."""
    target_text = text.encode("utf-8", "surrogatepass")
    start = len(text[: match.start].encode("utf-8", "surrogatepass"))
    joined = b"".join(token_bytes(t) for t in tokens)[answer_tokens_start(tokens) :]
    matcher = difflib.SequenceMatcher(None, joined, target_text, autojunk=False)
    for tag, _a1, _a2, b1, b2 in matcher.get_opcodes():
        if b1 <= start < b2:
            gap = target_text[b1:b2].decode("utf-8", "replace")
            return tag == "insert" and gap.strip(" *:") == text[match.start : match.end]
    return False


def _read_samples(choices: list[ChatCompletionChoice]) -> tuple[list[int], list[str]]:
    """The valid scores of sampled completions, and why the others hold none."""
    parsed: list[int] = []
    failures: list[str] = []
    for choice in choices:
        try:
            parsed.append(verdict(read_answer(choice)).score)
        except ScoreParseError as ex:
            failures.append(str(ex))
    return parsed, failures


def sampled_scores(choices: list[ChatCompletionChoice]) -> list[int]:
    """The valid scores among sampled completions (as `judge_samples` reads them)."""
    return _read_samples(choices)[0]


def unread_shift(read: int, drawn: int) -> float:
    """The most the unreadable answers could move a mean of ``read`` answers of ``drawn``,
    on the 1-5 scale (each unreadable one could have said 1 or 5)."""
    return 4 * (drawn - read) / drawn if drawn else float("inf")


def judge_samples(
    choices: list[ChatCompletionChoice],
    n: int,
    min_parsed: float = MIN_PARSED,
    sampling: dict[str, Any] | None = None,
) -> Judgement:
    """G-Eval score estimated from n sampled completions: the mean of the valid scores.

    Scored only where the share of the ``n`` that hold a valid score is at least
    ``min_parsed`` (by default, where the unreadable ones could not move the mean by more
    than `MAX_SHIFT`); the share read is in the details. ``sampling``: a sequential draw
    stopped by its rule (``drawn`` answers, their ``posterior_sd``): ``n`` is then the
    number drawn, and the draw is recorded in the details.
    """
    if sampling is not None:
        n = min(n, int(sampling.get("drawn", n)))
    texts = [choice_text(c) for c in choices[:n]]
    parsed, failures = _read_samples(choices[:n])
    details: dict[str, Any] = {
        "n_requested": n,
        "n_received": len(texts),
        "n_parsed": len(parsed),
        "share_read": round(len(parsed) / n, 4) if n else 0.0,
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
        if len(set(failures)) == 1:
            reason += f": {failures[0]}"  # one reason for all (a refusal, a cut, the context)
        return Judgement(None, "samples", raw, reason=reason, details=details)
    if len(parsed) < min_parsed * n - 1e-9:
        shift = unread_shift(len(parsed), n)
        reason = (
            f"only {len(parsed)} of {n} completions held a valid score: the other "
            f"{n - len(parsed)} could move the mean by up to {shift:.2f} (at least "
            f"{min_parsed:.1%} must be read)"
        )
        if failures:
            reason += f"; first unread: {failures[0]}"
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
    judgement = _judge_choices(
        output, choices, method, completions, low_mass, min_parsed, no_logprobs,
        certain_if_dropped,
    )  # fmt: skip
    asked = (output.metadata or {}).get(ASKED_AGAIN)
    if asked:
        judgement.details["asked_again"] = asked
    return judgement


def _judge_choices(
    output: ModelOutput,
    choices: list[ChatCompletionChoice],
    method: Method,
    completions: int,
    low_mass: str,
    min_parsed: float,
    no_logprobs: str | None,
    certain_if_dropped: bool,
) -> Judgement:
    if method == "samples":
        sampling = (output.metadata or {}).get(SAMPLING_KEY)
        return judge_samples(choices, completions, min_parsed, sampling)
    choice = choices[0]
    try:
        answer = read_answer(choice)
    except NoAnswer as ex:
        return Judgement(None, method, choice_text(choice), reason=str(ex))
    text = answer.written
    fallback: str | None = no_logprobs if method == "auto" else None
    if method in ("logprobs", "auto") and fallback is None:
        try:
            return judge_logprobs(choice, low_mass, certain_if_dropped, answer)
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
        match = verdict(answer)
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
