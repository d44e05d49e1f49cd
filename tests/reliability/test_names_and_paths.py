"""Item 1 of issue 21: a case name is a safe file stem, and no write leaves --out."""

import os
from pathlib import Path

import pytest

from shockflow.cases import CaseError, load_case
from shockflow.storage import (WriteOutsideError, atomic_group, atomic_open, atomic_path, confine_writes,
                               remove_stale_temporaries)

BURGERS = Path(__file__).resolve().parents[2] / "cases" / "burgers-sine.toml"

HOSTILE = ["../escaped", "/abs/x", "a/b", "a\\u0000b", "x" * 300, "tab\\there", "new\\nline", ".hidden", "-dash",
           "..", "a..b", " ", ""]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_refused_naming_the_key(tmp_path, name):
    case = tmp_path / "c.toml"
    case.write_text(f'name = "{name}"\n' + BURGERS.read_text())
    with pytest.raises(CaseError) as info:
        load_case(case)
    assert "name" in info.value.keys
    assert "name:" in str(info.value) and str(case) in str(info.value)


@pytest.mark.parametrize("name", ["burgers-sine", "run_2.b+c", "A1"])
def test_safe_names_are_accepted(name):
    assert load_case(BURGERS, overrides=[f'name="{name}"']).name == name


def test_solve_with_an_escaping_name_writes_nothing_anywhere(cli, workdir, listing):
    before = listing(workdir)
    code, _, err = cli("solve", BURGERS, "--set", 'name="../escaped"', "--set", "domain.cells=64", "--out", "out")
    assert code == 2 and "name:" in err and "Traceback" not in err
    assert listing(workdir) == before  # out/ still empty, nothing beside it


def test_the_guard_refuses_every_way_out(tmp_path, listing):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", out / "link")
    with confine_writes(out):
        for target in (out / ".." / "x.h5", tmp_path / "x.h5", out / "link" / "x.h5", Path("/tmp/shockflow-x.h5")):
            with pytest.raises(WriteOutsideError, match="outside the output directory"):
                with atomic_path(target):
                    pass
        with atomic_open(out / "inside.txt") as fh:
            fh.write("ok")
    assert listing(tmp_path) == {"out/inside.txt", "out/link"}  # the symlink made above; nothing in elsewhere/
    assert not any((tmp_path / "elsewhere").iterdir())
    with atomic_open(tmp_path / "free.txt") as fh:  # outside any confinement: allowed
        fh.write("x")
    assert (tmp_path / "free.txt").read_text() == "x"


def test_stale_temporaries_of_dead_processes_are_removed_live_ones_kept(tmp_path):
    dead = 2 ** 22 + 12345  # above the default pid_max of 4194304: no such process
    stale = tmp_path / f".run.h5.pid{dead}.abc123.tmp"
    mine = tmp_path / f".run.h5.pid{os.getpid()}.def456.tmp"
    other = tmp_path / ".notours.tmp"
    for p in (stale, mine, other):
        p.write_text("x")
    assert remove_stale_temporaries(tmp_path) == [stale]
    assert not stale.exists() and mine.exists() and other.exists()


def test_a_group_commits_all_or_nothing(tmp_path, listing):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    with pytest.raises(KeyboardInterrupt):
        with atomic_group():
            with atomic_open(a) as fh:
                fh.write("new a")
            assert not a.exists()  # staged, not visible
            raise KeyboardInterrupt
    assert listing(tmp_path) == set()  # the staged temporary is gone too
    with atomic_group():
        for p in (a, b):
            with atomic_open(p) as fh:
                fh.write(p.name)
        assert listing(tmp_path) - {p for p in listing(tmp_path) if p.startswith(".")} == set()
    assert listing(tmp_path) == {"a.txt", "b.txt"} and a.read_text() == "a.txt"


def test_a_command_does_not_replace_another_cases_result_of_the_same_name(cli, tmp_path):
    """README: a command replaces its own earlier files, never another's of the same name.  A tester's PDE case named
    like a network case replaced that run's result, and a network case named ``A-forecast`` replaced the forecast of
    ``A``: both exit 2 before any work, naming the file and both cases, and the files stay as they were."""
    out = tmp_path / "out"
    assert cli("forecast", "two-layer-staircase", "--set", "data.n=512", "--no-figures", "--quiet", "--out", out)[0] == 0
    assert cli("solve", "burgers-sine", "--no-figures", "--quiet", "--out", out)[0] == 0
    held = {p.name: p.read_bytes() for p in out.glob("*.h5")}
    network = Path(load_case("two-layer-staircase").path).read_text()
    pde = Path(load_case("burgers-sine").path).read_text()
    (tmp_path / "a.toml").write_text(f'name = "two-layer-staircase-forecast"\n{network}')
    (tmp_path / "b.toml").write_text(f'name = "burgers-sine"\n{network}')
    (tmp_path / "c.toml").write_text(f'name = "two-layer-staircase-forecast"\n{pde}')
    for command, case, held_case in (("run", "a.toml", "two-layer-staircase"), ("forecast", "b.toml", None),
                                     ("run", "b.toml", "burgers-sine"), ("solve", "c.toml", "two-layer-staircase")):
        code, _, err = cli(command, tmp_path / case, "--set", "data.n=512", "--no-figures", "--out", out) \
            if command != "solve" else cli(command, tmp_path / case, "--no-figures", "--out", out)
        if held_case is None:   # b's forecast file is its own name: nothing held there
            assert code == 0
            continue
        assert code == 2 and "Traceback" not in err, err
        assert f"case {held_case!r}" in err and "choose another --out" in err
    assert {p.name: p.read_bytes() for p in out.glob("*.h5") if p.name in held} == held
