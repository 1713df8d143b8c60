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

from .._util.write import markdown_cell, write_text

REPRODUCE_HELP = """\
Compute a published agreement table from the authors' own per-rater files and print each
cell beside the published value: the standard QWK on the scale's categories, the paper's
kappa, the difference, and which cells need the paper's kappa and why. SPEC is a
'format: raters' spec with a 'reproduce' section, or a folder of them; --root names the
folder of the published files (it sets the variable in the specs' path, ${NAME}).

SPEC may also name a spec folder shipped with the package: kumar2025 (Kumar et al. 2025's
four corpora; in a checkout, datasets/specs/kumar2025). The exit status is 0 when every cell
is within 0.01 of the published value, 3 when some are not (a CI can gate on it), 1 on an
error (a spec that does not exist, a file that does not read).

example (Kumar et al. 2025, all four corpora, 126 cells):
  inspect-empathy reproduce kumar2025 --root /path/to/their/repository
"""
EXIT_NOT_REPRODUCED = 3
"""``reproduce``'s exit status when some cell is off by more than 0.01 (or has no value)."""


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


def bundled_specs() -> Path | None:
    """The folder of the spec folders shipped with the package (a wheel's
    ``inspect_empathy/_bundled/specs``, a checkout's ``datasets/specs``), if there is one."""
    from ..dataset._dataset import bundled_places

    return next((p for p in bundled_places("specs") if p.is_dir()), None)


def spec_files(sources: list[str]) -> list[Path]:
    """Spec files named, and the ``.yaml`` files of folders named (sorted); a name that is
    no path but a shipped spec folder or file (``kumar2025``, ``kumar2025/epitome``) reads
    the shipped one. A name that is neither is a FileNotFoundError naming it."""
    found: list[Path] = []
    shipped = bundled_specs()
    for source in sources:
        path = Path(source)
        if not path.exists() and shipped is not None:
            for candidate in (shipped / source, shipped / f"{source}.yaml"):
                if candidate.exists() and candidate.resolve().is_relative_to(shipped.resolve()):
                    path = candidate
                    break
        if not path.exists():
            names = sorted(p.name for p in shipped.iterdir()) if shipped is not None else []
            raise FileNotFoundError(f"{source}: no such spec file or folder"
                                    + (f" (shipped: {', '.join(names)})" if names else ""))
        specs = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
        if not specs:
            raise FileNotFoundError(f"{source}: a folder with no .yaml spec")
        found += specs
    return found


def set_root(specs: list[Path], root: str) -> None:
    """Point every ``${NAME}`` of the specs' ``path`` at ``root``."""
    for spec in specs:
        for line in spec.read_text(encoding="utf-8").splitlines():
            if line.startswith("path:"):
                for name in re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", line):
                    os.environ[name] = str(Path(root).expanduser().absolute())


def reproduce_main(args: argparse.Namespace) -> int:
    from ..compare.comparison import CompareError
    from ..compare.published import not_reproduced, reproduce, reproduce_text
    from ..dataset.loaders.spec import MissingFolder

    try:
        specs = spec_files(args.specs)
        if args.root is not None:
            set_root(specs, args.root)
        frame = reproduce(specs)
    except (CompareError, OSError, KeyError) as ex:
        text = ex.args[0] if isinstance(ex, KeyError) and ex.args else ex
        folder = ex.__cause__ if isinstance(ex.__cause__, MissingFolder) else None
        if folder is not None:  # the way reproduce takes the data's folder: --root
            again = " ".join([*map(str, args.specs), "--root", "/path/to/folder"])
            text = (
                f"{folder.problem}: give the folder of the published data with --root "
                f"(inspect-empathy reproduce {again}), or set {folder.variable}"
            )
        print(f"inspect-empathy reproduce: {text}", file=sys.stderr)
        return 1
    print(reproduce_text(frame))
    for note in frame.attrs.get("notes", []):
        print(f"note: {note}", file=sys.stderr)
    if args.out is not None:
        frame.to_csv(args.out, index=False)
        print(f"\nWrote {args.out}")
    off = not_reproduced(frame)
    if off:
        print(f"inspect-empathy reproduce: {off} of {len(frame)} cell(s) not reproduced "
              "(off by more than 0.01, or no value)", file=sys.stderr)  # fmt: skip
        return EXIT_NOT_REPRODUCED
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
        from ..compare.report import write_csv

        frame = pd.concat(self.frames, ignore_index=True)
        path = write_csv(frame, Path(out) / "scale_agreement.csv")
        md = write_text(Path(out) / "scale_agreement.md", self.text + "\n")
        return {"scale_agreement.csv": path, "scale_agreement.md": md}


