"""The report folder: checked before the comparison, written aside, swapped in whole.

A report is written into a hidden sibling folder (``.<name>.partial-<pid>-<random>``)
and renamed over ``--out`` only once every file is written, under a lock on the
parent folder. So the folder holds one comparison's files or none: a re-run with
fewer judges or without plots leaves no file of the earlier run, two runs at once
each swap in a whole report (the last one wins), and a run that fails or is killed
leaves the previous report as it was. A folder holding anything a report does not
write is never replaced.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from .comparison import CompareError

TABLES = (
    "judges", "pairs", "length_bias", "histograms", "emotions", "logs", "replies", "humans",
    "judges_vs_humans", "disagreements", "reply_pairs",
)  # fmt: skip
PLOT_NAMES = (
    "heatmap", "agreement", "choice", "differences", "histograms", "length", "emotions"
)
REPORT_FILES = frozenset(
    [f"{t}.csv" for t in TABLES]
    + [f"{t}.md" for t in TABLES]
    + [f"{p}.png" for p in PLOT_NAMES]
    + ["samples.csv", "report.md", "report.html", "summary.json"]
    # compare --published: its scale's own categories, and the people-only view
    + ["scale_agreement.csv", "scale_agreement.md", "people_responders.csv", "people.md"]
)
"""Every file name a report may hold; a folder with anything else is not replaced."""

T = TypeVar("T")


def _foreign(out: Path) -> list[str]:
    """Entries of ``out`` that a report does not write (sorted)."""
    return sorted(e.name for e in out.iterdir() if e.name not in REPORT_FILES or not e.is_file())


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _resolved(out: Path) -> Path:
    out = Path(out)
    return out.resolve() if out.is_symlink() else out.parent.resolve() / out.name


def check_out(out: Path) -> None:
    """Raise CompareError (one line) unless a report can be written to ``out``.

    ``out`` must be a new folder, an empty one, or an earlier report; its parent
    must be a folder where this process can create one.
    """
    out = _resolved(out)
    if out.exists() and not out.is_dir():
        raise CompareError(f"--out {out} is a file, not a folder: name a folder for the report")
    if out.is_dir():
        foreign = _foreign(out)
        if foreign:
            more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
            shown = ", ".join(foreign[:3]) + more
            raise CompareError(
                f"--out {out} holds files a report does not write ({shown}): the report "
                "replaces the whole folder, so name a new or empty folder, or an earlier report"
            )
    check_writable(out.parent, what=f"the report to {out}")


def check_writable(folder: Path, what: str) -> None:
    """Raise CompareError unless a file or folder can be created in ``folder`` (or the
    nearest existing folder above it, where ``folder`` is still to be made)."""
    base = _nearest_existing(Path(folder).resolve())
    if not base.is_dir():
        raise CompareError(f"cannot write {what}: {base} is a file, not a folder")
    try:
        probe = tempfile.mkdtemp(prefix=".inspect-empathy-probe-", dir=base)
        os.rmdir(probe)
    except OSError as ex:
        raise CompareError(f"cannot write {what}: {ex.strerror or ex} ({base})") from None


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """An exclusive lock on ``folder`` (flock on the directory; none where unsupported)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock, the renames still apply
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _remove_stale(parent: Path, name: str) -> None:
    """Remove partial and replaced copies of ``name`` left by runs that no longer run."""
    pattern = re.compile(rf"^\.{re.escape(name)}\.(partial|old)-(\d+)-[0-9a-f]+$")
    for entry in parent.iterdir():
        match = pattern.match(entry.name)
        if match and (match.group(1) == "old" or not _alive(int(match.group(2)))):
            shutil.rmtree(entry, ignore_errors=True)


def _swap(partial: Path, out: Path) -> None:
    """Rename ``partial`` to ``out``, moving an earlier ``out`` aside first (restored if
    the second rename fails)."""
    if not out.exists():
        os.rename(partial, out)
        return
    old = out.parent / f".{out.name}.old-{os.getpid()}-{secrets.token_hex(4)}"
    os.rename(out, old)
    try:
        os.rename(partial, out)
    except OSError:
        os.rename(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def write_folder(out: Path, write: Callable[[Path], T]) -> T:
    """Run ``write(folder)`` on a new hidden sibling of ``out``, then swap it in as ``out``.

    On any failure (an OSError such as a full disk, an exception, Ctrl-C) the
    sibling is removed and ``out`` is left as it was; an OSError becomes a
    CompareError naming ``out``.
    """
    out = _resolved(out)
    check_out(out)
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        partial = parent / f".{out.name}.partial-{os.getpid()}-{secrets.token_hex(4)}"
        partial.mkdir(mode=0o777 & ~_umask())
    except OSError as ex:
        raise CompareError(f"cannot write the report to {out}: {ex.strerror or ex}") from None
    try:
        result = write(partial)
        with _locked(parent):
            check_out(out)  # another run may have put other files there meanwhile
            _swap(partial, out)
            _remove_stale(parent, out.name)
    except OSError as ex:
        shutil.rmtree(partial, ignore_errors=True)
        raise CompareError(
            f"cannot write the report to {out}: {ex.strerror or ex}"
            + (f" (writing {Path(ex.filename).name})" if ex.filename else "")
            + "; the folder was left as it was"
        ) from None
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return result
