"""Coupled modes: the block chart of charts whose data matrices do not commute (docs/theory.md §6, "Coupled modes").

**Coupling.**  Two charts k, l of a network are coupled where learning one changes the other's landscape.
Their cross term on the 2-D section through the initial point,

    X_kl = L̄(x*_k, x*_l) − L̄(x*_k, x0_l) − L̄(x0_k, x*_l) + L̄(x0_k, x0_l),

at the charts' starts ``x0`` and minima ``x*``, vanishes where the data matrices commute (the diagonal net on
inputs uncorrelated in the mode basis: L̄ is a sum over modes).  The 2-D section adds the two charts'
displacements from the initial parameters; it is the block's chart only where they move orthogonal parameter
directions, which is checked (automatic charts: orthogonal modes e_k; gram charts of a diagonal net: different
entries).  Measured against the shallower chart's depth ``D = L̄(x0) − L̄(x*)``, ``|X_kl| / min(D_k, D_l)`` is the
fraction of that depth the other mode's learning adds or takes away; at :data:`COUPLING` or more the charts are
coupled, and the blocks are the connected groups of coupled charts.

**The block chart** (two or three charts): the box of the 1-D charts (mirrored charts unfolded to ``[−R, R]``), the
REAL network's loss on its cells, the separable metric ``diag(a_k(x_k))`` of the 1-D charts (flat in
``ρ_k = ∫ dx_k/√a_k``), solved inviscid as the 1-D charts are: with the chart HJ solver on two charts, with the 3-D
Hamilton–Jacobi solver (``½ Σ a_k p_k²``, the same Godunov/ENO2/SSP-RK3 scheme) on three.  ``L̄`` is even in every
chart of a block (checked), so the unfolded box's discrete problem is solved on its positive orthant, with even
mirrors at the walls through 0: the same answer (to rounding, tested) on a 2^d-th of the cells.  Its first shock
is read from the solution: the steepening ``−λ_min(Hess_g u)`` of every snapshot (closed-form eigenvalues of the
2×2 or 3×3 Hessian, mirrored across the walls), ``1/steepening`` extrapolated linearly to zero
(:func:`shockflow.prediction.shock_report.report_hessian`), on two grids and extrapolated in the cell where both
resolve the fit (:func:`solve_block`).  It is
checked against the initial data's ``γ* = −1 / inf λ_min(Hess_g L̄)`` and against the fastest 1-D chart's γ*.

**Why the chain's rates are the block's** (the reduction used for every block, docs/theory.md §6): at the
origin, and at every saddle of the chain, a waiting chart sits at its ridge ``x = 0`` of a mirrored chart, where
L̄ is even in it; the mixed second derivative ``∂_k∂_l L̄`` vanishes there, so the block's Hessian is diagonal and
its eigenvalues are the 1-D charts' curvatures (the chain's κ_l(S)).  The block's first shock is therefore the
fastest chart's, and the chain's rates at a saddle are the block Hessian's there (both measured:
``tests/prediction/test_coupled_modes.py``).  What the block does not change is the chain; what it adds is this
check, from a 2-D or 3-D solve of the coupled landscape.  Blocks of more than :data:`MAX_BLOCK` charts are left to
the reduction (the Hamilton–Jacobi solvers are 1-D to 3-D) and reported as such, naming their charts.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["COUPLING", "BLOCK_CELLS", "MAX_BLOCK", "CoupledBlock", "coupled_blocks", "coupling_matrix", "solve_block",
           "write_blocks", "read_blocks"]

#: charts are coupled when the cross term is at least this fraction of the shallower chart's depth
COUPLING = 0.05
#: cells per axis of a block chart of two and of three charts (and half of it: two grids, extrapolated)
BLOCK_CELLS = {2: 96, 3: 80}
#: most parameter sets evaluated at once on a block's box
BOX_CHUNK = 96 * 96
#: displacements whose cosine exceeds this are not orthogonal: the 2-D section is not the block's chart
ORTHOGONAL = 1e-6
#: the most charts a block chart holds (the Hamilton–Jacobi solvers are 1-D to 3-D)
MAX_BLOCK = 3
#: shocks within this fraction of the box from a wall are wall effects (as on the 1-D charts)
WALL = 0.05


@dataclass(frozen=True)
class CoupledBlock:
    """A group of coupled charts and how it was treated (``method``: ``"block chart"`` or ``"reduction"``)."""

    charts: tuple[str, ...]
    coupling: float                     # the largest |X_kl| / min(D_k, D_l) inside the block
    method: str
    reason: str = ""                    # why a reduction
    gamma_star: float = math.nan        # the block chart's first shock (formation time)
    gamma_hessian: float = math.nan     # −1 / inf λ_min(Hess_g L̄) of its initial data
    gamma_charts: float = math.nan      # the fastest 1-D chart's γ*
    location: tuple = ()                # where the block's first shock forms
    cells: int = 0
    seconds: float = 0.0

    def describe(self) -> str:
        """One line of the run's and the forecast's table."""
        head = f"{'+'.join(self.charts)} (coupling {100 * self.coupling:.0f} %)"
        if self.method != "block chart":
            return f"{head}: no block chart, the saddle chain's rates at each saddle predict them ({self.reason})"
        power = "²" if len(self.charts) == 2 else "³"
        return (f"{head}: block chart {self.cells}{power} γ* = {self.gamma_star:.4g} at "
                f"({', '.join(f'{v:.3g}' for v in self.location)}); Hessian of L̄ {self.gamma_hessian:.4g}, "
                f"fastest 1-D chart {self.gamma_charts:.4g}")

    def as_dict(self) -> dict:
        return {"charts": list(self.charts), "coupling": float(self.coupling), "method": self.method,
                "reason": self.reason, "gamma_star": _num(self.gamma_star), "gamma_hessian": _num(self.gamma_hessian),
                "gamma_charts": _num(self.gamma_charts), "location": [float(v) for v in self.location],
                "cells": int(self.cells), "seconds": float(self.seconds)}


def _num(v):
    return float(v) if math.isfinite(v) else None


# -- the charts' sections -----------------------------------------------------------------------------
@dataclass(eq=False)
class _Section:
    geo: object
    chart: object                       # ChartData
    hi: float                           # the box's far end usable on this geometry
    cache: dict = field(default_factory=dict)

    def coordinate_box(self) -> tuple[float, float]:
        c = self.chart
        return (-self.hi, self.hi) if c.mirrored else (max(c.lower, self.geo.chart.lower[0]), self.hi)

    def start(self) -> float:
        return abs(self.chart.x0) if self.chart.mirrored else float(self.chart.x0)

    def params(self, x: np.ndarray) -> dict:
        """The section's parameters at coordinates ``x`` (``|x|`` on a mirrored chart), leading axis ``x.size``."""
        pts = np.abs(x) if self.chart.mirrored else np.asarray(x, dtype=np.float64)
        return self.geo.section(pts[:, None])

    def mobility(self, x: np.ndarray) -> np.ndarray:
        c = self.chart
        return np.interp(np.abs(x) if c.mirrored else x, c.metric_x, c.metric_a)


