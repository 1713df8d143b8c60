"""The ``inspect-empathy`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

DESCRIPTION = "Tools for the inspect-empathy evals."

COMPARE_HELP = """\
Compare judge models from Inspect logs of the empathy task: agreement with the human
ratings (Spearman with a bootstrap CI, Kendall, Pearson, MAE, QWK, within-one), paired
bootstrap tests of the differences, inter-judge Krippendorff's alpha, length bias, score
histograms and a per-emotion breakdown. Prints the tables; with --out also writes CSV,
Markdown, PNG plots and an HTML report.

example:
  inspect eval-set inspect_empathy/empathy \\
      --model openai/gpt-4o,anthropic/claude-sonnet-4-5 --log-dir logs/judges
  inspect-empathy compare logs/judges --out report/
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="inspect-empathy", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    compare = commands.add_parser(
        "compare",
        help="compare judge models from Inspect logs",
        description=COMPARE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    compare.add_argument(
        "logs", nargs="+", metavar="LOGS", help="log files, log folders or eval-set folders"
    )
    compare.add_argument(
        "--out", type=Path, default=None, help="write CSV, Markdown, PNG and report.html here"
    )
    compare.add_argument(
        "--resamples",
        type=int,
        default=None,
        help="bootstrap resamples for CIs and p-values (default 2000; 0 skips them)",
    )
    compare.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    compare.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    compare.add_argument(
        "--quiet", action="store_true", help="no progress bar and no tables, only errors"
    )
    return parser


def compare_command(args: argparse.Namespace) -> int:
    from ._compare_report import terminal_text
    from .compare import DEFAULT_RESAMPLES, CompareError, compare_logs, write_report

    resamples = DEFAULT_RESAMPLES if args.resamples is None else args.resamples
    if resamples < 0:
        print("inspect-empathy compare: --resamples must be >= 0", file=sys.stderr)
        return 2
    try:
        comparison = compare_logs(
            args.logs, resamples=resamples, seed=args.seed, progress=not args.quiet
        )
    except CompareError as ex:
        print(f"inspect-empathy compare: {ex}", file=sys.stderr)
        return 1
    for warning in comparison.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not args.quiet:
        print(terminal_text(comparison))
    if args.out is not None:
        written = write_report(comparison, args.out, plots=not args.no_plots)
        if not args.quiet:
            print(f"\nWrote {len(written)} files to {args.out}: report: {written['report.html']}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``inspect-empathy`` console script."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "compare":
        return compare_command(args)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
