"""Atomic file writing: write to a temporary file beside the target, then ``os.replace``.

An interrupted write (exception, Ctrl-C) never leaves a file at the target path, and never
leaves a half-written file that looks complete: readers either see the old file (or none) or
the finished new one (DESIGN.md, "Writes are atomic").

    with atomic_path("run.h5") as tmp:      # tmp is a fresh path in the same directory
        write_everything(tmp)               # on success tmp is renamed onto run.h5

Every writer of the package goes through :func:`atomic_path` (``atomic_open`` and ``commit_file``
too), so this module is also the one place where writes are confined: inside
``with confine_writes(out):`` (the command line wraps every command in it) a target that resolves
outside ``out`` — through ``..``, an absolute path or a symbolic link — raises
:class:`WriteOutsideError` before anything is created.  The temporary files carry the writing
process's id (``.<name>.pid<pid>.<random>.tmp``); :func:`remove_stale_temporaries` deletes those
of processes that no longer exist (a run killed by SIGKILL cannot clean up after itself).

Several files that belong together (a run's log, result and figures) are committed as one with
:func:`atomic_group`: inside the block every :func:`atomic_path` stages its finished temporary
instead of renaming it; at the end of the block a journal naming every (temporary, target) pair is
written atomically — the commit point — the renames are done and the journal is removed.  A process
killed before the journal leaves only stale temporaries (the directory is as before); one killed
during the renames leaves the journal, and the next :func:`remove_stale_temporaries` (every command
that writes calls it first) finishes the renames (the directory is complete).  Never a mix.  A reader (``read_result``, ``show``) calls
:func:`complete_commits` before it opens a file, which finishes also the journal of a writer still renaming.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Iterator

__all__ = ["atomic_path", "atomic_open", "commit_file", "confine_writes", "ensure_inside", "WriteOutsideError",
           "remove_stale_temporaries", "scratch_directory", "atomic_group", "discard_with_group", "recover_commits",
           "complete_commits", "committed_together", "pid_alive"]

#: the staged (temporary, target) pairs of the open :func:`atomic_group` blocks (innermost last); a target that is no
#: path (None, or a callable told whether the group committed): a file removed when the group ends
#: (:func:`discard_with_group`)
_GROUPS: list[list[tuple]] = []
_JOURNAL_PREFIX = ".shockflow-commit.pid"

#: the directories writes are confined to (innermost last); empty: no confinement
_ROOTS: list[Path] = []


class WriteOutsideError(PermissionError):
    """A write was asked for outside the directory writes are confined to (``--out``)."""


@contextlib.contextmanager
def confine_writes(root: str | os.PathLike) -> Iterator[Path]:
    """Within the block, every :func:`atomic_path` / :func:`atomic_open` / :func:`commit_file` target must
    resolve inside ``root`` (symbolic links followed); yields the resolved root."""
    resolved = Path(root).resolve()
    _ROOTS.append(resolved)
    try:
        yield resolved
    finally:
        _ROOTS.remove(resolved)


def ensure_inside(target: str | os.PathLike) -> Path:
    """``target`` resolved; :class:`WriteOutsideError` if writes are confined and it lies outside the root."""
    resolved = Path(target).resolve()
    if _ROOTS and not any(resolved == root or root in resolved.parents for root in _ROOTS):
        raise WriteOutsideError(f"refusing to write {str(target)!r}: it resolves to {str(resolved)!r}, "
                                f"outside the output directory {str(_ROOTS[0])!r}")
    return resolved


@contextlib.contextmanager
def scratch_directory(prefix: str = "shockflow-") -> Iterator[Path]:
    """A fresh temporary directory, removed afterwards, where writes are allowed even inside :func:`confine_writes`
    (the scratch space of an in-memory sweep)."""
    suspended = _GROUPS[:]  # scratch files are read back at once: never staged in an open group
    _GROUPS.clear()
    try:
        with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
            if not _ROOTS:  # no confinement: nothing to allow
                yield Path(scratch)
                return
            with confine_writes(scratch) as root:
                yield root
    finally:
        _GROUPS[:] = suspended


def pid_alive(pid: int) -> bool:
    """Whether the process ``pid`` runs (this one does; one of another user is taken to)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


@contextlib.contextmanager
def atomic_group() -> Iterator[list]:
    """Commit every file written with :func:`atomic_path` inside the block together (see the module docstring);
    on an exception nothing of the block is committed and its temporaries are removed.  A staged file is not
    visible at its target until the block ends: use it around writers that do not read their files back
    (the runners of ``solve``, ``train`` and ``run`` of a network case)."""
    staged: list[tuple] = []
    _GROUPS.append(staged)
    try:
        yield staged
    except BaseException:
        _GROUPS.remove(staged)
        _discard(staged, committed=False)
        for tmp, target in staged:
            if isinstance(target, Path):
                with contextlib.suppress(OSError):
                    tmp.unlink()
        raise
    _GROUPS.remove(staged)
    if _GROUPS:  # nested: the outer group commits
        _GROUPS[-1].extend(staged)
        return
    renames = [pair for pair in staged if isinstance(pair[1], Path)]
    try:
        if renames:
            _commit(renames)
    except BaseException:
        _discard(staged, committed=False)
        raise
    _discard(staged, committed=True)


def _discard(staged, committed: bool) -> None:
    """The files :func:`discard_with_group` gave the group: each one's ``before(committed)``, then the file removed."""
    for tmp, target in staged:
        if isinstance(target, Path):
            continue
        if target is not None:
            with contextlib.suppress(Exception):
                target(committed)
        with contextlib.suppress(OSError):
            tmp.unlink()