def _sections(model, geometry: str, extraction, X, y) -> list[_Section]:
    from shockflow.prediction.extraction import bind_geometry

    out = []
    for c in extraction.charts:
        kw = dict(extraction.geometry_kwargs)
        if c.selector is not None:
            kw[extraction.chart_key] = c.selector
        geo = bind_geometry(geometry, model, kw, X, y)
        need = max(abs(c.upper), abs(c.lower))
        for _ in range(8):   # the extraction may have widened the chart's box
            if geo.chart.upper[0] >= need or not hasattr(geo, "extent"):
                break
            kw["extent"] = 4.0 * float(geo.extent)
            geo = bind_geometry(geometry, model, kw, X, y)
        out.append(_Section(geo, c, min(need, float(geo.chart.upper[0]))))
    return out


def _box_params(model, secs, axes) -> dict:
    """Parameters on the block's section at the grid ``axes[0] × axes[1] × …`` (leading axis the product of the
    sizes, the first axis slowest): the initial parameters plus every chart's displacement."""
    P = [s.params(x) for s, x in zip(secs, axes)]
    shape = tuple(x.size for x in axes)
    out = {}
    for key, ref in model.params.items():
        ref = np.asarray(ref, dtype=np.float64)
        total = ref
        for k, p in enumerate(P):
            d = np.asarray(p[key], dtype=np.float64) - ref
            total = total + d.reshape(*(shape[k] if i == k else 1 for i in range(len(axes))), *ref.shape)
        out[key] = np.broadcast_to(total, (*shape, *ref.shape)).reshape((math.prod(shape), *ref.shape))
    return out


