"""Command-line pieces for published ratings: ``inspect-empathy reproduce`` and the
"on the scale's own categories" section ``compare --published`` adds to its output."""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPRODUCE_HELP = """\
Compute a published agreement table from the authors' own per-rater files and print each
cell beside the published value: the standard QWK on the scale's categories, the paper's
kappa, the difference, and which cells need the paper's kappa and why. SPEC is a
'format: raters' spec with a 'reproduce' section, or a folder of them; --root names the
folder of the published files (it sets the variable in the specs' path, ${NAME}).

example (Kumar et al. 2025, all four corpora, 126 cells):
  inspect-empathy reproduce datasets/specs/kumar2025 --root /path/to/their/repository
"""


def add_reproduce(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser(
        "reproduce",
        help="reproduce a published agreement table from its per-rater files",
        description=REPRODUCE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument("specs", nargs="+", metavar="SPEC", help="spec files or folders")
    command.add_argument("--root", default=None, help="the folder of the published files")
    command.add_argument("--out", type=Path, default=None, help="also write the cells as CSV")


def spec_files(sources: list[str]) -> list[Path]:
    """Spec files named, and the ``.yaml`` files of folders named (sorted)."""
    found: list[Path] = []
    for source in sources:
        path = Path(source)
        found += sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    return found


def set_root(specs: list[Path], root: str) -> None:
    """Point every ``${NAME}`` of the specs' ``path`` at ``root``."""
    for spec in specs:
        for line in spec.read_text(encoding="utf-8").splitlines():
            if line.startswith("path:"):
                for name in re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", line):
                    os.environ[name] = str(Path(root).expanduser().absolute())


def reproduce_main(args: argparse.Namespace) -> int:
    from .compare.comparison import CompareError
    from .compare.published import reproduce, reproduce_text

    specs = spec_files(args.specs)
    if args.root is not None:
        set_root(specs, args.root)
    try:
        frame = reproduce(specs)
    except (CompareError, OSError, KeyError) as ex:
        print(f"inspect-empathy reproduce: {ex}", file=sys.stderr)
        return 1
    print(reproduce_text(frame))
    if args.out is not None:
        frame.to_csv(args.out, index=False)
        print(f"\nWrote {args.out}")
    return 0


@dataclass
class ScaleSection:
    """The printed section and the tables behind it (``scale_agreement.csv``)."""

    text: str
    frames: list[Any] = field(default_factory=list)

    def write(self, out: Path) -> dict[str, Path]:
        import pandas as pd

        if not self.frames:
            return {}
        path = Path(out) / "scale_agreement.csv"
        pd.concat(self.frames, ignore_index=True).to_csv(path, index=False)
        md = Path(out) / "scale_agreement.md"
        md.write_text(self.text + "\n", encoding="utf-8")
        return {"scale_agreement.csv": path, "scale_agreement.md": md}


def scale_section(comparison: Any, specs: list[str], kind: str = "standard") -> ScaleSection:
    """Kappas on each published spec's own scale: rater pairs, and every judge (published
    and Inspect) against the raters' aggregate, on the dialogs of the comparison."""
    from .compare.published import PREFIX, load_published, scale_agreement

    samples = comparison.samples
    ids = list(dict.fromkeys(samples["id"].astype(str)))
    inspect_judges = {
        judge: group.set_index(group["id"].astype(str))["score"]
        for judge, group in samples.groupby("judge", sort=False)
        if not str(judge).startswith(PREFIX)
    }
    section = ScaleSection("")
    lines = []
    for spec in specs:
        pub = load_published(spec)
        on = [i for i in ids if i in set(pub.table.ids)]
        frame = scale_agreement(pub, on, inspect_judges, kind)
        frame.insert(0, "spec", pub.name)
        section.frames.append(frame)
        low, high = pub.table.scale
        lines.append(
            f"\nOn the scale's own categories ({pub.name}, dimension {pub.table.dimension}, "
            f"scale {low:g}-{high:g}, {kind} kappa; 1-5 judges mapped linearly onto the scale "
            "and rounded half up):"
        )
        lines.append("| a | b | n | kappa | p |")
        lines.append("|---|---|---|---|---|")
        for _, r in frame.iterrows():
            lines.append(f"| {r['a']} | {r['b']} | {r['n']} | {r['kappa']:.3f} | {r['p']:.3g} |")
        if pub.mapping.get("responder"):
            lines += _responder_lines(pub, inspect_judges, comparison, section)
    section.text = "\n".join(lines)
    return section


def _responder_lines(
    pub: Any, inspect_judges: dict, comparison: Any, section: ScaleSection
) -> list[str]:
    """Bias, calibrated bias and responder ranking per judge (``compare.responders``)."""
    from .compare.responders import published_responders, responder_table

    frame = published_responders(pub, inspect_judges)
    judges = [c for c in frame.columns if c not in ("context", "responder", "human")]
    table = responder_table(
        frame, judges, comparison.calibration_method, min(comparison.resamples, 1000),
        comparison.seed,
    )  # fmt: skip
    section.frames.append(table.assign(spec=pub.name, table="responders"))
    lines = [
        f"\nResponders ({pub.name}: {table['responders'].max()} responders in "
        f"{table['contexts'].max()} contexts; bias = judge - people on 1-5, 95% CI over contexts; "
        f"calibrated: {comparison.calibration_method}, cross-fitted by context):",
        "| judge | responses | bias [95% CI] | calibrated bias [95% CI] | ranking ρ [95% CI] |",
        "|---|---|---|---|---|",
    ]
    for _, r in table.iterrows():
        lines.append(
            f"| {r['judge']} | {r['responses']} | {r['bias']:.3f} [{r['bias_low']:.3f}, "
            f"{r['bias_high']:.3f}] | {r['calibrated_bias']:.3f} [{r['calibrated_bias_low']:.3f}, "
            f"{r['calibrated_bias_high']:.3f}] | {r['ranking_spearman']:.3f} "
            f"[{r['ranking_low']:.3f}, {r['ranking_high']:.3f}] |"
        )
    return lines
