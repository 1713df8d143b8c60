"""What each judge provider accepts and refuses: the one place the scorer asks.

Every fact here has its source beside it. The scorer never branches on a provider's
name: it asks `judge_traits` what a model's service does (logprobs, completions per
call, least output bound, thinking and how to keep it short, whether its stop reason
can be trusted, how it shapes logprob tokens) and `refused_option` what a refusal
was about, and learns, once per model, what the service refused (`learn_refusal`);
`context_refusal` reads a service's "prompt too long for the context" in its own words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Literal

from inspect_ai.model import Model

Option = Literal["logprobs", "num_choices", "max_tokens"]
Thinking = Literal["none", "optional", "always"]

THINKING_ROOM = 2048
"""Output tokens left for reasoning that cannot be turned off (on top of the answer's
bound): reasoning counts against the output bound on every service that reasons."""

EFFORT_BUDGETS: dict[str, int] = {
    "minimal": 2048, "low": 4096, "medium": 10000, "high": 16000, "xhigh": 32000, "max": 32000
}  # fmt: skip
"""Thinking tokens a ``reasoning_effort`` the user chose may spend, left in the bound on top
of the answer's: the budget Inspect sends for it to services that take only a budget (Claude
3.7-4.5 ``budget_tokens``, Gemini 2.5 ``thinkingBudget``; inspect_ai/model/_reasoning.py,
``effort_to_reasoning_tokens``). Claude refuses a ``max_tokens`` not above the budget
(`_ANTHROPIC_BUDGET`)."""


@dataclass(frozen=True)
class JudgeTraits:
    """What a judge's service does with the options a G-Eval judge needs."""

    service: str
    """A short name for the service and model family (for messages)."""
    logprobs: bool | None = None
    """True: returns logprobs; False: refuses them or returns none; None: unknown (ask)."""
    max_choices: int | None = None
    """Most completions one call returns (None: no known limit; 1: no ``n`` at all)."""
    min_output_tokens: int = 1
    """The least output bound the service accepts."""
    thinking: Thinking = "none"
    """``always``: it reasons before answering, and that counts against the bound;
    ``optional``: it reasons unless told not to; ``none``: it does not."""
    quiet: tuple[tuple[str, Any], ...] = ()
    """Generation settings that keep its reasoning shortest (none where it can)."""
    reports_stop: bool = True
    """False where Inspect's provider sets no stop reason at all, so every answer arrives as
    ``unknown`` (`NO_STOP_REASON`): a stop is then told from the output tokens the call used
    (`_judge_call.mark_cut`)."""
    omits_certain_logprobs: bool = False
    """The service leaves out a logprob of 0 (p = 1) and Inspect then drops that token."""
    max_top_logprobs: int | None = None
    """Most top logprobs a position may ask for (None: the 20 the method asks for)."""
    sources: tuple[str, ...] = ()


