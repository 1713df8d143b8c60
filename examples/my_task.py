"""The empathy rubric in a task of your own: your dataset, your solver, `empathy_scorer()`.

Offline (the offline baseline judges stand in for your chatbot and the grader):

    inspect eval examples/my_task.py --model empathy_baseline/length \
        --model-role grader=empathy_baseline/lexicon
"""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate

from inspect_empathy import empathy_scorer

MESSAGES = [
    "I failed my driving test this morning and I feel stupid.",
    "My best friend is moving abroad next month.",
    "I finally got the flat I wanted!",
    "My cat has been ill all week and the vet cannot say why.",
]


@task
def my_chatbot() -> Task:
    return Task(
        dataset=[Sample(input=text, target="") for text in MESSAGES],
        solver=generate(),
        # your own scorers stay as they are; the empathy metrics belong to empathy_scorer
        scorer=[includes(), empathy_scorer()],
        # the log list and the log header show empathy_scorer's headline (its first metric:
        # somers_d_all with human ratings, else mean), not the first scorer's
        headline_metric="empathy_scorer",
    )
