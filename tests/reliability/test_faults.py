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
    for delay in (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0):
        proc = _solve(out, 1.2)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
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