def _pair_params(model, a: _Section, b: _Section, xa: np.ndarray, xb: np.ndarray) -> dict:
    """:func:`_box_params` of two charts at the grid ``xa × xb``."""
    return _box_params(model, (a, b), (xa, xb))


def _box_loss(model, secs, axes, X, y) -> np.ndarray:
    """The real network's loss on the block's grid (shape ``(len(axes[0]), …)``), evaluated in slabs of the first
    axis of at most :data:`BOX_CHUNK` points, so a 3-D box never holds all its parameter sets at once."""
    from shockflow.geometry.batched_loss import batched_loss

    shape = tuple(x.size for x in axes)
    rows = max(1, BOX_CHUNK // math.prod(shape[1:]))
    parts = [batched_loss(model, _box_params(model, secs, (axes[0][i:i + rows], *axes[1:])), X, y)
             for i in range(0, shape[0], rows)]
    return np.concatenate(parts).reshape(shape)


def _displacement(model, s: _Section, x: float) -> np.ndarray:
    P = s.params(np.array([x]))
    return np.concatenate([(np.asarray(P[k], dtype=np.float64)[0] - np.asarray(v, dtype=np.float64)).ravel()
                           for k, v in model.params.items()])


def _orthogonal(model, a: _Section, b: _Section) -> bool:
    da = _displacement(model, a, abs(a.chart.x_min) if a.chart.mirrored else a.chart.x_min)
    db = _displacement(model, b, abs(b.chart.x_min) if b.chart.mirrored else b.chart.x_min)
    na, nb = np.linalg.norm(da), np.linalg.norm(db)
    return bool(na > 0 and nb > 0 and abs(da @ db) <= ORTHOGONAL * na * nb)


def _even(model, a: _Section, b: _Section, X, y) -> bool:
    """Whether L̄ on the 2-D section is even in each chart's coordinate (a mirrored chart's sign is a symmetry of
    the pair, not only of the chart alone): the loss with one chart's point mirrored (its section reflected about
    the section's zero, exact for affine sections), at three points of the quadrant, equals the loss without (to
    rounding, relative to the shallower depth)."""
    from shockflow.geometry.batched_loss import batched_loss

    xa = np.array([0.5, 1.0, 1.0]) * abs(a.chart.x_min)
    xb = np.array([1.0, 0.5, 1.0]) * abs(b.chart.x_min)
    Pa, Pb = a.params(np.concatenate([xa, [0.0]])), b.params(np.concatenate([xb, [0.0]]))
    sets = {key: [] for key in model.params}
    for sa, sb in ((False, False), (True, False), (False, True)):
        for key, ref in model.params.items():
            ref = np.asarray(ref, dtype=np.float64)
            da, db = np.asarray(Pa[key]) - ref[None], np.asarray(Pb[key]) - ref[None]
            # the mirror image of a chart's point: the reflection of its section about the section's zero
            da = 2.0 * da[3:] - da[:3] if sa else da[:3]
            db = 2.0 * db[3:] - db[:3] if sb else db[:3]
            sets[key].append(ref[None] + da + db)
    L = batched_loss(model, {k: np.concatenate(v) for k, v in sets.items()}, X, y).reshape(3, 3)
    base = batched_loss(model, _pair_params(model, a, b, np.array([a.start()]), np.array([b.start()])), X, y)[0]
    depth = max(base - float(np.min(L)), 1e-300)
    return bool(np.max(np.abs(L[1:] - L[0])) <= 1e-8 * abs(base) + 1e-6 * depth)


def coupling_matrix(model, geometry: str, extraction, X, y, sections=None) -> tuple[np.ndarray, np.ndarray]:
    """``(C, orthogonal)``: ``C[k, l] = |X_kl| / min(D_k, D_l)`` (module docstring; 0 on the diagonal and where a
    chart has no depth) and whether
    the two charts' sections move orthogonal parameter directions."""
    from shockflow.geometry.batched_loss import batched_loss

    secs = _sections(model, geometry, extraction, X, y) if sections is None else sections
    n = len(secs)
    C, ortho = np.zeros((n, n)), np.ones((n, n), dtype=bool)
    for k in range(n):
        for l in range(k + 1, n):
            a, b = secs[k], secs[l]
            xa = np.array([a.start(), abs(a.chart.x_min) if a.chart.mirrored else a.chart.x_min])
            xb = np.array([b.start(), abs(b.chart.x_min) if b.chart.mirrored else b.chart.x_min])
            L = batched_loss(model, _pair_params(model, a, b, xa, xb), X, y).reshape(2, 2)
            cross = L[1, 1] - L[1, 0] - L[0, 1] + L[0, 0]
            depth = min(L[0, 0] - L[1, 0], L[0, 0] - L[0, 1])
            C[k, l] = C[l, k] = abs(cross) / depth if depth > 0 else 0.0   # no depth: nothing to couple
            ortho[k, l] = ortho[l, k] = _orthogonal(model, a, b)
    return C, ortho


def _groups(C: np.ndarray) -> list[list[int]]:
    """Connected components of ``C >= COUPLING`` with two or more charts."""
    n = C.shape[0]
    seen, out = set(), []
    for s in range(n):
        if s in seen:
            continue
        stack, part = [s], []
        seen.add(s)
        while stack:
            k = stack.pop()
            part.append(k)
            for l in np.flatnonzero(C[k] >= COUPLING):
                if int(l) not in seen:
                    seen.add(int(l))
                    stack.append(int(l))
        if len(part) > 1:
            out.append(sorted(part))
    return out


# -- the block chart ----------------------------------------------------------------------------------
def _centres(lo: float, hi: float, cells: int) -> np.ndarray:
    h = (hi - lo) / cells
    return lo + h * (np.arange(cells) + 0.5)


def _lowest_eigenvalue(H: np.ndarray) -> np.ndarray:
    """The smallest eigenvalue of each symmetric 2×2 or 3×3 matrix of ``H`` (shape ``(..., n, n)``), in closed
    form (the trigonometric solution of the characteristic cubic in 3-D): a field of them at every snapshot."""
    if H.shape[-1] == 2:
        a, b, c = H[..., 0, 0], H[..., 1, 1], H[..., 0, 1]
        return 0.5 * (a + b) - np.sqrt(0.25 * (a - b) ** 2 + c ** 2)
    a, b, c = H[..., 0, 0], H[..., 1, 1], H[..., 2, 2]
    d, e, f = H[..., 0, 1], H[..., 1, 2], H[..., 0, 2]
    q = (a + b + c) / 3.0
    p2 = ((a - q) ** 2 + (b - q) ** 2 + (c - q) ** 2 + 2.0 * (d * d + e * e + f * f)) / 6.0
    p = np.sqrt(p2)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(p > 0, 1.0 / p, 0.0)
        # det((H − q I) / p) / 2 = cos(3φ), clipped against rounding
        A, B, C, D, E, F = (a - q) * s, (b - q) * s, (c - q) * s, d * s, e * s, f * s
        r = np.clip(0.5 * (A * (B * C - E * E) - D * (D * C - E * F) + F * (D * E - B * F)), -1.0, 1.0)
    return q + 2.0 * p * np.cos(np.arccos(r) / 3.0 + 2.0 * math.pi / 3.0)


def _hessian_probe(u: np.ndarray, axes, roots, cut: int):
    """Probe of ``Hess_g u`` for the separable metric (``√a_k ∂_k(√a_l ∂_l u)``, symmetrised) on the positive
    orthant of the unfolded box: ``u`` on ``axes`` (centres in ``(0, R_k)``), even in every coordinate, is mirrored
    across the walls at 0 for the differences there; the cells within ``cut`` of the far walls are left out.
    ``roots[k] = √a_k`` on axis k's centres."""
    from shockflow.prediction.shock_report import HessianProbe

    nd, g = u.ndim, 2                                  # two mirrored cells: the second differences at the wall
    dx = [float(x[1] - x[0]) for x in axes]
    full = np.pad(u, [(g, 0)] * nd, mode="symmetric")
    rts = [np.concatenate([r[g - 1::-1], r]) for r in roots]

    def along(v, k):                       # a 1-D field of axis k, broadcast over the box
        return v.reshape(*(v.size if i == k else 1 for i in range(nd)))

    grads = np.gradient(full, *dx, edge_order=2)
    p = [along(rts[k], k) * grads[k] for k in range(nd)]         # the flat-coordinate gradient √a ∂u
    core = tuple(slice(g, n - cut) for n in full.shape)
    H = np.empty(tuple(n - g - cut for n in full.shape) + (nd, nd))
    for k in range(nd):
        for l in range(k, nd):
            H[..., k, l] = H[..., l, k] = 0.5 * (
                (along(rts[k], k) * np.gradient(p[l], dx[k], axis=k, edge_order=2))[core]
                + (along(rts[l], l) * np.gradient(p[k], dx[l], axis=l, edge_order=2))[core])
    lam = _lowest_eigenvalue(H)
    index = np.unravel_index(int(np.argmin(lam)), lam.shape)
    # p_k is odd in x_k: its range over the unfolded box is twice its largest size here, and its jumps include
    # the one across the mirror wall (one mirrored cell kept)
    p_range = max(2.0 * float(np.max(np.abs(v[core]))) for v in p)
    across = tuple(slice(g - 1, n - cut) for n in full.shape)
    jump = max(float(np.max(np.abs(np.diff(v[across], axis=k)))) for k, v in enumerate(p))
    h = max(d / max(float(r[i]), 1e-300) for d, r, i in zip(dx, roots, index))     # the cell there, in ρ
    return HessianProbe(float(lam[index]), tuple(float(x[i]) for x, i in zip(axes, index)), p_range, jump, h)


def _solve_box(upper, cells, u0, times, secs, cfl):
    """The inviscid chart HJ solve on the block's positive orthant ``[0, R_k]`` (``cells`` per axis), metric
    ``diag(a_k(x_k))``, even mirrors at the walls through 0 (``L̄`` is even in every chart, so this is the unfolded
    box's discrete problem on a 2^d-th of its cells) and outflow at the far walls: the chart solver on two charts,
    the 3-D Hamilton–Jacobi solver (``½ Σ a_k p_k²``, the same Godunov/ENO2/SSP-RK3 scheme) on three."""
    from solvers.grid import Grid

    nd = len(secs)
    grid = Grid((0.0,) * nd, tuple(upper), (cells,) * nd, 3)
    boundary = [("symmetric", "outflow")] * nd
    if nd == 2:
        from solvers.charts import solve_chart_hj

        a, b = secs

        def mobility(x0, x1):
            return a.mobility(x0), np.zeros_like(x0), b.mobility(x1)

        return solve_chart_hj(grid, u0, times, mobility=mobility, nu=0.0, boundary=boundary, cfl=cfl).u
    from solvers.hamilton_jacobi import solve_hj

    a = np.stack([s.mobility(x) for s, x in zip(secs, grid.mesh())])
    return solve_hj(grid, u0, times, a=a, nu=0.0, boundary=boundary, cfl=cfl).u


def _block_shock(model, secs, X, y, cells: int, horizon: float, snapshots: int, cfl: float,
                 scale_hint: float) -> tuple[float, float, tuple]:
    """One grid of the block chart, ``cells`` per axis of the unfolded box (even), solved on its positive orthant:
    ``(formation time, −1/inf λ_min(Hess_g u0), location of the first shock)``."""
    from shockflow.prediction.shock_report import report_hessian

    upper = [s.coordinate_box()[1] for s in secs]
    axes = [_centres(0.0, hi, cells // 2) for hi in upper]
    u0 = _box_loss(model, secs, axes, X, y)
    if not np.all(np.isfinite(u0)):
        raise FloatingPointError("the loss is not finite on the block chart's box")
    roots = [np.sqrt(s.mobility(x)) for s, x in zip(secs, axes)]
    cut = max(int(WALL * cells), 1)
    first = _hessian_probe(u0, axes, roots, cut)
    gamma_h = -1.0 / first.lam_min if first.lam_min < 0 else math.inf
    times = np.linspace(0.0, horizon * (gamma_h if math.isfinite(gamma_h) else scale_hint), snapshots)
    u = _solve_box(upper, cells // 2, u0, times, secs, cfl)
    report = report_hessian(times, [_hessian_probe(v, axes, roots, cut) for v in u])
    loc = report.shocks[0].location if report.shocks else first.location
    return float(report.formation_time), float(gamma_h), tuple(float(v) for v in loc), int(report.fit_points)


def solve_block(model, secs, X, y, *, gamma_charts: float, cells: int | None = None,
                horizon: float = 1.5, snapshots: int = 41, cfl: float = 0.5) -> dict:
    """The block chart of two or three charts (module docstring) on ``cells/2`` and ``cells`` cells per axis
    (default :data:`BLOCK_CELLS`).  The first shock's formation time is extrapolated from the two (first order:
    ``2 γ(h) − γ(2h)``) where both grids resolve the steepening fit (at least two snapshots whose profile spans
    the report's resolved width); where the coarse grid does not, the fine grid's time is the answer (an
    extrapolation from an unresolved grid is no estimate).  The Hessian check is the finer grid's.
    ``{"gamma_star", "gamma_hessian", "location", "grids"}``, ``grids`` holding ``(cells, time, fit points)``."""
    cells = BLOCK_CELLS[len(secs)] if cells is None else cells
    coarse = _block_shock(model, secs, X, y, cells // 2, horizon, snapshots, cfl, gamma_charts)
    fine = _block_shock(model, secs, X, y, cells, horizon, snapshots, cfl, gamma_charts)
    resolved = coarse[3] >= 2 and fine[3] >= 2 and math.isfinite(fine[0]) and math.isfinite(coarse[0])
    gamma = 2.0 * fine[0] - coarse[0] if resolved else fine[0]
    return {"gamma_star": float(gamma), "gamma_hessian": fine[1], "location": fine[2],
            "grids": ((cells // 2, coarse[0], coarse[3]), (cells, fine[0], fine[3]))}


def _why_not_a_block(model, part, secs, shocks, ortho, labels, X, y) -> str:
    """Why the block ``part`` is left to the reduction, or ``""`` where its block chart applies."""
    if len(part) > MAX_BLOCK:
        return f"{len(part)} coupled charts: block charts are solved up to {MAX_BLOCK}-D (docs/theory.md §6)"
    flat = [labels[i] for i, k in enumerate(part) if not math.isfinite(shocks[k].gamma_star)]
    if flat:
        return "a degenerate ridge (no shock: the escape integral) on " + ", ".join(flat)
    pairs = [(i, j) for i in range(len(part)) for j in range(i + 1, len(part))]
    for i, j in pairs:
        if not ortho[part[i], part[j]]:
            return (f"the sections of {labels[i]} and {labels[j]} do not move orthogonal parameter directions: "
                    "their sum is not a chart of the block")
    if not all(secs[k].chart.mirrored for k in part):
        return "a chart with a signed coordinate: the block chart is built on mirrored charts (a ridge at the mirror point)"
    for i, j in pairs:
        if not _even(model, secs[part[i]], secs[part[j]], X, y):
            return (f"L̄ on the section of {labels[i]} and {labels[j]} is not even in each chart's coordinate (one "
                    "mode's sign against the other's matters): the unfolded block is not its chart")
    return ""


def coupled_blocks(model, geometry: str, extraction, shocks, X, y) -> tuple[CoupledBlock, ...]:
    """Every block of coupled charts, each solved as a 2-D or 3-D block chart or left to the reduction (module
    docstring)."""
    n = len(extraction.charts)
    if n < 2:
        return ()
    secs = _sections(model, geometry, extraction, X, y)
    C, ortho = coupling_matrix(model, geometry, extraction, X, y, sections=secs)
    out = []
    for part in _groups(C):
        labels = tuple(extraction.charts[k].label for k in part)
        inner = C[np.ix_(part, part)]
        coupling = float(np.max(inner[np.isfinite(inner)])) if np.any(np.isfinite(inner)) else math.inf
        gamma_charts = float(min(shocks[k].gamma_star for k in part))
        reason = _why_not_a_block(model, part, secs, shocks, ortho, labels, X, y)
        if reason:
            out.append(CoupledBlock(labels, coupling, "reduction", reason=reason, gamma_charts=gamma_charts))
            continue
        start = time.perf_counter()
        solved = solve_block(model, [secs[k] for k in part], X, y, gamma_charts=gamma_charts)
        out.append(CoupledBlock(labels, coupling, "block chart", gamma_star=solved["gamma_star"],
                                gamma_hessian=solved["gamma_hessian"], gamma_charts=gamma_charts,
                                location=solved["location"], cells=BLOCK_CELLS[len(part)],
                                seconds=time.perf_counter() - start))
    return tuple(out)


# -- result files -------------------------------------------------------------------------------------
def write_blocks(f, blocks) -> None:
    """The blocks as the JSON attribute ``blocks`` of the group ``coupled`` (docs/result-file.md)."""
    import json

    g = f.require_group("coupled")
    g.attrs["blocks"] = json.dumps([b.as_dict() for b in blocks])


def read_blocks(f) -> list[dict]:
    import json

    return json.loads(f["coupled"].attrs["blocks"]) if "coupled" in f else []
