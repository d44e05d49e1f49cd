"""A non-editable install works: the wheel carries the built-in cases (package data), and the
installed command finds them from outside the checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE_CASES = sorted(p.name for p in (ROOT / "cases").glob("*.toml"))


def _copy_source(target: Path) -> Path:
    """The checkout without its build products, so building never writes into the checkout."""
    ignore = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".venv", "venv",
                                    "shockflow-results", "results", "*.h5", "*.png")
    shutil.copytree(ROOT, target, ignore=ignore)
    return target


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = _copy_source(work / "src")
    out = work / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)],
                   check=True, capture_output=True, text=True, timeout=600)
    (found,) = out.glob("shockflow-*.whl")
    return found


def test_the_wheel_ships_every_builtin_case_as_package_data(wheel):
    with zipfile.ZipFile(wheel) as z:
        shipped = sorted(Path(n).name for n in z.namelist() if n.startswith("shockflow/cases/data/"))
        assert shipped == SOURCE_CASES
        for name in SOURCE_CASES:  # byte for byte the top-level cases/, their one source
            assert z.read(f"shockflow/cases/data/{name}") == (ROOT / "cases" / name).read_bytes()
        assert not any(n.startswith(("tests/", "benchmarks/", "cases/")) for n in z.namelist())


@pytest.mark.slow
def test_a_wheel_installed_in_a_fresh_venv_lists_and_runs_the_builtin_cases(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # The dependencies come from the running interpreter's site-packages (offline, fast); only its
    # plain directory is added, so an editable shockflow there (a .pth finder) is not picked up.
    fresh_site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                     check=True, capture_output=True, text=True).stdout.strip())
    (fresh_site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True, text=True, timeout=300)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("SHOCKFLOW_CASES", "PYTHONPATH")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    exe = str(env_dir / "bin" / "shockflow")

    where = subprocess.run([str(py), "-c", "import shockflow.cases.builtin as b; print(b.cases_directory())"],
                           cwd=work, env=env, check=True, capture_output=True, text=True).stdout.strip()
    assert Path(where).is_relative_to(fresh_site) and not Path(where).is_relative_to(ROOT)

    listed = subprocess.run([exe, "cases", "--json"], cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert sorted(c["name"] + ".toml" for c in json.loads(listed.stdout)) == SOURCE_CASES

    ran = subprocess.run([exe, "run", "two-layer-staircase", "--json", "--no-figures",
                          "--set", "data.n=1024"], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert len(result["matches"]) == 4 and result["median_relative_error"] < 0.05
    assert (work / result["result_file"]).resolve().parent == (work / "shockflow-results").resolve()
    assert sorted(p.name for p in work.iterdir()) == ["shockflow-results"]  # nothing written beside it


def test_cases_says_where_it_looked_when_it_finds_none(tmp_path, monkeypatch, capsys):
    from shockflow.cli import main

    empty = tmp_path / "no-cases-here"
    empty.mkdir()
    monkeypatch.setenv("SHOCKFLOW_CASES", str(empty))
    assert main(["cases"]) == 1
    err = capsys.readouterr().err
    assert "no built-in cases found" in err and str(empty) in err