def scale_section(comparison: Any, specs: list[str], kind: str = "standard") -> ScaleSection:
    """Kappas on each published spec's own scale: rater pairs, and every judge (published
    and Inspect) against the raters' aggregate, on the dialogs of the comparison."""
    from ..compare.published import PREFIX, load_published, scale_agreement

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
        published_ids = set(pub.table.ids)
        on = [i for i in ids if i in published_ids]
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
            a, b = _cell(r["a"]), _cell(r["b"])
            lines.append(f"| {a} | {b} | {r['n']} | {r['kappa']:.3f} | {r['p']:.3g} |")
        if pub.table.responder is not None:
            lines += _responder_lines(pub, inspect_judges, comparison, section)
    section.text = "\n".join(lines)
    return section


def _cell(text: Any) -> str:
    """A Markdown table cell (`_util.write.markdown_cell`): a '|' or line break in a name
    does not split the table, a formula start is neutralised."""
    return markdown_cell(text)


def _responders_count(frame: Any, table: Any) -> str:
    """"10 responders", or "9 of 10 responders, own replies left out," where every judge's
    own model's replies are left out (a judge rates the others only)."""
    total = int(frame.loc[frame["human"].notna(), "responder"].nunique())
    shown = int(table["responders"].max()) if len(table) else total
    if shown < total and (table["own_left_out"] > 0).any():
        return f"{shown} of {total} responders, own replies left out,"
    return f"{total} responders"


def _responder_lines(
    pub: Any, inspect_judges: dict, comparison: Any, section: ScaleSection
) -> list[str]:
    """Bias, calibrated bias and responder ranking per judge (``compare.responders``); the
    same table becomes a section of report.html and report.md."""
    from ..compare.formats import with_ci
    from ..compare.responders import RANKING_INTERVAL, published_responders, responder_table

    frame = published_responders(pub, inspect_judges)
    judges = [c for c in frame.columns if c not in ("context", "responder", "human")]
    table = responder_table(
        frame, judges, comparison.calibration_method, min(comparison.resamples, 1000),
        comparison.seed, pub.table.own_left_out,
    )  # fmt: skip
    section.frames.append(table.assign(spec=pub.name, table="responders"))
    title = (f"Responders ({pub.name}: {_responders_count(frame, table)} in "
             f"{table['contexts'].max()} contexts)")  # fmt: skip
    about = (
        f"bias = judge - people on 1-5, 95% CI over contexts; calibrated bias: the bias a "
        f"{comparison.calibration_method} map fitted on a random half of the contexts "
        f"(its clipped scores holding the mean rating by people there) leaves on the other "
        f"half, 95% CI over the held-out contexts (away from 0, or wide: the map does not "
        f"carry over to new contexts); ranking ρ: Spearman across responders of the mean "
        f"judge score against the mean rating by people, its 95% CI a {RANKING_INTERVAL}; "
        f"ICC: judge and people as two raters of each responder's mean (McGraw & Wong, "
        f"their F intervals)"
    )
    left = {j: n for j, n in pub.table.own_left_out.items() if n}
    if left:
        about += "; own replies left out: " + ", ".join(f"{j} {n}" for j, n in left.items())
    headers = ["judge", "responses", "own replies left out", "bias [95% CI]",
               "calibrated bias [95% CI]", "ranking ρ [95% CI]", "ICC(C,1) [95% CI]",
               "ICC(A,1) [95% CI]"]  # fmt: skip
    rows = [
        [str(r["judge"]), str(r["responses"]), str(r["own_left_out"]),
         with_ci(r["bias"], r["bias_low"], r["bias_high"]),
         with_ci(r["calibrated_bias"], r["calibrated_bias_low"], r["calibrated_bias_high"]),
         with_ci(r["ranking_spearman"], r["ranking_low"], r["ranking_high"]),
         with_ci(r["icc_c1"], r["icc_c1_low"], r["icc_c1_high"]),
         with_ci(r["icc_a1"], r["icc_a1_low"], r["icc_a1_high"])]
        for _, r in table.iterrows()
    ]  # fmt: skip
    sections = getattr(comparison, "published_sections", None)
    if isinstance(sections, list):
        sections.append((title, [about + "."], (headers, rows)))
    lines = [f"\n{title}; {about}:", "| " + " | ".join(headers) + " |",
             "|" + "---|" * len(headers)]  # fmt: skip
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


