"""What a case will cost (memory and time), computed from its settings alone, and the check against the machine.

Every case kind has an estimate (:data:`ESTIMATES`; a kind without one gets the generic estimate
from its integer settings): a list of :class:`Term` — the bytes and the floating-point work of one
part of the run (the stored snapshots of a solve, the data set of a training run, a chart grid of
the extraction) together with the key that drives it.  Nothing is allocated: sizes are multiplied
out from the settings.  :func:`require_affordable` refuses a case whose memory exceeds what the
machine has available (``/proc/meminfo`` MemAvailable) or whose time exceeds :data:`MAX_SECONDS`,
naming the key of the largest term, unless the user overrides it (``--allow-large``).

The estimates are upper-bound-minded orders of magnitude (the factor in front of each term counts
the working arrays of the method), not predictions of the wall time: their job is to refuse the
10⁹-cell grid in a second instead of dying in a MemoryError after a minute.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from shockflow.cases.errors import CaseError, Problem

__all__ = ["Term", "Cost", "estimate", "require_affordable", "available_memory", "MAX_SECONDS", "FLOPS_PER_SECOND"]

#: floating-point work per second assumed for the time estimate (one core, NumPy/Numba loops)
FLOPS_PER_SECOND = 1e9
#: a case estimated to take longer than this is refused without the override (a week)
MAX_SECONDS = 7 * 24 * 3600.0


@dataclass(frozen=True)
class Term:
    """One part of a run: ``bytes`` held at once, ``flops`` of work, and the ``key`` that drives it."""

    key: str
    bytes: float
    flops: float
    what: str


@dataclass(frozen=True)
class Cost:
    """The terms of a case; memory is their sum of bytes, time their sum of work."""

    terms: tuple[Term, ...]

    @property
    def bytes(self) -> float:
        return float(sum(t.bytes for t in self.terms))

    @property
    def seconds(self) -> float:
        return float(sum(t.flops for t in self.terms)) / FLOPS_PER_SECOND

    def largest(self, attribute: str) -> Term | None:
        return max(self.terms, key=lambda t: getattr(t, attribute), default=None)

    def as_dict(self) -> dict:
        return {"bytes": self.bytes, "seconds": self.seconds,
                "terms": [{"key": t.key, "what": t.what, "bytes": t.bytes, "seconds": t.flops / FLOPS_PER_SECOND}
                          for t in self.terms]}


def _size(n: float) -> str:
    for unit, scale in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20), ("kiB", 2 ** 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def _duration(s: float) -> str:
    for unit, scale in (("years", 365 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s:.3g} s"


# -- the estimates of the built-in kinds -----------------------------------------------------------
def _pde(case) -> list[Term]:
    s = case.settings
    dom = s.domain
    tag = dom.TAG
    if tag == "interval":
        n, key, dims = float(dom.cells), "domain.cells", [float(dom.cells)]
    elif tag == "box":
        dims = [float(c) for c in dom.cells]
        n, key = math.prod(dims), "domain.cells"
    elif tag == "icosphere":
        n, key, dims = 10.0 * dom.frequency ** 2 + 2, "domain.frequency", [math.sqrt(10.0) * dom.frequency]
    elif tag == "mesh":
        # not read here: at most one vertex per 12 bytes of the file (three float32 coordinates)
        n = max(_mesh_file_bytes(case, dom.path) / 12.0, 1.0)
        key, dims = "domain.path", [math.sqrt(n)]
    else:
        n, key, dims = float(dom.n_major) * dom.n_minor, "domain.n_major", [float(dom.n_major), float(dom.n_minor)]
    # explicit steps: the CFL step shrinks with the finest cell (the viscous step with its square)
    finest = max(dims)
    cfl = s.solver.cfl or 0.5
    steps = min(float(s.solver.max_steps), s.output.t_end * finest / cfl
                * (1.0 + (2.0 * s.equation.nu * s.equation.D * finest if s.equation.nu > 0 else 0.0)))
    stored = float(s.output.snapshots) * n * 8.0
    return [
        Term(key, 40.0 * n * 8.0 * (3 if tag in ("icosphere", "torus", "mesh") else 1), 50.0 * n * max(steps, 1.0),
             f"{n:.3g} cells/vertices, about {max(steps, 1.0):.3g} time steps"),
        Term("output.snapshots" if s.output.snapshots > n else key, stored, float(s.output.snapshots) * n, f"{s.output.snapshots} stored snapshots"),
    ]


def _mesh_file_bytes(case, path: str) -> float:
    """The size of a case's mesh file (relative to the case file), 0 if it cannot be read (the runner says why)."""
    try:
        return float(case.resolve(path).stat().st_size)
    except OSError:
        return 0.0


