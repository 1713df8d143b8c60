"""Whether a judge's completion can carry a score: the one place that decides.

A completion carries a score only when every condition of a known-good answer holds:

1. **the stop**: it ended on its own (a stop reason in `_providers.FINISHED_STOPS`), or the
   output bound cut it (then only a closed, labelled verdict is read: `parse_score` with
   ``cut``); any other stop, Inspect's ``unknown`` included, leaves it unscored, naming the stop;
2. **the answer region**: the text after every form of reasoning the services produce
   (reasoning content blocks, whole and half-open reasoning tags, `REASONING_TAGS`), and the
   logprob tokens of that region, located from the output's end (`score_token_index`);
3. **the verdict** inside that region: a bare answer, a labelled score or a score key
   (`parse_score`); a lone number in prose is none.

Each refusal raises `NoAnswer` (a `ScoreParseError`) that names its reason.
"""

from __future__ import annotations

import difflib
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
    r"|START_TEXT|END_TEXT|begin_of_box|end_of_box)\|>|<answer>|</answer>",
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
    cut: bool
    """The output bound stopped it (stop reason ``max_tokens``)."""
    tokens: list[Logprob] | None
    """The completion's logprob tokens (all of them: `score_token_index` locates the
    region among them from the end), or None when it has none."""


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
    if stop in FINISHED_STOPS or stop == "max_tokens":
        return None
    why = (
        " (a stop Inspect could not map: the service's error, its context window reached, "
        "or another stop it gave no reason for)"
        if stop == "unknown"
        else ""
    )
    return (
        f"the judge's output did not finish (stop reason {stop!r}{why}): only "
        f"{', '.join(FINISHED_STOPS)} or a closed verdict cut by max_tokens is read" + _shown(text)
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


def read_answer(choice: ChatCompletionChoice, cot: bool) -> Answer:
    """The answer region of a completion that may carry a score, or `NoAnswer` naming why
    it cannot: its stop (`stop_problem`), a reasoned answer cut before its score, nothing
    after the reasoning, or an output that ends inside reasoning."""
    problem = stop_problem(choice)
    if problem:
        raise NoAnswer(problem)
    cut = choice.stop_reason == "max_tokens"
    message = choice.message
    content = message.content if message is not None else ""
    if isinstance(content, list):
        # reasoning content blocks: the answer is the text after the last of them
        last = max(
            (i for i, c in enumerate(content) if isinstance(c, ContentReasoning)), default=-1
        )
        text = "\n".join(c.text for c in content[last + 1 :] if isinstance(c, ContentText))
        reasoned = last >= 0
    else:
        text = content
        reasoned = False
    written = answer_region(text)
    region = _WRAPPERS.sub(lambda m: " " * len(m.group()), written)
    if cut and cot:
        raise NoAnswer("cut off by max_tokens before the score (stop reason max_tokens)")
    if not region.strip():
        if cut:
            where = "any output" if not text.strip() else "any answer after its reasoning"
            raise NoAnswer(
                f"cut off by max_tokens before {where} (reasoning models spend the bound "
                "on reasoning: raise --max-tokens)"
            )
        if reasoned or written != text:
            raise NoAnswer("no answer after the reasoning")
    logprobs = choice.logprobs
    tokens = list(logprobs.content) if logprobs is not None and logprobs.content else None
    return Answer(text=region, written=written, cut=cut, tokens=tokens)


def verdict(answer: Answer, cot: bool) -> ScoreMatch:
    """The score of an answer region: `parse_score`, with a cut answer read only as a
    closed, labelled verdict."""
    return parse_score(answer.text, cot, cut=answer.cut)


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


def _covering(lengths: list[int], position: int) -> int | None:
    offset = 0
    for index, length in enumerate(lengths):
        if offset <= position < offset + length:
            return index
        offset += length
    return None


def answer_tokens_start(tokens: list[Logprob]) -> int:
    """Byte offset, in the tokens' joined bytes, where the answer may begin: after the last
    closing reasoning tag among the tokens (0 when there is none)."""
    joined = b"".join(token_bytes(t) for t in tokens)
    closings = list(_CLOSING_BYTES.finditer(joined))
    return closings[-1].end() if closings else 0


def score_token_index(tokens: list[Logprob], text: str, match: ScoreMatch) -> int:
    """Index of the token that wrote the parsed score of the answer region ``text``.

    The answer is the last part of the output, so the region is located from the tokens'
    end, after any reasoning among them (SGLang and vLLM return the reasoning's tokens in
    the logprobs while the text holds only the answer): the tokens' bytes must end with the
    region's (white space at either end aside). Where the tokens do not spell it (providers
    that return U+FFFD or escapes for split characters), the region is aligned from the end
    by matching runs of bytes after the last reasoning tag, accepted only where the runs
    cover every ASCII byte from the score to the end and the score's byte falls inside one.
    Raises `LogprobsMissing` with the reason when no token can be shown to be the score's.
    """
    tokens = _without_end_markers(tokens, text)
    chunks = [token_bytes(t) for t in tokens]
    lengths = [len(c) for c in chunks]
    joined = b"".join(chunks)
    region = text.encode("utf-8", "surrogatepass")
    score_at = len(text[: match.start].encode("utf-8", "surrogatepass"))
    begin = answer_tokens_start(tokens)
    unspelled = _unspelled_end(joined, region)
    if unspelled and score_at < len(unspelled[1]) and begin <= len(unspelled[0]):
        joined, region = unspelled
    body = region.strip()
    lead = len(region) - len(region.lstrip())
    tail = joined.rstrip()
    index: int | None
    if body and tail[begin:].endswith(body):
        index = _covering(lengths, len(tail) - len(body) + score_at - lead)
    else:
        index = _aligned_from_end(joined, begin, region, score_at, lengths)
    if index is None:
        raise LogprobsMissing("no logprob token covers the score")
    if token_score(tokens[index].token) != match.score:
        raise LogprobsMissing(
            f"the token at the score, {tokens[index].token!r}, is not the score digit alone"
        )
    return index


_REPLACEMENT = "\ufffd".encode()


def _unspelled_end(joined: bytes, region: bytes) -> tuple[bytes, bytes] | None:
    """The tokens' bytes and the region's without their unspelled end: U+FFFD pieces at the
    tokens' end that stand for the region's last characters, all non-ASCII (``4分`` with
    ``分`` split into pieces a server shows as U+FFFD, at most one a byte). None when the
    tokens do not end so."""
    shown = joined.rstrip()
    pieces = 0
    while shown.endswith(_REPLACEMENT):
        shown = shown[: -len(_REPLACEMENT)].rstrip()
        pieces += 1
    kept = region.rstrip()
    while kept and kept[-1] >= 0x80:
        kept = kept[:-1]
    dropped = len(region.rstrip()) - len(kept)
    if not pieces or not dropped or pieces > dropped:
        return None
    return shown, kept


_END_MARKER = re.compile(
    r"<\|[A-Za-z_]{1,30}\|>|<｜[^｜]{1,30}｜>|</s>|<eos>|<end_of_turn>|<\|end\|>"
)
"""A special token's string (``<|im_end|>``, ``<|eot_id|>``, ``</s>``, ``<end_of_turn>``,
harmony's ``<|return|>``, DeepSeek's ``<｜end▁of▁sentence｜>``): servers that return special
tokens in the logprobs (llama.cpp, vLLM with ``skip_special_tokens`` off, the harmony tokens
of gpt-oss) list the end of turn after the answer, which the text leaves out."""


def _without_end_markers(tokens: list[Logprob], text: str) -> list[Logprob]:
    """The tokens without the special tokens that close them (`_END_MARKER`), where the text
    does not end with them: they are no part of the answer."""
    end = len(tokens)
    written = text.rstrip()
    while end and _END_MARKER.fullmatch(tokens[end - 1].token.strip()):
        if written.endswith(tokens[end - 1].token.strip()):
            break
        end -= 1
    return tokens[:end]


def _aligned_from_end(
    joined: bytes, begin: int, region: bytes, score_at: int, lengths: list[int]
) -> int | None:
    """`_aligned_in` the tokens' last bytes, then more of them: the answer is the tokens'
    end, so a longer run elsewhere (the answer drafted in the reasoning before it) is never
    preferred to the runs at the end."""
    size = max(len(region), 1)
    while True:
        start = max(begin, len(joined) - size)
        try:
            return _aligned_in(joined, start, region, score_at, lengths)
        except LogprobsMissing:
            if start == begin:
                raise
        size *= 2


def _non_ascii(byte: int) -> bool:
    return byte >= 0x80


def _aligned_in(
    joined: bytes, begin: int, region: bytes, score_at: int, lengths: list[int]
) -> int | None:
    after = joined[begin:]
    # a non-ASCII byte never seeds a run (U+FFFD pieces share their first byte with CJK
    # punctuation): runs start on ASCII and extend over non-ASCII bytes that match
    matcher = difflib.SequenceMatcher(_non_ascii, after[::-1], region[::-1], autojunk=False)
    blocks = [
        (len(after) - a - size, len(region) - b - size, size)
        for a, b, size in matcher.get_matching_blocks()
        if size
    ]
    covered = set()
    found: int | None = None
    for a, b, size in blocks:
        covered.update(range(b, b + size))
        if b <= score_at < b + size:
            found = begin + a + score_at - b
    stripped_end = len(region.rstrip())
    if found is None or any(
        i not in covered for i in range(score_at, stripped_end) if region[i] < 0x80
    ):
        raise LogprobsMissing(
            "the judge's tokens do not spell its answer and cannot be aligned at the score"
        )
    last_a = max(a + size for a, _, size in blocks)
    if after[last_a:].strip():
        raise LogprobsMissing(
            "the judge's tokens go on past its answer: they cannot be aligned at the score"
        )
    return _covering(lengths, found)
