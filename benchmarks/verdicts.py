"""One verdict or none, measured on a corpus of judge answers written in each family's style.

Reads ``tests/fixtures/judge_answers.jsonl`` (answers with and without reasoning, preambles,
markdown, trailing sentences, revisions; each labelled ``clear`` with its score, ``revision``
or ``none``), reads every answer as a finished completion the way the scorer does (``parse``,
the same reading ``samples`` and ``logprobs`` use), and prints:

- **wrong numbers**: a score where the label says there is none, or a score other than the
  clear verdict's (the target is 0);
- **clear verdicts scored**: the share of ``clear`` answers given their score (target 97%);

with every wrong number and every clear verdict left unscored, by family. Writes
``benchmarks/results/verdicts.json`` (``--out DIR`` writes elsewhere). Run from the
repository root::

    python benchmarks/verdicts.py
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "judge_answers.jsonl"


def read(answer: dict[str, Any]) -> tuple[float | None, str | None]:
    """The score the plugin gives an answer as a finished completion, and why none."""
    from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput

    from inspect_empathy.judge._geval import judge_output

    choice = ChatCompletionChoice(
        message=ChatMessageAssistant(content=answer["text"]), stop_reason="stop"
    )
    judged = judge_output(ModelOutput(model="judge", choices=[choice]), "parse", 1)
    return judged.value, judged.reason


def measure(corpus: Path = CORPUS) -> dict[str, Any]:
    """Wrong numbers and the share of clear verdicts scored, with the cases behind them."""
    answers = [json.loads(line) for line in corpus.read_text("utf-8").splitlines() if line]
    wrong, missed = [], []
    kinds = Counter(a["kind"] for a in answers)
    for answer in answers:
        value, reason = read(answer)
        if value is not None and (answer["kind"] != "clear" or value != answer["score"]):
            wrong.append({"id": answer["id"], "kind": answer["kind"], "label": answer["score"],
                          "scored": value, "text": answer["text"]})  # fmt: skip
        elif value is None and answer["kind"] == "clear":
            missed.append({"id": answer["id"], "label": answer["score"], "reason": reason,
                           "text": answer["text"]})  # fmt: skip
    clear = kinds["clear"]
    return {
        "answers": len(answers),
        "kinds": dict(kinds),
        "families": len({a["family"] for a in answers}),
        "wrong_numbers": len(wrong),
        "clear_scored": (clear - len(missed)) / clear if clear else 0.0,
        "wrong": wrong,
        "missed": missed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    result = measure(args.corpus)
    print(f"{result['answers']} answers from {result['families']} families {result['kinds']}")
    print(f"wrong numbers: {result['wrong_numbers']}")
    print(f"clear verdicts scored: {result['clear_scored']:.1%}")
    for case in result["wrong"]:
        print(f"  WRONG {case['id']} ({case['kind']}, label {case['label']}): "
              f"{case['scored']} from {case['text'][:100]!r}")  # fmt: skip
    for case in result["missed"]:
        print(f"  unscored {case['id']} ({case['label']}): {case['reason'][:90]}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "verdicts.json").write_text(json.dumps(result, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
