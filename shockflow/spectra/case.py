"""The ``bbp`` case kind: docs/theory.md §3 from a case file (``shockflow run CASE``).

    kind = "bbp"
    name = "bbp-linear"
    seed = 0
    [teacher_student]          # q² and top eigenvalue versus the population-GD theory
    N = 200
    M = 400
    sigma_w = 1.0
    t = 1
    eps = [0.3, 0.5, 0.7, 0.9]
    seeds = 4
    [phase_diagram]            # optional: empty eps or sigma_w skips it
    eps = [0.1, 0.5, 0.9, 1.3, 1.7]
    sigma_w = [0.5, 1.0, 2.0]
    [finite_size]              # optional: empty sizes skips it
    sizes = [64, 128]
    span = 0.15                # ε from (1 − span) ε_c to (1 + span) ε_c
    points = 5
    samples = 250

The runner writes ``<out>/<name>-bbp.h5`` (atomically; a netCDF-4/CF theory result file,
:mod:`shockflow.storage.theory_results`: the groups ``teacher_student`` with the table ``rows`` over
``eps``, ``phase_diagram`` over ``(sigma_w, eps)``, ``finite_size`` over ``(sizes, eps)``) and, when
figures are on, ``<out>/<name>-transition.png`` (top eigenvalue and q² against ε beside the
theory, Binder cumulants: :mod:`shockflow.spectra.figures`) and ``<out>/<name>-phase.png``;
``--json`` prints the same keys. Registering: importing this module registers the kind; the
command line sees it once ``shockflow.spectra.case`` is listed in
``shockflow.cases.kinds.BUILTIN_KIND_MODULES``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from shockflow.cases.kinds import CaseKind, register_kind
from shockflow.cases.schema import at_least, greater_than, interval, setting
from shockflow.storage.atomic import committed_together

__all__ = ["BBPCase", "TeacherStudentTable", "PhaseDiagramTable", "FiniteSizeTable", "BBPOutcome", "run_bbp_case"]


@dataclass(frozen=True)
class TeacherStudentTable:
    """Linear teacher–student W ∈ R^{N×M}, W₀ ~ N(0, σ_W²/M), t population-GD steps of size ε."""

    N: int = setting(200, doc="Output dimension N (rows of W).", bounds=at_least(2))
    M: int = setting(400, doc="Input dimension M (aspect ratio r = N/M).", bounds=at_least(2))
    sigma_w: float = setting(1.0, doc="Initial scale σ_W.", bounds=greater_than(0))
    t: int = setting(1, doc="Gradient steps.", bounds=at_least(1))
    eps: tuple[float, ...] = setting((0.3, 0.5, 0.7, 0.9), doc="Step sizes ε to simulate.", bounds=greater_than(0))
    seeds: int = setting(4, doc="Independent initialisations per ε (results are averaged).", bounds=at_least(1))


@dataclass(frozen=True)
class PhaseDiagramTable:
    """(ε, σ_W) grid simulated with the teacher–student's N, M, t; empty lists skip it."""

    eps: tuple[float, ...] = setting((), doc="Step sizes of the grid.", bounds=greater_than(0))
    sigma_w: tuple[float, ...] = setting((), doc="Initial scales of the grid.", bounds=greater_than(0))
    level: float = setting(0.99, doc="Tracy–Widom level of the outlier test.",
                           choices=None, bounds=interval(0.9, 0.999))

    def check(self):
        if bool(self.eps) != bool(self.sigma_w):
            yield "", "give both eps and sigma_w (or neither)"
        if self.level not in (0.90, 0.95, 0.975, 0.99, 0.995, 0.999):
            yield "level", f"tabulated TW levels are 0.9, 0.95, 0.975, 0.99, 0.995, 0.999; found {self.level}"


