"""``empathetic_dialogues``: EmpatheticDialogues (Rashkin et al. 2019) with ``selfeval``.

The CSV files (``train.csv``, ``valid.csv``, ``test.csv``) have one utterance per line
(``conv_id, utterance_idx, context, prompt, speaker_idx, utterance, selfeval, tags``),
commas inside text escaped as ``_comma_`` and no CSV quoting; the hub's
``facebook/empathetic_dialogues`` has the same fields. ``selfeval`` holds the
crowdworkers' ratings of the conversation as ``a|b|c_d|e|f``: two raters, each
rating empathy, relevance and fluency 1-5 (the order as the dataset's authors
describe it; it is not used in their paper). One sample per conversation: the
dialog up to the listener's last reply, label the empathy rating (``rater: mean``
of the two, default, or ``first`` / ``second``). The first utterance's speaker is
the user (the person telling the story), the other the bot (the listener).
Sample ids: ``ed-<conv_id>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ...dialogs import (
    HUMAN_RATINGS_KEY,
    RATING_SCOPE_KEY,
    DialogRecord,
    Turn,
    add_turn,
    bot_end,
    id_text,
)
from ...errors import DatasetError
from ._files import read_text
from ._options import check_keys, unescape_empathetic_dialogues
from ._problems import (
    BAD_VALUE,
    MISSING_FIELD,
    NO_BOT_REPLY,
    NOT_NUMERIC,
    LoadReport,
    Located,
    RecordProblem,
)
from ._ratings import parse_rating
from ._transcript import split_lines

FORMAT = "empathetic_dialogues"
KEYS = ("rater", "split")
RATERS = ("mean", "first", "second")
FIELDS = ("conv_id", "utterance_idx", "context", "prompt", "speaker_idx", "utterance",
          "selfeval", "tags")  # fmt: skip
HEADER_SIGNATURE = frozenset(("conv_id", "utterance_idx", "speaker_idx", "utterance", "selfeval"))
SCALE = (1.0, 5.0)




def csv_utterances(path: Path, report: LoadReport) -> Iterator[tuple[str, dict[str, str]]]:
    """(where, row) per line of an EmpatheticDialogues CSV (split on commas, as the authors do)."""
    lines = split_lines(read_text(path))
    if not lines:
        return
    header = [name.strip() for name in lines[0].split(",")]
    missing = [name for name in FIELDS[:7] if name not in header]
    if missing:
        raise DatasetError(f"{path}: not an EmpatheticDialogues CSV: no {', '.join(missing)}")
    width = len(header)
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        parts = line.split(",")
        if len(parts) < 7:
            report.problem(f"{path}:{number}", MISSING_FIELD, "line has too few fields")
            continue
        yield f"{path}:{number}", dict(zip(header, parts[:width], strict=False))


def parse_selfeval(value: Any) -> tuple[float, float]:
    """The two raters' empathy ratings from ``a|b|c_d|e|f``."""
    text = str(value or "").strip()
    raters = text.split("_")
    if len(raters) != 2:
        raise RecordProblem(NOT_NUMERIC, f"selfeval {text!r} is not two rating triples a|b|c_d|e|f")
    first, second = (r.split("|")[0] for r in raters)
    return parse_rating(first, SCALE, "selfeval empathy"), parse_rating(
        second, SCALE, "selfeval empathy"
    )


def load_empathetic_dialogues(path: Path, report: LoadReport, **mapping: Any) -> Iterator[Located]:
    """Samples from an EmpatheticDialogues CSV, one per rated conversation."""
    check_keys(FORMAT, mapping, KEYS)
    mapping.pop("split", None)
    yield from records_from_utterances(csv_utterances(path, report), report, **mapping)


def records_from_utterances(
    rows: Iterable[tuple[str, Mapping[str, Any]]], report: LoadReport, rater: str = "mean"
) -> Iterator[Located]:
    """Conversation records from (where, utterance row) pairs, file or hub."""
    if rater not in RATERS:
        raise DatasetError(f"{FORMAT}: rater must be one of {', '.join(RATERS)}, not {rater!r}")
    conversations: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    for where, row in rows:
        conv_id = id_text(str(row.get("conv_id") or ""))
        if not conv_id:
            report.problem(where, MISSING_FIELD, "missing field 'conv_id'")
            continue
        conversations.setdefault(conv_id, []).append((where, row))
    for conv_id, utterances in conversations.items():
        where = utterances[0][0]
        try:
            yield where, _record(conv_id, utterances, rater)
        except RecordProblem as ex:
            report.problem(where, ex.kind, ex.detail)


def _record(
    conv_id: str, utterances: list[tuple[str, Mapping[str, Any]]], rater: str
) -> DialogRecord:
    def index(item: tuple[str, Mapping[str, Any]]) -> int:
        try:
            return int(item[1].get("utterance_idx"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise RecordProblem(BAD_VALUE, "utterance_idx is not a number") from None

    ordered = sorted(utterances, key=index)
    first_speaker = str(ordered[0][1].get("speaker_idx"))
    turns: list[Turn] = []
    for _, row in ordered:
        text = unescape_empathetic_dialogues(str(row.get("utterance") or "")).strip()
        if text:
            add_turn(turns, "user" if str(row.get("speaker_idx")) == first_speaker else "bot", text)
    end = bot_end(turns)
    if not end:
        raise RecordProblem(NO_BOT_REPLY, "no listener reply in the conversation")
    first, second = parse_selfeval(ordered[0][1].get("selfeval"))
    rating = {"mean": (first + second) / 2, "first": first, "second": second}[rater]
    head = ordered[0][1]
    metadata: dict[str, Any] = {
        RATING_SCOPE_KEY: "conversation",
        "rating_label": "selfeval empathy" + (" (mean of two raters)" if rater == "mean" else ""),
        "selfeval": str(head.get("selfeval")),
        "emotion": str(head.get("context") or ""),
        "situation": unescape_empathetic_dialogues(str(head.get("prompt") or "")).strip(),
        "conv_id": conv_id,
        # both raters' empathy ratings, as the ratings: [...] key keeps them
        HUMAN_RATINGS_KEY: {"first": first, "second": second},
    }
    if end < len(turns):
        metadata["speaker_turns_cut"] = len(turns) - end
    return DialogRecord(f"ed-{conv_id}", turns[:end], rating, SCALE, metadata)
