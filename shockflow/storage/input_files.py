"""What a path given to be read is, when it is no regular file: one wording for every reader.

A case file, a log, a result file, a weight stack or a teacher direction is read from a regular file.  A path that
exists but is a device (``/dev/null``, ``/dev/zero``), a named pipe or a socket was reported as "no such file" (it
exists) or was read without end (``/dev/zero``); :func:`file_problem` says which it is, for the caller's message.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["file_problem"]

_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"))


def file_problem(path: str | os.PathLike) -> str | None:
    """None when ``path`` is a regular file (or a link to one); else why it is not one, to follow the path in a
    message: ``"no such file"``, ``"is a directory"``, ``"is not a regular file (a character device)"``, or
    ``"cannot be read (Permission denied)"`` when even its kind cannot be told."""
    try:
        mode = Path(path).stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "no such file"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory"
    kind = next((name for test, name in _KINDS if test(mode)), "not a file")
    return f"is not a regular file ({kind})"
