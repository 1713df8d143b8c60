"""Reading a judge's 1-5 score from its text: candidates, labels, and the one score (if any).

The rule: after the rubric's own scale ("(1-5)", "1 to 5", "/5", "out of 5") and list
numbering are set aside, an answer holds one score when all its candidate scores agree,
or when the ones plainly labelled as the overall score (``Score:``, ``Overall:``,
``Final score:``, the rubric's ``Empathetical responding:``) agree. Sub-scores
(``Relevance: 5``, ``Tone Matching: 4``) are never the score. Several different
candidates are ambiguous. The full accept/refuse table is in docs/scoring.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

SCORES: tuple[int, ...] = (1, 2, 3, 4, 5)

LabelKind = Literal["overall", "aspect", "none"]


class ScoreParseError(ValueError):
    """A judge's output holds no single valid 1-5 score."""


@dataclass(frozen=True)
class ScoreMatch:
    """A score found in a judge's output and where it stands in the text.

    ``start``/``end`` delimit the characters that wrote it; ``word`` is True when it
    was written as a word ("Four"), which no score token's logprobs can weigh.
    ``label`` is the kind of label before it.
    """

    score: int
    start: int
    end: int
    word: bool = False
    label: LabelKind = "none"
    """``overall`` where a score label (``Score:``, ``Overall:``, ...) stands before it."""


@dataclass(frozen=True)
class _Candidate:
    text: str
    value: float
    start: int
    end: int
    line: int
    label: LabelKind
    word: bool
    opens: bool
    """Nothing but markup or a bullet stands before it on its line."""
    counts: bool = False
    """A word follows it on its line (``5 more turns``, ``2 exams``): a count in prose, not
    a verdict (`_COUNT`)."""
    alternative: bool = False
    """Offered beside a verdict (`_ALTERNATIVE`: ``maybe 4``), counting nothing."""
    closes: bool = False
    """Nothing but a sentence end follows it on its line (``On reflection, 4.``)."""

    @property
    def bare(self) -> bool:
        """An unlabelled whole number 1-5 standing as an answer: it opens its line and no
        word follows it (``4``, ``**4** - warm``, ``3\n\nThe reply ...``)."""
        return self.label == "none" and self.opens and not self.counts and self.value in SCORES


FULLWIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_MARKUP = re.compile(r"[*_`#|\[\]\"{}$]|\\boxed|>(?![ \t]*\d)|(?<=[\w\"'\]])>|(?<![^\n])[ \t]*>")
"""Markdown, JSON's quotes and braces (``{"score": 4}`` reads as ``score: 4``), and LaTeX's
``\\boxed{4}`` and ``$...$`` (reasoning models trained on mathematics box their answer). A
``>`` is markup (a quote, a tag's end) except as a comparison before a number (``Score: >3``
is no verdict)."""
_DASH = r"(?:-|–|—|‐|‑|to)"
_OF = r"(?:of|[ \t]+(?:sur|von|de|su|из|van))"
"""``4 of 5`` as English, French, German, Spanish and Portuguese, Italian, Russian, Dutch
write it; the other languages' words on the score's line only (a cut answer closed by a line
break is read only where no continuation can change it: `_CUT_CLOSED`)."""
_NOT_ASCII_WORD = r"(?![A-Za-z0-9_]|\.\d)"
"""Nothing of an ASCII word or a decimal right after (CJK text may touch: ``4/5分``)."""
# the rubric's own scale, however the judge repeats it; replaced by spaces (offsets kept)
_SCALE = re.compile(
    rf"\(\s*1\s*{_DASH}\s*5\s*\)"  # (1-5), (1–5), (1 to 5)
    rf"|(?<![\w.])1\s*{_DASH}\s*5{_NOT_ASCII_WORD}"  # 1-5, 1 to 5
    rf"|(?<=\d)\s*/\s*5(?:\.0)?{_NOT_ASCII_WORD}"  # 4/5
    rf"|\bout\s+of\s+5(?:\.0)?{_NOT_ASCII_WORD}"  # 4 out of 5
    rf"|(?<=\d)(?:\s+of\s+|[ \t]+(?:sur|von|de|su|из|van)[ \t]+)5(?:\.0)?{_NOT_ASCII_WORD}",
    re.IGNORECASE,
)
_OTHER_SCALE = re.compile(
    r"\s*(?:/\s*|out\s+of\s+|of\s+)(\d+(?:\.\d+)?)"  # 4/10, 4 out of 10, 4 of 10
    r"|[ \t]+(?:sur|von|de|su|из|van)[ \t]+(\d+(?:\.\d+)?)"  # 4 sur 10
    rf"|\s*\(?\s*on\s+(?:a|the|an)\s+(?:scale\s+(?:of|from)\s+)?\d+\s*{_DASH}\s*\d+"
    r"(?:\s+scale)?\)?"
    r"|\s*\(?\s*on\s+(?:a|the|an)\s+\d+[- ]point\s+scale",  # on a 1-10 scale, 10-point
    re.IGNORECASE,
)
# right after a score: another number it spans to ("4-5", "3 or 4", "3 to 4")
_RANGE = re.compile(
    rf"\s*(?:{_DASH}|or)\s*(?:\d|(?:one|two|three|four|five)\b)"
    r"|[ \t]*(?:\+|-?ish\b|or\s+(?:higher|more|above|better|lower|less|below|so)\b)",
    re.IGNORECASE,
)
"""Right after a score: another number it spans to (``4-5``, ``3 or 4``, ``3 to 4``), or an
open or loose one (``4+``, ``4 or higher``, ``3-ish``)."""
# right after a score, at the end of the answer: what only a cut answer ends with
_DANGLING = re.compile(rf"\s*(?:/|out\s+of|{_OF}|or|and|{_DASH}|,)\s*\Z", re.IGNORECASE)
# right after a score: a question mark (the judge asks, it does not say)
_QUESTION = re.compile(r"\s*\?")
# right after a score: a fraction of it ("3,5" with a decimal comma, "3½")
_FRACTION = re.compile(r",\d|\s?[½¼¾⅓⅔⅛⅜⅝⅞]")
# a "give it a" / "score of" that is denied or hypothetical: not the judge's verdict
_DENIED = re.compile(r"(?:\bnot\b|\bnever\b|n[’']t\b|\bcannot\b)[^.;:!?\n]*$", re.IGNORECASE)
_HYPOTHETICAL = re.compile(
    r"\s*(?:would|could|might|requires?|needs?|means|is\s+for|is\s+reserved)\b", re.IGNORECASE
)
_CONDITION = re.compile(
    r"[ \t,]*(?:if|unless|had|were|provided|once|at\s+(?:best|most)|is\s+not|isn[’']t"
    r"|was\s+not|wasn[’']t|is\s+too|would\s+be\s+too|is\s+unwarranted)\b",
    re.IGNORECASE,
)
"""Right after a labelled score, on its line: a condition or denial that makes it no verdict
(``I'd give it a 5 if it named the fear``, ``a score of 5 is not warranted``, ``a 5 at best``),
whatever the label."""
_IF_BEFORE = re.compile(
    r"(?:\bif\b(?!\s+(?:I|we)\s+(?:had|have|were|must)\s+to\b|\s+(?:forced|asked|pressed)\b)"
    r"|\bunless\b|(?:^|[.;!?]\s*)(?:had|were)\b)"
    r"(?:(?!\b(?:but|yet|however|though|although|instead)\b)[^.;:!?\n])*$",
    re.IGNORECASE,
)
"""Before a score, in its clause: a condition (``If it had named the fear, I'd rate it a 5``,
``Had it named the fear, I'd give it a 5``), unless a ``but`` turns from it (``... if it
named the fear, but it gets a 4``); ``If I had to rate it, I'd give it a 4`` is a verdict."""
_ALTERNATIVE = re.compile(
    r"(?:\b(?:maybe|perhaps|possibly|could\s+(?:also\s+)?be|might\s+be|borderline|arguably"
    r"|otherwise|even)[ \t]+(?:an?[ \t]+)?)$",
    re.IGNORECASE,
)
"""Right before a number: another score offered beside the verdict (``Score: 3 (maybe 4)``,
``I'd give it a 4 — maybe a 3``, ``Could also be 3``)."""
# a number stands alone between ASCII letters and digits; CJK text may touch it ("4分")
_CANDIDATE = re.compile(
    r"(?<![A-Za-z0-9_./])(?<!/\s)(?P<neg>(?<![A-Za-z0-9_)])-)?(?P<num>\d+(?:\.\d+)?)"
    r"(?![A-Za-z0-9_])"
    r"|\b(?P<word>one|two|three|four|five)\b",
    re.IGNORECASE,
)
# "1. Read the ...", "2) ...": a list item's number, at the start of a line
_ENUMERATOR = re.compile(r"^\s*(?:[-•]\s*)?\d+[.)](?=\s|$)", re.MULTILINE)
_LABEL = re.compile(r"([^\W\d_][\w /&()'’,\-]{0,60}?)\s*[:=：]\s*\(?\s*$")
_SCORE_IS = re.compile(
    r"\b(?:(?:score|rating)\s+(?:is|of|would\s+be)"
    r"|(?:give|rate|score)\s+(?:it|this|that|the\s+\w+|this\s+\w+)\s+an?"
    r"|(?:deserves?|earns?|merits?|gets?)\s+an?"
    r"|(?:rate|score)\s+(?:it|this|that|the\s+\w+|this\s+\w+)(?:\s+(?:as|at))?)"
    r"\s+$",
    re.IGNORECASE,
)
_SCORE_BARE = re.compile(
    r"\b(?:score|rating)\s*(?:[-–—]\s*)?$|(?:得分|评分|評分|分数|分數|打分|スコア|評価|점수)\s*$",
    re.IGNORECASE,
)
"""A score word right before its number without a colon (``Score 4``, ``Rating - 4``,
``得分4分``)."""
_OPENS = re.compile(r"\s*(?:[-•]\s*)?\(?\s*$")
_COUNT = re.compile(
    r"(?:[ \t]+(?!(?:stars?|points?|pts|because|since|as|given|for|on|out|of|or|to|and|but"
    r"|though|rather|not|at|if|unless|in|with|is|was|would|could|might|means|needs?|requires?"
    r"|overall|sur|von|de|su|из|van)\b|[分点點점星])"
    r"|-(?!(?:stars?|points?)\b))[^\W\d_]",
    re.IGNORECASE,
)
"""A word right after a number, or joined to it by a hyphen: what it counts (``5 more
turns``, ``2 exams``, ``a 4-step plan``, ``a 5 minute break``), unless a unit of score
(``4 stars``, ``4-star``, ``4 分``), a reason (``4 because ...``, ``4 for warmth``) or a
word the parse table reads on (``4 out of``, ``4 on a 10-point scale``, ``5 would``) follows.
A count is no verdict, labelled by ``gets a`` or standing alone."""
_OVERALL = re.compile(r"\b(?:overall|final|total)\b", re.IGNORECASE)
_ASPECT = re.compile(
    r"relevan|tone|supportive|understanding|constructive|emotion|step", re.IGNORECASE
)
_SCORE_WORD = re.compile(
    r"\b(?:score|rating|rate|empathetical|empathetic|empathy|evaluation|verdict|grade"
    r"|answer|result|assessment|judge?ment"
    r"|puntuaci[oó]n|puntaje|calificaci[oó]n|valoraci[oó]n|punteggio|valutazione|voto"
    r"|bewertung|punktzahl|pontua[cç][aã]o|avalia[cç][aã]o|[ée]valuation|оценка|балл)\b"
    r"|得分|评分|評分|分数|分數|打分|スコア|評価|점수|평가",
    re.IGNORECASE,
)


