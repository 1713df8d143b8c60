"""Output tokens each accepted judge answer takes under real tokenizers.

Reads the table of docs/scoring.md (section "Which answer, which score: one verdict or
none"), keeps the rows
whose result is a score (cot no and yes), adds a few realistic answers judges produce, and
counts each under every tokenizer found in ``--tokenizers DIR``; writes
``benchmarks/results/answer_tokens.json`` (``--out DIR`` writes elsewhere). A judge also
emits an end token after its answer, so a bound of ``max + 1`` is the least that lets it stop.

Tokenizer files (none are committed; the machine may be offline), in DIR:

- ``cl100k_base.tiktoken``, ``o200k_base.tiktoken``: tiktoken's BPE files
  (https://openaipublic.blob.core.windows.net/encodings/<name>.tiktoken); checked
  against the SHA-256 tiktoken expects, loaded with tiktoken's own split patterns.
- ``<name>.tokenizer.json``: any Hugging Face ``tokenizer.json`` (needs ``tokenizers``).
- ``<name>/vocab.json`` + ``<name>/merges.txt``: a Qwen2 byte-level BPE (Qwen2 / Qwen2.5
  share it; needs ``tokenizers``), built with Qwen2's pre-tokenizer.

Missing or unloadable tokenizers are skipped with a note. Run from the repository root::

    python benchmarks/answer_tokens.py --tokenizers /tmp/tok
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "scoring.md"
SECTION = "Which answer, which score: one verdict or none"

Counter = Callable[[str], int]

# the hash tiktoken_ext.openai_public checks for each file
TIKTOKEN_HASHES = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

# Qwen2Tokenizer's PRETOKENIZE_REGEX (transformers) / its tokenizer.json Split pattern
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# answers judges write (cot no); the JSON records the parser's verdict on each
VARIANTS = [
    "**Score:** 4",
    "Evaluation Form (return score ONLY): 4",
    "Empathetical responding (1-5): 4",
    "Empathetical responding (1–5): 4",
    "Score: 4/5",
    "Rating: 4 out of 5",
    "Overall score: 4",
    "Final score: 4",
    "Score: 4 (strong empathy)",
    "Relevance: 5\nTone Matching: 4\nOverall: 4",
    "1. Relevance: good\n2. Tone: warm\nScore: 4",
    "得分：4分",
    '{"score": 4}',
    '```json\n{"score": 4}\n```',
]


def table_rows() -> list[tuple[str, bool, int]]:
    """(answer, cot, score) for each parse-table row whose result is a score."""
    text = DOC.read_text("utf-8")
    section = text.split(f"## {SECTION}", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[1] not in ("yes", "no") or not cells[2].isdigit():
            continue
        literal = re.match(r"`(.*)`", cells[0])
        answer = literal.group(1).replace("\\n", "\n") if literal else ""
        rows.append((answer, cells[1] == "yes", int(cells[2])))
    return rows


def _tiktoken(path: Path, name: str) -> Counter:
    """tiktoken_ext's own constructor for name, reading path instead of the URL."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import openai_public

    if not path.exists():
        raise FileNotFoundError(2, "no such file", str(path))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != TIKTOKEN_HASHES[name]:
        raise ValueError(f"sha256 {digest} is not tiktoken's {name}")
    saved = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda *_, **__: load_tiktoken_bpe(str(path))
    try:
        spec = getattr(openai_public, name)()
    finally:
        openai_public.load_tiktoken_bpe = saved
    enc = tiktoken.Encoding(**spec)
    return lambda text: len(enc.encode_ordinary(text))


def _hf_json(path: Path) -> Counter:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def _qwen2(folder: Path) -> Counter:
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.BPE.from_file(str(folder / "vocab.json"), str(folder / "merges.txt")))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def load_tokenizers(folder: Path) -> tuple[dict[str, Counter], dict[str, str]]:
    """Counters for every tokenizer found in folder, and a note for each one skipped."""
    counters: dict[str, Counter] = {}
    notes: dict[str, str] = {}
    candidates: list[tuple[str, Callable[[], Counter]]] = []
    for name in TIKTOKEN_HASHES:
        path = folder / f"{name}.tiktoken"
        candidates.append((name, lambda p=path, n=name: _tiktoken(p, n)))
    for path in sorted(folder.glob("*.tokenizer.json")):
        candidates.append((path.name.removesuffix(".tokenizer.json"), lambda p=path: _hf_json(p)))
    for vocab in sorted(folder.glob("*/vocab.json")):
        if (vocab.parent / "merges.txt").exists():
            candidates.append((vocab.parent.name, lambda p=vocab.parent: _qwen2(p)))
    for name, load in candidates:
        try:
            counters[name] = load()
        except FileNotFoundError as missing:
            notes[name] = f"skipped: {Path(str(missing.filename)).name} not in {folder}"
        except Exception as error:  # noqa: BLE001 - any failure to load is reported, not fatal
            notes[name] = f"skipped: {type(error).__name__}: {error}"
    return counters, notes


def parser_verdict(answer: str) -> str:
    """What inspect_empathy's parser makes of an answer ('4', 'refused: ...' or 'n/a')."""
    try:
        from inspect_empathy.judge._score_text import ScoreParseError, parse_score
    except ImportError:
        return "n/a"
    try:
        return str(parse_score(answer).score)
    except ScoreParseError as refused:
        return f"refused: {refused}"


def count(answers: list[tuple[str, bool]], counters: dict[str, Counter]) -> dict[str, Any]:
    """Per answer and per tokenizer counts, the maximum and the longest answer per tokenizer."""
    rows = [
        {
            "answer": answer,
            "cot": cot,
            "parser": parser_verdict(answer),
            "tokens": {name: counter(answer) for name, counter in counters.items()},
        }
        for answer, cot in answers
    ]
    summary = {}
    for name in counters:
        longest = max(rows, key=lambda row: row["tokens"][name]) if rows else None
        summary[name] = {
            "max": longest["tokens"][name] if longest else 0,
            "longest": longest["answer"] if longest else None,
        }
    return {"answers": rows, "max": summary}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizers", type=Path, required=True, help="folder of tokenizer files")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args()

    counters, notes = load_tokenizers(args.tokenizers)
    for name, note in notes.items():
        print(f"{name}: {note}", file=sys.stderr)
    rows = table_rows()
    result = {
        "doc": f"docs/scoring.md, section '{SECTION}' (rows with a score)",
        "tokenizers": sorted(counters),
        "skipped": notes,
        "note": "counts exclude the end token a judge emits after its answer: "
        "a bound must be at least max + 1 to let the answer stop by itself",
        "table_cot_no": count([(a, c) for a, c, _ in rows if not c], counters),
        "table_cot_yes": count([(a, c) for a, c, _ in rows if c], counters),
        "variants_cot_no": count([(a, False) for a in VARIANTS], counters),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "answer_tokens.json"
    out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", "utf-8")

    print(f"{'set':<16}" + "".join(f"{name:>14}" for name in sorted(counters)))
    for key in ("table_cot_no", "table_cot_yes", "variants_cot_no"):
        maxima = result[key]["max"]
        print(f"{key:<16}" + "".join(f"{maxima[n]['max']:>14}" for n in sorted(counters)))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
