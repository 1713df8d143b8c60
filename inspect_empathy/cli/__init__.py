"""The ``inspect-empathy`` command line: the parser, ``main`` (the entry point), ``compare``
and ``calibrate``; ``reproduce`` is in `cli.published`, ``human-scale`` in `cli.human_scale`."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..compare.comparison import CALIBRATION_METHODS, DEFAULT_RESAMPLES

DESCRIPTION = "Tools for the inspect-empathy evals."

COMPARE_HELP = """\
Compare judge models from Inspect logs scored by the empathy scorer (judge mode, response
mode, re-scored logs, panels). Judges are ranked by somers_d_all, the viewer's headline:
Somers' D of the judge's scores on the human ratings over every rated dialog, a dialog the
judge left unscored counted against it. Beside it, agreement on the dialogs every judge
scored (Spearman with a bootstrap CI, Kendall, MAE, QWK, within-one) and each judge's
coverage, errored and unscored counts, paired bootstrap tests with Holm-adjusted p-values,
inter-judge Krippendorff's alpha, length bias, score histograms and a per-emotion breakdown.
MAE and QWK also after a cross-fitted calibration (--calibration-method). With several raters
per dialog (sample metadata human_ratings): the human ceiling (humans.csv) and each judge
beside it. Logs over other dialogs are set apart and named. Prints the tables; with --out
also writes CSV, Markdown, PNG plots and an HTML report (see docs/comparison.md).

example:
  inspect eval-set inspect_empathy/empathy \\
      --model openai/gpt-4o,anthropic/claude-sonnet-4-6 --log-dir logs/judges
  inspect-empathy compare logs/judges --out report/
"""


CALIBRATE_HELP = """\
Fit a calibration map (judge score -> human 1-5 scale) on labelled judge-mode logs: the
scored samples with a human rating, read as `inspect-empathy compare` reads them (epochs
averaged per dialog). One judge per run: --judge picks it when the logs hold several. The
file records its provenance (log file names, n, method); apply it to new runs with
-T calibration=FILE (see docs/humans-and-calibration.md).

example:
  inspect eval inspect_empathy/empathy --model openai/gpt-4o -T dataset=rated.yaml \\
      --log-dir logs/labelled
  inspect-empathy calibrate logs/labelled --out calibration.json
  inspect eval inspect_empathy/empathy --model openai/gpt-4o -T dataset=new.jsonl \\
      -T calibration=calibration.json
