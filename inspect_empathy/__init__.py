"""inspect-empathy: the G-Eval empathy rubric as an Inspect AI task, scorer and metrics."""

from ._geval import Judgement, ScoreParseError, parse_score
from ._rubric import Turn, render_dialog, render_prompt, rubric_template
from ._samples import record_to_sample
from ._stats import agreement
from .compare import compare_judges
from .dataset import DatasetError, load_dialogs, skipped_summary
from .dialogs import DialogRecord, normalise_rating
from .metrics import (
    group_metrics,
    human_agreement,
    judge_agreement,
    judge_means,
    level_shares,
    scoring_counts,
    share_at_least,
)
from .reducer import empathy_mean
from .scorer import empathy_scorer
from .solver import empathy_prompt
from .tasks import empathy, empathy_response

__all__ = [
    "DatasetError",
    "DialogRecord",
    "Judgement",
    "ScoreParseError",
    "Turn",
    "agreement",
    "compare_judges",
    "empathy",
    "empathy_prompt",
    "empathy_response",
    "empathy_scorer",
    "human_agreement",
    "judge_agreement",
    "judge_means",
    "level_shares",
    "load_dialogs",
    "normalise_rating",
    "parse_score",
    "record_to_sample",
    "render_dialog",
    "render_prompt",
    "group_metrics",
    "scoring_counts",
    "empathy_mean",
    "rubric_template",
    "skipped_summary",
    "share_at_least",
]
