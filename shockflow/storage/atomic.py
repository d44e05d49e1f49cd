"""Atomic file writing: write to a temporary file beside the target, then ``os.replace``.

An interrupted write (exception, Ctrl-C) never leaves a file at the target path, and never
leaves a half-written file that looks complete: readers either see the old file (or none) or
the finished new one (DESIGN.md, "Writes are atomic").

    with atomic_path("run.h5") as tmp:      # tmp is a fresh path in the same directory
        write_everything(tmp)               # on success tmp is renamed onto run.h5
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Iterator

__all__ = ["atomic_path", "atomic_open", "commit_file"]


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path in the target's directory; rename it onto ``target`` on success.

    The temporary file is created (empty) so the name is reserved; writers may overwrite or
    truncate it. On any exception (including KeyboardInterrupt) the temporary file is removed
    and the exception propagates; ``target`` is left untouched.

    The finished file gets the permissions of the file it replaces, or those of a newly created
    file (``0o666`` less the umask) — not the ``0o600`` of the temporary file, which would hide
    results from the other members of a group on a shared cluster.
    """
    target = Path(target)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise FileNotFoundError(
            f"atomic_path: directory {str(directory)!r} for target {str(target)!r} does not exist"
        )
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def commit_file(finished: str | os.PathLike, target: str | os.PathLike) -> Path:
    """Move a file that is already complete onto ``target`` in one rename, with ``target``'s permissions.

    For a file written whole elsewhere on the same file system (a sweep task's scratch result);
    ``OSError`` if the two are on different file systems, where a rename would be a copy."""
    finished, target = Path(finished), Path(target)
    directory = target.parent if str(target.parent) else Path(".")
    if finished.resolve().parent.stat().st_dev != directory.resolve().stat().st_dev:
        raise OSError(f"commit_file: {str(finished)!r} is not on the file system of {str(target)!r}")
    os.chmod(finished, _mode_for(target))
    os.replace(finished, target)
    return target


def _mode_for(target: Path) -> int:
    """The permission bits ``target`` has, or a new file would get."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process umask, read without changing it where /proc says (Linux), else set and restored."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_open(target: str | os.PathLike, mode: str = "w", **kwargs) -> Iterator:
    """Open a temporary file for writing (``mode`` 'w', 'wb', 'x' variants) and rename on success."""
    if not any(c in mode for c in "wx") or "+" in mode and "r" in mode:
        raise ValueError(f"atomic_open: mode must be a write mode ('w', 'wb'), got {mode!r}")
    mode = mode.replace("x", "w")
    with atomic_path(target) as tmp:
        with open(tmp, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
