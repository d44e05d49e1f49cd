"""`shockflow run --no-figures` imports no figure module and not matplotlib (issue 23: a warm run's imports)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.slow
def test_a_run_without_figures_imports_no_figure_module_and_not_matplotlib(tmp_path):
    code = ("import sys\nfrom shockflow.cli import main\n"
            f"code = main(['run', '--quiet', '--no-figures', '--out', {str(tmp_path)!r}])\n"
            "print(code, ' '.join(m for m in sys.modules if m.startswith(('matplotlib', 'shockflow.figures'))))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert out == ["0"], out
    assert (tmp_path / "two-layer-staircase.h5").is_file() and not list(tmp_path.glob("*.png"))
