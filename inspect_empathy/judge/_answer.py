"""Whether a judge's completion can carry a score: the one place that decides.

A completion carries a score only when every condition of a known-good answer holds:

1. **the stop**: it ended on its own (a stop reason in `_providers.FINISHED_STOPS`); an
   answer the output bound cut is never read (what follows a cut can change the verdict),
   and any other stop, Inspect's ``unknown`` included, leaves it unscored, naming the stop;
2. **the answer region**: the text after every form of reasoning the services produce
   (reasoning content blocks, whole and half-open reasoning tags, `REASONING_TAGS`), and the
   tokens that spell it (`score_token_index`);
3. **the verdict** inside that region: one verdict or none (`parse_score`).

Each refusal raises `NoAnswer` (a `ScoreParseError`) that names its reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from inspect_ai.model import ChatCompletionChoice, ContentReasoning, ContentText, Logprob

from ._providers import FINISHED_STOPS
from ._score_text import FULLWIDTH_DIGITS, ScoreMatch, ScoreParseError, parse_score

REASONING_TAGS: tuple[tuple[str, str, str], ...] = (
    (
        r"<think\b[^>]*>",
        r"</think>",
        "DeepSeek-R1, Qwen3, QwQ, GLM-4.5, MiniMax-M2, Step3 (vllm/reasoning/*_reasoning_parser.py;"
        " SGLang docs, separate_reasoning); DeepSeek-R1-0528 and Qwen3 Thinking-2507 templates"
        " open <think> in the prompt, so the output holds only </think>",
    ),
    (
        r"<thinking>",
        r"</thinking>",
        "Anthropic's prompting guide, chain of thought: reasoning in <thinking> tags "
        "(https://docs.anthropic.com/en/docs/build-with-claude/prompt-engineering/chain-of-thought)",
    ),
    (r"\[THINK\]", r"\[/THINK\]", "Magistral (vllm/reasoning/mistral_reasoning_parser.py)"),
    (
        r"<thought>",
        r"</thought>",
        "EXAONE Deep (its template opens <thought> in the prompt, so the output may hold only "
        "</thought>; served as lgai/exaone-deep-32b on Together, answers split at </thought>)",
    ),
    (r"<seed:think>", r"</seed:think>", "Seed-OSS (vllm/reasoning/seedoss_reasoning_parser.py)"),
    (r"◁think▷", r"◁/think▷", "Kimi K2 Thinking, Kimi-VL (SGLang docs, separate_reasoning)"),
    (
        r"<\|begin_of_thought\|>",
        r"<\|end_of_thought\|>",
        "Bespoke-Stratos, OpenThoughts, Sky-T1 (their system prompt: Thought and Solution)",
    ),
    (
        r"<\|START_THINKING\|>",
        r"<\|END_THINKING\|>",
        "Cohere Command A Reasoning (sglang/srt/parser/reasoning_parser.py, the Cohere "
        "detectors; vllm/reasoning/ Cohere parser)",
    ),
    (
        r"Here is my thought process:",
        r"Here is my response:",
        "IBM Granite 3.2+ thinking (vllm/reasoning/granite_reasoning_parser.py)",
    ),
    (
        r"<\|channel\|>\s*analysis\s*<\|message\|>",
        r"<\|channel\|>\s*final\s*<\|message\|>",
        "gpt-oss without a reasoning parser, OpenAI harmony format "
        "(https://cookbook.openai.com/articles/openai-harmony)",
    ),
    (
        r"(?-i:\Aanalysis(?=[A-Z]))",
        r"(?-i:assistantfinal)",
        "gpt-oss decoded with its special tokens skipped (the harmony markers above dropped: "
        "'analysisWe need to ...assistantfinal4'); case-sensitive, and the opening only at "
        "the output's start",
    ),
    (
        r"<\|channel>\s*thought",
        r"<channel\|>",
        "Gemma 4 thinking (its chat template: the thought channel <|channel>thought ... "
        "<channel|> before the answer)",
    ),
    (
        r"Here are my reasoning steps:",
        r"\[BEGIN FINAL RESPONSE\]",
        "Apriel thinking models (ServiceNow; vllm/reasoning/apriel_reasoning_parser.py): "
        "reasoning, then the answer between [BEGIN FINAL RESPONSE] and [END FINAL RESPONSE]",
    ),
    (
        r"<reasoning>",
        r"</reasoning>",
        "models trained with the GRPO recipes' format (<reasoning>...</reasoning> then "
        "<answer>...</answer>: willccbb's grpo_demo.py, Unsloth's GRPO notebooks)",
    ),
)
"""Reasoning delimiters in a completion's text: (opening, closing, source). The answer is
what follows the last closing one; an opening one after it means the output ends inside
reasoning."""

_OPENING = re.compile("|".join(f"(?:{o})" for o, _, _ in REASONING_TAGS), re.IGNORECASE)
_CLOSING = re.compile("|".join(f"(?:{c})" for _, c, _ in REASONING_TAGS), re.IGNORECASE)
_CLOSING_BYTES = re.compile(_CLOSING.pattern.encode("utf-8"), re.IGNORECASE)
_WRAPPERS = re.compile(
    r"<\|(?:begin_of_solution|end_of_solution|return|end|start|START_RESPONSE|END_RESPONSE"
    r"|START_TEXT|END_TEXT|begin_of_box|end_of_box)\|>|<answer>|</answer>"
    r"|\[END FINAL RESPONSE\]",
    re.IGNORECASE,
)
"""Markers around an answer (Bespoke-Stratos' solution tags; harmony's ``<|return|>``;
Cohere's response and text markers; Hunyuan's ``<answer>``,
vllm/reasoning/hunyuan_a13b_reasoning_parser.py; GLM-4.5V and GLM-4.6V's answer box
``<|begin_of_box|>...<|end_of_box|>``, in ``content`` as Z.ai's API documents): blanked before
reading, offsets kept."""


class NoAnswer(ScoreParseError):
    """A completion that holds no answer that can carry a score, with the reason."""


@dataclass(frozen=True)
class Answer:
    """The part of a completion that can carry its score."""

    text: str
    """The answer region: the completion's text after all its reasoning, with the markers
    around an answer (`_WRAPPERS`) blanked: what the verdict is read from."""
    written: str
    """The same region as written (markers kept, same length): what the tokens spell."""
    reasoning: str
    """Reasoning the service returned apart from the text (reasoning content blocks), which
    its tokens may spell ahead of the answer (SGLang, vLLM)."""
    tokens: list[Logprob] | None
    """The completion's logprob tokens (all of them: `score_token_index` finds the ones
    that spell the region), or None when it has none."""


def choice_text(choice: ChatCompletionChoice) -> str:
    """All the text of a completion (reasoning content blocks aside)."""
    return choice.message.text if choice.message is not None else ""


def _shown(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())[:limit]
    return f": {text!r}" if text else ""


def stop_problem(choice: ChatCompletionChoice) -> str | None:
    """Why a completion's stop means it is no finished answer (None: it may be one).

    Only `FINISHED_STOPS` and a cut by the output bound pass; the prompt-too-long and
    refusal stops, the service's own refusal field, and every other stop reason (tool
    calls, Inspect's ``unknown`` for stops it cannot map: a provider's in-body error, a
    context window reached, Gemini's ``OTHER``) are named.
    """
    stop = choice.stop_reason
    text = choice_text(choice)
    if stop == "model_length":
        return (
            "the prompt is too long for the judge's context (stop reason model_length"
            + _shown(text, 160)
            + "): shorten the dialogs with -T max_turns=N or use a judge with a longer context"
        )
    if stop == "content_filter":
        return "the judge refused (stop reason content_filter)" + _shown(text)
    content = choice.message.content if choice.message is not None else None
    if isinstance(content, list) and any(getattr(c, "refusal", None) for c in content):
        return "the judge refused (the provider's refusal field)" + _shown(text)
    if stop in FINISHED_STOPS:
        return None
    if stop == "max_tokens":
        where = "" if text.strip() else " before any output"
        return (
            f"cut off by max_tokens{where} (what follows a cut can change the verdict, so a cut "
            "answer is never read; reasoning models spend the bound on reasoning): raise "
            "--max-tokens" + _shown(text)
        )
    why = (
        " (a stop Inspect could not map: the service's error, its context window reached, "
        "or another stop it gave no reason for)"
        if stop == "unknown"
        else ""
    )
    return (
        f"the judge's output did not finish (stop reason {stop!r}{why}): only "
        f"{', '.join(FINISHED_STOPS)} is read" + _shown(text)
    )


def answer_region(text: str) -> str:
    """The text after all reasoning tags (`REASONING_TAGS`), as written.

    Raises `NoAnswer` when the text ends inside reasoning (an opening tag with no closing
    one after it).
    """
    closings = list(_CLOSING.finditer(text))
    start = closings[-1].end() if closings else 0
    opened = _OPENING.search(text, start)
    if opened:
        raise NoAnswer(
            f"the output ends inside reasoning ({opened.group()!r} is never closed): no answer "
            "after it"
        )
    return text[start:]


def read_answer(choice: ChatCompletionChoice) -> Answer:
    """The answer region of a completion that may carry a score, or `NoAnswer` naming why
    it cannot: its stop (`stop_problem`), nothing after the reasoning, or an output that
    ends inside reasoning."""
    problem = stop_problem(choice)
    if problem:
        raise NoAnswer(problem)
    message = choice.message
    content = message.content if message is not None else ""
    if isinstance(content, list):
        # reasoning content blocks: the answer is the text after the last of them
        last = max(
            (i for i, c in enumerate(content) if isinstance(c, ContentReasoning)), default=-1
        )
        text = "\n".join(c.text for c in content[last + 1 :] if isinstance(c, ContentText))
        reasoned = last >= 0
        reasoning = "".join(c.reasoning for c in content if isinstance(c, ContentReasoning))
    else:
        text = content
        reasoned = False
        reasoning = ""
    written = answer_region(text)
    region = _WRAPPERS.sub(lambda m: " " * len(m.group()), written)
    if not region.strip() and (reasoned or written != text):
        raise NoAnswer("no answer after the reasoning")
    logprobs = choice.logprobs
    tokens = list(logprobs.content) if logprobs is not None and logprobs.content else None
    return Answer(text=region, written=written, reasoning=reasoning, tokens=tokens)


def verdict(answer: Answer) -> ScoreMatch:
    """The one verdict of an answer region (`parse_score`)."""
    return parse_score(answer.text)


# -- logprob tokens ----------------------------------------------------------------------

_BPE_SPACES = str.maketrans({"Ġ": " ", "▁": " ", "Ċ": "\n"})
"""Raw tokenizer markers some servers return instead of the space or newline they stand for."""
_TOKEN_MARKUP = re.compile(r"[*_`#>]")
_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")
"""SentencePiece byte-fallback tokens (``<0x0A>``), as servers that return raw pieces show them."""


class LogprobsMissing(ScoreParseError):
    """The judge's output carries no usable logprobs at the score token."""


