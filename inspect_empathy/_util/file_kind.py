"""What a path names, checked before a file option is opened: regular files only.

Every file option (a dataset or its spec, a rubric, a calibration map, a price file, a
rater workbook, a ratings file) is stat'ed first: a folder, a FIFO, a device or a socket
is refused at once, saying what it is, never opened (reading a FIFO waits for a writer
for ever, ``/dev/zero`` never ends).
"""

from __future__ import annotations

import os
import stat

__all__ = ["file_problem", "kind_of"]

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    """What a file of ``mode`` (``os.stat(...).st_mode``) is, in a few words."""
    if stat.S_ISREG(mode):
        return "a regular file"
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def file_problem(path: str | os.PathLike[str]) -> tuple[os.stat_result | None, str]:
    """``path``'s stat (symlinks followed) and "", or None and why it cannot be read as
    a file: ``no such file``, ``is a folder, not a file``, ``is a FIFO (named pipe), not a
    regular file ...``. Nothing is opened."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None, "no such file"
    except NotADirectoryError:
        return None, "no such file (a part of the path is not a folder)"
    except OSError as ex:
        return None, f"cannot be read ({ex.strerror or ex})"
    except ValueError as ex:  # a NUL byte in the path
        return None, f"not a usable path ({ex})"
    if stat.S_ISREG(info.st_mode):
        return info, ""
    kind = kind_of(info.st_mode)
    if kind == "a folder":
        return None, "is a folder, not a file"
    return None, f"is {kind}, not a regular file: refused unread"