_OPENAI_REASONING = (
    "https://platform.openai.com/docs/guides/reasoning (reasoning tokens count against "
    "max_output_tokens; gpt-5 takes reasoning_effort minimal, gpt-5.1 and later none, "
    "o-series low at least)"
)
_OPENAI_RESPONSES = (
    "https://platform.openai.com/docs/api-reference/responses/create (max_output_tokens; "
    "the API answers 400 integer_below_min_value below 16; no n parameter)"
)
_OPENAI_NO_LOGPROBS = (
    "https://platform.openai.com/docs/guides/reasoning (reasoning models return no logprobs;"
    " chat completions answer 400 to logprobs for them)"
)
_GEMINI_LOGPROBS = (
    "https://ai.google.dev/api/generate-content#generationconfig (responseLogprobs; "
    "2.5 and 3 models answer 400 'Logprobs is not enabled'; logProbability 0 is omitted "
    "from the JSON and Inspect drops such tokens)"
)
_GEMINI_CANDIDATES = (
    "https://ai.google.dev/api/generate-content#generationconfig (candidateCount 1-8; "
    "Gemini 3 models accept 1 only)"
)
_GEMINI_THINKING = (
    "https://ai.google.dev/gemini-api/docs/thinking (thinking counts against "
    "maxOutputTokens; 2.5 Pro thinks with a budget of 128-32768, 2.5 Flash takes 0; "
    "Gemini 3 thinks at thinkingLevel low or high)"
)
_ANTHROPIC = (
    "https://docs.anthropic.com/en/api/messages (no logprobs and no n: one completion a call)"
)
_ANTHROPIC_BUDGET = (
    "https://platform.claude.com/docs/en/build-with-claude/extended-thinking (thinking "
    "{type: enabled, budget_tokens} on Claude 3.7 to 4.6, off unless asked for; budget_tokens "
    "at least 1024 and below max_tokens, which thinking counts against: the API answers 400 "
    "'`max_tokens` must be greater than `thinking.budget_tokens`', as quoted in "
    "liuw1535/antigravity2api-nodejs#149; Claude 4.7 and later refuse budget_tokens)"
)
_ANTHROPIC_ADAPTIVE = (
    "https://platform.claude.com/docs/en/build-with-claude/thinking-troubleshooting and the "
    "model pages (models/sonnet-5/overview, whats-new-opus-5, sonnet-5-5/migration-guide, "
    "fable-5/migration-guide): Claude 5 models think (adaptive) unless told not to, Opus 4.8 "
    "only when asked; Sonnet 5, Opus 5 and Haiku 5.5 take thinking disabled, Sonnet 5.5 "
    "between_tools; Opus 5.5, Fable 5 and Mythos 5 always think and answer 400 to disabled "
    "(output_config.effort low is their least); inspect_ai/model/_providers/anthropic.py sends "
    "reasoning_effort none as disabled or between_tools where the model takes it, and low as "
    "adaptive thinking at effort low"
)
_ANTHROPIC_OPUS_4_7 = (
    "Claude Opus 4.7 and 4.8: the sources disagree on whether they think unless asked "
    "(whats-new-opus-5: Opus 4.8 does not; inspect_ai/model/_providers/anthropic.py: they do) "
    "and whether they take thinking disabled (docs.aws.amazon.com/bedrock/latest/userguide/"
    "claude-messages-adaptive-thinking.html: Opus 4.7 answers 400): nothing is sent about "
    "thinking, and the bound leaves room for it"
)
_GROQ = (
    "https://console.groq.com/docs/openai (n must be 1; logprobs, top_logprobs are not "
    "supported)"
)
_MISTRAL = (
    "inspect_ai/model/_providers/mistral.py (Inspect's Mistral path reports finish reason "
    "'stop' where none is given; logprobs are not mapped)"
)
_TOGETHER = (
    "inspect_ai/model/_providers/together.py (Together's native logprobs: the chosen "
    "token only, bytes = Unicode code points)"
)
_GROK = (
    "inspect_ai/model/_providers/grok.py (xai_sdk over gRPC: chat.sample() sends n=1; "
    "xai_sdk documents top_logprobs 0-8); https://docs.x.ai/docs/guides/reasoning (grok-3-mini "
    "and grok-4 reason, and grok-4 refuses reasoning_effort); reasoning counts against "
    "max_tokens (evalstate/fast-agent#276)"
)
_SELF_HOSTED = "OpenAI-compatible servers (vLLM, llama.cpp, Ollama): logprobs and n as OpenAI's"
NO_STOP_REASON = (
    "inspect_ai/model/_providers/hf.py, nnterp.py and transformer_lens.py build their "
    "ChatCompletionChoice without a stop_reason, whose default is 'unknown' "
    "(inspect_ai/model/_model_output.py); hf.py's output_tokens is the batch's generated "
    "length, the longest answer's"
)


