"""Item 4 of issue 21: a run killed (SIGKILL) at any point leaves --out as it was or complete, never mixed;
the next command removes what the killed run left (stale temporaries) and finishes a cut-short commit."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from shockflow.storage import remove_stale_temporaries
from shockflow.storage.atomic import recover_commits

NAMES = ("run.h5", "run-log.h5", "run.png")

#: a group commit of three files, killed (SIGKILL, no cleanup possible) at the k-th rename of a staged file,
#: or (k = -1) just before the journal — the commit point — is renamed into place
WRITER = textwrap.dedent("""
    import os, signal, sys
    from shockflow.storage import atomic_group, atomic_open
    out, k = sys.argv[1], int(sys.argv[2])
    real, count = os.replace, [0]
    def replace(src, dst):
        src = str(src)
        if (k == -1 and src.endswith(".part")) or (src.endswith(".tmp") and count[0] == k):
            os.kill(os.getpid(), signal.SIGKILL)
        if src.endswith(".tmp"):
            count[0] += 1
        return real(src, dst)
    os.replace = replace
    with atomic_group():
        for name in {names!r}:
            with atomic_open(os.path.join(out, name)) as fh:
                fh.write("new " + name)
""").format(names=NAMES)


def _state(out: Path) -> dict:
    return {p.name: p.read_text() for p in out.iterdir() if not p.name.startswith(".")}


@pytest.mark.parametrize("k", [-1, 0, 1, 2])
def test_a_commit_killed_anywhere_is_rolled_back_or_forward_by_the_next_command(tmp_path, k):
    out = tmp_path / "out"
    out.mkdir()
    for name in NAMES:
        (out / name).write_text("old " + name)
    old = _state(out)
    proc = subprocess.run([sys.executable, "-c", WRITER, str(out), str(k)], capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert any(p.name.startswith(".") for p in out.iterdir())  # the killed process left its temporaries
    remove_stale_temporaries(out)  # what every writing command does first
    assert not any(p.name.startswith(".") for p in out.iterdir())
    new = {name: "new " + name for name in NAMES}
    assert _state(out) == (old if k == -1 else new)  # before the journal: as before; after it: complete


def _solve(out: Path, amplitude: float, **kw):
    cmd = [sys.executable, "-m", "shockflow.cli", "solve", "burgers-sine", "--set", "domain.cells=200",
           "--set", f"initial.amplitude={amplitude}", "--out", str(out), "--quiet"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


@pytest.mark.slow
def test_a_real_solve_killed_at_several_points_leaves_the_old_pair_or_the_new_one(tmp_path):
    out = tmp_path / "out"
    assert _solve(out, 0.8).wait(timeout=300) == 0
    old = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(old) == {"burgers-sine.h5", "burgers-sine.png"}
    seen = set()
    for k, delay in enumerate((0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0)):
        # each run draws other data than the one before, so that a new figure never equals the old one
        # byte for byte (figures of equal data are: a completed run would read as "mixed")
        proc = _solve(out, 1.2 + 0.1 * k)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        # what any next command does first (and the only state a reader of shockflow sees): a kill that
        # landed between the journal and the last rename is completed, one before the journal is void
        recover_commits(out)
        now = {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith(".")}
        assert set(now) == set(old)
        same = {name: now[name] == old[name] for name in now}
        assert len(set(same.values())) == 1, f"mixed after a kill at {delay} s: {same}"  # all old or all new
        seen.add("old" if all(same.values()) else "new")
        old = now  # a completed run is the next kill's "before"
    # the next command removes every stale temporary the kills left
    assert _solve(out, 1.0).wait(timeout=300) == 0
    assert not any(p.name.startswith(".") for p in out.iterdir())
    assert "old" in seen  # at least one kill landed before the commit


#: a group commit of a result and its companion, stopped (SIGSTOP: alive, not cleaning up) at the k-th rename
PAUSED_WRITER = textwrap.dedent("""
    import os, shutil, signal, sys
    from shockflow.storage import atomic_group, atomic_open, atomic_path
    out, new, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
    real, count = os.replace, [0]
    def replace(src, dst):
        if str(src).endswith(".tmp"):
            if count[0] == k:
                os.kill(os.getpid(), signal.SIGSTOP)
            count[0] += 1
        return real(src, dst)
    os.replace = replace
    with atomic_group():
        with atomic_path(os.path.join(out, "run.h5")) as tmp:
            shutil.copyfile(new, tmp)
        with atomic_open(os.path.join(out, "run-log.txt")) as fh:
            fh.write("new")
""")


def _stopped(proc) -> bool:
    for _ in range(600):
        if proc.poll() is not None:
            return False
        with open(f"/proc/{proc.pid}/stat") as fh:
            if fh.read().rsplit(")", 1)[1].split()[0] == "T":
                return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process state from /proc")
@pytest.mark.parametrize("reader", ["show", "read_result"])
@pytest.mark.parametrize("k", [0, 1])
def test_a_reader_in_the_rename_window_of_a_live_writer_sees_the_new_pair(tmp_path, capsys, reader, k):
    """`show --no-figures` and read_result finish a committed group before reading (issue 21, item 4): the writer is
    stopped between its renames (after the journal), the reader sees the new result beside the new companion,
    and the writer, resumed, finishes without error."""
    import json
    import shutil

    from shockflow.cli import main
    from shockflow.storage import read_result

    data = Path(__file__).parents[1] / "storage" / "data"
    out = tmp_path / "out"
    out.mkdir()
    shutil.copyfile(data / "result-v1-burgers-sine.h5", out / "run.h5")
    (out / "run-log.txt").write_text("old")
    proc = subprocess.Popen([sys.executable, "-c", PAUSED_WRITER, str(out), str(data / "result-v1-two-layer-staircase.h5"),
                             str(k)], stderr=subprocess.PIPE)
    try:
        assert _stopped(proc), proc.stderr.read().decode() if proc.poll() is not None else "not stopped"
        assert any(p.name.endswith(".journal") for p in out.iterdir())  # in the rename window
        if reader == "show":
            assert main(["show", str(out / "run.h5"), "--no-figures", "--json"]) == 0
            name = json.loads(capsys.readouterr().out)["case"]
        else:
            name = read_result(out / "run.h5").case_name
        assert name == "two-layer-staircase" and (out / "run-log.txt").read_text() == "new"
        assert not any(p.name.startswith(".") for p in out.iterdir())   # journal and temporaries gone
    finally:
        proc.send_signal(signal.SIGCONT)
        code = proc.wait(timeout=120)
    assert code == 0, proc.stderr.read().decode()
    assert read_result(out / "run.h5").case_name == "two-layer-staircase" and (out / "run-log.txt").read_text() == "new"


def test_a_journal_renames_only_temporaries_beside_their_targets(tmp_path):
    """A journal (even a forged one) cannot move a file out of its directory, nor rename a file that is not a temporary."""
    import json

    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir(), elsewhere.mkdir()
    (out / "keep.h5").write_text("keep")
    (out / ".x.h5.pid1.ab.tmp").write_text("x")
    journal = out / ".shockflow-commit.pid999999999.zz.journal"
    journal.write_text(json.dumps([[str(out / "keep.h5"), str(elsewhere / "stolen.h5")],
                                   [str(out / ".x.h5.pid1.ab.tmp"), str(elsewhere / "x.h5")],
                                   [str(out / ".x.h5.pid1.ab.tmp"), str(out / "x.h5")], "junk"]))
    recover_commits(out)
    assert not list(elsewhere.iterdir()) and (out / "keep.h5").read_text() == "keep"
    assert (out / "x.h5").read_text() == "x" and not journal.exists()
