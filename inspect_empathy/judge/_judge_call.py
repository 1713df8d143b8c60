"""Asking a judge: the request each service accepts, and what to do when it refuses one.

`judge_request` turns a method (``auto``, ``logprobs``, ``samples``, ``parse``) into the
settings the judge's service takes (`_providers.judge_traits`): no logprobs where it has
none, completions split into calls it accepts, an output bound it accepts with room for
reasoning it cannot skip, and the least reasoning it allows. `ask_judge` sends it, learns
once per model from a documented refusal of an option the plugin chose (and says so in
the terminal), and marks answers that used the whole bound as cut, whatever the stop
reason says.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput
from inspect_ai.util import collect

from ..errors import JudgeServiceError
from ._geval import (
    ASKED_AGAIN,
    MAX_SHIFT,
    MAX_TOKENS_COT,
    SAMPLING_KEY,
    Method,
    add_usage,
    method_config,
    sampled_scores,
    unread_shift,
)
from ._providers import (
    EFFORT_BUDGETS,
    THINKING_ROOM,
    JudgeTraits,
    Option,
    context_refusal,
    judge_traits,
    learn_refusal,
    refused_option,
    unreadable_content,
)
from ._score_text import SCORES

logger = logging.getLogger(__name__)

_QUIET_KEYS = ("reasoning_effort", "reasoning_tokens")

PRECISION = 0.065
"""Default stopping bound of sequential sampling (`settled`): drawing stops once one more
answer would be expected to take less than ``PRECISION**2`` off the posterior variance of
the weighted score, i.e. once ``posterior_sd / sqrt(a0 + n + 1) <= PRECISION``. Chosen with
benchmarks/sequential.py on mixes of peaked, split and flat judges (docs/performance.md)."""
PRIOR = 0.005
"""Dirichlet prior weight on each of the five levels (0.025 in all)."""
FIRST_ROUND = 4
"""Answers drawn before the rule is first checked, where the service returns one a call."""
BUDGET = 6
"""Calls a judge's sequential draws average at most over a run (`SamplingLedger`): a draw
goes past ``BUDGET`` calls only on calls earlier draws of the run left unused."""
SHARE = 4
"""A draw past `BUDGET` takes at most ``1/SHARE`` of the calls left unused when it first
does, so that one flat judge does not take what several need."""
_SPLIT_JUDGE = (0.25, 0.125)
"""P(three answers agree), P(four agree) of a judge split 50/50 between two levels: the one
dialog a run's `SamplingLedger.contradiction` starts from."""


def posterior_sd(scores: list[int], prior: float = PRIOR, floor: float = 0.0) -> float:
    """Posterior standard deviation of the weighted score sum p(k) k, under a symmetric
    Dirichlet(``prior``) on the five levels updated with the answers ``scores``:
    Var = Var_p̄(k) / (a0 + n + 1), with p̄ the posterior mean and a0 the prior's total;
    Var_p̄(k), the judge's spread, taken as at least ``floor`` (`SamplingLedger.floor`)."""
    counts = [scores.count(k) + prior for k in SCORES]
    total = sum(counts)
    mean = sum(k * c for k, c in zip(SCORES, counts, strict=True)) / total
    spread = sum((k - mean) ** 2 * c for k, c in zip(SCORES, counts, strict=True)) / total
    return math.sqrt(max(spread, floor) / (total + 1))


def next_cut(scores: list[int], prior: float = PRIOR, floor: float = 0.0) -> float:
    """The root of what one more answer is expected to take off the posterior variance of
    the weighted score: V - E[V'] = Var(E[score | one more answer]) = V / (a0 + n + 1)
    exactly, under the Dirichlet posterior of `posterior_sd`."""
    return posterior_sd(scores, prior, floor) / math.sqrt(len(scores) + 5 * prior + 1)


def settled(scores: list[int], precision: float = PRECISION, floor: float = 0.0) -> bool:
    """The stopping rule of `draw_sequentially`: stop once one more answer is worth less
    than ``precision**2`` of posterior variance (`next_cut`, the judge's spread at least
    ``floor``). Stopping where the marginal gain falls below a price spends answers in
    proportion to a judge's spread (its SD), not its variance: the allocation that
    minimises the summed squared error of many dialogs for their total answers."""
    return bool(scores) and next_cut(scores, floor=floor) <= precision