@dataclass(frozen=True)
class FiniteSizeTable:
    """Binder-cumulant crossings around ε_c(t) at aspect ratio N/M of the teacher–student."""

    sizes: tuple[int, ...] = setting((), doc="Sizes N (M = N / r); at least two, or empty to skip.", bounds=at_least(8))
    span: float = setting(0.15, doc="Relative half-width of the ε window around ε_c.", bounds=interval(0, 1, "neither"))
    points: int = setting(5, doc="ε points in the window.", bounds=at_least(3))
    samples: int = setting(250, doc="Initialisations per (N, ε).", bounds=at_least(10))

    def check(self):
        if len(self.sizes) == 1:
            yield "sizes", "a Binder crossing needs at least two sizes"
        if list(self.sizes) != sorted(set(self.sizes)):
            yield "sizes", f"expected increasing distinct sizes, found {list(self.sizes)}"


@dataclass(frozen=True)
class BBPCase:
    """A BBP case: simulated spectra of the docs/theory.md §3 teacher–student against the theory."""

    teacher_student: TeacherStudentTable = setting(doc="The teacher–student run.", factory=TeacherStudentTable)
    phase_diagram: PhaseDiagramTable = setting(doc="Optional (ε, σ_W) phase diagram.", factory=PhaseDiagramTable)
    finite_size: FiniteSizeTable = setting(doc="Optional Binder finite-size scaling.", factory=FiniteSizeTable)


@dataclass(frozen=True, eq=False)
class BBPOutcome:
    case: str
    summary: dict
    result_file: Path
    seconds: float
    figures: tuple = field(default=())

    def as_dict(self) -> dict:
        return {"case": self.case, **self.summary, "result_file": str(self.result_file),
                "seconds": self.seconds, "figures": [str(p) for p in self.figures]}

    def key_figures(self) -> dict:
        """Scalars for sweeps: ε_c(t), worst relative errors, Binder crossing (NaN if not run)."""
        ts = self.summary["teacher_student"]
        fs = self.summary["finite_size"]
        return {"eps_c": ts["eps_c"], "max_rel_error_top": ts["max_rel_error_top"],
                "max_rel_error_q2": ts["max_rel_error_q2"],
                "binder_crossing": fs["crossing_mean"] if fs else float("nan"), "seconds": self.seconds}

    def table(self) -> str:
        ts = self.summary["teacher_student"]
        lines = [f"case {self.case}: N={ts['N']} M={ts['M']} σ_W={ts['sigma_w']} t={ts['t']}  ε_c(t) = {ts['eps_c']:.4f}",
                 f"{'eps':>8} {'top':>10} {'theory':>10} {'q2':>8} {'theory':>8} {'ordered':>8}"]
        for row in ts["rows"]:
            lines.append(f"{row['eps']:8.4f} {row['top_eigenvalue']:10.4f} {row['theory_top_eigenvalue']:10.4f} "
                         f"{row['q2']:8.4f} {row['theory_q2']:8.4f} {str(row['theory_ordered']):>8}")
        pd = self.summary["phase_diagram"]
        if pd:
            lines.append(f"phase diagram: {pd['points']} points, agreement with theory {pd['agreement']:.2%}")
        fs = self.summary["finite_size"]
        if fs:
            lines.append(f"Binder crossings: {', '.join(f'{x:.4f}' for x in fs['crossings'])} "
                         f"(mean {fs['crossing_mean']:.4f}, {fs['crossing_rel_error']:+.2%} from ε_c)")
        lines.append(f"result: {self.result_file}")
        lines += [f"figure: {p}" for p in self.figures]
        return "\n".join(lines)


#: dimensions and descriptions of a bbp result file (shockflow.storage.theory_results)
BBP_DIMS = {"teacher_student/rows": ("eps",), "phase_diagram/eps": ("eps",), "phase_diagram/sigma_w": ("sigma_w",),
            "phase_diagram/ordered": ("sigma_w", "eps"), "phase_diagram/theory_ordered": ("sigma_w", "eps"),
            "phase_diagram/q2": ("sigma_w", "eps"), "finite_size/sizes": ("sizes",), "finite_size/eps": ("eps",),
            "finite_size/U4": ("sizes", "eps"), "finite_size/U4_err": ("sizes", "eps"),
            "finite_size/crossings": ("size_pair",)}
