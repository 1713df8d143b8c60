"""``empathetic_exchanges``: EmpatheticExchanges (``EmpatheticExchanges_5ES.csv``).

One row per exchange (a speaker utterance and the listener's reply) of an
EmpatheticDialogues conversation, rated 1-5 for the empathy of that reply. One
sample per exchange: the dialog is exchanges 1..n of the row's ``conv_id``, the
label is ``empathy`` of exchange n. ``_comma_`` is turned back into ``,``.
Sample ids: ``ee-<conv_id>-<exchange_number>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...dialogs import RATING_SCOPE_KEY, DialogRecord, Turn, id_text
from ...errors import DatasetError
from ._options import check_keys, unescape_empathetic_dialogues
from ._problems import BAD_VALUE, MISSING_FIELD, NO_BOT_REPLY, LoadReport, Located, RecordProblem
from ._ratings import parse_rating
from .tabular import csv_rows

FORMAT = "empathetic_exchanges"
REQUIRED = ("conv_id", "empathy", "speaker_utterance", "listener_utterance", "exchange_number")
HEADER_SIGNATURE = frozenset(REQUIRED)
SCALE = (1.0, 5.0)




def load_empathetic_exchanges(path: Path, report: LoadReport, **mapping: Any) -> Iterator[Located]:
    """Samples from the EmpatheticExchanges CSV, one per rated exchange."""
    check_keys(FORMAT, mapping, ())
    rows = csv_rows(path, report, ",")
    first = next(rows, None)
    if first is None:
        return
    columns = {name.strip(): i for i, name in enumerate(first[1])}
    missing = [name for name in REQUIRED if name not in columns]
    if missing:
        raise DatasetError(f"{path}: not an EmpatheticExchanges file: no {', '.join(missing)}")
    conv, rating_col, speaker, listener, number_col = (columns[name] for name in REQUIRED)
    emotion, situation = columns.get("context"), columns.get("prompt")
    needed = max(columns[name] for name in REQUIRED) + 1

    # pass 1: every exchange by conversation (a reply's dialog needs the earlier ones)
    exchanges: dict[str, dict[int, tuple[str, str]]] = {}
    rows_read: list[tuple[str, list[str], str, int]] = []
    for line, values in rows:
        where = f"{path}:{line}"
        if len(values) < needed:
            report.problem(where, MISSING_FIELD, "row has too few fields")
            continue
        conv_id = id_text(values[conv])
        raw_number = values[number_col].strip()
        try:
            number = int(float(raw_number))
        except ValueError:
            report.problem(where, BAD_VALUE, f"exchange_number {raw_number!r} is not a number")
            continue
        if not conv_id:
            report.problem(where, MISSING_FIELD, "missing field 'conv_id' (empty cell)")
            continue
        pair = (
            unescape_empathetic_dialogues(values[speaker]).strip(),
            unescape_empathetic_dialogues(values[listener]).strip(),
        )
        exchanges.setdefault(conv_id, {}).setdefault(number, pair)
        rows_read.append((where, values, conv_id, number))

    # pass 2: one record per row
    for where, values, conv_id, number in rows_read:
        try:
            yield where, _record(values, conv_id, number, exchanges[conv_id],
                                 rating_col, emotion, situation)  # fmt: skip
        except RecordProblem as ex:
            report.problem(where, ex.kind, ex.detail)


def _record(
    values: list[str],
    conv_id: str,
    number: int,
    exchanges: dict[int, tuple[str, str]],
    rating_col: int,
    emotion: int | None,
    situation: int | None,
) -> DialogRecord:
    turns: list[Turn] = []
    for k in range(1, number + 1):
        pair = exchanges.get(k)
        if pair is None:
            raise RecordProblem(
                MISSING_FIELD, f"exchange {k} of conversation {conv_id!r} is missing"
            )
        user, bot = pair
        if not user or not bot:
            side = "speaker_utterance" if not user else "listener_utterance"
            kind = NO_BOT_REPLY if k == number and not bot else MISSING_FIELD
            raise RecordProblem(kind, f"exchange {k}: empty {side}")
        turns.append(Turn("user", user))
        turns.append(Turn("bot", bot))
    raw = values[rating_col].strip()
    if not raw:
        raise RecordProblem(MISSING_FIELD, "missing field 'empathy' (empty cell)")
    rating = parse_rating(raw, SCALE, "empathy")
    metadata: dict[str, Any] = {
        "conv_id": conv_id,
        "exchange_number": number,
        RATING_SCOPE_KEY: "reply",
    }
    if emotion is not None and emotion < len(values):
        metadata["emotion"] = values[emotion].strip()
    if situation is not None and situation < len(values):
        metadata["situation"] = unescape_empathetic_dialogues(values[situation]).strip()
    return DialogRecord(f"ee-{conv_id}-{number}", turns, rating, SCALE, metadata)
