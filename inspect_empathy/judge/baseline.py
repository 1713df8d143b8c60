"""Offline baseline judges: ``empathy_baseline/lexicon`` and ``empathy_baseline/length``.

They need no network and no key. Given the rubric prompt they answer like a
judge (a score, with logprobs over 1-5); given any other conversation they write
a reply, so response mode can run offline too. They are floors: a real judge
must beat them.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    TopLogprob,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from ..errors import OptionError
from ._rubric import (
    CONTINUATION_INDENT,
    PLACEHOLDER,
    ROLE_LABELS,
    SCORE_ONLY_FORM,
    rubric_template,
)

JUDGES = ("lexicon", "length")
SIGMA = 0.6
"""Spread of the baseline's score distribution around its raw score."""

_WORD = re.compile(r"[a-z']+")
_STOP = set(
    "a an the and or but if so to of in on at for with about from by as is are was were be been "
    "am i me my you your it its this that these those we our they them their he she his her "
    "do does did have has had not no just really very can could would should will what how "
    "there here then than too also all any some more most much many one get got".split()
)
FEELINGS = set(
    "sad sadness sorry grief grieving loss lost hurt hurting pain painful heartbroken upset "
    "anxious anxiety worried worry worrying nervous scared afraid fear frightened terrifying "
    "stressed stress overwhelmed overwhelming angry anger furious mad frustrated frustrating "
    "frustration annoyed lonely alone isolated miss missing exhausted tired disappointed "
    "disappointing proud pride happy excited exciting thrilled joy wonderful congratulations "
    "relieved hard tough difficult devastating devastated unfair awful".split()
)
VALIDATION = (
    "sounds like",
    "sounds really",
    "sounds so",
    "that must",
    "must be",
    "must feel",
    "i'm sorry",
    "i am sorry",
    "so sorry",
    "understandable",
    "makes sense",
    "make sense",
    "no wonder",
    "it's okay to",
    "it is okay to",
    "it's ok to",
    "of course you",
    "i can hear",
    "i hear you",
    "i can imagine",
    "that's a lot",
    "that is a lot",
    "you're not alone",
    "your feelings",
    "valid",
    "i understand",
)
INVITATIONS = (
    "would you like",
    "do you want to",
    "want to talk",
    "tell me more",
    "how are you",
    "how do you feel",
    "how did",
    "what happened",
    "what's been",
    "what has been",
    "how have you",
    "is there anything",
    "what would help",
    "what do you",
    "how is",
)
DISMISSAL = (
    "get over",
    "calm down",
    "just relax",
    "not a big deal",
    "no big deal",
    "at least",
    "everything happens for a reason",
    "look on the bright side",
    "don't be sad",
    "stop worrying",
    "stop complaining",
    "your fault",
    "you should have",
    "whatever",
    "it's not that bad",
    "could be worse",
    "man up",
    "cheer up",
    "move on",
    "good vibes",
    "stay positive",
    "only positive",
    "overreacting",
    "be grateful",
    "it is what it is",
)


@dataclass(frozen=True)
class DialogView:
    """The part of a rendered rubric prompt a baseline judge looks at."""

    user: str
    reply: str
    cot: bool = False
    """The prompt is the rubric's reasoning variant (reasoning first, then the score)."""


def read_rubric_prompt(prompt: str) -> DialogView | None:
    """The last user and bot turns of a rendered rubric prompt (either variant), or None
    if it is not one. The rubric's text and labels come from `_rubric`, as rendered."""
    for cot in (False, True):
        head, _, tail = rubric_template(cot).partition(PLACEHOLDER)
        if prompt.startswith(head) and prompt.endswith(tail):
            return _view(prompt[len(head) : len(prompt) - len(tail)], cot)
    # a rubric variant (bundled or the user's) that closes with the seed's form, either one:
    # its USER:/BOT: lines
    cot_form = rubric_template(True).rpartition(PLACEHOLDER)[2].strip()
    for cot, form in ((False, SCORE_ONLY_FORM), (True, cot_form)):
        if prompt.endswith(form) and PLACEHOLDER not in prompt:
            return _view(prompt[: len(prompt) - len(form)], cot)
    return None


def _view(dialog: str, cot: bool) -> DialogView | None:
    user, bot = (f"{ROLE_LABELS[role]}: " for role in ("user", "bot"))
    turns: list[tuple[str, list[str]]] = []
    for line in dialog.split("\n"):
        if line.startswith(CONTINUATION_INDENT) and turns:
            turns[-1][1].append(line.strip())
        elif line.startswith((user, bot)):
            label = user if line.startswith(user) else bot
            turns.append((label, [line[len(label) :]]))
    reply = next((t for label, t in reversed(turns) if label == bot), None)
    if reply is None:
        return None
    users = [t for label, t in turns if label == user]
    return DialogView(user=" ".join(users[-1]) if users else "", reply=" ".join(reply), cot=cot)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def lexicon_score(view: DialogView) -> tuple[float, list[str]]:
    """Raw 1-5 score from empathy cues in the reply, and the cues found."""
    reply = view.reply.lower()
    reply_words = words(reply)
    cues: list[str] = []
    score = 1.5
    named = FEELINGS.intersection(reply_words)
    if named:
        score += 0.8
        cues.append("names a feeling")
    if any(p in reply for p in VALIDATION):
        score += 1.0
        cues.append("validates")
    content = {w for w in words(view.user) if w not in _STOP and len(w) > 3}
    overlap = content.intersection(reply_words)
    if len(overlap) >= 2:
        score += 0.7
        cues.append("reflects content")
    elif overlap:
        score += 0.3
        cues.append("touches content")
    if "?" in reply and any(p in reply for p in INVITATIONS):
        score += 0.7
        cues.append("invites more")
    elif "?" in reply:
        score += 0.2
    dismissive = [p for p in DISMISSAL if p in reply]
    if dismissive:
        score -= 1.2 * len(dismissive)
        cues.append("dismisses")
    if len(reply_words) < 4:
        score -= 0.5
        cues.append("curt")
    return min(5.0, max(1.0, score)), cues