"""


def _subcommand(
    commands: argparse._SubParsersAction, name: str, help: str, description: str
) -> argparse.ArgumentParser:
    """A subcommand reading Inspect logs: the ``LOGS`` argument and the shared layout."""
    command = commands.add_parser(
        name,
        help=help,
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument(
        "logs",
        nargs="*" if name == "compare" else "+",
        metavar="LOGS",
        help="log files, log folders or eval-set folders",
    )
    return command


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="inspect-empathy", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    compare = _subcommand(
        commands, "compare", "compare judge models from Inspect logs", COMPARE_HELP
    )
    compare.add_argument(
        "--out", type=Path, default=None, help="write CSV, Markdown, PNG and report.html here"
    )
    compare.add_argument(
        "--resamples",
        type=int,
        default=None,
        help=f"bootstrap resamples for CIs and p-values (default {DEFAULT_RESAMPLES}; "
        "0 skips them)",
    )
    compare.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    compare.add_argument(
        "--dataset",
        default=None,
        help="which dialogs to compare when the logs cover several datasets: a dataset name "
        "or content fingerprint prefix (default: the dialogs with the most judges)",
    )
    compare.add_argument(
        "--calibration-method",
        choices=CALIBRATION_METHODS,
        default="shift",
        help="map of the cross-fitted mae_calibrated / qwk_calibrated columns (default shift)",
    )
    compare.add_argument(
        "--published",
        action="append",
        default=[],
        metavar="SPEC",
        help="a 'format: raters' spec whose published judges join the logs' dialogs by id "
        "(repeatable; with no LOGS, its judges are compared on their own)",
    )
    compare.add_argument(
        "--kappa",
        choices=("standard", "paper"),
        default="standard",
        help="kappa of the scale's-own-categories table of --published specs: standard QWK "
        "(default) or Kumar et al.'s index-spaced kappa",
    )
    compare.add_argument(
        "--alt-epsilon",
        type=float,
        default=0.2,
        help="margin epsilon of the alternative-annotator test (default 0.2, the paper's "
        "default for expert raters; 0.15 skilled raters, 0.1 crowd workers)",
    )
    compare.add_argument(
        "--prices",
        metavar="FILE",
        help="a YAML or JSON file of each judge model's price per million input, output and "
        "(optionally) reasoning tokens: adds the cost per scored dialog (none built in)",
    )
    compare.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    from ..compare.gate import OVER, UNDER, parse_over, parse_under

    compare.add_argument(
        "--fail-under",
        type=parse_under,
        action="append",
        metavar="METRIC=VALUE",
        help="CI gate: exit 3 (after writing the report) when a judge's METRIC is below VALUE "
        f"or cannot be computed; repeatable; METRIC one of {', '.join(UNDER)} (the ranked "
        "table's figures, on the common set). Applies to every judge but the offline "
        "baselines, or to --gate-judge",
    )
    compare.add_argument(
        "--fail-over",
        type=parse_over,
        action="append",
        metavar="METRIC=VALUE",
        help=f"CI gate: exit 3 when a judge's METRIC ({', '.join(OVER)}) is above VALUE",
    )
    compare.add_argument(
        "--gate-judge",
        action="append",
        metavar="JUDGE",
        help="the judge(s) the gate applies to (as named in the judges table; repeatable)",
    )
    compare.add_argument(
        "--quiet", action="store_true", help="no progress bar and no tables, only errors"
    )
    calibrate = _subcommand(
        commands,
        "calibrate",
        "fit a calibration map on labelled judge-mode logs",
        CALIBRATE_HELP,
    )
    calibrate.add_argument(
        "--out", type=Path, required=True, help="the calibration file to write (JSON)"
    )
    calibrate.add_argument(
        "--method",
        choices=CALIBRATION_METHODS,
        default="shift",
        help="the map: shift (default), linear or isotonic",
    )
    calibrate.add_argument(
        "--judge", default=None, help="the judge model to calibrate when the logs hold several"
    )
    from .published import add_reproduce

    add_reproduce(commands)
    from .human_scale import add_command as add_human_scale

    add_human_scale(commands)
    return parser


NOT_LOGS = (".yaml", ".yml", ".csv", ".tsv", ".jsonl", ".xlsx")
"""Suffixes of dataset specs and rating files: never an Inspect log."""


def _not_a_log(sources: Sequence[object]) -> str | None:
    """What a user gave instead of logs, as a one-line message (None: every source may be
    a log): a dataset spec or ratings file named where logs go."""
    for source in sources:
        path = Path(str(source))
        if path.suffix.lower() in NOT_LOGS and path.is_file():
            kind = "a dataset spec" if path.suffix.lower() in (".yaml", ".yml") else "a data file"
            return (
                f"{source} is {kind}, not an Inspect log: calibrate fits a map on the logs of "
                f"a judge run on rated dialogs (inspect eval inspect_empathy/empathy -T "
                f"dataset={source} --model MODEL, then inspect-empathy calibrate LOG_DIR --out "
                f"FILE); a spec's published judges' calibrated bias is in inspect-empathy "
                f"compare --published {source}"
            )
    return None


def calibrate_command(args: argparse.Namespace) -> int:
    """``inspect-empathy calibrate``: fit a map on labelled logs and write it."""
    from .._util.write import WriteRefused, check_not_input
    from ..compare.comparison import CompareError
    from ..compare.fit import CalibrateError, calibrate_logs
    from ..compare.folder import check_writable
    from ..compare.logs import find_logs

    try:
        if args.out.is_dir():
            raise CalibrateError(f"--out {args.out} is a folder: name the calibration file")
        check_writable(args.out.parent, what=f"the calibration file {args.out}")
        refused = _not_a_log(args.logs)
        if refused is not None:
            raise CalibrateError(refused)
        logs = find_logs(args.logs)
        check_not_input(args.out, logs, "--out")  # before the logs are read
        fitted, judge = calibrate_logs(logs, method=args.method, judge=args.judge)
        fitted.to_json(args.out, inputs=logs)
    except (CalibrateError, CompareError, WriteRefused, OSError) as ex:
        print(f"inspect-empathy calibrate: {ex}", file=sys.stderr)
        return 1
    print(
        f"Wrote {args.out}: {fitted.method} map of {judge} fitted on {fitted.n} labelled "
        f"dialog(s) from {len(fitted.fitted_on)} log(s); parameters {fitted.parameters}"
    )
    return 0


def compare_command(args: argparse.Namespace) -> int:
    """``inspect-empathy compare``: compare the judges in the logs, print and write the report."""
    from ..compare import CompareError, compare_logs, write_report
    from ..compare.folder import check_out
    from ..compare.report import terminal_text

    if not args.logs and not args.published:
        print(
            "inspect-empathy compare: the following arguments are required: LOGS "
            "(or --published SPEC)",
            file=sys.stderr,
        )
        raise SystemExit(2)
    resamples = DEFAULT_RESAMPLES if args.resamples is None else args.resamples
    if resamples < 0:
        print("inspect-empathy compare: --resamples must be >= 0", file=sys.stderr)
        return 2
    if args.published and not args.logs:  # raters and no judges: what people say alone
        from .published import people_only

        try:
            if args.out is not None:
                check_out(args.out)
            alone = people_only(args.published, resamples, args.seed, args.out)
        except CompareError as ex:
            print(f"inspect-empathy compare: {ex}", file=sys.stderr)
            return 1
        if alone is not None:
            if not args.quiet:
                print(alone[0])
                if alone[1]:
                    print(f"\nWrote {len(alone[1])} files to {args.out}")
            return 0
    try:
        if args.out is not None:
            check_out(args.out)  # before the computation, not after it
        comparison = compare_logs(
            args.logs,
            resamples=resamples,
            seed=args.seed,
            progress=not args.quiet,
            dataset=args.dataset,
            calibration_method=args.calibration_method,
            published=args.published,
            alt_epsilon=args.alt_epsilon,
            prices=args.prices,
        )
    except CompareError as ex:
        print(f"inspect-empathy compare: {ex}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(terminal_text(comparison))
    scale = None
    if args.published:
        from .published import scale_section

        scale = scale_section(comparison, args.published, args.kappa)
        if not args.quiet:
            print(scale.text)
    written, failed = None, None
    if args.out is not None:
        plots = not args.no_plots
        if plots and importlib.util.find_spec("matplotlib") is None:
            plots = False  # write what it can: every file but the plots
            print(
                "inspect-empathy compare: the report has no plots: pip install "
                "'inspect-empathy[compare]' adds them",
                file=sys.stderr,
            )
        try:
            written = write_report(comparison, args.out, plots=plots)
        except CompareError as ex:
            failed = str(ex)
    for warning in comparison.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if failed is not None:
        print(f"inspect-empathy compare: {failed}", file=sys.stderr)
        return 1
    if written is not None and scale is not None:
        written.update(scale.write(args.out))
    if written is not None and not args.quiet:
        print(f"\nWrote {len(written)} files to {args.out}; open {written['report.html']}")
    return _gate(comparison, args)


def _gate(comparison: Any, args: argparse.Namespace) -> int:
    """Exit status of the ``--fail-under`` / ``--fail-over`` gate: its reasons on stderr
    (3), one line when it passes, 2 (usage) for a ``--gate-judge`` not compared."""
    from ..compare.gate import EXIT_FAILED, gate_failures, unknown_judges

    unknown = unknown_judges(comparison, args.gate_judge)
    if unknown:
        print(f"inspect-empathy compare: {unknown}", file=sys.stderr)
        return 2
    failures = gate_failures(comparison, args.fail_under, args.fail_over, args.gate_judge)
    for failure in failures:
        print(f"inspect-empathy compare: gate failed: {failure}", file=sys.stderr)
    if failures:
        return EXIT_FAILED
    thresholds = [f"{n} >= {v:g}" for n, v in args.fail_under or []]
    thresholds += [f"{n} <= {v:g}" for n, v in args.fail_over or []]
    if thresholds and not args.quiet:
        table = comparison.judges
        gated = args.gate_judge or [
            str(j) for j, b in zip(table["judge"], table["baseline"], strict=True) if not b
        ]
        print(f"Gate passed: {', '.join(thresholds)} for {', '.join(gated)}.")
    return 0


def reproduce_command(args: argparse.Namespace) -> int:
    """``inspect-empathy reproduce``: a published agreement table's cells beside ours."""
    from .published import reproduce_main

    return reproduce_main(args)


def human_scale_main(args: argparse.Namespace) -> int:
    """``inspect-empathy human-scale``: PPI++ mean human rating per reply model."""
    from .human_scale import main as run

    return run(args)


COMMANDS = {
    "compare": compare_command,
    "calibrate": calibrate_command,
    "reproduce": reproduce_command,
    "human-scale": human_scale_main,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``inspect-empathy`` console script."""
    parser = _parser()
    args = parser.parse_args(argv)
    command = COMMANDS.get(args.command)
    if command is None:
        parser.print_help()
        return 2
    try:
        return command(args)
    except ModuleNotFoundError as ex:
        extra = EXTRAS.get((ex.name or "").split(".")[0])
        if extra is None:
            raise
        print(
            f"inspect-empathy {args.command}: needs {ex.name}, which the base install leaves "
            f"out: pip install 'inspect-empathy[{extra}]'",
            file=sys.stderr,
        )
        return 2


EXTRAS = {"matplotlib": "compare", "pyarrow": "compare"}
"""Packages of an extra (pyproject.toml), by the extra that installs them."""