def _openai_traits(api: Any, name: str) -> JudgeTraits:
    family = name.rsplit("/", 1)[-1].lower()
    o_series = bool(re.match(r"o\d", family))
    gpt5 = family.startswith("gpt-5") and "-chat" not in family
    reasoning = o_series or gpt5
    responses = bool(getattr(api, "responses_api", False))
    quiet: tuple[tuple[str, Any], ...] = ()
    if gpt5:
        # gpt-5, -mini, -nano take "minimal"; gpt-5.1 and later "none"
        quiet = (("reasoning_effort", "none" if re.match(r"gpt-5\.\d", family) else "minimal"),)
    elif o_series:
        quiet = (("reasoning_effort", "low"),)
    sources = (_OPENAI_RESPONSES,) if responses else ()
    if reasoning:
        sources += (_OPENAI_REASONING, _OPENAI_NO_LOGPROBS)
    return JudgeTraits(
        service=("OpenAI Responses API" if responses else "OpenAI chat completions")
        + (" (reasoning model)" if reasoning else ""),
        logprobs=False if reasoning else (None if responses else True),
        max_choices=1 if responses else None,
        min_output_tokens=16 if responses else 1,
        thinking="always" if reasoning else "none",
        quiet=quiet,
        sources=sources,
    )


def _anthropic_traits(name: str) -> JudgeTraits:
    """Claude by family: which think unless told not to, and how each is told (sources in
    `_ANTHROPIC_BUDGET`, `_ANTHROPIC_ADAPTIVE`). A Claude this table cannot place is taken to
    think and to refuse turning it off: its bound leaves room, at the least effort."""
    family = name.rsplit("/", 1)[-1].lower()
    # claude-3-haiku, claude-3-5-sonnet, claude-3-7-sonnet, claude-sonnet-4-5-20250929,
    # claude-opus-4-1, claude-opus-4-7, claude-sonnet-5, claude-sonnet-5-5, claude-fable-5-1
    old = re.search(r"claude-3-(?:5-|7-)?[a-z]", family)
    version = re.search(r"claude-([a-z]+)-(\d+)(?:[-.](\d)(?!\d))?", family)
    base = JudgeTraits("Anthropic", False, 1, sources=(_ANTHROPIC,))
    if old or (version and version.group(2) == "4" and int(version.group(3) or 0) <= 6):
        # think only when asked: with a budget (or adaptive on 4.6) the user sets
        return replace(base, sources=(_ANTHROPIC, _ANTHROPIC_BUDGET))
    if version is None:
        return replace(base, service="Claude", thinking="always",
                       quiet=(("reasoning_effort", "low"),),
                       sources=(_ANTHROPIC, _ANTHROPIC_ADAPTIVE))  # fmt: skip
    tier, major, minor = version.group(1), int(version.group(2)), int(version.group(3) or 0)
    service = f"Claude {tier.capitalize()} {major}" + (f".{minor}" if minor else "")
    sources = (_ANTHROPIC, _ANTHROPIC_ADAPTIVE)
    if major == 4:  # Opus 4.7, 4.8
        return replace(base, service=service, thinking="always",
                       sources=(*sources, _ANTHROPIC_OPUS_4_7))  # fmt: skip
    turned_off = major == 5 and (
        (tier in ("sonnet", "opus") and minor < 5) or (tier == "sonnet" and minor >= 5)
        or (tier == "haiku" and minor >= 5)
    )  # fmt: skip
    if turned_off:
        return replace(base, service=service, thinking="optional",
                       quiet=(("reasoning_effort", "none"),), sources=sources)  # fmt: skip
    return replace(base, service=service, thinking="always",
                   quiet=(("reasoning_effort", "low"),), sources=sources)  # fmt: skip