@lru_cache(maxsize=4096)
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


def token_bytes(token: Logprob) -> bytes:
    """A token's bytes: its ``bytes`` field, a ``bytes:\\xNN`` escape, a ``<0xNN>`` byte
    token, or its UTF-8.

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
            return (
                token.token[len("bytes:") :]
                .encode("latin-1")
                .decode("unicode_escape")
                .encode("latin-1")
            )
        except (UnicodeError, ValueError):
            pass
    if _BYTE_TOKEN.fullmatch(token.token):
        return bytes([int(token.token[3:5], 16)])
    return token.token.translate(_BPE_SPACES).encode("utf-8", "surrogatepass")


def _covering(spans: dict[int, tuple[int, int]], position: int) -> int | None:
    for index, (start, end) in spans.items():
        if start <= position < end:
            return index
    return None


def answer_tokens_start(tokens: list[Logprob]) -> int:
    """Byte offset, in the tokens' joined bytes, where the answer may begin: after the last
    closing reasoning tag among the tokens (0 when there is none)."""
    return _after_reasoning(b"".join(token_bytes(t) for t in tokens))


def _after_reasoning(joined: bytes) -> int:
    closings = list(_CLOSING_BYTES.finditer(joined))
    return closings[-1].end() if closings else 0


_SPACE = re.compile(rb"\s+")


def _spell(chunks: list[tuple[int, bytes]], target: bytes) -> dict[int, tuple[int, int]] | None:
    """Which tokens spell ``target`` (white space aside), read in the order given: each
    token that spells the next bytes takes them; one that spells nothing there is skipped
    (a special or end token of any name); `U+FFFD` pieces stand for the bytes up to the
    next token that spells, one to four each. Returns each spelling token's span in
    ``target``, or None when the tokens do not spell all of it."""
    spans: dict[int, tuple[int, int]] = {}
    at = 0
    pending: list[int] = []
    for index, chunk in chunks:
        if not chunk:
            continue
        if target.startswith(chunk, at):
            pending = []  # pieces before a token that spells here stood for nothing
            spans[index] = (at, at + len(chunk))
            at += len(chunk)
        elif not chunk.replace(_REPLACEMENT, b"").replace(_REPLACEMENT[::-1], b""):
            pending.append(index)
        elif pending:
            # each piece stands for one to four bytes (a server's U+FFFD for bytes that do
            # not decode alone): the run ends where the next spelling token fits
            reach = min(len(target), at + 4 * len(pending))
            to = next(
                (q for q in range(at + 1, reach + 1) if target.startswith(chunk, q)),
                None,
            )
            if to is None:
                continue
            for piece in pending:
                spans[piece] = (at, to)
            pending = []
            spans[index] = (to, to + len(chunk))
            at = to + len(chunk)
        if at == len(target) and not pending:
            break
    if pending and 0 < len(target) - at <= 4 * len(pending):
        for piece in pending:
            spans[piece] = (at, len(target))
        at = len(target)
    return spans if at == len(target) else None


def score_token_index(
    tokens: list[Logprob], text: str, match: ScoreMatch, reasoning: str = ""
) -> int:
    """Index of the token that wrote the verdict of the answer region ``text``.

    The verdict's characters are mapped to the token that wrote them by spelling the region
    with the tokens after the last reasoning tag among them (`_spell`, white space aside),
    read forwards and backwards: tokens that spell nothing in the text (special and end
    tokens, whatever their names) are skipped wherever they stand. The two readings must
    give the same token, else the tokens are spelled again as ``reasoning`` (returned apart
    from the text, whose tokens some servers list) followed by the region. The token must
    be the score digit alone. Raises `LogprobsMissing` with the reason.
    """
    raws = [token_bytes(t) for t in tokens]
    begin = _after_reasoning(b"".join(raws))
    chunks: list[tuple[int, bytes]] = []
    offset = 0
    for index, raw in enumerate(raws):
        chunks.append((index, _SPACE.sub(b"", raw[max(0, begin - offset) :])))
        offset += len(raw)
    written = text.encode("utf-8", "surrogatepass")
    score_at = len(_SPACE.sub(b"", written[: len(text[: match.start].encode("utf-8"))]))
    found: int | None = None
    for ahead in ("", reasoning) if reasoning else ("",):
        lead = _SPACE.sub(b"", ahead.encode("utf-8", "surrogatepass"))
        found = _spelled_at(chunks, lead + _SPACE.sub(b"", written), len(lead) + score_at)
        if found is not None:
            break
    if found is None:
        raise LogprobsMissing(
            "the judge's tokens do not spell its answer once (missing, or spelled in more "
            "than one place): which token wrote the score cannot be told"
        )
    if token_score(tokens[found].token) != match.score:
        raise LogprobsMissing(
            f"the token at the score, {tokens[found].token!r}, is not the score digit alone"
        )
    return found


def _spelled_at(chunks: list[tuple[int, bytes]], target: bytes, at: int) -> int | None:
    """The token at byte ``at`` of ``target`` where reading forwards and backwards agree."""
    forward = _spell(chunks, target)
    backward = _spell([(i, c[::-1]) for i, c in reversed(chunks)], target[::-1])
    if forward is None or backward is None:
        return None
    first, last = _covering(forward, at), _covering(backward, len(target) - 1 - at)
    return first if first is not None and first == last else None


_REPLACEMENT = "\ufffd".encode()
