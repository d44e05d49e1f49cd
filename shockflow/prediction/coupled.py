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

**The block chart** (two charts): the box of the two 1-D charts (mirrored charts unfolded to ``[−R, R]``), the
REAL network's loss on its cells, the separable metric ``diag(a_k(x_k), a_l(x_l))`` of the 1-D charts (flat in
``ρ_k = ∫ dx_k/√a_k``), solved inviscid with the chart HJ solver as the 1-D charts are.  Its first shock is read
from the solution: the steepening ``−λ_min(Hess_g u)`` of every snapshot, ``1/steepening`` extrapolated linearly
to zero (:func:`shockflow.prediction.shock_report.report_hessian`).  It is checked against the initial data's
``γ* = −1 / inf λ_min(Hess_g L̄)`` and against the fastest 1-D chart's γ*.

**Why the chain's rates are the block's** (the reduction used for every block, docs/theory.md §6): at the
origin, and at every saddle of the chain, a waiting chart sits at its ridge ``x = 0`` of a mirrored chart, where
L̄ is even in it; the mixed second derivative ``∂_k∂_l L̄`` vanishes there, so the block's Hessian is diagonal and
its eigenvalues are the 1-D charts' curvatures (the chain's κ_l(S)).  The block's first shock is therefore the
fastest chart's, and the chain's rates at a saddle are the block Hessian's there (both measured:
``tests/prediction/test_coupled_modes.py``).  What the block does not change is the chain; what it adds is this
check, from a 2-D solve of the coupled landscape.  Blocks of more than two charts are left to the reduction (the
chart solvers are 1-D and 2-D) and reported as such, naming their charts.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["COUPLING", "BLOCK_CELLS", "CoupledBlock", "coupled_blocks", "coupling_matrix", "solve_block",
           "write_blocks", "read_blocks"]