def _google_traits(name: str) -> JudgeTraits:
    family = name.rsplit("/", 1)[-1].lower()
    version = re.search(r"gemini-(\d+)(?:\.(\d+))?", family)
    major, minor = (int(version.group(1)), int(version.group(2) or 0)) if version else (0, 0)
    sources = (_GEMINI_LOGPROBS, _GEMINI_CANDIDATES, _GEMINI_THINKING)
    if major >= 3:
        return JudgeTraits(
            "Gemini 3", False, 1, thinking="always", quiet=(("reasoning_effort", "low"),),
            omits_certain_logprobs=True, sources=sources,
        )  # fmt: skip
    if (major, minor) >= (2, 5):
        pro = "pro" in family
        return JudgeTraits(
            "Gemini 2.5 Pro" if pro else "Gemini 2.5 Flash",
            False,
            8,
            thinking="always" if pro else "optional",
            quiet=(("reasoning_tokens", 128 if pro else 0),),
            omits_certain_logprobs=True,
            sources=sources,
        )
    if major > 0:
        return JudgeTraits(
            f"Gemini {major}.{minor}", True, 8, omits_certain_logprobs=True, sources=sources
        )
    # a Gemini this table cannot place (an experimental or "latest" name): logprobs are
    # asked for (a refusal is learnt), and the bound leaves room for thinking, which every
    # Gemini since 2.5 does unless told not to
    return JudgeTraits("Gemini", None, 8, thinking="always", omits_certain_logprobs=True,
                       sources=sources)  # fmt: skip


_BY_API: dict[str, JudgeTraits] = {
    "GroqAPI": JudgeTraits("Groq", False, 1, sources=(_GROQ,)),
    "MistralAPI": JudgeTraits("Mistral", False, sources=(_MISTRAL,)),
    "TogetherAIAPI": JudgeTraits("Together", None, sources=(_TOGETHER,)),
    "GrokAPI": JudgeTraits("Grok", None, 1, thinking="always", max_top_logprobs=8,
                           sources=(_GROK,)),  # fmt: skip
    "VLLMAPI": JudgeTraits("vLLM", True, sources=(_SELF_HOSTED,)),
    "OllamaAPI": JudgeTraits("Ollama", None, sources=(_SELF_HOSTED,)),
    "LlamaCppPythonAPI": JudgeTraits("llama.cpp", None, sources=(_SELF_HOSTED,)),
    "HuggingFaceAPI": JudgeTraits("Hugging Face Transformers", None, reports_stop=False,
                                  sources=(NO_STOP_REASON,)),  # fmt: skip
    "NNterpAPI": JudgeTraits("nnterp", None, reports_stop=False, sources=(NO_STOP_REASON,)),
    "TransformerLensAPI": JudgeTraits("TransformerLens", None, reports_stop=False,
                                      sources=(NO_STOP_REASON,)),  # fmt: skip
}
"""Services known by the class of Inspect's provider (no provider package is imported)."""


def judge_traits(model: Model) -> JudgeTraits:
    """What the service behind ``model`` accepts, with what it refused so far in this run."""
    key = str(model)
    traits = _traits.get(key)
    if traits is None:
        api = model.api
        kind = type(api).__name__
        if kind == "OpenAIAPI":
            traits = _openai_traits(api, model.name)
        elif kind == "GoogleGenAIAPI":
            traits = _google_traits(model.name)
        elif kind == "AnthropicAPI":
            traits = _anthropic_traits(model.name)
        else:
            traits = _BY_API.get(kind) or JudgeTraits(kind.removesuffix("API") or "unknown")
        _traits[key] = traits
    return _with_learned(traits, _learned.get(key, {}))


_traits: dict[str, JudgeTraits] = {}
_learned: dict[str, dict[Option, str]] = {}
"""Per model: the options its service refused in this process, with its words."""


def _with_learned(traits: JudgeTraits, learned: dict[Option, str]) -> JudgeTraits:
    if not learned:
        return traits
    changes: dict[str, Any] = {}
    if "logprobs" in learned:
        changes["logprobs"] = False
    if "num_choices" in learned:
        changes["max_choices"] = 1
    if "max_tokens" in learned:
        changes["min_output_tokens"] = max(traits.min_output_tokens, _least_bound(learned))
    return replace(traits, **changes)