def discard_with_group(path: str | os.PathLike, before=None) -> None:
    """Remove ``path``, a file of this process that is never committed (the live loss file of a training run,
    :mod:`shockflow.logs.live`), when the enclosing :func:`atomic_group` ends, committed or not (after the renames
    of a commit: the file lasts until the files it stands in for are there); at once outside a group.  ``before``:
    called first with whether the group committed (outside a group: True), to say so in the file."""
    path = Path(path)
    if _GROUPS:
        _GROUPS[-1].append((path.resolve(), before))
        return
    if before is not None:
        before(True)
    with contextlib.suppress(OSError):
        path.unlink()


def committed_together(function):
    """Decorator: every file ``function`` writes through :func:`atomic_path` is committed as one group."""
    import functools

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with atomic_group():
            return function(*args, **kwargs)
    return wrapper


def _commit(staged: list[tuple[Path, Path]]) -> None:
    import json

    directory = staged[0][1].parent
    fd, tmp_name = tempfile.mkstemp(prefix=f"{_JOURNAL_PREFIX}{os.getpid()}.", suffix=".part", dir=directory)
    with os.fdopen(fd, "w") as fh:
        json.dump([[str(a), str(b)] for a, b in staged], fh)
        fh.flush()
        os.fsync(fh.fileno())
    journal = Path(tmp_name[: -len(".part")] + ".journal")
    os.replace(tmp_name, journal)  # the commit point
    try:
        _apply(journal)
    finally:
        if journal.exists():  # interrupted during the renames: finish them before anything else happens
            _apply(journal)


def _apply(journal: Path, *, tolerant: bool = False) -> None:
    """Do the renames a journal names, skipping those already done; remove the journal.

    Only pairs of a temporary of :func:`atomic_path` (``.<target name>.pid<N>.<random>.tmp``) and its target,
    side by side in the journal's directory or below it, are renamed: a journal cannot move files anywhere else.  Two
    processes may apply one journal at once (the writer and a reader, :func:`complete_commits`): a
    temporary the other one renamed first is skipped.  ``tolerant``: a rename the file system refuses
    (a read-only directory) is left undone instead of raising."""
    import json

    try:
        pairs = json.loads(journal.read_text())
    except (OSError, ValueError):
        pairs = []
    home = journal.parent.resolve()
    for pair in pairs if isinstance(pairs, list) else []:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
            continue
        tmp, target = Path(pair[0]), Path(pair[1])
        if not (tmp.parent == target.parent and (home == tmp.parent or home in tmp.parents)
                and tmp.name.startswith(f".{target.name}.pid") and tmp.name.endswith(".tmp")):
            continue
        try:
            os.replace(tmp, target)
        except FileNotFoundError:
            pass   # renamed already (by the other process applying this journal, or before an interruption)
        except OSError:
            if not tolerant:
                raise
            return
    with contextlib.suppress(FileNotFoundError, PermissionError):
        journal.unlink()


def recover_commits(directory: str | os.PathLike) -> list[Path]:
    """Finish the group commits of dead processes in ``directory`` (journals whose renames were cut short);
    returns the journals applied."""
    return _journals(directory, live=False)


def complete_commits(directory: str | os.PathLike) -> list[Path]:
    """What a reader does before it opens a file in ``directory``: finish every committed group there, also one
    whose writer is still renaming (a journal is written only once all its files are complete, so finishing it is
    what the writer itself is doing), so that a reader never sees half of a group beside the other half's old files.
    Renames the file system refuses (a read-only directory) are left undone.  Returns the journals applied."""
    return _journals(directory, live=True)


def _journals(directory, *, live: bool) -> list[Path]:
    directory = Path(directory)
    done = []
    if not directory.is_dir():
        return done
    for entry in sorted(directory.iterdir()):
        name = entry.name
        if not name.startswith(_JOURNAL_PREFIX):
            continue
        pid = name[len(_JOURNAL_PREFIX):].split(".", 1)[0]
        if not pid.isdigit() or (not live and pid_alive(int(pid))):
            continue
        if name.endswith(".journal"):
            _apply(entry, tolerant=live)
            done.append(entry)
        elif name.endswith(".part") and not pid_alive(int(pid)):  # killed while writing the journal: not committed
            with contextlib.suppress(OSError):
                entry.unlink()
    return done


def remove_stale_temporaries(directory: str | os.PathLike) -> list[Path]:
    """Finish the interrupted commits of dead processes (:func:`recover_commits`), then delete the temporary files
    of :func:`atomic_path` in ``directory`` whose writing process no longer exists (killed runs); returns what was
    removed.  Files of live processes are left alone."""
    directory = Path(directory)
    removed = []
    if not directory.is_dir():
        return removed
    recover_commits(directory)
    for entry in directory.iterdir():
        name = entry.name
        if not (name.startswith(".") and name.endswith(".tmp")):
            continue
        parts = name[1:-4].rsplit(".", 2)
        if len(parts) != 3 or not parts[1].startswith("pid") or not parts[1][3:].isdigit():
            continue
        if pid_alive(int(parts[1][3:])):
            continue
        with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
            entry.unlink()
            removed.append(entry)
    return removed


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
    ensure_inside(target)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise FileNotFoundError(
            f"atomic_path: directory {str(directory)!r} for target {str(target)!r} does not exist"
        )
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.pid{os.getpid()}.", suffix=".tmp", dir=directory)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, _mode_for(target))
        if _GROUPS:  # committed with the rest of its group
            _GROUPS[-1].append((tmp.resolve(), target.resolve()))
        else:
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
    ensure_inside(target)
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