BBP_DESCRIPTIONS = {
    "eps": ("gradient step size epsilon", "1"), "theory_top_eigenvalue": ("top eigenvalue of W W^T, theory", "1"),
    "theory_q2": ("teacher overlap q2, theory", "1"), "theory_ordered": ("outlier predicted (eps > eps_c)", "1"),
    "theory_lambda_plus": ("Marchenko-Pastur edge lambda_+, theory", "1"),
    "top_eigenvalue": ("top eigenvalue of W W^T, mean over seeds", "1"),
    "q2": ("teacher overlap q2 of the top eigenvector", "1"),
    "rel_error_top": ("top eigenvalue / theory - 1", "1"), "rel_error_q2": ("q2 / theory - 1 (NaN: theory 0)", "1"),
    "sigma_w": ("initial scale sigma_W", "1"), "ordered": ("outlier with teacher overlap found", "1"),
    "sizes": ("matrix size N", "1"), "U4": ("Binder cumulant of q2", "1"), "U4_err": ("standard error of U4", "1"),
    "crossings": ("eps where the U4 curves of successive sizes cross", "1"), "size_pair": ("pair of successive sizes", "1"),
}


def bbp_layout():
    from shockflow.storage.theory_results import Layout

    return Layout(dims=BBP_DIMS, describe=BBP_DESCRIPTIONS)


