"""What a command imports is what it uses (issue 23): the heavy libraries are imported where they are used.

Each check runs in a fresh interpreter and lists ``sys.modules`` afterwards, so an eager import anywhere in
the chain (a package ``__init__`` that imports its solvers, a module that imports matplotlib at the top)
makes it fail.
"""

from __future__ import annotations

import subprocess
import sys

import pytest


def _modules_after(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                          check=True, capture_output=True, text=True, timeout=120)
    return set(done.stdout.split())


def test_validating_a_case_imports_neither_matplotlib_nor_scipy_optimize():
    modules = _modules_after("from shockflow.cli import main\n"
                             "assert main(['validate', 'two-layer-staircase', '--quiet']) == 0")
    assert not {m for m in modules if m.split(".")[0] == "matplotlib"}
    assert "scipy.optimize" not in modules


def test_the_run_module_imports_no_figure_library_no_optimiser_and_no_conservation_solver():
    modules = _modules_after("import shockflow.runners.prediction")
    heavy = {"matplotlib", "scipy.optimize", "scipy.sparse", "solvers.conservation.solver", "solvers.exact.hopf_cole"}
    assert heavy & modules == set()


def test_the_blas_thread_count_reads_the_thread_policy_without_importing_the_conservation_solver():
    modules = _modules_after("from shockflow.blas_threads import blas_thread_limit\nblas_thread_limit()")
    assert "solvers.conservation.thread_policy" in modules
    assert {"solvers.conservation.solver", "solvers.conservation.kernels", "numba", "scipy"} & modules == set()


@pytest.mark.parametrize("name, h5py", [("atomic_path", False), ("confine_writes", False), ("read_result", True),
                                        ("open_hdf5", True)])
def test_storage_imports_h5py_only_for_reading_and_writing_files(name, h5py):
    modules = _modules_after(f"import shockflow.storage\nshockflow.storage.{name}")
    assert ("h5py" in modules) is h5py


def test_the_figure_package_imports_matplotlib_only_when_a_figure_is_drawn():
    assert "matplotlib" not in _modules_after("import shockflow.figures")
    assert "matplotlib.figure" in _modules_after("import shockflow.figures\nshockflow.figures.new_figure(2, 2)")


def test_lazy_package_attributes_are_the_submodules_objects():
    code = ("import solvers.conservation as c, shockflow.storage as s\n"
            "from solvers.conservation.solver import solve_conservation\n"
            "from shockflow.storage.results import read_result\n"
            "assert c.solve_conservation is solve_conservation and s.read_result is read_result\n"
            "assert 'solve_conservation' in dir(c) and 'write_result' in dir(s)\n"
            "for m, n in ((c, 'nothing_here'), (s, 'nothing_here')):\n"
            "    try:\n        getattr(m, n)\n    except AttributeError:\n        pass\n"
            "    else:\n        raise SystemExit(f'{m.__name__}.{n} exists')\n")
    _modules_after(code)
