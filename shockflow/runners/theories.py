"""Reopening a theory result file (``nqf``, ``bbp``, ``scaling``): the run's table and its figures again.

``shockflow show FILE`` on a theory result file prints the table the run printed and redraws its
figures from the file alone (the file keeps the curves behind them,
:mod:`shockflow.storage.theory_results`).  Each theory's case module knows its document:
``reopen(result, path)`` gives the run's outcome object, ``redraw(result, out, stem, options)``
draws and saves its figures.
"""

from __future__ import annotations

import importlib
from pathlib import Path

__all__ = ["is_theory_result", "show_theory_result"]

#: the case module of each theory kind (its ``reopen`` and ``redraw``)
MODULES = {"nqf": "shockflow.nqf.case", "bbp": "shockflow.spectra.case", "scaling": "shockflow.scaling.case"}


def is_theory_result(path) -> bool:
    """True for a file whose root attribute ``format`` names a theory result (any failure: False)."""
    from shockflow.storage.theory_results import THEORY_FORMAT

    try:
        import h5py

        with h5py.File(path, "r") as f:
            return f.attrs.get("format") == THEORY_FORMAT
    except Exception:
        return False


def show_theory_result(path, *, out=None, figures: bool = True, figure_format: str = "png", dpi=None):
    """``(outcome, figure paths)`` of the theory result file ``path`` (figures beside it, or in ``out``)."""
    from types import SimpleNamespace

    from shockflow.storage import ResultFileError
    from shockflow.storage.theory_results import read_theory_result

    result = read_theory_result(path)
    if result.case_kind not in MODULES:
        raise ResultFileError(f"result file {str(path)!r}: case_kind {result.case_kind!r} is not a theory kind "
                              f"({', '.join(MODULES)})")
    module = importlib.import_module(MODULES[result.case_kind])
    outcome = module.reopen(result, Path(path))
    drawn = ()
    if figures:
        target = Path(out) if out is not None else Path(path).parent
        target.mkdir(parents=True, exist_ok=True)
        drawn = module.redraw(result, target, Path(path).stem,
                              SimpleNamespace(figure_format=figure_format, dpi=dpi))
    return outcome, tuple(drawn)