@committed_together
def run_bbp_case(case, options) -> BBPOutcome:
    """Run a validated ``bbp`` case (see the module docstring)."""
    from shockflow.cases.schema import to_plain
    from shockflow.logs import package_versions
    from shockflow.storage.theory_results import write_theory_result

    from .finite_size import binder_crossings, binder_curves
    from .phase_diagram import phase_diagram, plot_phase_diagram
    from .teacher_student import critical_step, simulate_point

    seed = options.seed if options.seed is not None else (case.seed or 0)
    s = case.settings
    ts = s.teacher_student
    start = time.perf_counter()
    from shockflow.progress import progress, status

    show = options.progress and not options.quiet
    rows = []
    with progress(len(ts.eps), f"teacher-student of {case.name}", enabled=show, unit="step size",
                  each=True) as bar:
        for e in ts.eps:
            runs = [simulate_point(ts.N, ts.M, e, ts.t, ts.sigma_w, seed=seed + k) for k in range(ts.seeds)]
            row = {k: runs[0][k] for k in ("eps", "theory_top_eigenvalue", "theory_q2", "theory_ordered",
                                           "theory_lambda_plus")}
            row["top_eigenvalue"] = float(np.mean([r["top_eigenvalue"] for r in runs]))
            row["q2"] = float(np.mean([r["q2"] for r in runs]))
            row["rel_error_top"] = row["top_eigenvalue"] / row["theory_top_eigenvalue"] - 1.0
            row["rel_error_q2"] = row["q2"] / row["theory_q2"] - 1.0 if row["theory_q2"] > 0 else None
            rows.append(row)
            bar.set_postfix_str(f"ε = {e:g}: q² = {row['q2']:.3f} (theory {row['theory_q2']:.3f})", refresh=False)
            bar.update(1)
    ordered_rows = [r for r in rows if r["theory_ordered"]]
    summary = {"teacher_student": {
        "N": ts.N, "M": ts.M, "sigma_w": ts.sigma_w, "t": ts.t, "seeds": ts.seeds,
        "eps_c": critical_step(ts.t, ts.sigma_w, ts.N / ts.M), "rows": rows,
        "max_rel_error_top": max([abs(r["rel_error_top"]) for r in ordered_rows], default=None),
        "max_rel_error_q2": max([abs(r["rel_error_q2"]) for r in ordered_rows], default=None)},
        "phase_diagram": None, "finite_size": None}
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    figures = []
    pd = s.phase_diagram
    if pd.eps:
        with status(f"phase diagram ({len(pd.eps) * len(pd.sigma_w)} points)", enabled=show):
            res = phase_diagram(pd.eps, pd.sigma_w, ts.N, ts.M, t=ts.t, seed=seed, level=pd.level)
        summary["phase_diagram"] = {"eps": list(pd.eps), "sigma_w": list(pd.sigma_w),
                                    "ordered": res["ordered"].tolist(), "theory_ordered": res["theory_ordered"].tolist(),
                                    "q2": res["q2"].tolist(), "agreement": res["agreement"],
                                    "points": int(res["q2"].size)}
        if options.figures:
            from shockflow.figures import save_figure

            figures.append(save_figure(plot_phase_diagram(res), out / f"{case.name}-phase.png",
                                       format=getattr(options, "figure_format", None), dpi=getattr(options, "dpi", None)))
    fs = s.finite_size
    if fs.sizes:
        r = ts.N / ts.M
        ec = critical_step(ts.t, ts.sigma_w, r)
        with status(f"finite size (N = {', '.join(str(n) for n in fs.sizes)})", enabled=show):
            curves = binder_curves(fs.sizes, ec * np.linspace(1 - fs.span, 1 + fs.span, fs.points), ts.t,
                                   ts.sigma_w, r, fs.samples, seed=seed)
        x = binder_crossings(curves)
        summary["finite_size"] = {"sizes": list(fs.sizes), "eps": curves["eps"].tolist(),
                                  "U4": curves["U4"].tolist(), "U4_err": curves["U4_err"].tolist(),
                                  "crossings": x.tolist(), "crossing_mean": float(x.mean()),
                                  "eps_c": ec, "crossing_rel_error": float(x.mean() / ec - 1)}
    if options.figures:
        from shockflow.figures import save_figure

        from .figures import plot_transition

        with status("figures", enabled=show):
            figures.append(save_figure(plot_transition(summary), out / f"{case.name}-transition.png",
                                       format=getattr(options, "figure_format", None), dpi=getattr(options, "dpi", None)))
    seconds = time.perf_counter() - start
    path = out / f"{case.name}-bbp.h5"
    with status(f"write {path}", enabled=show):
        write_theory_result(path, summary, bbp_layout(), case=case, seed=seed, settings=to_plain(s),
                            versions=package_versions(), wall_time=seconds)
    return BBPOutcome(case.name, summary, path, seconds, tuple(figures))


def reopen(result, path: Path) -> BBPOutcome:
    """The outcome of a run, from its result file (:mod:`shockflow.runners.theories`)."""
    return BBPOutcome(result.case_name, dict(result.document), path, result.wall_time)


def redraw(result, out: Path, stem: str, options) -> tuple[Path, ...]:
    """The run's figures from its result file: the transition and, if it ran, the phase diagram."""
    from shockflow.figures import save_figure

    from .figures import plot_transition
    from .phase_diagram import plot_phase_diagram

    doc, fmt, dpi = result.document, options.figure_format, options.dpi
    paths = [save_figure(plot_transition(doc), out / f"{stem}-transition.png", format=fmt, dpi=dpi)]
    pd, ts = doc.get("phase_diagram"), doc["teacher_student"]
    if pd:
        res = {k: np.asarray(pd[k], dtype=float) for k in ("eps", "sigma_w", "q2")}
        res.update(N=ts["N"], M=ts["M"], t=ts["t"])
        paths.append(save_figure(plot_phase_diagram(res), out / f"{stem}-phase.png", format=fmt, dpi=dpi))
    return tuple(paths)


def _run(case, options):
    return run_bbp_case(case, options)


BBP_KIND = register_kind(CaseKind(
    name="bbp", settings=BBPCase, run=_run, command="run",
    description="BBP spectral transition of the linear teacher–student (docs/theory.md §3): q² and top eigenvalue "
                "versus theory, phase diagram, Binder finite-size scaling",
))