def _least_bound(learned: dict[Option, str]) -> int:
    found = re.search(r">=?\s*(\d+)|at least (\d+)|minimum(?: value)?(?: of| is)? (\d+)",
                      learned.get("max_tokens", ""))  # fmt: skip
    if found:
        return int(next(g for g in found.groups() if g))
    return 16


def learn_refusal(model: Model, option: Option, message: str) -> bool:
    """Remember that ``model``'s service refused ``option``; False if it was known."""
    learned = _learned.setdefault(str(model), {})
    if option in learned:
        return False
    learned[option] = message
    return True


_REFUSALS: tuple[tuple[Option, re.Pattern[str]], ...] = (
    (
        "logprobs",
        re.compile(
            r"logprobs?\b.{0,60}\b(?:not (?:enabled|supported|allowed|available)|unsupported"
            r"|is not valid|invalid)|(?:not support|unsupported|not allowed to request)"
            r".{0,40}\blogprobs?",
            re.IGNORECASE | re.DOTALL,
        ),
    ),
    (
        "num_choices",
        re.compile(
            r"candidate_?count|multiple candidates|\bnum_choices\b|'n'|\"n\"|\bn\b\s*(?:must|"
            r"should|can only|is not supported|>|=)|number of (?:choices|completions)",
            re.IGNORECASE,
        ),
    ),
    (
        "max_tokens",
        re.compile(
            r"max_(?:output_|completion_)?tokens.{0,80}(?:below_min|minimum|at least|>=)"
            r"|integer_below_min_value|maxOutputTokens.{0,60}(?:minimum|at least)",
            re.IGNORECASE | re.DOTALL,
        ),
    ),
)
"""The refusals' words, as the services document them (sources in `JudgeTraits`)."""


def refused_option(ex: BaseException) -> tuple[Option, str] | None:
    """The option a provider's "bad request" refused, and its message, if it was one of
    the options a G-Eval judge asks for (logprobs, n, the output bound).

    Inspect wraps provider errors (`ModelGenerateError` with ``status_code`` and
    ``provider_message``); the SDK's own error is its cause. Only the provider's own
    message is read, never the request Inspect quotes beside it.
    """
    for error in _chain(ex):
        status = getattr(error, "status_code", None) or getattr(error, "code", None)
        if callable(status):  # grpc.RpcError (xai_sdk): code() is a grpc.StatusCode
            status = _GRPC_STATUS.get(getattr(status(), "name", ""))
        if not isinstance(status, int):
            status = getattr(getattr(error, "response", None), "status_code", None)
        if status not in (400, 403, 422):
            continue
        message = getattr(error, "provider_message", None) or getattr(error, "message", None)
        if message is None and callable(getattr(error, "details", None)):
            message = error.details()  # type: ignore[attr-defined]
        message = str(message or error)
        for option, pattern in _REFUSALS:
            # 403 only for logprobs: OpenAI answers o-series "not allowed to request logprobs"
            if (status != 403 or option == "logprobs") and pattern.search(message):
                return option, " ".join(message.split())[:300]
    return None


_GRPC_STATUS = {"INVALID_ARGUMENT": 400, "OUT_OF_RANGE": 400, "PERMISSION_DENIED": 403}
"""gRPC status codes as the HTTP statuses of a refused request (xai_sdk raises them)."""