def _blank(text: str, pattern: re.Pattern[str]) -> str:
    return pattern.sub(lambda m: " " * len(m.group()), text)


def _lines(text: str) -> list[tuple[int, str]]:
    """Each line of ``text`` with its offset."""
    result, offset = [], 0
    for line in text.split("\n"):
        result.append((offset, line))
        offset += len(line) + 1
    return result


def _label_kind(label: str) -> LabelKind:
    if _OVERALL.search(label):
        return "overall"
    if _ASPECT.search(label):
        return "aspect"
    if _SCORE_WORD.search(label):
        return "overall"
    return "none"


def _label_before(prefix: str, line_above: str | None, after: str = "") -> LabelKind:
    """The kind of label right before a candidate (or alone on the line above it).

    ``I'd give it a 4`` and ``a score of 4`` label it, unless denied (``I wouldn't give it
    a 5``) or hypothetical (``a score of 5 would need ...``: ``after`` is the text after it).
    """
    if _CONDITION.match(after) or _IF_BEFORE.search(prefix):
        return "none"
    if _SCORE_IS.search(prefix):
        if _DENIED.search(prefix) or _HYPOTHETICAL.match(after) or _COUNT.match(after):
            return "none"
        return "overall"
    match = _LABEL.search(prefix)
    if match:
        return _label_kind(match.group(1))
    if _SCORE_BARE.search(prefix):
        if _DENIED.search(prefix) or _HYPOTHETICAL.match(after) or _COUNT.match(after):
            return "none"
        return "overall"
    if not prefix.strip() and line_above is not None:
        above = _LABEL.fullmatch(line_above.strip())
        if above:
            return _label_kind(above.group(1))
    return "none"


