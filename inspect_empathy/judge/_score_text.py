"""Reading a judge's 1-5 score from its answer: one verdict or none.

The rule, whole: the rubric's own scale ("(1-5)", "1 to 5", "/5", "out of 5"), a list's
numbering and sub-scores labelled with one of the rubric's aspects (``Relevance: 5``) are set
aside. Every other number 1-5 the answer writes as a score (digits; a number word where it
stands as one) is a **candidate**, wherever it stands and whatever label it carries; a number
that counts something (``2 exams``, ``5 more turns``) is none. The answer has a score only when
all candidates agree and at least one of them is a **verdict**: written bare at the start of
its line, after a label (``Score:``, ``I'd give it a``, ``"score":``), or ending its sentence
(``..., so I'll go with 4.``), and neither denied, conditional nor asked. Two different
candidates are ambiguous; no label makes one of them win.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

SCORES: tuple[int, ...] = (1, 2, 3, 4, 5)


class ScoreParseError(ValueError):
    """A judge's output holds no single valid 1-5 score."""


@dataclass(frozen=True)
class ScoreMatch:
    """The verdict found in a judge's answer and where it stands in the text.

    ``start``/``end`` delimit the characters that wrote it; ``word`` is True when it was
    written as a word ("Four"), which no score token's logprobs can weigh.
    """

    score: int
    start: int
    end: int
    word: bool = False


@dataclass(frozen=True)
class _Candidate:
    text: str
    value: float
    start: int
    end: int
    word: bool
    verdict: bool
    """Written as a verdict: bare at its line's start, labelled, or ending its sentence."""
    listed: bool
    """A bare ``N.`` that continues a numbered list: the list's next item, or the verdict."""
    compared: bool
    """Compared or approximate, not given (``>3``, ``at least 4``, ``around 4``)."""


FULLWIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_MARKUP = re.compile(r"[*_`#|\[\]\"{}$]|\\boxed|>(?![ \t]*\d)|(?<=[\w\"'\]])>|(?<![^\n])[ \t]*>")
"""Markdown, JSON's quotes and braces (``{"score": 4}`` reads as ``score: 4``), and LaTeX's
``\\boxed{4}``; a ``>`` before a number is a comparison (``Score: >3`` is no verdict)."""
_DASH = r"(?:-|–|—|‐|‑|to)"
_NOT_ASCII_WORD = r"(?![A-Za-z0-9_]|\.\d)"
_SCALE = re.compile(
    rf"\(\s*1\s*{_DASH}\s*5\s*\)"  # (1-5), (1 to 5)
    rf"|\b(?:scale\s+(?:of\s+|from\s+)?|from\s+|between\s+)1\s*(?:{_DASH}|and)\s*5"
    rf"{_NOT_ASCII_WORD}"  # a scale of 1-5, from 1 to 5
    rf"|(?<![\w.])1\s*{_DASH}\s*5(?=[- ]+(?:point\s+)?scale)"  # a 1-5 scale
    rf"|(?<=\d)\s*/\s*5(?:\.0)?{_NOT_ASCII_WORD}"  # 4/5
    rf"|\bout\s+of\s+5(?:\.0)?{_NOT_ASCII_WORD}"  # 4 out of 5
    rf"|(?<=\d)(?:\s+of\s+|[ \t]+(?:sur|von|de|su|из|van)[ \t]+)5(?:\.0)?{_NOT_ASCII_WORD}",
    re.IGNORECASE,
)
"""The rubric's own scale, however the judge repeats it (``4 of 5`` in English, French,
German, Spanish and Portuguese, Italian, Russian, Dutch); blanked, offsets kept."""
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_./])(?<!/\s)(?P<neg>(?<![A-Za-z0-9_)])-)?(?P<num>\d+(?:\.\d+)?)"
    r"(?![A-Za-z0-9_])"
    r"|\b(?P<word>one|two|three|four|five)\b",
    re.IGNORECASE,
)
"""A number between ASCII letters and digits (CJK text may touch it: ``4分``), or a word."""
_ENUMERATOR = re.compile(r"^\s*(?:[-•]\s*)?\d+[.)](?=\s|$)", re.MULTILINE)
_ASPECTS = (
    r"(?:relevan\w*|tone(?:\s+matching)?|supportive\w*|understanding|constructive\w*"
    r"|emotions?)"
)
_ASPECT = re.compile(
    rf"(?:(?:^|[,;.!?(]\s)\s*(?:[-•]\s*)?{_ASPECTS}(?:\s*[/&]\s*{_ASPECTS})*"
    rf"(?:\s*\([^)]*\))?\s*[:=：(]|\bsteps?)\s*\(?\s*$",
    re.IGNORECASE,
)
"""A sub-score labelled with one of the rubric's aspects (``Relevance: 5``, ``Tone
Matching: 4``), or a step of the rubric (``Step 2``), right before a number."""
_LABEL = re.compile(r"[^\W\d_][\w /&()'’,\-]{0,60}?\s*[:=：]\s*\(?\s*$")
_SCORE_PHRASE = re.compile(
    r"(?:\b(?:score|rating|grade|verdict|answer)\s*(?:[-–—]\s*|is\s+|of\s+|would\s+be\s+)?"
    r"|\b(?:give|rate|score|put|mark)\s+(?:it|this|that|the\s+\w+|this\s+\w+)(?:\s+(?:as|at))?"
    r"\s+(?:an?\s+)?"
    r"|\b(?:deserves?|earns?|merits?|gets?|warrants?)\s+(?:an?\s+)?"
    r"|\b(?:go|going|stick|settle)\s+with\s+(?:an?\s+)?"
    r"|\b(?:say|as|it's|it’s|an?)\s+"
    r"|(?:得分|评分|評分|分数|分數|打分|スコア|評価|점수)\s*)$",
    re.IGNORECASE,
)
"""A phrase that makes the number after it a score: a score word, a rating verb, an article
(``a 4``), ``go with``."""
_OPENS = re.compile(r"\s*(?:[-•]\s*)?\(?\s*$")
_CLOSES = re.compile(r"[ \t]*(?:[.!;。！][ \t]*(?=\S|$)|$)", re.MULTILINE)
"""After a number: its sentence or line ends (``4.``, ``4. The reply ...``, ``4``)."""
_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
_AFTER_WORD = re.compile(rf"[ \t]+([^\W\d_][\w’']*)|-([^\W\d_]+)|[ \t]*([{_CJK}])")
"""The word right after a number: spaced, hyphenated (``4-step``), or a CJK character
touching it (``4分``, a score's unit; ``2条``, a count's classifier)."""
_NOT_COUNTED = re.compile(
    r"stars?|points?|pts|because|since|as|given|for|on|out|of|or|to|and|but|though|rather"
    r"|not|at|if|unless|in|with|overall|sur|von|de|su|из|van|so|then|here|now|too|instead"
    r"|is|was|would|should|could|might|may|will|can|must|means|needs?|requires?|seems?"
    r"|feels?|sounds?|fits?|looks?|works?|suits?|reflects?|captures?|matches?|makes?"
    r"|better|best|fair|fairer|right|it|this|after|again|also|still|anyway|considering"
    r"|[分点點점星]",
    re.IGNORECASE,
)
"""Words after a number that do not make it a count (a score unit, a reason, a verb)."""
_NEGATED = re.compile(
    r"(?:\bnot\b|\bnever\b|\bno\b|n[’']t\b|\bcannot\b|\bwithout\b)[^.;:!?\n]*$", re.IGNORECASE
)
_CONDITION_AFTER = re.compile(
    r"[ \t,]*(?:if|unless|had|were|provided|once|at\s+(?:best|most)|is\s+not|isn[’']t"
    r"|was\s+not|wasn[’']t|is\s+too|would|could|might|requires?|needs?|means|is\s+for"
    r"|is\s+reserved)\b",
    re.IGNORECASE,
)
_CONDITION_BEFORE = re.compile(
    r"(?:\bif\b(?!\s+(?:I|we)\s+(?:had|have|were|must)\s+to\b|\s+(?:forced|asked|pressed)\b)"
    r"|\bunless\b|(?:^|[.;!?]\s*)(?:had|were)\b)"
    r"(?:(?!\b(?:but|yet|however|though|although|instead)\b)[^.;:!?\n])*$",
    re.IGNORECASE,
)
"""Before a number, in its clause: a condition (``If it had named the fear, I'd rate it a
5``), unless a ``but`` turns from it; ``If I had to rate it, I'd give it a 4`` is a verdict."""
_OTHER_SCALE = re.compile(
    r"\s*(?:/\s*|out\s+of\s+|of\s+)(\d+(?:\.\d+)?)"
    r"|[ \t]+(?:sur|von|de|su|из|van)[ \t]+(\d+(?:\.\d+)?)"
    rf"|\s*\(?\s*on\s+(?:a|the|an)\s+(?:scale\s+(?:of|from)\s+)?\d+\s*{_DASH}\s*\d+"
    r"(?:\s+scale)?\)?"
    r"|\s*\(?\s*on\s+(?:a|the|an)\s+\d+[- ]point\s+scale",
    re.IGNORECASE,
)
_OPEN_RANGE = re.compile(
    r"[ \t]*(?:\+|-?ish\b|or\s+(?:higher|more|above|better|lower|less|below|so)\b)",
    re.IGNORECASE,
)
_DANGLING = re.compile(
    rf"\s*(?:/|out\s+of|of|sur|von|de|su|из|van|or|and|{_DASH}|,)\s*\Z", re.IGNORECASE
)
_QUESTION = re.compile(r"\s*\?")
_FRACTION = re.compile(r",\d|\s?[½¼¾⅓⅔⅛⅜⅝⅞]")