def _f(v) -> float:
    """``float(v)``; an integer beyond the doubles is infinite (and so refused)."""
    try:
        return float(v)
    except OverflowError:
        return math.inf


def _call_ints(call) -> dict[str, float]:
    found = {}
    if call is None:
        return found
    for k, v in call.kwargs().items():
        if isinstance(v, bool):
            continue
        if isinstance(v, int):
            found[k] = _f(v)
        elif isinstance(v, list) and v and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            found[k] = math.prod(_f(x) for x in v)
    return found


def _network(case) -> list[Term]:
    s = case.settings
    data = _call_ints(s.data)
    model = _call_ints(s.model)
    n = data.pop("n", 1.0)
    data.pop("seed", None)
    model.pop("seed", None)
    features = max(math.prod(data.values()) if data else 1.0, 1.0)  # the sizes of one sample
    sizes = sorted(model.values(), reverse=True)
    params = max(sizes[0] * (sizes[1] if len(sizes) > 1 else 1.0), 1.0) if sizes else 1.0  # the largest weight block
    model_key = "model." + max(model, key=model.get) if model else "model"
    t = s.training
    batch = float(t.batch_size) if t.batch_size else n
    terms = [
        Term("data.n", 4.0 * n * features * 8.0, 0.0, f"{n:.3g} samples of {features:.3g} numbers"),
        Term(model_key, 4.0 * params * 8.0 + 4.0 * batch * math.sqrt(params) * 8.0
             + (float(s.extraction.noise_samples) * params * 8.0 if s.geometry is not None else 0.0), 0.0,
             f"about {params:.3g} parameters"),
        Term("training.steps" if float(t.steps) >= max(params, batch) else (model_key if params >= batch else "data.n"),
             16.0 * float(t.steps) / max(t.log_every, 1) + float(t.n_snapshots) * params * 8.0,
             6.0 * float(t.steps) * batch * (params + features), f"{t.steps} steps on batches of {batch:.3g}"),
    ]
    if s.geometry is not None:
        ex, pr = s.extraction, s.prediction
        charts = max(len(ex.charts), 1)
        terms.append(Term("extraction.cells" if ex.cells >= params else model_key, float(pr.times) * ex.cells * 8.0 * 4,
                          charts * float(ex.cells) ** 2 * pr.horizon * 100.0 + charts * ex.cells * n * params,
                          f"{charts} charts of {ex.cells} cells"))
    return terms


def _bbp(case) -> list[Term]:
    s = case.settings
    ts, fs = s.teacher_student, s.finite_size
    terms = [Term("teacher_student.N", 6.0 * ts.N * ts.M * 8.0,
                  float(len(ts.eps)) * ts.seeds * (ts.t * 2 * ts.N * ts.M + min(ts.N, ts.M) ** 2 * max(ts.N, ts.M)),
                  f"{ts.N} x {ts.M} weights")]
    pd = s.phase_diagram
    if pd.eps and pd.sigma_w:
        terms.append(Term("phase_diagram.eps", 6.0 * ts.N * ts.M * 8.0,
                          float(len(pd.eps)) * len(pd.sigma_w) * min(ts.N, ts.M) ** 2 * max(ts.N, ts.M) * 4,
                          f"{len(pd.eps)} x {len(pd.sigma_w)} grid"))
    if fs.sizes:
        big = float(max(fs.sizes))
        terms.append(Term("finite_size.sizes", 6.0 * big * big * 8.0 * 4,
                          float(fs.points) * fs.samples * sum(float(x) ** 3 * 8 for x in fs.sizes),
                          f"sizes up to {big:.0f}, {fs.samples} samples"))
    return terms


