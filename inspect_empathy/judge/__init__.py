"""How a judge is asked and how its answer is read.

- `_rubric`: the seed rubric, its variants (``prompts/``) and the rendering of a dialog into it;
- `_score_text`: reading a judge's one 1-5 verdict, or none, from its text;
- `_providers`: what each provider accepts and refuses, with the sources;
- `_answer`: whether a completion can carry a score at all (stop reasons, reasoning);
- `_geval`: G-Eval's probability-weighted score, from logprobs or from n samples;
- `_judge_call`: the request sent to a judge, and what to do when a service refuses it;
- `baseline`: the offline baseline judges (``empathy_baseline/lexicon``, ``.../length``).
"""