def clean_text(text: str) -> str:
    """The text as candidates are read from it: full-width digits as ASCII, markup and the
    rubric's own scale blanked; same length, so offsets hold."""
    blank = lambda m: " " * len(m.group())  # noqa: E731
    return _SCALE.sub(blank, _MARKUP.sub(blank, text.translate(FULLWIDTH_DIGITS)))


def _numbering(lines: list[str]) -> list[int]:
    """The numbers of a list's items (``1. Read the conversation``): lines that open with an
    enumerator and go on; fewer than two are no list."""
    items = []
    for line in lines:
        item = _ENUMERATOR.match(line)
        if item and line[item.end() :].strip():
            items.append(int(re.sub(r"\D", "", item.group())))
    return items if len(items) >= 2 else []


_PLURAL = re.compile(r"[^\W\d_]{2,}(?<![sui]s)(?<!'s)(?<!’s)s\b")


def _worded(after: str) -> re.Match[str] | None:
    """The word right after a number, where it is none of a score's units, reasons or verbs
    (``a 5 minute break``): such a number is no verdict, though it may be a candidate."""
    word = _AFTER_WORD.match(after)
    if word is None or _NOT_COUNTED.fullmatch(word.group(word.lastindex or 1)):
        return None
    return word


def _counting(word: re.Match[str] | None, after: str) -> bool:
    """A number (followed by `_worded`'s ``word``) that counts what follows it: a compound
    (``a 4-step plan``), or a noun in the plural within its next three words (``2 exams``,
    ``5 more turns``, ``3 concrete steps``); not ``a 5 feels right``, ``upgraded to 4 after
    all``."""
    if word is None:
        return False
    if word.group(2) or word.group(3) or _QUANTITY.fullmatch(word.group(1) or ""):
        return True
    following = re.match(r"(?:[ \t]+[^\W\d_A-Z][\w’'-]*){1,3}", after)
    return bool(following) and any(
        _PLURAL.fullmatch(w) and not _NOT_COUNTED.fullmatch(w)
        for w in following.group().split()
    )


_QUANTITY = re.compile(r"more|fewer|less|other|additional|extra|further|separate", re.I)
_MID_SENTENCE = re.compile(r"[^\W\d_][^\s.!?;:]*[ \t]+$")
"""Before a number: a word of its own sentence (``It names 2 feelings``): a number opening
its sentence (``5 feels right``) is read as a score."""
_COMPARED = re.compile(
    r"(?:[<>≥≤~≈]|\bat\s+(?:least|most)|\b(?:above|below|around|about|roughly|approximately"
    r"|nearly|almost|over|under))\s*$",
    re.IGNORECASE,
)


