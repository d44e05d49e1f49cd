"""The fuzz test of issue 21: hostile case files, overrides, names and output paths over every built-in case and
case kind.  Zero tracebacks, zero wrong exit codes, zero hangs, zero writes outside --out.

Seeded (``derandomize``): the same inputs every run.  The default run draws a few hundred inputs, the slow job a
few thousand (``FUZZ_SCALE``).  The memory check is capped at 256 MiB (``SHOCKFLOW_MAX_MEMORY``) so that an
accepted input can never allocate gigabytes on a shared machine.
"""

import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shockflow.cases import load_case
from shockflow.cases.builtin import builtin_case_path, builtin_names
from shockflow.cases.schema import to_plain
from shockflow.cli import main

CASES = tuple(builtin_names())
MAX_SECONDS = 30.0  # one command; "a hang" is anything slower


def _keys(name):
    """Every dotted key of a built-in case's resolved settings (the places overrides land)."""
    found = []

    def walk(node, prefix):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{prefix}.{k}" if prefix else str(k))
        else:
            found.append(prefix)

    walk(to_plain(load_case(name).settings), "")
    return found


KEYS = {name: _keys(name) for name in CASES}

HOSTILE_VALUES = [
    "0", "-1", "1", "3", "4", "2", "1000000000000", str(2 ** 63), str(2 ** 64), "1" + "0" * 400, "nan", "inf", "-inf",
    "1e308", "-1e308", "1e-308", "5e-324", "-0.0", "0.5", "1.5", "1e16", "1e-12", "true", "false", '""', '"banana"',
    '"../escaped"', '"/abs/x"', '"a\\tb"', '"x' + "y" * 300 + '"', "[]", "[1, 2]", "[[1]]", "[0, 9]", '["a"]', "{a = 1}",
    "[[[", "=", '"unterminated', "1979-05-27", "euler", "weno5", '"euler"', '"weno5"', '"eno2"', '"first_order"',
]
JUNK_KEYS = ["nonsense", "name", "seed", "kind", "description", "solver.nonsense", "a.b.c.d", "sweep.axes.x",
             ".".join(["deep"] * 40), "geometry.name", "model.name", "data.name", "extraction.charts"]


@st.composite
def overrides(draw, name):
    keys = st.sampled_from(KEYS[name] + JUNK_KEYS)
    pairs = draw(st.lists(st.tuples(keys, st.sampled_from(HOSTILE_VALUES)), min_size=0, max_size=4))
    return [f"{k}={v}" for k, v in pairs]


@st.composite
def case_text(draw, name):
    """The case's text, sometimes damaged: a BOM, a cut, a line dropped or duplicated, junk bytes."""
    text = builtin_case_path(name).read_text()
    how = draw(st.sampled_from(["as is", "as is", "bom", "cut", "drop line", "duplicate line", "junk", "nest"]))
    lines = text.splitlines(keepends=True)
    if how == "bom":
        text = "\ufeff" + text
    elif how == "cut":
        text = text[: draw(st.integers(0, len(text)))]
    elif how == "drop line" and lines:
        i = draw(st.integers(0, len(lines) - 1))
        text = "".join(lines[:i] + lines[i + 1:])
    elif how == "duplicate line" and lines:
        i = draw(st.integers(0, len(lines) - 1))
        text = "".join(lines[: i + 1] + lines[i:])
    elif how == "junk":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.text(max_size=20)) + text[at:]
    elif how == "nest":
        depth = draw(st.sampled_from([10, 33, 100, 1000]))
        text += "\nzz = " + "[" * depth + "]" * depth + "\n"
    return text


def _run(argv):
    """``main(argv)``: (exit code, seconds); argparse's own exit 2 is an exit code, anything else escaping fails."""
    start = time.perf_counter()
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, time.perf_counter() - start


def _tree(root: Path) -> dict:
    return {str(p): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


SCALE = int(os.environ.get("FUZZ_SCALE", "1"))


#: exit codes seen by each fuzz run (the README's figures), filled as the examples run
SEEN: dict[str, list[int]] = {"validate": [], "solve": []}


def _validate_fuzz(examples):
    @settings(max_examples=examples, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                     HealthCheck.data_too_large])
    @given(data=st.data())
    def check(data, tmp_path, capsys, monkeypatch):
        monkeypatch.setenv("SHOCKFLOW_MAX_MEMORY", str(256 * 2 ** 20))
        monkeypatch.chdir(tmp_path)
        name = data.draw(st.sampled_from(CASES), label="case")
        path = tmp_path / f"{name}.toml"
        path.write_text(data.draw(case_text(name), label="text"), encoding="utf-8")
        sets = data.draw(overrides(name), label="overrides")
        before = _tree(tmp_path)
        code, seconds = _run(["validate", str(path)] + [a for s in sets for a in ("--set", s)])
        err = capsys.readouterr().err
        assert code in (0, 2), err
        assert "Traceback" not in err and "np.float64" not in err
        assert code == 0 or err.startswith("shockflow") or "usage:" in err
        assert seconds < MAX_SECONDS
        assert _tree(tmp_path) == before  # validate writes nothing
        SEEN["validate"].append(code)

    return check


