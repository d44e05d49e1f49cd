"""The command line starts cheaply; `solve --json` reports each shock's speed and final position."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from shockflow.cli import main

HEAVY = ("numpy", "scipy", "numba", "h5py", "matplotlib", "dask", "basix")


def _imported(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         check=True, capture_output=True, text=True).stdout.split()
    return {m.split(".")[0] for m in out} & set(HEAVY)


def test_import_shockflow_imports_nothing_heavy_until_an_api_function_is_used():
    assert _imported("import shockflow") == set()
    assert "h5py" in _imported("import shockflow; shockflow.read_result")


@pytest.mark.parametrize("argv", [["--help"], ["cases"], ["run", "--help"], ["sweep", "--help"]])
def test_help_and_cases_import_nothing_heavy(argv):
    code = f"import sys\nfrom shockflow.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
    assert _imported(code) == set()


@pytest.mark.parametrize("argv", [["--help"], ["cases"]])
def test_help_and_cases_take_under_half_a_second_warm(argv):
    exe = [sys.executable, "-m", "shockflow.cli", *argv]
    subprocess.run(exe, check=True, capture_output=True)  # warm: bytecode written, files cached
    best = min(_timed(exe) for _ in range(3))
    assert best < 0.5, f"{' '.join(argv)}: {best:.2f} s"


def _timed(exe) -> float:
    start = time.perf_counter()
    subprocess.run(exe, check=True, capture_output=True)
    return time.perf_counter() - start


def test_solve_json_reports_each_shocks_speed_and_final_position(tmp_path, capsys):
    # Riemann problem p_L = 1, p_R = 0 at x = 0: one shock at the Rankine–Hugoniot speed 1/2, at x = 1/2 at t = 1
    assert main(["solve", "burgers-riemann", "--json", "--no-figures", "--out", str(tmp_path),
                 "--set", "domain.cells=400"]) == 0
    (shock,) = json.loads(capsys.readouterr().out)["shocks"]
    assert set(shock) >= {"time", "location", "strength", "speed", "final_location", "final_strength"}
    assert shock["speed"] == pytest.approx(0.5, abs=2e-3)
    assert shock["final_location"] == pytest.approx(0.5, abs=2 * 2.0 / 400)  # within two cells
    assert shock["final_strength"] == pytest.approx(1.0, abs=0.02)