def _candidates(clean: str, text: str) -> tuple[list[_Candidate], bool]:
    """Every number written as a score, in order; and whether sub-scores were set aside."""
    lines = clean.split("\n")
    numbering = _numbering(lines)
    found: list[_Candidate] = []
    aspects = False
    offset = 0
    above: str | None = None
    for line in lines:
        item = _ENUMERATOR.match(line)
        begin = item.end() if item and numbering and line[item.end() :].strip() else 0
        for m in _NUMBER.finditer(line, begin):
            before, after = line[begin : m.start()], line[m.end() :]
            phrase = bool(_SCORE_PHRASE.search(before))
            if _ASPECT.search(before) and not phrase:
                aspects = True
                continue  # a sub-score, or a step of the rubric
            labelled = bool(phrase or _LABEL.search(before)) or bool(
                not before.strip() and above is not None and _LABEL.fullmatch(above.strip())
            )
            opens = bool(_OPENS.fullmatch(before))
            worded = _worded(after)
            counting = _counting(worded, after)
            verdict = not (
                _CONDITION_AFTER.match(after) or _CONDITION_BEFORE.search(before)
            ) and (
                (labelled and not worded and not _NEGATED.search(before))
                or (opens and not worded)
                or (bool(_CLOSES.match(after)) and not _NEGATED.search(before))
            )
            if m.group("word"):
                value = float(_WORDS[m.group("word").lower()])
                if not (verdict or phrase) or worded:
                    continue  # a number word in prose ("one of", "two exams")
            else:
                value = float(m.group("num")) * (-1 if m.group("neg") else 1)
                joined = re.match(rf"-|[{_CJK}]", after)
                if counting and (joined or not phrase and _MID_SENTENCE.search(before)):
                    continue  # a count ("a 4-step plan", "2条", "It names 2 feelings")
                if not (1 <= value <= 5 or _OTHER_SCALE.match(after) or opens or labelled):
                    continue  # another number in prose (a year, an age)
            found.append(
                _Candidate(
                    text=text[offset + m.start() : offset + m.end()],
                    value=value,
                    start=offset + m.start(),
                    end=offset + m.end(),
                    word=bool(m.group("word")),
                    verdict=verdict,
                    compared=bool(_COMPARED.search(before)),
                    listed=bool(numbering and item and value == numbering[-1] + 1),
                )
            )
        above = line if line.strip() else above
        offset += len(line) + 1
    return found, aspects


def _check(cand: _Candidate, clean: str) -> None:
    """Refuse a candidate that is no whole score on this scale."""
    if cand.listed:
        raise ScoreParseError(
            f"{cand.text}. continues the numbered list above it: the list's next item or the "
            "verdict, ambiguous"
        )
    if cand.compared:
        raise ScoreParseError(f"{cand.text} is compared or approximate, not a verdict")
    other = _OTHER_SCALE.match(clean, cand.end)
    if other:
        raise ScoreParseError(
            f"{cand.text}{other.group().rstrip()} is a score on another scale, not 1-5"
        )
    spans = _OPEN_RANGE.match(clean, cand.end)
    if spans:
        raise ScoreParseError(f"{cand.text}{spans.group()} is a range of scores: ambiguous")
    ends = _DANGLING.match(clean, cand.end)
    if ends:
        raise ScoreParseError(
            f"the answer ends mid-verdict ({cand.text}{ends.group().rstrip()}): a stop that "
            "says it finished, on an answer the bound or the service cut"
        )
    if _QUESTION.match(clean, cand.end):
        raise ScoreParseError(f"{cand.text}? is a question, not a verdict")
    fraction = _FRACTION.match(clean, cand.end)
    if fraction or not cand.value.is_integer():
        written = cand.text + (fraction.group() if fraction else "")
        raise ScoreParseError(f"score {written} is not a whole number from 1 to 5")
    if int(cand.value) not in SCORES:
        raise ScoreParseError(f"score {cand.text} is outside 1-5")


PARSED_KEPT = 4096
"""How many answers `parse_score` keeps read: judges repeat their answers ("4", "Score: 4"),
and a verdict is a function of the text alone."""


@lru_cache(maxsize=PARSED_KEPT)
def parse_score(text: str) -> ScoreMatch:
    """The judge's one verdict (see the module's docstring), or `ScoreParseError` naming why
    there is none; a reasoned (``cot``) answer is read by the same rule."""
    if not text.strip():
        raise ScoreParseError("empty output: no score")
    clean = clean_text(text)
    cands, aspects = _candidates(clean, text)
    if not cands:
        if aspects:
            raise ScoreParseError("only sub-scores (the rubric's aspects), no overall score")
        raise ScoreParseError(f"no score in the answer: {text.strip()[:80]!r}")
    for cand in cands:
        _check(cand, clean)
    values = sorted({c.value for c in cands})
    if len(values) > 1:
        shown = ", ".join(f"{v:g}" for v in values)
        raise ScoreParseError(f"several different scores ({shown}): ambiguous")
    verdicts = [c for c in cands if c.verdict]
    if not verdicts:
        raise ScoreParseError(
            f"no verdict: {cands[0].text!r} stands in prose (not bare at a line's start, "
            "labelled, nor ending its sentence), or is denied, conditional or a count"
        )
    digits = [c for c in verdicts if not c.word] or verdicts
    chosen = digits[0]
    return ScoreMatch(int(chosen.value), chosen.start, chosen.end, chosen.word)