def clean_text(text: str) -> str:
    """The text as candidates are read from it: full-width digits as ASCII, markup and
    the rubric's own scale blanked; same length, so offsets hold."""
    return _blank(_blank(text.translate(FULLWIDTH_DIGITS), _MARKUP), _SCALE)


_CLOSES = re.compile(r"[ \t]*[.!;。！]?[ \t]*$")
_LATER_SENTENCE = re.compile(r"[.!?;。！？]|\n")
"""After a number: only a sentence end, then the line's end."""


def _candidates(clean: str, text: str, cot: bool) -> list[_Candidate]:
    """Every number (and number word) that could be the score, with its label kind."""
    lines = _lines(clean)
    enumerated = sum(1 for _, line in lines if _ENUMERATOR.match(line))
    found: list[_Candidate] = []
    above: str | None = None
    for index, (offset, line) in enumerate(lines):
        if not line.strip():
            continue
        begin = 0
        item = _ENUMERATOR.match(line)
        # a list's numbering is never a score; nor a bare "3." in a reasoned answer
        if item and (enumerated >= 2 or (cot and not line[item.end() :].strip())):
            begin = item.end()
        segment = begin
        for m in _CANDIDATE.finditer(line, begin):
            if m.group("word"):
                value = float(_WORDS[m.group("word").lower()])
            else:
                value = float(m.group("num")) * (-1 if m.group("neg") else 1)
            found.append(
                _Candidate(
                    text=text[offset + m.start() : offset + m.end()],
                    value=value,
                    start=offset + m.start(),
                    end=offset + m.end(),
                    line=index,
                    label=_label_before(line[segment : m.start()], above, line[m.end() :]),
                    word=bool(m.group("word")),
                    opens=bool(_OPENS.match(line[begin : m.start()])),
                    counts=bool(_COUNT.match(line, m.end())),
                    alternative=bool(_ALTERNATIVE.search(line[segment : m.start()]))
                    and not _COUNT.match(line, m.end()),
                    closes=bool(_CLOSES.match(line, m.end())),
                )
            )
            segment = m.end()
        above = line
    return found


def _one_value(cands: list[_Candidate], what: str) -> _Candidate:
    values = sorted({c.value for c in cands})
    if len(values) > 1:
        shown = ", ".join(f"{v:g}" for v in values)
        raise ScoreParseError(f"several different {what} ({shown}): ambiguous")
    return cands[0]


def _valid(chosen: _Candidate, clean: str) -> ScoreMatch:
    other = _OTHER_SCALE.match(clean, chosen.end)
    if other:
        raise ScoreParseError(
            f"{chosen.text}{other.group().rstrip()} is a score on another scale, not 1-5"
        )
    spans = _RANGE.match(clean, chosen.end)
    if spans:
        raise ScoreParseError(f"{chosen.text}{spans.group()} is a range of scores: ambiguous")
    ends = _DANGLING.match(clean, chosen.end)
    if ends:
        raise ScoreParseError(
            f"the answer ends mid-verdict ({chosen.text}{ends.group().rstrip()}): a stop that "
            "says it finished, on an answer the bound or the service cut"
        )
    if _QUESTION.match(clean, chosen.end):
        raise ScoreParseError(f"{chosen.text}? is a question, not a verdict")
    fraction = _FRACTION.match(clean, chosen.end)
    if fraction or not float(chosen.value).is_integer():
        written = chosen.text + (fraction.group() if fraction else "")
        raise ScoreParseError(f"score {written} is not a whole number from 1 to 5")
    if not float(chosen.value).is_integer():
        raise ScoreParseError(f"score {chosen.text} is not a whole number from 1 to 5")
    if int(chosen.value) not in SCORES:
        raise ScoreParseError(f"score {chosen.text} is outside 1-5")
    return ScoreMatch(
        score=int(chosen.value),
        start=chosen.start,
        end=chosen.end,
        word=chosen.word,
        label=chosen.label,
    )