def test_fuzz_validate_every_builtin_case(tmp_path, capsys, monkeypatch):
    SEEN["validate"].clear()
    _validate_fuzz(300)(tmp_path=tmp_path, capsys=capsys, monkeypatch=monkeypatch)
    codes = SEEN["validate"]
    assert len(codes) >= 300 and codes.count(0) > 10 and codes.count(2) > 100  # both outcomes really exercised
    print(f"validate fuzz: {len(codes)} inputs, {codes.count(0)} valid, {codes.count(2)} refused")


@pytest.mark.slow
def test_fuzz_validate_every_builtin_case_thousands(tmp_path, capsys, monkeypatch):
    SEEN["validate"].clear()
    _validate_fuzz(3000 * SCALE)(tmp_path=tmp_path, capsys=capsys, monkeypatch=monkeypatch)
    codes = SEEN["validate"]
    assert len(codes) >= 3000 * SCALE and codes.count(0) > 100 and codes.count(2) > 1000
    print(f"validate fuzz (slow): {len(codes)} inputs, {codes.count(0)} valid, {codes.count(2)} refused")


# -- runs: hostile names and output directories; every write inside --out ----------------------------
NAMES = ['"ok-name"', '"../escaped"', '"/abs/x"', '"a/b"', '"..\\\\x"', '"x' + "y" * 300 + '"', '".hidden"', '"tab\\tx"',
         '"run_1.b"']
SAFE_NAMES = ['"ok-name"', '"run_1.b"', '"A+B"']
OUTS = ["out", "out/sub/deeper", "out/../out2", "./out3", "out with space"]
SMALL = ["domain.cells=16", "output.snapshots=3", "output.t_end=0.05"]


def _run_fuzz(examples):
    @settings(max_examples=examples, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(name=st.one_of(st.sampled_from(SAFE_NAMES), st.sampled_from(NAMES)), out=st.sampled_from(OUTS), figures=st.booleans(),
           extra=st.lists(st.sampled_from(["solver.cfl=0.3", "solver.cfl=0.9", "solver.integrator=euler",
                                           "initial.left=1e200", "initial.right=nan", "seed=3", "equation.nu=0.01"]),
                          max_size=2))
    def check(name, out, figures, extra, tmp_path_factory, capsys, monkeypatch):
        root = tmp_path_factory.mktemp("run")
        monkeypatch.setenv("SHOCKFLOW_MAX_MEMORY", str(256 * 2 ** 20))
        monkeypatch.chdir(root)
        argv = ["solve", "burgers-riemann", "--out", out, "--quiet", "--set", f"name={name}"]
        argv += [a for s in SMALL + extra for a in ("--set", s)]
        argv += [] if figures else ["--no-figures"]
        code, seconds = _run(argv)
        err = capsys.readouterr().err
        assert code in (0, 1, 2), err
        assert "Traceback" not in err and seconds < MAX_SECONDS
        inside = (root / out).resolve()
        outside = [w for w in _tree(root) if not Path(w).resolve().is_relative_to(inside)]
        assert outside == [], outside
        if code == 0:
            assert {p.suffix for p in inside.iterdir()} == ({".h5", ".png"} if figures else {".h5"})
        SEEN["solve"].append(code)

    return check


def test_fuzz_solve_names_and_outputs(tmp_path_factory, capsys, monkeypatch):
    SEEN["solve"].clear()
    _run_fuzz(40)(tmp_path_factory=tmp_path_factory, capsys=capsys, monkeypatch=monkeypatch)
    codes = SEEN["solve"]
    assert len(codes) >= 40 and codes.count(0) > 3 and codes.count(2) > 10
    print(f"solve fuzz: {len(codes)} runs, {codes.count(0)} ran, {codes.count(1)} failed, {codes.count(2)} refused")


@pytest.mark.slow
def test_fuzz_solve_names_and_outputs_many(tmp_path_factory, capsys, monkeypatch):
    SEEN["solve"].clear()
    _run_fuzz(400 * SCALE)(tmp_path_factory=tmp_path_factory, capsys=capsys, monkeypatch=monkeypatch)
    codes = SEEN["solve"]
    assert codes.count(0) > 30 and codes.count(2) > 100
    print(f"solve fuzz (slow): {len(codes)} runs, {codes.count(0)} ran, {codes.count(1)} failed, {codes.count(2)} refused")
