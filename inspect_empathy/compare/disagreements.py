"""The dialogs where each judge disagrees most with the humans.

What a person reads before trusting a judge: for each judge, its scored dialogs with a
human rating, largest gap |judge score - human rating| first (ties: dialog id), with the
rated reply, the judge's answer and the dialog. ``disagreements.csv`` holds the first
``CSV_ROWS`` per judge; the report shows the first ``REPORT_ROWS`` with the texts cut to
``REPORT_CHARS`` characters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from .comparison import JudgeComparison

CSV_ROWS = 20
REPORT_ROWS = 5
REPORT_CHARS = 300
COLUMNS = [
    "judge", "rank", "id", "emotion", "human", "score", "difference", "reply", "answer",
    "dialog",
]  # fmt: skip


def disagreements(comparison: JudgeComparison, per_judge: int = CSV_ROWS) -> pd.DataFrame:
    """Per judge (in rank order), its ``per_judge`` dialogs farthest from the human rating.

    ``difference`` is judge score minus human rating (on the scored dialogs the judge and
    the humans share, epochs averaged); ``rank`` 1 is the largest gap. Empty without human
    ratings.
    """
    import pandas as pd

    samples = comparison.samples
    chosen = (samples["status"] == "scored") & samples["human"].notna()
    if not chosen.any():
        return pd.DataFrame(columns=COLUMNS)
    # ranked on the columns the order reads; the chosen rows' texts are taken after
    rated = samples.loc[chosen, ["judge", "id", "score", "human"]]
    rated = rated.assign(difference=rated["score"] - rated["human"])
    rated = rated.assign(_gap=rated["difference"].abs())
    frames = []
    for judge in comparison.judge_names:
        own = rated[rated["judge"] == judge].sort_values(
            ["_gap", "id"], ascending=[False, True], kind="stable"
        )
        own = own.head(per_judge)
        own = samples.loc[own.index].assign(
            difference=own["difference"], rank=range(1, min(per_judge, len(own)) + 1)
        )
        frames.append(own)
    table = pd.concat(frames, ignore_index=True) if frames else rated.iloc[:0]
    return table.reindex(columns=COLUMNS).reset_index(drop=True)


def _cut(text: object, limit: int = REPORT_CHARS) -> str:
    if not isinstance(text, str) or not text:
        return "–"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def disagreements_display(
    comparison: JudgeComparison, per_judge: int = REPORT_ROWS
) -> tuple[list[str], list[list[str]]]:
    """The report's table: per judge its ``per_judge`` largest gaps, texts cut short."""
    from .formats import number

    headers = ["judge", "dialog", "human", "judge score", "judge − human", "rated reply"]
    headers.append("judge answer")
    rows = []
    for _, r in disagreements(comparison, per_judge).iterrows():
        rows.append(
            [
                str(r["judge"]),
                str(r["id"]),
                number(r["human"], 2),
                number(r["score"], 2),
                f"{r['difference']:+.2f}",
                _cut(r["reply"]),
                _cut(r["answer"]),
            ]
        )
    return headers, rows