# --------------------------------------------------------------------------- people only


def people_only(
    specs: list[str], resamples: int, seed: int, out: Path | None = None
) -> tuple[str, dict[str, Path]] | None:
    """What a spec of raters and no judges gives (``compare --published`` without logs):
    the human ceiling (each rater pair, each rater against the rest, with CIs; the raters'
    ordinal alpha) and, when the spec names its responders, each responder's mean rating
    by people with a 95% CI over contexts. None when some spec has judges (the comparison
    then runs as usual). Returns the text and the files written under ``out``."""
    import pandas as pd

    from ..compare.formats import with_ci
    from ..compare.published import _aggregate, load_published, people_rating
    from ..compare.responders import people_means, published_responders
    from ..stats import humans

    pubs = [load_published(spec) for spec in specs]
    if any(pub.table.judges for pub in pubs):
        return None
    lines: list[str] = []
    frames: dict[str, list[pd.DataFrame]] = {"humans": [], "responders": []}
    for pub in pubs:
        table = pub.table
        low, high = table.scale
        ratings = pd.DataFrame(
            # a value kept as published outside the scale (bad_cells: as_published) is in
            # the means below, not in the raters' agreement
            {r: pd.Series({i: people_rating(v, table.scale) for i, v in values.items()
                           if low <= v <= high},
                          dtype=float) for r, values in table.raters.items()},  # fmt: skip
        ).reindex(pd.Index(table.ids, dtype=object))
        lines.append(f"People only ({pub.name}, dimension {table.dimension or '-'}, scale "
                     f"{low:g}-{high:g} mapped onto 1-5): {ratings.shape[1]} rater(s) on "
                     f"{len(table.ids)} item(s), aggregate {table.aggregate}")  # fmt: skip
        lines += [f"note: {n}" for n in table.notes()]
        if ratings.shape[1] >= 2:
            ceiling = humans.humans_table(ratings, table.aggregate, resamples, seed)  # type: ignore[arg-type]
            alpha = humans.ordinal_alpha(ratings, resamples, seed)
            frames["humans"].append(ceiling.assign(spec=pub.name))
            lines += ["\nHuman ceiling (each pair, each rater against the rest; 95% CIs):",
                      "| a | b | n | Spearman [95% CI] | QWK [95% CI] |", "|---|---|---|---|---|"]
            lines += [f"| {_cell(r['rater_a'])} | {_cell(r['rater_b'])} | {r['n']} | "
                      f"{with_ci(r['spearman'], r['spearman_low'], r['spearman_high'])} | "
                      f"{with_ci(r['qwk'], r['qwk_low'], r['qwk_high'])} |"
                      for _, r in ceiling.iterrows()]  # fmt: skip
            lines.append("Raters' ordinal Krippendorff's alpha: "
                         f"{with_ci(alpha['alpha'], alpha['alpha_low'], alpha['alpha_high'])} "
                         f"on {int(alpha['n'])} item(s) rated twice or more.")  # fmt: skip
        else:
            lines.append("No human ceiling: it needs two raters.")
        if table.responder is not None:
            frame = published_responders(pub)
            means = people_means(frame, min(resamples, 1000), seed)
            frames["responders"].append(means.assign(spec=pub.name))
            lines += [f"\nEach responder's mean rating by people (1-5; {table.aggregate} of "
                      "the raters per response; 95% CI over contexts, a context's responses "
                      "resampled together):",
                      "| responder | responses | contexts | mean [95% CI] |", "|---|---|---|---|"]
            lines += [f"| {_cell(r['responder'])} | {r['responses']} | {r['contexts']} | "
                      f"{with_ci(r['mean_human'], r['low'], r['high'])} |"
                      for _, r in means.sort_values("mean_human", ascending=False).iterrows()]
        elif len(table.ids):
            human = _aggregate(table, table.ids).dropna()
            mean = people_rating(float(human.mean()), table.scale) if len(human) else None
            if mean is not None:
                lines.append(f"\nMean rating by people (1-5): {mean:.3f} on {len(human)} "
                             "item(s).")  # fmt: skip
    text = "\n".join(lines)
    written: dict[str, Path] = {}
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for name, parts in (("humans.csv", frames["humans"]),
                            ("people_responders.csv", frames["responders"])):  # fmt: skip
            if parts:
                path = out / name
                pd.concat(parts, ignore_index=True).to_csv(path, index=False)
                written[name] = path
        path = out / "people.md"
        path.write_text(text + "\n", encoding="utf-8")
        written["people.md"] = path
    return text, written