def _generic(case) -> list[Term]:
    """Any kind: the two largest integer settings multiply into an array of doubles (and its work)."""
    from shockflow.cases.schema import to_plain

    ints: dict[str, float] = {}

    def walk(node, prefix):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{prefix}.{k}" if prefix else str(k))
        elif isinstance(node, (list, tuple)) and node and all(isinstance(x, int) and not isinstance(x, bool) for x in node):
            ints[prefix] = _f(max(node))
        elif isinstance(node, int) and not isinstance(node, bool):
            ints[prefix] = _f(node)

    walk(to_plain(case.settings), "")
    ints = {k: v for k, v in ints.items() if not k.rsplit(".", 1)[-1].startswith(("seed", "workers"))}
    if not ints:
        return []
    ranked = sorted(ints.items(), key=lambda kv: kv[1], reverse=True)
    key, top = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 1.0
    return [Term(key, 8.0 * 8.0 * top * min(second, top), 100.0 * top * min(second, top), f"{key} = {top:.3g}")]


def _nqf(case) -> list[Term]:
    e = case.settings.experiment
    terms = _generic(case)
    if hasattr(e, "estimated_steps"):  # a network run of one logged step per update
        steps, modes = e.estimated_steps(), float(getattr(e, "modes", 1))
        terms.append(Term("experiment.lr", steps * (modes + 4.0) * 8.0 * 2.0, steps * modes * modes * 200.0,
                          f"about {steps:.3g} training steps"))
    return terms


def _scaling(case) -> list[Term]:
    from shockflow.cases.schema import to_plain

    grid = to_plain(case.settings).get("scaling", {}).get("grid", {})
    d = float(max(grid.get("d") or [1])) if isinstance(grid.get("d"), list) else float(grid.get("d") or 1)
    n = float(max(grid.get("n") or [1])) if isinstance(grid.get("n"), list) else float(grid.get("n") or 1)
    points = 1.0
    for k in ("d", "n", "lam"):
        v = grid.get(k)
        points *= len(v) if isinstance(v, list) else 1
    seeds = float(grid.get("seeds", 1) or 1)
    key = "scaling.grid.n" if n >= d else "scaling.grid.d"
    return [Term(key, 6.0 * n * d * 8.0 + 4.0 * d * d * 8.0, points * seeds * (n * d * d + d ** 3) * 4.0,
                 f"{points:.0f} grid points, n up to {n:.0f}, d up to {d:.0f}")]


#: kind name -> estimate (a kind registered elsewhere without one gets :func:`_generic`)
ESTIMATES = {"pde": _pde, "network": _network, "bbp": _bbp, "nqf": _nqf, "scaling": _scaling}


def estimate(case) -> Cost:
    """The :class:`Cost` of ``case``, from its settings (nothing allocated)."""
    return Cost(tuple(ESTIMATES.get(case.kind, _generic)(case)))


#: environment variable capping the memory a case may use (bytes; a shared machine, a test run)
MEMORY_ENV = "SHOCKFLOW_MAX_MEMORY"


def available_memory() -> float:
    """Bytes the machine can give a new allocation now (MemAvailable; the physical memory elsewhere), at most
    ``$SHOCKFLOW_MAX_MEMORY`` when that is set."""
    cap = math.inf
    text = os.environ.get(MEMORY_ENV, "").strip()
    if text:
        try:
            cap = float(text)
        except ValueError:
            raise CaseError(f"${MEMORY_ENV}", [Problem("", f"expected a number of bytes, found {text!r}")]) from None
    return min(cap, _machine_memory())


def _machine_memory() -> float:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024.0
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return math.inf


def require_affordable(case, *, allow_large: bool = False, memory: float | None = None,
                       override: str = "--allow-large") -> Cost:
    """The cost of ``case``; :class:`CaseError` naming the driving key if it needs more memory than is
    available (``memory``, default :func:`available_memory`) or more than :data:`MAX_SECONDS`, unless ``allow_large``.
    ``override``: how the caller says ``allow_large`` (the command line's flag, or ``allow_large=True`` in Python)."""
    cost = estimate(case)
    if allow_large:
        return cost
    file = str(case.path) if case.path is not None else "<string>"
    limit = available_memory() if memory is None else memory
    problems = []
    if cost.bytes > limit:
        t = cost.largest("bytes")
        problems.append(Problem(t.key, f"the case needs about {_size(cost.bytes)} of memory ({t.what}), more than the "
                                       f"{_size(limit)} available; {t.key} drives it (or pass {override})"))
    if cost.seconds > MAX_SECONDS:
        t = cost.largest("flops")
        problems.append(Problem(t.key, f"the case would take about {_duration(cost.seconds)} ({t.what}), more than "
                                       f"{_duration(MAX_SECONDS)}; {t.key} drives it (or pass {override})"))
    if problems:
        raise CaseError(file, problems)
    return cost
