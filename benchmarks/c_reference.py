"""The C reference loop (``benchmarks/c/godunov_burgers.c``), compiled at benchmark time and called through ctypes.

:func:`compile_reference` builds the shared library with the system C compiler (``$CC`` or ``cc``,
``-O3 -march=native -ffp-contract=off``; the ``relaxed`` build adds ``-fno-trapping-math -fno-signed-zeros``;
the ``fair`` build adds ``-ffinite-math-only -fno-signed-zeros``, the flags with which gcc vectorises the
flux's max/min selects and the running maximum: on finite data they leave every result bitwise unchanged
(the benchmarks check it, run by run), and they delete the NaN tests, so the fair build detects no blow-up) into a cache directory keyed by the source hash, flags and compiler, and returns None with a
reason when there is no compiler.  :class:`CBurgers` solves 1-D and 2-D periodic Burgers with the
same step rule as ``solve_conservation`` so the two results can be compared bitwise.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).resolve().parent / "c" / "godunov_burgers.c"
BASE_FLAGS = ("-O3", "-march=native", "-ffp-contract=off", "-shared", "-fPIC")
BUILDS = {"strict": (), "relaxed": ("-fno-trapping-math", "-fno-signed-zeros"),
          "fair": ("-ffinite-math-only", "-fno-signed-zeros")}


def find_compiler() -> str | None:
    """The C compiler to use: ``$CC`` if set and found, else ``cc``, ``gcc`` or ``clang`` on PATH; None if none."""
    for name in ([os.environ["CC"]] if os.environ.get("CC") else []) + ["cc", "gcc", "clang"]:
        path = shutil.which(name)
        if path:
            return path
    return None


def compiler_version(compiler: str) -> str:
    try:
        out = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.splitlines()[0].strip() if out else "unknown"


@dataclass(frozen=True)
class CompiledReference:
    path: Path
    compiler: str
    flags: tuple[str, ...]
    version: str


def compile_reference(build: str = "strict", cache_dir: str | os.PathLike | None = None) -> tuple[CompiledReference | None, str]:
    """Compile the C source (once per source/flags/compiler) and return ``(library, message)``.

    ``build``: "strict" (``-O3 -march=native``), "relaxed" or "fair" (plus the flags in ``BUILDS``).
    Returns ``(None, reason)`` when no compiler is found or the compilation fails.
    """
    if build not in BUILDS:
        raise ValueError(f"build: expected one of {sorted(BUILDS)}, found {build!r}")
    compiler = find_compiler()
    if compiler is None:
        return None, "no C compiler found (set CC or install cc/gcc/clang): the C reference is skipped"
    flags = BASE_FLAGS + BUILDS[build]
    version = compiler_version(compiler)
    key = hashlib.sha256(SOURCE.read_bytes() + " ".join((compiler, version) + flags).encode()).hexdigest()[:16]
    cache = Path(cache_dir) if cache_dir is not None else Path(tempfile.gettempdir()) / "shockflow-bench-c"
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / f"godunov_burgers_{build}_{key}.so"
    if not target.exists():
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        cmd = [compiler, *flags, "-o", str(tmp), str(SOURCE), "-lm"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            return None, f"C reference did not compile ({' '.join(cmd)}): {proc.stderr.strip()[:500]}"
        os.replace(tmp, target)  # atomic: a half-written library is never picked up
    return CompiledReference(target, compiler, flags, version), f"compiled with {version} {' '.join(flags)}"


#: The C step variants (see the source's header): the index is the code passed to ``solve_1d``/``solve_2d``.
VARIANTS = ("plain", "blocked", "fused")
_D = ctypes.POINTER(ctypes.c_double)
_L = ctypes.c_long


class CBurgers:
    """Periodic first-order Godunov Burgers (forward Euler) in C, ``variant`` one of :data:`VARIANTS`."""

    def __init__(self, library: CompiledReference):
        lib = ctypes.CDLL(str(library.path))
        lib.solve_1d.restype = _L
        lib.solve_1d.argtypes = [_D, _D, _L, _L] + [ctypes.c_double] * 6 + [ctypes.c_int]
        lib.solve_2d.restype = _L
        lib.solve_2d.argtypes = [_D, _D, _L, _L, _L] + [ctypes.c_double] * 8 + [ctypes.c_int, _D]
        self._lib = lib
        self.library = library

    @staticmethod
    def _ptr(a: np.ndarray):
        return a.ctypes.data_as(_D)

    def solve(self, q: np.ndarray, ghost: int, dx: tuple[float, ...], t0: float, t_end: float, *, cfl: float = 0.9,
              a: float = 1.0, variant: str = "plain", work: np.ndarray | None = None,
              rows: np.ndarray | None = None) -> int:
        """Advance the padded C-contiguous field ``q`` in place from ``t0`` to ``t_end``; returns the steps taken.

        ``work`` (same shape as q) and, in 2-D, ``rows`` (3 (ny + 1) doubles) may be passed to
        avoid allocating them per call.  Raises FloatingPointError if the solution stops being finite.
        """
        if variant not in VARIANTS:
            raise ValueError(f"variant: expected one of {VARIANTS}, found {variant!r}")
        if q.dtype != np.float64 or not q.flags.c_contiguous or q.ndim not in (1, 2):
            raise ValueError(f"q: expected a C-contiguous float64 array of 1 or 2 axes, found {q.dtype} {q.shape}")
        work = np.empty_like(q) if work is None else work
        g = int(ghost)
        interior = q[(slice(g, -g),) * q.ndim]
        code = VARIANTS.index(variant)
        if q.ndim == 1:
            rate0 = float(np.max((a / dx[0]) * np.abs(interior)))  # as shockflow's hyperbolic_rate: arate * |q|
            steps = self._lib.solve_1d(self._ptr(q), self._ptr(work), q.shape[0] - 2 * g, g, dx[0], a, cfl, t0, t_end,
                                       rate0, code)
        else:
            nx, ny = q.shape[0] - 2 * g, q.shape[1] - 2 * g
            rows = np.empty(3 * (ny + 1)) if rows is None else rows
            rate0 = float(np.max((a / dx[0] + a / dx[1]) * np.abs(interior)))
            steps = self._lib.solve_2d(self._ptr(q), self._ptr(work), nx, ny, g, dx[0], dx[1], a, a, cfl, t0, t_end,
                                       rate0, code, self._ptr(rows))
        if steps < 0:
            raise FloatingPointError(f"C reference: a non-finite value appeared at step {-steps}")
        return int(steps)