_CONTEXT_REFUSALS: tuple[tuple[str, frozenset[int], re.Pattern[str], str], ...] = (
    (
        "Gemini",
        frozenset({400}),
        re.compile(r"The input token count \(\d+\) exceeds the maximum number of tokens "
                   r"allowed \(\d+\)"),
        "google-gemini/gemini-cli#6678, #11507: 400 INVALID_ARGUMENT; its OpenAI-compatible "
        "endpoint sends the error body as a list ([{\"error\": {...}}])",
    ),
    (
        "Mistral",
        frozenset({400}),
        re.compile(r"Prompt contains \d+ tokens.{0,60}?too large for model with \d+ maximum "
                   r"context length"),
        "https://docs.mistral.ai/resources/known-limitations (400 'too large for model with X "
        "maximum context length'; full wording 'Prompt contains N tokens, too large for model "
        "with M maximum context length')",
    ),
    (
        "Groq",
        frozenset({413}),
        re.compile(r"Request too large for model .{1,200}? on tokens per minute \(TPM\): "
                   r"Limit \d+, Requested \d+"),
        "https://console.groq.com/docs/rate-limits; continuedev/continue#10218 and "
        "HunorLaczko/ha-groq-cloud-api#27 quote it: 413, type tokens, a request larger than "
        "the tier's tokens per minute (sent again, it is refused again)",
    ),
    (
        "vLLM",
        frozenset({400}),
        re.compile(r"This model's maximum context length is \d+ tokens\. However, you "
                   r"requested \d+|This model's maximum context length is \d+ tokens and your "
                   r"request has \d+ input tokens|The decoder prompt \(length \d+\) is longer "
                   r"than the maximum model length of \d+"),
        "vllm-project/vllm#20409 ('This model's maximum context length is M tokens. However, "
        "you requested N tokens (...)'), #20828 ('The decoder prompt (length N) is longer than "
        "the maximum model length of M'); 400 BadRequestError without OpenAI's "
        "context_length_exceeded code",
    ),
    (
        "SGLang",
        frozenset({400}),
        re.compile(r"The input \(\d+ tokens\) is longer than the model's context length "
                   r"\(\d+ tokens\)|Requested token count exceeds the model's maximum context "
                   r"length of \d+ tokens"),
        "sgl-project/sglang python/sglang/srt/managers/tokenizer_manager.py "
        "(_validate_one_request: 'The input (N tokens) is longer than the model's context "
        "length (M tokens).', 'Requested token count exceeds the model's maximum context "
        "length of M tokens. ...'), answered 400 by its OpenAI-compatible server",
    ),
)
"""Services' "prompt too long for the context" refusals as they word them, for services
reached through an OpenAI-compatible path (``openai-api/<service>/<model>``, ``vllm/``,
``sglang/``)
whose refusals Inspect raises instead of making them a ``model_length`` output as it does
for OpenAI's ``context_length_exceeded`` and Anthropic's "prompt is too long":
(service, HTTP statuses, the wording, source)."""


CHUNKED_CONTENT = (
    "Magistral returns its message content as a list of chunks ({type: thinking, thinking: "
    "[...]} then {type: text, text}: Mistral's API reference, chat completion response, "
    "'content' may be a string or an array of chunks); Inspect 0.3.285's openai-api provider "
    "reads content as a string and raises TypeError, while its mistral/ provider reads the "
    "chunks"
)


def unreadable_content(model: str, ex: BaseException) -> str | None:
    """The one-line remedy where Inspect's OpenAI-compatible provider could not read an
    answer whose content is a list of chunks (`CHUNKED_CONTENT`: Magistral through
    ``openai-api/mistral/...``); None for any other error."""
    if not isinstance(ex, TypeError) or "list" not in str(ex):
        return None
    parts = model.split("/", 2)
    if len(parts) != 3 or parts[0] != "openai-api":
        return None
    service, name = parts[1], parts[2]
    fix = f"--model mistral/{name}" if service == "mistral" else "the service's own provider"
    return (
        f"{model} answered with its content as a list of chunks (a reasoning model's format, "
        f"as Magistral's), which Inspect's openai-api provider cannot read ({ex}): use {fix}"
    )