@dataclass
class SamplingLedger:
    """What one judge's sequential draws in one run (one scorer or solver) left and showed.

    ``spare``: calls the finished draws left unused under `BUDGET`, less those drawn past
    it; a draw goes past `BUDGET` only on these, so the run's draws average at most
    `BUDGET` calls. ``agree``: summed over the first rounds drawn so far (at least four
    valid answers), the chance that three, and four, of their answers taken in random order
    agree, from one split judge (`_SPLIT_JUDGE`) on.
    """

    spare: int = 0
    agree: list[float] = field(default_factory=lambda: list(_SPLIT_JUDGE))

    def contradiction(self) -> float:
        """The run's chance that a fourth answer differs from three that agree."""
        three, four = self.agree
        return 1 - four / three

    def floor(self) -> float:
        """The least spread a judge's answers are taken to have: that of a judge giving a
        neighbouring level as often as the run's fourth answers contradict three agreeing
        ones. Four agreeing answers settle a judge where the run's judges are sure; where
        many are split, they do not (a 50/50 judge opens with four alike one time in
        eight)."""
        rho = self.contradiction()
        return rho * (1 - rho)

    def first_round(self, scores: list[int]) -> None:
        """Add a draw's first round (its valid answers)."""
        if len(scores) >= 4:
            counts = [scores.count(k) for k in SCORES]
            for i, j in enumerate((3, 4)):
                self.agree[i] += sum(math.perm(c, j) for c in counts) / math.perm(len(scores), j)

    def finished(self, calls: int) -> None:
        """Add a finished draw's calls: those it left unused under `BUDGET` are spare."""
        self.spare += max(0, BUDGET - calls)


@dataclass
class Draw:
    """One dialog's sequential draw under a run's `SamplingLedger`: which calls come next."""

    ledger: SamplingLedger
    per_call: int
    completions: int
    precision: float = PRECISION
    calls: int = 0
    """Calls made (the caller adds those sent again after a cut answer)."""
    first: list[int] | None = None
    """The valid answers of the first round."""
    stopped: str = "ceiling"
    """``precision`` (`settled`), ``budget`` (`BUDGET` and no spare calls) or ``ceiling``
    (all completions drawn)."""
    floor: float = 0.0
    """The run's spread floor at the last check (`SamplingLedger.floor`)."""
    _allowance: int | None = None
    _taken: int = 0

    def next_round(self, scores: list[int], drawn: int, readable: bool = True) -> list[int]:
        """The next round's calls, as answers per call ([] to stop), after ``drawn``
        answers of which ``scores`` are valid; ``readable``: few enough unread answers for
        the mean to stand (`_geval.MAX_SHIFT`)."""
        if drawn and self.first is None:
            self.first = list(scores)
            self.ledger.first_round(self.first)
        self.floor = self.ledger.floor()
        if drawn and readable and settled(scores, self.precision, self.floor):
            self.stopped = "precision"
            return []
        if drawn >= self.completions:
            self.stopped = "ceiling"
            return []
        sizes = round_sizes(drawn, self.per_call, self.completions)
        own = max(0, BUDGET - self.calls)
        if len(sizes) > own:
            if self._allowance is None:
                self._allowance = self.ledger.spare // SHARE
            extra = min(len(sizes) - own, self.ledger.spare, self._allowance - self._taken)
            sizes = sizes[: own + max(0, extra)]
            self.ledger.spare -= max(0, extra)
            self._taken += max(0, extra)
        if not sizes:
            self.stopped = "budget"
        self.calls += len(sizes)
        return sizes

    def finish(self) -> None:
        """Record the draw's calls in the run's ledger."""
        self.ledger.finished(self.calls)


@dataclass(frozen=True)
class JudgeRequest:
    """How one judge is asked, and how its answer is read."""

    method: Method
    """The method asked for."""
    reads: Method
    """How the answer is read (``auto`` reads ``parse`` where the judge has no logprobs)."""
    completions: int
    cot: bool
    config: GenerateConfig
    """The settings sent (the user's explicit ones included)."""
    per_call: int
    """Completions asked for in one call (``samples``)."""
    bound: int | None
    """The output bound sent."""
    again: int | None
    """The bound of the one call sent again where an answer was cut (`_generate`); None
    where the user set the bound."""
    no_logprobs: str | None
    """Why logprobs are not asked for, where they are not."""
    unanswerable: str | None
    """Why no call is made at all (``logprobs`` asked of a judge that has none)."""
    precision: float
    """``samples`` on a service that takes fewer than ``completions`` a call: stop drawing
    once one more answer would take less than this squared off the posterior variance of
    the weighted score (`settled`; 0: draw them all)."""
    notes: tuple[str, ...]
    """What was chosen for this judge, and why (said once in the terminal)."""
    traits: JudgeTraits

    @property
    def sequential(self) -> bool:
        """Answers are drawn in rounds until precise enough (`draw_sequentially`)."""
        return self.method == "samples" and self.precision > 0 and self.per_call < self.completions

    def asks(self, option: Option) -> bool:
        """Whether this request uses ``option`` the way a refusal of it objects to."""
        if option == "logprobs":
            return bool(self.config.logprobs)
        if option == "num_choices":
            return (self.config.num_choices or 1) > 1
        return self.bound is not None


