"""inspect-empathy: the G-Eval empathy rubric as an Inspect AI task, scorer and metrics."""

from ._geval import Judgement, ScoreParseError, parse_score
from ._rubric import Turn, render_dialog, render_prompt, rubric_template
from .dataset import DatasetError, load_dialogs
from .dialogs import DialogRecord, normalise_rating, record_to_sample
from .metrics import agreement, human_agreement, judge_agreement, level_shares
from .scorer import empathy_scorer
from .solver import empathy_prompt
from .tasks import empathy

__all__ = [
    "DatasetError",
    "DialogRecord",
    "Judgement",
    "ScoreParseError",
    "Turn",
    "agreement",
    "empathy",
    "empathy_prompt",
    "empathy_scorer",
    "human_agreement",
    "judge_agreement",
    "level_shares",
    "load_dialogs",
    "normalise_rating",
    "parse_score",
    "record_to_sample",
    "render_dialog",
    "render_prompt",
    "rubric_template",
]