def context_refusal(ex: BaseException) -> str | None:
    """The provider's own words, if ``ex`` is a refusal of a prompt too long for the
    judge's context worded as a service documents it (`_CONTEXT_REFUSALS`); None for
    any other error.

    Only the provider's error body is read (its ``message`` fields, in a list-shaped body
    too), never the request Inspect quotes beside it, which holds the dialog.
    """
    for error in _chain(ex):
        status = getattr(error, "status_code", None)
        if not isinstance(status, int):
            status = getattr(getattr(error, "response", None), "status_code", None)
        if not isinstance(status, int):
            continue
        texts = list(_body_messages(getattr(error, "body", None)))
        if not texts and error is not ex:
            texts = [str(getattr(error, "message", "") or "")]
        for text in texts:
            for _, statuses, wording, _ in _CONTEXT_REFUSALS:
                if status in statuses and wording.search(text):
                    return " ".join(text.split())[:300]
    return None


def _body_messages(body: Any, depth: int = 0) -> list[str]:
    """The ``message`` strings of an error body (a dict, or a list of them), nested ones
    (``{"error": {...}}``) included."""
    if depth > 4:
        return []
    if isinstance(body, list):
        return [m for item in body[:5] for m in _body_messages(item, depth + 1)]
    if not isinstance(body, dict):
        return []
    found = [body["message"]] if isinstance(body.get("message"), str) else []
    return found + _body_messages(body.get("error"), depth + 1)


def _chain(ex: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = ex
    while current is not None and current not in found and len(found) < 5:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


# -- finished stops ----------------------------------------------------------------------

FINISHED_STOPS: tuple[str, ...] = ("stop",)
"""Inspect's stop reasons that mean an answer ended on its own: the only ones a score is read
from (a cut by ``max_tokens`` is never read: its call is asked again with room). Every other stop,
Inspect's ``unknown`` included, leaves the answer unscored with the stop named."""

NATURAL_ENDS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "OpenAI chat completions and OpenAI-compatible services (vLLM, SGLang, Ollama, "
        "llama.cpp, OpenRouter, Groq, Together, DeepSeek, `openai-api/...`)",
        ("stop", "eos"),
        "inspect_ai/model/_model_output.py as_stop_reason: stop and eos are stop; length is "
        "max_tokens; anything else (OpenRouter's in-body error, vLLM's abort) is unknown",
    ),
    (
        "OpenAI Responses API",
        ("completed",),
        "inspect_ai/model/_openai_responses.py: a response without incomplete_details is stop; "
        "max_output_tokens is max_tokens, content_filter is content_filter",
    ),
    (
        "Anthropic",
        ("end_turn", "stop_sequence"),
        "inspect_ai/model/_providers/anthropic.py message_stop_reason: tool_use, max_tokens and "
        "refusal have their own; model_context_window_exceeded and pause_turn are unknown",
    ),
    (
        "Google Gemini",
        ("STOP",),
        "inspect_ai/model/_providers/google.py finish_reason_to_stop_reason: MAX_TOKENS is "
        "max_tokens, SAFETY and the like content_filter, OTHER and the rest unknown",
    ),
    (
        "Mistral",
        ("stop",),
        "inspect_ai/model/_providers/mistral.py choice_stop_reason: length is max_tokens, "
        "model_length and tool_calls have their own, the rest unknown",
    ),
    (
        "AWS Bedrock",
        ("end_turn", "stop_sequence"),
        "inspect_ai/model/_providers/bedrock.py message_stop_reason",
    ),
    (
        "Azure AI",
        ("stopped",),
        "inspect_ai/model/_providers/azureai.py chat_completion_stop_reason",
    ),
)
"""Per service: (service, its own stop reasons that Inspect reports as ``stop``, source).
docs/scoring.md's table of finished stops shows them (tests/judge/test_providers_doc.py keeps the
two alike)."""

UNTRUSTED_STOPS: tuple[tuple[str, str], ...] = (
    (
        "Google Gemini",
        "inspect_ai/model/_providers/google.py: a candidate without finishReason is read as "
        "STOP",
    ),
    ("Mistral", _MISTRAL),
)
"""Services whose ``stop`` can stand for a cut answer: on every service, an answer whose call
used every output token it was allowed is taken as cut whatever its stop says
(`_judge_call.mark_cut`), so these need no flag of their own."""