#: charts are coupled when the cross term is at least this fraction of the shallower chart's depth
COUPLING = 0.05
#: cells per axis of a block chart
BLOCK_CELLS = 96   # and half of it: two grids, extrapolated
#: displacements whose cosine exceeds this are not orthogonal: the 2-D section is not the block's chart
ORTHOGONAL = 1e-6
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
            return f"{head}: the chain's reduction ({self.reason})"
        return (f"{head}: block chart {self.cells}² γ* = {self.gamma_star:.4g} at "
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


def _pair_params(model, a: _Section, b: _Section, xa: np.ndarray, xb: np.ndarray) -> dict:
    """Parameters on the 2-D section at the grid ``xa × xb`` (leading axis ``xa.size * xb.size``, ``xa`` slowest):
    the initial parameters plus both charts' displacements."""
    Pa, Pb = a.params(xa), b.params(xb)
    out = {}
    for key, ref in model.params.items():
        ref = np.asarray(ref, dtype=np.float64)
        da = np.asarray(Pa[key], dtype=np.float64) - ref
        db = np.asarray(Pb[key], dtype=np.float64) - ref
        both = ref[None, None] + da[:, None] + db[None, :]
        out[key] = both.reshape((xa.size * xb.size, *ref.shape))
    return out


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


def _hessian_probe(u: np.ndarray, x: np.ndarray, y: np.ndarray, sa: np.ndarray, sb: np.ndarray, cut: tuple):
    """Probe of ``Hess_g u`` for the separable metric (``√a_k ∂_k(√a_l ∂_l u)``) on the cells away from the walls."""
    from shockflow.prediction.shock_report import HessianProbe

    hx, hy = float(x[1] - x[0]), float(y[1] - y[0])
    ux, uy = np.gradient(u, hx, hy, edge_order=2)
    px, py = sa[:, None] * ux, sb[None, :] * uy            # the flat-coordinate gradient √a ∂u
    Hxx = sa[:, None] * np.gradient(px, hx, axis=0, edge_order=2)
    Hyy = sb[None, :] * np.gradient(py, hy, axis=1, edge_order=2)
    Hxy = 0.5 * (sa[:, None] * np.gradient(py, hx, axis=0, edge_order=2)
                 + sb[None, :] * np.gradient(px, hy, axis=1, edge_order=2))
    lam = 0.5 * (Hxx + Hyy) - np.sqrt(0.25 * (Hxx - Hyy) ** 2 + Hxy ** 2)
    inner = lam[cut[0]:lam.shape[0] - cut[0], cut[1]:lam.shape[1] - cut[1]]
    i, j = np.unravel_index(int(np.argmin(inner)), inner.shape)
    i, j = i + cut[0], j + cut[1]
    core = (slice(cut[0], u.shape[0] - cut[0]), slice(cut[1], u.shape[1] - cut[1]))
    p_range = max(float(np.ptp(px[core])), float(np.ptp(py[core])))
    jump = max(float(np.max(np.abs(np.diff(px[core], axis=0)))), float(np.max(np.abs(np.diff(py[core], axis=1)))))
    h = max(hx / max(float(sa[i]), 1e-300), hy / max(float(sb[j]), 1e-300))   # the cell there, in ρ
    return HessianProbe(float(lam[i, j]), (float(x[i]), float(y[j])), p_range, jump, h)


def _block_shock(model, a: _Section, b: _Section, X, y, cells: int, horizon: float, snapshots: int, cfl: float,
                 scale_hint: float) -> tuple[float, float, tuple]:
    """One grid of the block chart: ``(formation time, −1/inf λ_min(Hess_g u0), location of the first shock)``."""
    from shockflow.geometry.batched_loss import batched_loss
    from shockflow.prediction.shock_report import report_hessian
    from solvers.charts import solve_chart_hj
    from solvers.grid import Grid

    (la, ha), (lb, hb) = a.coordinate_box(), b.coordinate_box()
    xa, xb = _centres(la, ha, cells), _centres(lb, hb, cells)
    u0 = batched_loss(model, _pair_params(model, a, b, xa, xb), X, y).reshape(cells, cells)
    if not np.all(np.isfinite(u0)):
        raise FloatingPointError("the loss is not finite on the block chart's box")
    sa, sb = np.sqrt(a.mobility(xa)), np.sqrt(b.mobility(xb))

    def mobility(x0, x1):
        A00 = np.interp(np.abs(x0) if a.chart.mirrored else x0, a.chart.metric_x, a.chart.metric_a)
        A11 = np.interp(np.abs(x1) if b.chart.mirrored else x1, b.chart.metric_x, b.chart.metric_a)
        return A00, np.zeros_like(A00), A11

    cut = (max(int(WALL * cells), 1), max(int(WALL * cells), 1))
    first = _hessian_probe(u0, xa, xb, sa, sb, cut)
    gamma_h = -1.0 / first.lam_min if first.lam_min < 0 else math.inf
    times = np.linspace(0.0, horizon * (gamma_h if math.isfinite(gamma_h) else scale_hint), snapshots)
    sol = solve_chart_hj(Grid((la, lb), (ha, hb), (cells, cells), 3), u0, times, mobility=mobility, nu=0.0,
                         boundary="outflow", cfl=cfl)
    report = report_hessian(times, [_hessian_probe(u, xa, xb, sa, sb, cut) for u in sol.u])
    loc = report.shocks[0].location if report.shocks else first.location
    return float(report.formation_time), float(gamma_h), tuple(abs(v) if s.chart.mirrored else v
                                                               for v, s in zip(loc, (a, b)))


def solve_block(model, a: _Section, b: _Section, X, y, *, gamma_charts: float, cells: int = BLOCK_CELLS,
                horizon: float = 1.5, snapshots: int = 41, cfl: float = 0.5) -> dict:
    """The block chart of two charts (module docstring) on ``cells/2`` and ``cells`` cells per axis; the first
    shock's formation time is extrapolated from the two (first order: ``2 γ(h) − γ(2h)``), the Hessian check is the
    finer grid's.  ``{"gamma_star", "gamma_hessian", "location", "grids"}``."""
    coarse = _block_shock(model, a, b, X, y, cells // 2, horizon, snapshots, cfl, gamma_charts)
    fine = _block_shock(model, a, b, X, y, cells, horizon, snapshots, cfl, gamma_charts)
    gamma = 2.0 * fine[0] - coarse[0] if math.isfinite(fine[0]) and math.isfinite(coarse[0]) else fine[0]
    return {"gamma_star": float(gamma), "gamma_hessian": fine[1], "location": fine[2],
            "grids": ((cells // 2, coarse[0]), (cells, fine[0]))}


def coupled_blocks(model, geometry: str, extraction, shocks, X, y) -> tuple[CoupledBlock, ...]:
    """Every block of coupled charts, each solved as a 2-D block chart or left to the reduction (module docstring)."""
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
        if len(part) > 2:
            out.append(CoupledBlock(labels, coupling, "reduction", gamma_charts=gamma_charts,
                                    reason=f"{len(part)} coupled charts: the chart solvers are 1-D and 2-D; the saddle "
                                           "chain's rates at each saddle (docs/theory.md §6) are used"))
            continue
        k, l = part
        if not all(math.isfinite(shocks[i].gamma_star) for i in part):
            out.append(CoupledBlock(labels, coupling, "reduction", gamma_charts=gamma_charts,
                                    reason="a degenerate ridge (no shock: the escape integral) on "
                                           + ", ".join(labels[i] for i, j in enumerate(part)
                                                       if not math.isfinite(shocks[j].gamma_star))))
            continue
        if not ortho[k, l]:
            out.append(CoupledBlock(labels, coupling, "reduction", gamma_charts=gamma_charts,
                                    reason="the two charts' sections do not move orthogonal parameter directions: "
                                           "their sum is not a chart of the block"))
            continue
        if not (extraction.charts[k].mirrored and extraction.charts[l].mirrored):
            out.append(CoupledBlock(labels, coupling, "reduction", gamma_charts=gamma_charts,
                                    reason="a chart with a signed coordinate: the block chart is built on mirrored "
                                           "charts (a ridge at the mirror point)"))
            continue
        if not _even(model, secs[k], secs[l], X, y):
            out.append(CoupledBlock(labels, coupling, "reduction", gamma_charts=gamma_charts,
                                    reason="L̄ on the pair's section is not even in each chart's coordinate (one "
                                           "mode's sign against the other's matters): the unfolded block is not "
                                           "its chart"))
            continue
        start = time.perf_counter()
        solved = solve_block(model, secs[k], secs[l], X, y, gamma_charts=gamma_charts)
        out.append(CoupledBlock(labels, coupling, "block chart", gamma_star=solved["gamma_star"],
                                gamma_hessian=solved["gamma_hessian"], gamma_charts=gamma_charts,
                                location=solved["location"], cells=BLOCK_CELLS, seconds=time.perf_counter() - start))
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