def _choose(cands: list[_Candidate], clean: str = "") -> _Candidate:
    """The one score among candidates: the overall ones if any are labelled so, else all
    that are not sub-scores; digits before number words. Unlabelled, it must be a verdict:
    the first of the agreeing candidates that opens its line (`_verdict`)."""
    digits = [c for c in cands if not c.word]
    pool = digits or cands
    overall = [c for c in pool if c.label == "overall"]
    if overall:
        return _beside_bare(_one_value(overall, "overall scores"), pool, clean=clean)
    plain = [c for c in pool if c.label != "aspect"]
    if not plain:
        shown = ", ".join(repr(c.text) for c in pool[:4])
        raise ScoreParseError(f"only sub-scores ({shown}), no overall score")
    _one_value(plain, "candidate scores")
    return _verdict(plain)


def _beside_bare(
    chosen: _Candidate, others: list[_Candidate], bare_on: int | None = None, clean: str = ""
) -> _Candidate:
    """The labelled score, unless a bare answer elsewhere (`_Candidate.bare`; on line
    ``bare_on`` only, where given) or an alternative offered beside it (on its line or the
    next: ``Score: 3 (maybe 4)``) says another number: reasoning the answer region could not
    set aside (a tag no service documents, a model that writes no tags) may hold a labelled
    draft before the answer (``Draft: Score: 3 ... \n\n4``); which is the verdict cannot be
    told."""
    for c in others:
        if c.value == chosen.value or c.value not in SCORES:
            continue
        if c.bare and bare_on in (None, c.line):
            raise ScoreParseError(
                f"the labelled score ({chosen.text}) and a bare answer on its own line "
                f"({c.text}) differ: ambiguous"
            )
        if (
            bare_on is None  # a score-only answer (reasoning may follow a cot answer's score)
            and c.start > chosen.end
            and _LATER_SENTENCE.search(clean, chosen.end, c.start)
            and c.label == "none"
            and c.closes
            and not (c.opens or c.counts or c.word)
        ):
            # a later number that ends its sentence may be a revised verdict written in prose
            # after a labelled draft ("Draft: Score: 3. On reflection, 4.")
            raise ScoreParseError(
                f"the labelled score ({chosen.text}) and a later number ending its sentence "
                f"({c.text}) differ: ambiguous"
            )
        if c.alternative and c.line - chosen.line in (0, 1):
            raise ScoreParseError(
                f"the labelled score ({chosen.text}) comes with another offered beside it "
                f"({c.text}): ambiguous"
            )
    return chosen


def _verdict(agreeing: list[_Candidate]) -> _Candidate:
    """The first unlabelled candidate that stands as a verdict: at the start of its line,
    with no word after it (``4``, ``**4** - warm``). A lone number inside prose (``I'd need
    5 more turns``) or one that counts something (``5 more turns would be needed``) is no
    verdict, whatever else the answer says."""
    for cand in agreeing:
        if cand.opens and not cand.counts:
            return cand
    shown = agreeing[0].text
    if any(c.opens for c in agreeing):
        raise ScoreParseError(
            f"a number followed by a word counts something, it is not a verdict: {shown!r} "
            "has no score label"
        )
    raise ScoreParseError(
        f"a number in prose is not a verdict: {shown!r} has no score label and does not "
        "start its line"
    )


_CUT_CLOSED = re.compile(
    r"[ \t]*(?:[.!;](?![\d])(?=.)"
    r"|\n\s*(?=[^\s/(,\-–—‐‑oOtT½¼¾⅓⅔⅛⅜⅝⅞]|[tT][^oO]|[oO][^fFnNrRuU]))",
    re.DOTALL,
)
"""What closes a score in a cut answer, whatever comes next: a sentence or clause end
(``.``, ``!``, ``;``, not a decimal point, with at least one more character), or a line
break followed by something that begins none of the parse table's changers (``The`` and
``Overall`` do; ``to``, ``of``, ``or``, ``on`` and ``out`` may): another scale
(``/10``, ``out of 10``, ``of 10``, ``(on a 1-10 scale)``), a range (``-5``, ``– 5``,
``to 5``, ``or 5``), a fraction (``,5``, ``½``). A hypothetical (``would``) is read on the
score's own line only, which the break closes. The changers are `_OTHER_SCALE`, `_RANGE`,
`_FRACTION` and `_HYPOTHETICAL`; each starts, after white space, with one of the characters
excluded here (tests/judge/test_closed_world_properties.py proves it over generated answers)."""


_SENTENCE_END = re.compile(r"[.!?;。！？]")
_RAISE = "; a judge that reasons before answering needs a larger bound: raise --max-tokens"