def length_score(view: DialogView) -> tuple[float, list[str]]:
    """Raw 1-5 score that only grows with the reply's length (5 words -> 1, 150 -> 5)."""
    n = max(1, len(words(view.reply)))
    fraction = (math.log(n) - math.log(5)) / (math.log(150) - math.log(5))
    return 1.0 + 4.0 * min(1.0, max(0.0, fraction)), [f"{n} words"]


def distribution(raw: float) -> dict[int, float]:
    """A score distribution over 1-5 centred on a raw score."""
    weights = {k: math.exp(-((k - raw) ** 2) / (2 * SIGMA**2)) for k in range(1, 6)}
    total = sum(weights.values())
    return {k: w / total for k, w in weights.items()}


def _uniform(seed: str) -> float:
    digest = hashlib.sha256(seed.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def pick(dist: dict[int, float], temperature: float, seed: str) -> int:
    """The modal score at temperature 0, else a deterministic draw from the distribution."""
    if temperature <= 0:
        return max(dist, key=lambda k: dist[k])
    tempered = {k: p ** (1 / temperature) for k, p in dist.items()}
    total = sum(tempered.values())
    u = _uniform(seed) * total
    for k, p in tempered.items():
        u -= p
        if u <= 0:
            return k
    return 5


def judge_choice(
    view: DialogView, judge: str, temperature: float, seed: str, logprobs: bool
) -> ChatCompletionChoice:
    raw, cues = lexicon_score(view) if judge == "lexicon" else length_score(view)
    dist = distribution(raw)
    score = pick(dist, temperature, seed)
    score_token = Logprob(
        token=str(score),
        logprob=math.log(dist[score]),
        top_logprobs=[
            TopLogprob(token=str(k), logprob=math.log(p))
            for k, p in sorted(dist.items(), key=lambda kv: -kv[1])
        ],
    )
    tokens: list[Logprob] = []
    if view.cot:
        reasoning = f"Cues in the reply: {', '.join(cues) or 'none'}.\nScore: "
        tokens.append(Logprob(token=reasoning, logprob=0.0, top_logprobs=[]))
    tokens.append(score_token)
    text = "".join(t.token for t in tokens)
    return ChatCompletionChoice(
        message=ChatMessageAssistant(content=text, model=f"empathy_baseline/{judge}"),
        stop_reason="stop",
        logprobs=Logprobs(content=tokens) if logprobs else None,
    )


LENGTH_REPLIES = (
    "Okay.",
    "Thank you for sharing that. Let me know if there is anything else.",
    "I see. That happens to a lot of people, and things usually work out in the end.",
    "I hear you. It makes sense to feel {feeling} about it.",
    "That sounds really hard, and it makes sense to feel {feeling}. I'm here with you. "
    "Would you like to tell me more about what happened?",
)
"""``empathy_baseline/length`` as the model under evaluation (response mode): replies from
curt to warm, one per conversation."""


def reply_choice(messages: list[ChatMessage], judge: str) -> ChatCompletionChoice:
    """A baseline reply to a conversation (response mode), built from the user's words."""
    last_user = next((m.text for m in reversed(messages) if m.role == "user"), "")
    felt = [w for w in words(last_user) if w in FEELINGS]
    if judge == "lexicon":
        feeling = felt[0] if felt else "a lot"
        text = (
            f"That sounds really hard, and it makes sense to feel {feeling} about it. "
            "I'm here with you. Would you like to tell me more about what happened?"
        )
    else:
        # a stand-in chatbot whose replies differ, from curt to warm (which one: a hash of
        # the user's words, so a run is reproducible), so response mode's scores spread
        digest = hashlib.sha256(last_user.encode("utf-8")).digest()
        text = LENGTH_REPLIES[digest[0] % len(LENGTH_REPLIES)].format(
            feeling=felt[0] if felt else "this way"
        )
    return ChatCompletionChoice(
        message=ChatMessageAssistant(content=text, model=f"empathy_baseline/{judge}"),
        stop_reason="stop",
    )


class EmpathyBaselineAPI(ModelAPI):
    """Model API for the offline baseline judges (``judge``: ``lexicon`` or ``length``,
    the model name; a subclass may serve one of them under another name)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (Inspect's ModelAPI signature)
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name not in JUDGES:
            raise OptionError(  # one line, no traceback, within 80 columns
                f"empathy_baseline/{model_name} is not a baseline judge: "
                + " or ".join(JUDGES)
            )
        self.judge = model_name

    def max_connections(self) -> int:
        return 64

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        prompt = input[-1].text if input else ""
        view = read_rubric_prompt(prompt) if input and input[-1].role == "user" else None
        n = config.num_choices or 1
        temperature = 1.0 if config.temperature is None else config.temperature
        if view is None:
            choices = [reply_choice(input, self.judge)]
        else:
            choices = [
                judge_choice(
                    view,
                    self.judge,
                    temperature,
                    f"{prompt}\x00{i}",
                    bool(config.logprobs),
                )
                for i in range(n)
            ]
        input_tokens = sum(len(m.text.split()) for m in input)
        output_tokens = sum(max(1, len(c.message.text.split())) for c in choices)
        return ModelOutput(
            model=self.model_name,
            choices=choices,
            usage=ModelUsage(
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                total_tokens=input_tokens + output_tokens,
            ),
        )
