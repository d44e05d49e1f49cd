"""Convex flux functions f(q) of scalar conservation laws q_t + div(a(x) f(q)) = ... (docs/theory.md §1, §5).

A :class:`ConvexFlux` carries ``f`` and ``f'`` as Numba-compiled scalar functions and the
*sonic point* ``q_s``, the minimiser of ``f`` (where ``f'(q_s) = 0``).  For a convex ``f`` the
exact Godunov flux only needs ``f`` and ``q_s`` (see :mod:`solvers.conservation.numerical_fluxes`).
Burgers' flux ``f = q^2/2`` (``q_s = 0``) is built in as :data:`BURGERS`.

How a flux reaches the compiled kernels
---------------------------------------
Numba cannot cache a function that takes another compiled function as an argument (the
argument's type is tied to the object identity, so every process misses the cache) nor a
closure over one.  The kernels therefore call the flux through *module-level names*
(``flux_value``, ``flux_derivative``, ``SONIC`` in :mod:`solvers.conservation.numerical_fluxes`), bound to
Burgers' flux: the Burgers path is compiled once and cached on disk.  A user flux is served by
:func:`recompile_with`, which rebuilds the *same source* of every kernel with those global names
rebound to the user's compiled functions.  That build is not cacheable; it happens once per
flux object per process (memoised by the caller) and the user's ``f`` is inlined like
Burgers', so a user flux runs as fast as the built-in one after its first compile.

User fluxes
-----------
``ConvexFlux.from_functions("quartic", f=lambda q: q**4 / 4, df=lambda q: q**3, sonic=0.0)``
compiles plain Python functions with ``numba.njit`` (or accepts already compiled ones).  A
monotone convex flux has no minimiser: give as ``sonic`` any finite value below (for increasing
``f``, e.g. ``f = e^q``) or above (decreasing ``f``) every value the solution will take; the
Godunov and Engquist–Osher fluxes are then exactly upwind.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass

import numba
import numpy as np

from solvers.errors import SolverInputError


@numba.njit(cache=True)
def burgers_value(q):
    """Burgers' flux f(q) = q^2 / 2."""
    return 0.5 * q * q


@numba.njit(cache=True)
def burgers_derivative(q):
    """f'(q) = q."""
    return q


@dataclass(frozen=True)
class ConvexFlux:
    """A convex scalar flux: ``f`` and ``df`` are Numba-compiled scalar functions, ``sonic`` minimises ``f``."""

    name: str
    f: object
    df: object
    sonic: float
    builtin: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise SolverInputError(f"flux name: expected a non-empty string, found {self.name!r}")
        for arg in ("f", "df"):
            if not isinstance(getattr(self, arg), numba.core.registry.CPUDispatcher):
                raise SolverInputError(
                    f"flux {arg}: expected a numba.njit-compiled scalar function, found {type(getattr(self, arg)).__name__}"
                )
        if not math.isfinite(float(self.sonic)):
            raise SolverInputError(
                f"flux sonic: expected a finite minimiser of f (for a monotone flux a value beyond the data range), "
                f"found {self.sonic!r}"
            )
        object.__setattr__(self, "sonic", float(self.sonic))

    @classmethod
    def from_functions(cls, name: str, f, df, sonic: float, *, check_range=(-2.0, 2.0)) -> "ConvexFlux":
        """A flux from Python (or compiled) scalar functions ``f`` and ``df``; checks convexity on ``check_range``.

        The check samples ``df`` on 65 points of ``check_range`` (shifted to contain ``sonic``)
        and requires it to be finite and non-decreasing, with ``f(sonic)`` the smallest sampled
        value of ``f`` when ``sonic`` lies strictly inside.
        """
        f_c, df_c = _compiled("f", f), _compiled("df", df)
        flux = cls(name, f_c, df_c, sonic)
        lo, hi = float(check_range[0]), float(check_range[1])
        lo, hi = min(lo, flux.sonic - 1.0), max(hi, flux.sonic + 1.0)
        x = np.linspace(lo, hi, 65)
        fv = np.array([f_c(v) for v in x])
        dv = np.array([df_c(v) for v in x])
        if not (np.isfinite(fv).all() and np.isfinite(dv).all()):
            raise SolverInputError(f"flux {name!r}: f or df is not finite on [{lo}, {hi}]")
        if (np.diff(dv) < -1e-12 * np.maximum(1.0, np.abs(dv[1:]))).any():
            i = int(np.argmax(np.diff(dv) < 0))
            raise SolverInputError(
                f"flux {name!r}: expected a convex flux (df non-decreasing), found df({x[i]:.4g}) = {dv[i]:.6g} "
                f"> df({x[i + 1]:.4g}) = {dv[i + 1]:.6g}"
            )
        fs = f_c(flux.sonic)
        if fv.min() < fs - 1e-12 * max(1.0, abs(fs)) and dv.min() < 0 < dv.max():
            raise SolverInputError(
                f"flux {name!r}: sonic = {flux.sonic} is not the minimiser of f (f there is {fs:.6g}, "
                f"but f({x[int(np.argmin(fv))]:.4g}) = {fv.min():.6g})"
            )
        return flux

    def value(self, q):
        """f(q) for a NumPy array (reference evaluation, element by element)."""
        q = np.asarray(q, dtype=np.float64)
        if self.builtin:
            return 0.5 * q * q
        return np.vectorize(self.f, otypes=[np.float64])(q)

    def derivative(self, q):
        """f'(q) for a NumPy array."""
        q = np.asarray(q, dtype=np.float64)
        if self.builtin:
            return q.copy()
        return np.vectorize(self.df, otypes=[np.float64])(q)


def _compiled(name: str, func):
    if isinstance(func, numba.core.registry.CPUDispatcher):
        return func
    if not isinstance(func, types.FunctionType):
        raise SolverInputError(
            f"flux {name}: expected a Python function of one float (or a numba.njit one), found {type(func).__name__}; "
            "wrap NumPy ufuncs, e.g. lambda q: math.exp(q)"
        )
    return numba.njit(func)


#: Burgers' flux f = q^2/2, the built-in (cached) flux.
BURGERS = ConvexFlux("burgers", burgers_value, burgers_derivative, 0.0, builtin=True)

#: Built-in fluxes by name.
FLUXES: dict[str, ConvexFlux] = {"burgers": BURGERS}


def get_flux(spec) -> ConvexFlux:
    """A :class:`ConvexFlux` from a built-in name or a ConvexFlux object."""
    if isinstance(spec, ConvexFlux):
        return spec
    if isinstance(spec, str):
        if spec not in FLUXES:
            raise SolverInputError(
                f"flux: unknown flux {spec!r}; valid built-in fluxes are {', '.join(map(repr, sorted(FLUXES)))} "
                "(or pass a ConvexFlux, e.g. ConvexFlux.from_functions(...))"
            )
        return FLUXES[spec]
    raise SolverInputError(f"flux: expected a flux name or a ConvexFlux, found {type(spec).__name__}")


def recompile_with(dispatcher, overrides: dict):
    """Compile the source of ``dispatcher`` again with some of its global names rebound (not cached).

    ``overrides`` maps global names (functions, constants) to their replacements; names the
    function does not use are ignored.  This is how a user flux or source reaches kernels written
    against the built-in names (see the module docstring).
    """
    py = dispatcher.py_func
    namespace = dict(py.__globals__)
    namespace.update(overrides)
    clone = types.FunctionType(py.__code__, namespace, py.__name__, py.__defaults__, py.__closure__)
    clone.__qualname__ = py.__qualname__
    clone.__module__ = py.__module__
    return numba.njit(clone)