def _cut_verdict(match: ScoreMatch, text: str, clean: str) -> ScoreMatch:
    """The score of a cut answer, only where no continuation the parse table accepts could
    read another: a labelled overall score (``Score: 4``, ``I'd give it a 4``) that opens
    the answer (one clause before it at most: a reasoning model's thoughts cut before their
    end may hold a labelled draft) and is closed by `_CUT_CLOSED`. An unlabelled number can
    be overruled by a label after it (``4\n\nThe reply ... Score: 3`` reads 3); a score at
    a list item's place can become the list's numbering; an unclosed one can become
    ``4/10``, ``4-5``, ``4.5`` or a hypothetical."""
    shown = text.strip()[:60]
    if match.label != "overall":
        raise ScoreParseError(
            f"cut off by max_tokens ({shown!r}): a cut answer is read only as a score label "
            "and its score closed by '.', '!', ';' or a line break ('Score: 4. ...'); a "
            "number without a label could still be overruled by one after it"
        )
    before = clean[: match.start].strip()
    if _SENTENCE_END.search(before) or before.count("\n") > 1 or len(before) > 60:
        raise ScoreParseError(
            f"cut off by max_tokens ({shown!r}): a cut answer is read only where it opens "
            "with its labelled score, not after other sentences (reasoning cut before its "
            "end may hold a draft)" + _RAISE
        )
    line_start = clean.rfind("\n", 0, match.start) + 1
    item = _ENUMERATOR.match(clean, line_start)
    if item and item.end() > match.start:
        raise ScoreParseError(f"cut off by max_tokens in a numbered list ({shown!r})")
    if not _CUT_CLOSED.match(clean, match.end):
        raise ScoreParseError(
            f"cut off by max_tokens right after {text[match.start :].strip()[:40]!r}: the "
            "score is not closed, and the next tokens could have changed it (4/10, 4-5, 4.5, "
            "'4 at first glance, but ...')"
        )
    return match


PARSED_KEPT = 4096
"""How many answers `parse_score` keeps read: judges repeat their answers ("4", "Score: 4"),
and a verdict is a function of the text alone (a refused one is read again, and says why
again)."""


@lru_cache(maxsize=PARSED_KEPT)
def parse_score(text: str, cot: bool = False, cut: bool = False) -> ScoreMatch:
    """Find the judge's 1-5 score in its output.

    Score-only output: the one score in the whole answer ("4", "Score: 4",
    "4 - strong empathy", "I'd give it a 4.", "Relevance: 5 ... Overall: 4").
    With ``cot``: the one value labelled as the overall score (``Score: 4``,
    ``"score": 4``) wherever it stands, so that reasoning after it ("a 5 would name
    the fear") is not read as the score; without such a label, the score on the
    last non-empty line; other numbers in the reasoning are not candidates.
    An unlabelled score must open its line: a lone number in prose is no verdict.
    ``cut``: the output bound cut the answer; it is read only as `_cut_verdict` allows
    (a ``cot`` answer never). Anything ambiguous, fractional, on another scale or
    outside 1-5 raises `ScoreParseError`.
    """
    if cut and cot:
        raise ScoreParseError("cut off by max_tokens before the score (stop reason max_tokens)")
    if not text.strip():
        raise ScoreParseError("empty output: no score")
    clean = clean_text(text)
    cands = _candidates(clean, text, cot)
    if not cot:
        if not cands:
            found = f"no score in the answer: {text.strip()[:80]!r}"
            if cut:
                raise ScoreParseError(f"cut off by max_tokens before a verdict: {found}{_RAISE}")
            raise ScoreParseError(found)
        if not cut:
            return _valid(_choose(cands, clean), clean)
        try:
            match = _valid(_choose(cands, clean), clean)
        except ScoreParseError as ex:
            raise ScoreParseError(f"cut off by max_tokens before a verdict: {ex}{_RAISE}") from ex
        return _cut_verdict(match, text, clean)
    labelled = [c for c in cands if c.label == "overall" and not c.word]
    lines = _lines(text)
    final = max(i for i, (_, line) in enumerate(lines) if line.strip())
    if labelled:
        chosen = _one_value(labelled, "overall scores")
        return _valid(_beside_bare(chosen, cands, bare_on=final), clean)
    last_line = lines[final][1].strip()
    on_last = [c for c in cands if c.line == final]
    if on_last:
        if all(c.label == "aspect" for c in on_last):
            raise ScoreParseError(
                f"the last line is a sub-score ({last_line[:60]!r}), not the overall score"
            )
        return _valid(_choose(on_last), clean)
    raise ScoreParseError(f"no score on the last line: {last_line[:80]!r}")