def judge_request(
    model: Model, method: Method, completions: int, cot: bool, precision: float = PRECISION
) -> JudgeRequest:
    """The request for ``model`` (memoised per model, method and what it refused)."""
    traits = judge_traits(model)
    key = (id(model), method, completions, cot, precision, traits)
    held = _requests.get(key)
    if held is None or held[0] is not model:
        held = (model, plan_request(traits, method, completions, cot, model.config, precision))
        _requests[key] = held
    return held[1]


_requests: dict[tuple[Any, ...], tuple[Model, JudgeRequest]] = {}
"""Requests by model object: each entry holds its model, so that no other model can come to
have the same ``id()`` and be answered with this one's request."""


def plan_request(
    traits: JudgeTraits,
    method: Method,
    completions: int,
    cot: bool,
    explicit: GenerateConfig,
    precision: float = PRECISION,
) -> JudgeRequest:
    """Fit a method's settings to what a service accepts; ``explicit`` (the user's own
    settings) wins, except an output bound below the service's minimum."""
    user = explicit.model_dump(exclude_none=True)
    fields = method_config(method, completions, cot).model_dump(exclude_none=True)
    notes: list[str] = []
    reads: Method = method
    no_logprobs = unanswerable = None
    if method in ("auto", "logprobs") and traits.logprobs is False:
        no_logprobs = f"{traits.service} gives no logprobs"
        fields.pop("logprobs", None)
        fields.pop("top_logprobs", None)
        if method == "auto":
            reads = "parse"
            notes.append(
                f"method auto reads the whole number: {no_logprobs} (-T method=samples gives "
                f"the weighted score from sampled answers: {SEQUENTIAL_COST})"
            )
        else:
            unanswerable = (
                f"{no_logprobs}: method=logprobs cannot score it (method=auto parses its "
                "answers, method=samples estimates the distribution)"
            )
    if traits.max_top_logprobs is not None and "top_logprobs" in fields:
        fields["top_logprobs"] = min(fields["top_logprobs"], traits.max_top_logprobs)
    per_call = 1
    if method == "samples":
        per_call = min(completions, traits.max_choices or completions)
        if per_call > 1:
            fields["num_choices"] = per_call
        else:
            fields.pop("num_choices", None)
        if per_call < completions:
            takes = "no n" if per_call == 1 else f"n <= {per_call}"
            if precision > 0:
                notes.append(
                    f"up to {completions} completions, {per_call} a call ({traits.service} "
                    f"takes {takes}), drawn until one more would cut the weighted score's "
                    f"posterior variance by less than {precision:g}^2, {BUDGET} calls a dialog "
                    f"on average over the run at most (-T precision=0 draws all {completions})"
                )
            else:
                calls = -(-completions // per_call)
                notes.append(
                    f"{completions} completions in {calls} calls of at most {per_call} "
                    f"({traits.service} takes {takes})"
                )
    if traits.thinking != "none" and not any(k in user for k in _QUIET_KEYS):
        fields.update(traits.quiet)
        if traits.quiet:
            shown = ", ".join(f"{k}={v}" for k, v in traits.quiet)
            if traits.thinking == "optional":
                notes.append(f"{shown}: {traits.service} reasons unless told not to; told not to")
            else:
                notes.append(f"{shown}: the least reasoning {traits.service} allows")
    answer = fields["max_tokens"]
    room, why = thinking_room(traits, user)
    bound = user.get("max_tokens")
    if bound is None:
        bound = answer + room
        if room:
            notes.append(f"max_tokens {bound}: {answer} for the answer and {room} for {why}")
    elif isinstance(user.get("reasoning_tokens"), int) and bound <= user["reasoning_tokens"]:
        notes.append(
            f"max_tokens {bound} raised to {answer + room}: {why} counts against the bound "
            "and would leave no room for the answer (Claude refuses a max_tokens not above "
            "its thinking budget)"
        )
        bound = answer + room
    if bound < traits.min_output_tokens:
        notes.append(
            f"max_tokens {bound} raised to {traits.min_output_tokens}: {traits.service} "
            "refuses less"
        )
        bound = traits.min_output_tokens
    config = GenerateConfig(**fields).merge(explicit).merge(GenerateConfig(max_tokens=bound))
    if no_logprobs and not user.get("logprobs"):
        config = config.model_copy(update={"logprobs": None, "top_logprobs": None})
    return JudgeRequest(
        method=method,
        reads=reads,
        completions=completions,
        cot=cot,
        config=config,
        per_call=per_call,
        bound=bound,
        again=None if "max_tokens" in user else max(4 * bound, MAX_TOKENS_COT + room),
        no_logprobs=no_logprobs,
        unanswerable=unanswerable,
        precision=precision,
        notes=tuple(notes),
        traits=traits,
    )


def thinking_room(traits: JudgeTraits, user: dict[str, Any]) -> tuple[int, str]:
    """Output tokens to leave for reasoning on top of the answer's bound, and what for.

    The user's thinking budget (``reasoning_tokens``) or effort (``reasoning_effort``, the
    budget Inspect sends for it, `EFFORT_BUDGETS`) where given; `THINKING_ROOM` where the
    service reasons before it answers and cannot be told not to; none otherwise.
    """
    floor = THINKING_ROOM if traits.thinking == "always" else 0
    budget = user.get("reasoning_tokens")
    if isinstance(budget, int) and budget > 0:
        return max(budget, floor), f"the thinking budget (reasoning_tokens {budget})"
    effort = user.get("reasoning_effort")
    if effort in EFFORT_BUDGETS:
        return max(EFFORT_BUDGETS[effort], floor), f"thinking at reasoning_effort {effort}"
    if floor:
        return floor, f"the reasoning {traits.service} may do before it answers"
    return 0, ""


_said: set[str] = set()


def announce(model: Model, request: JudgeRequest) -> None:
    """Say once per judge, in the terminal, what was chosen for it and why."""
    key = f"{model}|{request.method}|{request.notes}"
    if not request.notes or key in _said:
        return
    _said.add(key)
    logger.warning(f"empathy judge {model} (method={request.method}): " + "; ".join(request.notes))


async def ask_judge(
    model: Model,
    prompt: list[ChatMessage],
    method: Method,
    completions: int,
    cot: bool,
    precision: float = PRECISION,
    ledger: SamplingLedger | None = None,
) -> tuple[ModelOutput, JudgeRequest]:
    """Ask ``model`` for its rating as its service accepts it (``ledger``: the run's
    sequential draws of this judge, `draw_sequentially`).

    A documented refusal of an option the plugin chose (logprobs, ``n``, a small output
    bound) is learnt once per model, said once in the terminal, and the request sent
    again without it. A refusal of the prompt as too long for the judge's context, worded
    as a service words it (`_providers.context_refusal`), is an output stopped for
    ``model_length`` holding the provider's words (`too_long_output`), as Inspect makes of
    OpenAI's and Anthropic's: the dialog is unscored with the reason, not an error that
    ``eval-retry`` would send again. Any other error is raised as it came.
    """
    while True:
        request = judge_request(model, method, completions, cot, precision)
        announce(model, request)
        if request.unanswerable:
            return ModelOutput(model=str(model), choices=[], error=request.unanswerable), request
        try:
            if request.sequential:
                return await draw_sequentially(model, prompt, request, ledger), request
            output = await _generate(model, prompt, request.config, request.bound, request.again)
            if method == "samples" and output.choices and len(output.choices) < completions:
                output = await complete_choices(model, prompt, output, request)
            return output, request
        except Exception as ex:
            too_long = context_refusal(ex)
            if too_long is not None:
                return too_long_output(model, too_long), request
            unreadable = unreadable_content(str(model), ex)
            if unreadable is not None:
                raise JudgeServiceError(unreadable) from None
            refused = refused_option(ex)
            if refused is None or not request.asks(refused[0]):
                raise
            option, message = refused
            if learn_refusal(model, option, message):
                logger.warning(
                    f"empathy judge {model}: the service refused {option} ({message}); "
                    "asking without it from now on"
                )
            elif judge_request(model, method, completions, cot, precision) == request:
                raise


def too_long_output(model: Model, reason: str) -> ModelOutput:
    """An output with no answer, stopped for ``model_length``, holding the provider's words
    on the prompt being too long (read as unscored with the ``max_turns`` remedy)."""
    return ModelOutput.from_content(model=str(model), content=reason, stop_reason="model_length")


def round_sizes(drawn: int, per_call: int, completions: int) -> list[int]:
    """The calls of the next round of a sequential draw, as answers per call: one call of
    as many as the service takes, or single calls (`FIRST_ROUND` at once, then two)."""
    missing = completions - drawn
    if per_call > 1:
        return [min(per_call, missing)]
    return [1] * min(FIRST_ROUND if drawn == 0 else 2, missing)


async def draw_sequentially(
    model: Model,
    prompt: list[ChatMessage],
    request: JudgeRequest,
    ledger: SamplingLedger | None = None,
) -> ModelOutput:
    """Draw answers in rounds (as many a call as the service takes; `FIRST_ROUND` single
    calls at once, then two, where it takes one) until the valid scores so far are
    `settled` at the request's precision (their spread at least the run's floor,
    `SamplingLedger.floor`), the draw has made `BUDGET` calls and the run has none to spare
    (`Draw`), or ``completions`` answers were drawn. ``ledger``: the run's (a new one, a run
    of one dialog, where None). The output holds every answer drawn, their usage summed,
    and `SAMPLING_KEY` metadata (answers, calls, posterior SD, why it stopped)."""
    ledger = SamplingLedger() if ledger is None else ledger
    draw = Draw(ledger, request.per_call, request.completions, request.precision)
    choices: list[Any] = []
    usage = None
    seed = request.config.seed
    output: ModelOutput | None = None
    asked = 0
    scores: list[int] = []
    while sizes := draw.next_round(
        scores, len(choices), unread_shift(len(scores), len(choices)) <= MAX_SHIFT
    ):
        configs = []
        for i, size in enumerate(sizes):
            update: dict[str, Any] = {"num_choices": size if size > 1 else None}
            if seed is not None:
                update["seed"] = seed + draw.calls - len(sizes) + i
            configs.append(request.config.model_copy(update=update))
        outputs = await collect(
            *[_generate(model, prompt, c, request.bound, request.again, True) for c in configs]
        )
        output = output or outputs[0]
        added = [choice for more in outputs for choice in more.choices]
        for more in outputs:
            usage = add_usage(usage, more.usage)
        again = sum(ASKED_AGAIN in (more.metadata or {}) for more in outputs)
        asked += again
        draw.calls += again  # the budget counts calls sent again after a cut answer
        if not added:
            draw.stopped = "ceiling"
            break
        choices.extend(added)
        scores = sampled_scores(choices)
    draw.finish()
    assert output is not None
    sd = posterior_sd(scores, floor=draw.floor) if scores else float("inf")
    sampling = {"drawn": len(choices), "calls": draw.calls, "posterior_sd": round(sd, 4),
                "stopped": draw.stopped, "asked_again": asked,
                "spread_floor": round(draw.floor, 4)}  # fmt: skip
    metadata = {**(output.metadata or {}), SAMPLING_KEY: sampling}
    return output.model_copy(update={"choices": choices, "usage": usage, "metadata": metadata})


SEQUENTIAL_COST = (
    f"at most {BUDGET} calls a dialog on average over a run on a service without n "
    "(benchmarks/results/sequential.json)"
)
"""What ``method=samples`` costs on a service without ``n``, as benchmarks/sequential.py
measured it (quoted where ``auto`` announces its fallback)."""


async def complete_choices(
    model: Model, prompt: list[ChatMessage], output: ModelOutput, request: JudgeRequest
) -> ModelOutput:
    """Top up an output to the request's completions, for services that return fewer.

    The missing completions are asked for concurrently, in calls of as many choices as
    the first call returned (single calls where the service refuses ``n``), with the
    request's settings; when a seed is set each call gets its own (seed + 1, seed + 2,
    ...), so a service that honours seeds does not return one completion n times. A top-up
    refused as too long for the judge's context (`_providers.context_refusal`) makes the
    output `too_long_output`, as the first call's refusal does: the dialog is unscored with
    the provider's words, not an error (the scorer tops up an answer another solver drew).
    """
    choices = list(output.choices)
    usage = output.usage
    batch = max(1, min(len(choices), request.per_call))
    seed = request.config.seed
    calls = 0
    for _ in range(3):
        missing = request.completions - len(choices)
        if missing <= 0 or not choices:
            break
        requests = []
        for start in range(0, missing, batch):
            size = min(batch, missing - start)
            calls += 1
            update: dict[str, Any] = {"num_choices": size if size > 1 else None}
            if seed is not None:
                update["seed"] = seed + calls
            config = request.config.model_copy(update=update)
            requests.append(_generate(model, prompt, config, request.bound, request.again, True))
        try:
            outputs = await collect(*requests)
        except Exception as ex:
            too_long = context_refusal(ex)
            if too_long is None:
                raise
            return too_long_output(model, too_long)
        added = [c for more in outputs for c in more.choices]
        if not added:
            break
        choices.extend(added)
        for more in outputs:
            usage = add_usage(usage, more.usage)
    return output.model_copy(update={"choices": choices[: request.completions], "usage": usage})


async def _generate(
    model: Model,
    prompt: list[ChatMessage],
    config: GenerateConfig,
    bound: int | None,
    again: int | None = None,
    single: bool = False,
) -> ModelOutput:
    """One call; answers that used the whole bound are marked cut (stop ``max_tokens``).

    A call any of whose answers was cut is sent once more, whole, with the bound ``again``
    (what follows a cut can change the verdict, so a cut answer is never read; asking the
    whole call again keeps the answers an unbiased draw); both calls' usage is counted and
    the output's metadata says so (`ASKED_AGAIN`). ``single``: a top-up call, sent again
    one completion at a time if the service refuses its ``n``.
    """
    try:
        output = await model.generate(prompt, config=config)
    except Exception as ex:
        refused = refused_option(ex)
        if not single or refused is None or refused[0] != "num_choices":
            raise
        if learn_refusal(model, "num_choices", refused[1]):
            logger.warning(f"empathy judge {model}: the service refused n ({refused[1]})")
        n = config.num_choices or 1
        one = config.model_copy(update={"num_choices": None})
        seeds = [None if config.seed is None else config.seed + 1000 * i for i in range(n)]
        outputs = await collect(
            *[
                _generate(model, prompt, one.model_copy(update={"seed": s}), bound, again)
                for s in seeds
            ]
        )
        merged = outputs[0]
        for more in outputs[1:]:
            merged = merged.model_copy(
                update={
                    "choices": [*merged.choices, *more.choices],
                    "usage": add_usage(merged.usage, more.usage),
                }
            )
        return merged
    reports_stop = judge_traits(model).reports_stop
    output = mark_cut(output, bound, reports_stop)
    if again is None or bound is None or again <= bound or not _any_cut(output):
        return output
    retry = await model.generate(prompt, config=config.model_copy(update={"max_tokens": again}))
    retry = mark_cut(retry, again, reports_stop)
    asked = {"max_tokens": bound, "again": again, "cut": sum(map(_cut, output.choices))}
    metadata = {**(retry.metadata or {}), ASKED_AGAIN: asked}
    return retry.model_copy(update={"usage": add_usage(output.usage, retry.usage),
                                    "metadata": metadata})  # fmt: skip


def _cut(choice: Any) -> bool:
    return choice.stop_reason == "max_tokens"


def _any_cut(output: ModelOutput) -> bool:
    return any(map(_cut, output.choices))


def mark_cut(output: ModelOutput, bound: int | None, reports_stop: bool = True) -> ModelOutput:
    """Mark the answers of a call that used its whole output bound as cut.

    Some services (and Inspect's mapping of some) report ``stop`` for an answer the bound
    cut; an answer whose call used every output token it was allowed is not taken to
    have ended on its own. Only ``stop`` is doubted: any other stop (``unknown``, a refusal,
    the context) keeps its own name. ``reports_stop`` False (a provider that sets no stop
    reason: `_providers.NO_STOP_REASON`): its ``unknown`` is ``stop`` where the call used
    fewer output tokens than the bound (every answer ended before it), else ``max_tokens``.
    """
    usage = output.usage
    if bound is None or usage is None or not output.choices:
        return output
    if not reports_stop:
        ended = "stop" if usage.output_tokens < bound else "max_tokens"
        output = output.model_copy(update={"choices": [
            c.model_copy(update={"stop_reason": ended}) if c.stop_reason == "unknown" else c
            for c in output.choices
        ]})  # fmt: skip
    if usage.output_tokens < bound * len(output.choices):
        return output
    if not any(c.stop_reason == "stop" for c in output.choices):
        return output
    choices = [
        c.model_copy(update={"stop_reason": "max_tokens"}) if c.stop_reason == "stop" else c
        for c in output.choices
    ]
    return output.model_copy(update={"choices": choices})
