"""Spectral monitor: the spectrum of W Wᵀ along a training run (docs/theory.md §3).

For each logged snapshot of one weight matrix W ∈ R^{N×M}: the eigenvalues of X = W Wᵀ, the
fitted Marchenko–Pastur bulk (:mod:`.bulk_fit`), the outliers above its Tracy–Widom threshold
(:mod:`.outliers`), the signal strength θ inferred from the top outlier through the rectangular
BBP relation (:mod:`.bbp`) and the overlap q² that θ predicts, and, when a teacher direction is
known, the measured overlap q² = (u_top·u)² of the top eigenvector with it.

Sources: a shockflow training log (HDF5), any HDF5 file holding a (k, N, M) stack, an ``.npz``
with such a stack, or arrays in memory; ``analyse_spectra`` is the file-to-JSON entry point.
A snapshot whose bulk cannot be fitted is reported with ``fit_ok = False`` and its reason;
its fitted quantities are NaN, never placeholders.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .bbp import rectangular_overlap, rectangular_theta_from_outlier
from .bulk_fit import BulkFitError, fit_bulk
from .outliers import detect_outliers

__all__ = ["SpectralTrace", "spectral_monitor", "load_weight_stack", "write_spectral_trace",
           "read_spectral_trace", "plot_spectral_evolution", "analyse_spectra", "spectra_table", "TRACE_FORMAT"]

TRACE_FORMAT = "shockflow-spectral-trace"
_ARRAYS = ("step", "eigenvalues", "sigma2", "ratio", "lambda_plus", "threshold", "n_outliers",
           "top_eigenvalue", "outliers", "theta", "q2_predicted", "q2", "fit_ok")


@dataclass(frozen=True, eq=False)
class SpectralTrace:
    """Per-snapshot spectral quantities; arrays share the leading snapshot axis k.

    step (k,) int · eigenvalues (k, N) ascending · sigma2, ratio, lambda_plus, threshold (k,) ·
    n_outliers (k,) int · top_eigenvalue (k,) · outliers (k, max_outliers) descending, NaN-padded ·
    theta (k,) signal strength from the top outlier (NaN without one) · q2_predicted (k,) its BBP
    overlap (0 without outlier) · q2 (k,) measured teacher overlap (NaN without teacher) ·
    fit_ok (k,) bool · fit_errors: reason per failed snapshot · shape (N, M) · level: TW level.
    """

    step: np.ndarray
    eigenvalues: np.ndarray
    sigma2: np.ndarray
    ratio: np.ndarray
    lambda_plus: np.ndarray
    threshold: np.ndarray
    n_outliers: np.ndarray
    top_eigenvalue: np.ndarray
    outliers: np.ndarray
    theta: np.ndarray
    q2_predicted: np.ndarray
    q2: np.ndarray
    fit_ok: np.ndarray
    fit_errors: dict = field(default_factory=dict)
    shape: tuple = ()
    level: float = 0.99

    def summary(self) -> dict:
        """JSON-able table with stable keys (one list entry per snapshot)."""
        def col(a):
            return [None if (isinstance(x, float) and not np.isfinite(x)) else x
                    for x in np.asarray(a).tolist()]

        first = np.flatnonzero(self.n_outliers > 0)
        return {
            "format": TRACE_FORMAT, "N": int(self.shape[0]), "M": int(self.shape[1]),
            "level": self.level, "step": col(self.step), "sigma2": col(self.sigma2),
            "ratio": col(self.ratio), "lambda_plus": col(self.lambda_plus),
            "threshold": col(self.threshold), "top_eigenvalue": col(self.top_eigenvalue),
            "n_outliers": col(self.n_outliers), "theta": col(self.theta),
            "q2_predicted": col(self.q2_predicted), "q2": col(self.q2), "fit_ok": col(self.fit_ok),
            "fit_errors": {str(k): v for k, v in self.fit_errors.items()},
            "first_outlier_step": int(self.step[first[0]]) if first.size else None,
        }


def _teacher_vector(teacher, N: int, M: int):
    if teacher is None:
        return None
    T = np.asarray(teacher, dtype=np.float64)
    if T.shape == (N,):
        u = T
    elif T.shape == (N, M):
        U, _, _ = np.linalg.svd(T, full_matrices=False)
        u = U[:, 0]
    else:
        raise ValueError(f"teacher: expected a left direction of shape ({N},) or a teacher matrix of "
                         f"shape ({N}, {M}), found {T.shape}")
    n = np.linalg.norm(u)
    if not np.isfinite(n) or n == 0:
        raise ValueError("teacher: the teacher direction is zero or not finite")
    return u / n


def _check_stack(stack) -> np.ndarray:
    S = np.asarray(stack, dtype=np.float64)
    if S.ndim == 2:
        S = S[None]
    if S.ndim != 3:
        raise ValueError(f"weights: expected a 2-D weight matrix or a (snapshots, N, M) stack, found an "
                         f"array of shape {S.shape} ({S.ndim}-D)")
    if not np.all(np.isfinite(S)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(S), axis=(1, 2)))[0])
        raise ValueError(f"weights: snapshot {bad} contains NaN or inf")
    return S


def spectral_monitor(stack, steps=None, teacher=None, ratio: float | None = None,
                     level: float = 0.99, trim_top: float = 0.1) -> SpectralTrace:
    """Spectral quantities of every snapshot in ``stack`` ((k, N, M) or one (N, M) matrix).

    ``ratio`` defaults to N/M (the weight matrix's own shape, which fixes it; a different value is
    refused). ``teacher``: the teacher's left direction u (N,) or its matrix (N, M).
    """
    S = _check_stack(stack)
    k, N, M = S.shape
    if ratio is not None and not np.isclose(float(ratio), N / M, rtol=1e-9):
        raise ValueError(f"ratio: {ratio} is inconsistent with weight matrices of shape ({N}, {M}) "
                         f"(N/M = {N / M:g})")
    r = N / M
    steps = np.arange(k) if steps is None else np.asarray(steps).astype(np.int64)
    if steps.shape != (k,):
        raise ValueError(f"steps: expected {k} steps for {k} snapshots, found shape {steps.shape}")
    u = _teacher_vector(teacher, N, M)
    ev = np.empty((k, N))
    cols = {name: np.full(k, np.nan) for name in ("sigma2", "ratio", "lambda_plus", "threshold",
                                                   "theta", "q2_predicted", "q2")}
    n_out = np.zeros(k, dtype=np.int64)
    top = np.empty(k)
    ok = np.zeros(k, dtype=bool)
    out_lists, errors = [], {}
    for i in range(k):
        lam, vec = np.linalg.eigh(S[i] @ S[i].T)
        lam = np.clip(lam, 0.0, None)
        ev[i], top[i] = lam, lam[-1]
        if u is not None:
            cols["q2"][i] = float((vec[:, -1] @ u) ** 2)
        try:
            fit = fit_bulk(lam, ratio=r, trim_top=trim_top)
        except BulkFitError as exc:
            errors[int(steps[i])] = str(exc)
            out_lists.append(np.zeros(0))
            continue
        ok[i] = True
        det = detect_outliers(lam, fit, level=level)
        cols["sigma2"][i], cols["ratio"][i] = fit.sigma2, fit.ratio
        cols["lambda_plus"][i], cols["threshold"][i] = fit.lambda_plus, det.threshold
        n_out[i] = det.count
        out_lists.append(det.values)
        if det.count:
            th = rectangular_theta_from_outlier(det.values[0], r, scale=fit.sigma2)
            cols["theta"][i] = th
            cols["q2_predicted"][i] = rectangular_overlap(th, r) if np.isfinite(th) else np.nan
        else:
            cols["q2_predicted"][i] = 0.0
    width = max([len(o) for o in out_lists] + [1])
    outl = np.full((k, width), np.nan)
    for i, o in enumerate(out_lists):
        outl[i, :len(o)] = o
    return SpectralTrace(step=steps, eigenvalues=ev, n_outliers=n_out, top_eigenvalue=top,
                         outliers=outl, fit_ok=ok, fit_errors=errors, shape=(N, M), level=float(level),
                         **cols)


# --------------------------------------------------------------------------- files
def load_weight_stack(source, param: str | None = None):
    """(steps, stack (k, N, M), teacher or None) from a file or a TrainingRecord.

    - shockflow training log (HDF5) or TrainingRecord: parameter snapshots ``param`` (default:
      the only 2-D parameter), steps from the log;
    - other HDF5: dataset ``param`` (default: the only 3-D dataset), steps from a dataset
      ``step``/``steps`` if present, teacher from a dataset ``teacher`` if present;
    - ``.npz``: the same conventions for the archive's arrays.
    """
    from shockflow.logs import TrainingRecord, read_training_log

    record = source if isinstance(source, TrainingRecord) else None
    if record is None:
        from shockflow.storage.input_files import file_problem

        path = Path(source)
        problem = file_problem(path)
        if problem is not None:
            raise FileNotFoundError(f"source: file {str(path)!r} does not exist" if problem == "no such file" else
                                    f"source: {str(path)!r} {problem}")
        if path.suffix == ".npz":
            from shockflow.storage.npz import open_npz

            try:
                z = open_npz(path)
            except ValueError as exc:
                raise ValueError(f"source: {str(path)!r}: {exc}") from None
            with z:
                arrays = {k: z[k] for k in z.files}
            return _pick(arrays, param, str(path))
        import h5py

        from shockflow.storage.hdf5 import open_hdf5

        with open_hdf5(path, format=None, kind="a training log, an HDF5 weight stack or an .npz archive",
                       error=ValueError) as f:
            is_log = f.attrs.get("format") == "shockflow-training-log"
            if not is_log:
                arrays = {}
                f.visititems(lambda name, obj: arrays.__setitem__(name, obj[()])
                             if isinstance(obj, h5py.Dataset) else None)
        if not is_log:
            return _pick(arrays, param, str(path))
        record = read_training_log(path)
    snaps = {k: v for k, v in record.snapshots.items() if k != "step"}
    if not snaps:
        raise ValueError("source: the training log holds no parameter snapshots")
    if param is None:
        mats = [k for k, v in snaps.items() if v.ndim == 3]
        if not mats:   # (was "the log has 0 matrix parameters; choose one of ['u']": a vector is no choice)
            raise ValueError(f"param: the log holds no weight matrix, only parameters of other shapes "
                             f"({', '.join(f'{k} {tuple(np.shape(snaps[k])[1:])}' for k in sorted(snaps))}); the "
                             f"spectra are of a weight matrix")
        if len(mats) != 1:
            raise ValueError(f"param: the log has {len(mats)} weight matrices; choose one of {sorted(mats)}")
        param = mats[0]
    if param not in snaps:
        raise ValueError(f"param: unknown parameter {param!r}; valid: {sorted(snaps)}")
    if np.asarray(snaps[param]).ndim != 3:   # a snapshot stack of a vector (or scalar) parameter: no spectrum
        matrices = sorted(k for k, v in snaps.items() if np.asarray(v).ndim == 3)
        raise ValueError(f"param: {param!r} is not a matrix (its snapshots have shape {np.asarray(snaps[param]).shape}); "
                         f"the spectra are of a weight matrix: " + (f"one of {matrices}" if matrices else
                                                                     "the log holds none"))
    return np.asarray(record.snapshots["step"]), _check_stack(snaps[param]), None


def _pick(arrays: dict, param, where: str):
    if param is None:
        cands = [k for k, v in arrays.items() if np.ndim(v) == 3]
        if len(cands) != 1:
            raise ValueError(f"param: {where} has {len(cands)} three-dimensional arrays "
                             f"({sorted(cands)}); name the weight stack among {sorted(arrays)}")
        param = cands[0]
    if param not in arrays:
        raise ValueError(f"param: {where} has no array {param!r}; valid: {sorted(arrays)}")
    stack = _check_stack(arrays[param])
    steps = None
    for key in ("step", "steps"):
        if key in arrays:
            steps = np.asarray(arrays[key]).astype(np.int64)
    if steps is None:
        steps = np.arange(stack.shape[0])
    return steps, stack, arrays.get("teacher")


_TRACE_NAMES = {"step": "training step of the snapshot", "eigenvalues": "eigenvalues of W W^T, ascending",
                "sigma2": "fitted bulk variance", "ratio": "aspect ratio N/M", "lambda_plus": "fitted bulk edge",
                "threshold": "Tracy-Widom outlier threshold", "n_outliers": "outliers above the threshold",
                "top_eigenvalue": "largest eigenvalue", "outliers": "outlier eigenvalues, descending (NaN-padded)",
                "theta": "signal strength from the top outlier (BBP)", "q2_predicted": "overlap q2 predicted (BBP)",
                "q2": "overlap q2 measured with the teacher", "fit_ok": "bulk fitted (1) or not (0)",
                "eigenvalue": "eigenvalue index", "outlier": "outlier index"}


def write_spectral_trace(trace: SpectralTrace, path) -> Path:
    """Write the trace to HDF5 atomically (datasets named as the fields; attrs hold the rest).

    netCDF-4 compatible (as the result files, docs/result-file.md): ``step`` is the coordinate of
    every per-snapshot array, ``eigenvalue`` and ``outlier`` index the second axes of
    ``eigenvalues`` and ``outliers``; every array has ``long_name`` and ``units``."""
    import h5py

    from shockflow.storage import atomic_path

    path = Path(path)
    with atomic_path(path) as tmp:
        with h5py.File(tmp, "w") as f:
            f.attrs["format"] = TRACE_FORMAT
            f.attrs["shape"] = np.asarray(trace.shape, dtype=np.int64)
            f.attrs["level"] = trace.level
            f.attrs["fit_errors"] = json.dumps({str(k): v for k, v in trace.fit_errors.items()})
            k = len(trace.step)
            scales = {"step": np.asarray(trace.step),
                      "eigenvalue": np.arange(np.asarray(trace.eigenvalues).reshape(k, -1).shape[1]),
                      "outlier": np.arange(np.asarray(trace.outliers).reshape(k, -1).shape[1])}
            for name, a in scales.items():
                ds = f.create_dataset(name, data=a)
                ds.make_scale(name)
            for name in _ARRAYS:
                ds = f[name] if name == "step" else f.create_dataset(name, data=getattr(trace, name))
                ds.attrs["long_name"] = _TRACE_NAMES[name]
                ds.attrs["units"] = "1"
                if name == "step":
                    continue
                ds.dims[0].attach_scale(f["step"])
                if ds.ndim == 2:
                    ds.dims[1].attach_scale(f["eigenvalue" if name == "eigenvalues" else "outlier"])
            for name in ("eigenvalue", "outlier"):
                f[name].attrs["long_name"] = _TRACE_NAMES[name]
                f[name].attrs["units"] = "1"
    return path


def read_spectral_trace(path) -> SpectralTrace:
    from shockflow.storage.hdf5 import open_hdf5

    with open_hdf5(path, format=TRACE_FORMAT, kind="a shockflow spectral trace", error=ValueError,
                   missing=FileNotFoundError) as f:
        kw = {name: f[name][()] for name in _ARRAYS}
        errs = {int(k): v for k, v in json.loads(f.attrs["fit_errors"]).items()}
        return SpectralTrace(**kw, fit_errors=errs, shape=tuple(int(x) for x in f.attrs["shape"]),
                             level=float(f.attrs["level"]))


def plot_spectral_evolution(trace: SpectralTrace, *, fig=None, title: str | None = None):
    """The spectra figure (returns the Figure): (a) the eigenvalue histogram of the last fitted
    snapshot with the fitted Marchenko–Pastur density, its edge λ₊, the Tracy–Widom threshold and
    the outliers; (b) every snapshot's eigenvalues (grey), λ₊, the threshold and the outliers over
    steps; (c) the teacher overlap q² measured against the q² the BBP relation predicts from the
    top outlier."""
    from shockflow.figures import PALETTE, new_figure

    from .marchenko_pastur import mp_density

    if fig is None:
        fig = new_figure(13.0, 4.2)
    hist, evo, q2 = fig.subplots(1, 3, width_ratios=(1.0, 1.3, 1.0))
    N, M = (trace.shape + (0, 0))[:2]
    fig.suptitle(title or f"spectrum of W Wᵀ over training: N × M = {N} × {M}, Tracy–Widom level {trace.level:g}",
                 fontsize=10)
    ok = np.flatnonzero(np.asarray(trace.fit_ok, dtype=bool))
    k = int(ok[-1]) if ok.size else len(trace.step) - 1
    ev = np.asarray(trace.eigenvalues[k], dtype=float)
    n_all = ev.size
    pos = ev[ev > 0]
    if pos.size:
        edge = max(float(v) for v in (trace.threshold[k], trace.lambda_plus[k], 0.0) if np.isfinite(v))
        # the bulk's range (outliers far above it would squeeze the bulk into one bar): outliers beyond
        # it are marked at the right edge with their values
        top = 1.3 * edge if edge > 0 else float(pos.max()) * 1.05
        bins = np.linspace(0.0, top, 60)
        inside = pos[pos <= top]
        # one count per eigenvalue out of all N: the continuous MP density (atom at zero excluded) matches
        hist.hist(inside, bins=bins, weights=np.full(inside.size, 1.0 / (n_all * (bins[1] - bins[0]))),
                  color="0.75", edgecolor="0.55", lw=0.4, label=f"eigenvalues, step {int(trace.step[k])}")
        if np.isfinite(trace.sigma2[k]) and np.isfinite(trace.ratio[k]):
            xs = np.linspace(bins[0], bins[-1], 600)[1:]
            hist.plot(xs, mp_density(xs, float(trace.ratio[k]), float(trace.sigma2[k])), color=PALETTE[0], lw=1.6,
                      label=f"fitted MP (σ² = {trace.sigma2[k]:.3g}, r = {trace.ratio[k]:.3g})")
            hist.axvline(trace.lambda_plus[k], color=PALETTE[0], ls="-", lw=0.9, label="edge λ₊")
            hist.axvline(trace.threshold[k], color=PALETTE[0], ls="--", lw=0.9, label="TW threshold")
        out = np.asarray(trace.outliers[k], dtype=float)
        out = out[np.isfinite(out)]
        if out.size:
            near = out[out <= top]
            hist.plot(near, np.zeros(near.size), "v", color=PALETTE[3], ms=8, clip_on=False, label="outliers")
            far = out[out > top]
            if far.size:
                hist.annotate("outlier" + ("s" if far.size > 1 else "") + " λ = " + ", ".join(f"{v:.3g}" for v in far)
                              + " →", xy=(1.0, 0.04), xycoords="axes fraction", ha="right", color=PALETTE[3],
                              fontsize=8)
        hist.set_xlim(0.0, top)
        hist.set_xlabel("eigenvalue of W Wᵀ")
        hist.set_ylabel("density (per eigenvalue of N)")
        hist.legend(fontsize=7)
    x = np.maximum(np.asarray(trace.step), 0) + 1
    for i in range(len(x)):
        e = trace.eigenvalues[i][trace.eigenvalues[i] > 0]      # zero modes (rank < N) not drawn
        evo.plot(np.full(e.size, x[i]), e, ".", ms=1.5, color="0.6", rasterized=True)
    evo.plot(x, trace.lambda_plus, "-", color=PALETTE[0], label="fitted bulk edge λ₊")
    evo.plot(x, trace.threshold, "--", color=PALETTE[0], label="TW outlier threshold")
    for j in range(trace.outliers.shape[1]):
        evo.plot(x, trace.outliers[:, j], "o", color=PALETTE[3], ms=4, label="outliers" if j == 0 else None)
    evo.set_xscale("log")
    evo.set_yscale("log")
    evo.set_xlabel("step + 1")
    evo.set_ylabel("eigenvalues of W Wᵀ")
    evo.legend(fontsize=7)
    measured = np.asarray(trace.q2, dtype=float)
    q2.plot(x, trace.q2_predicted, "--", color=PALETTE[1], lw=1.4, label="q² predicted (BBP, top outlier)")
    if np.isfinite(measured).any():
        q2.plot(x, measured, "o-", color=PALETTE[2], ms=3, lw=1, label="q² measured (teacher overlap)")
    else:
        q2.text(0.5, 0.5, "no teacher: q² not measured", transform=q2.transAxes, ha="center", fontsize=8)
    q2.set_xscale("log")
    q2.set_ylim(-0.02, 1.02)
    q2.set_xlabel("step + 1")
    q2.set_ylabel("q² = (u_top · u)²")
    q2.legend(fontsize=7)
    return fig


def read_teacher(path) -> np.ndarray:
    """The teacher direction (or matrix) in the ``.npy`` file ``path`` (or an ``.npz`` of one array); ValueError
    starting ``teacher: '<path>'`` saying why it cannot be read (a missing file was a bare '[Errno 2] ...')."""
    import zipfile

    from shockflow.storage.input_files import file_problem

    where = f"teacher: {str(path)!r}"
    p = Path(path)
    problem = file_problem(p)
    if problem is not None:
        raise ValueError(f"{where}: {problem}" + (", expected a .npy file" if problem != "no such file" else ""))
    try:
        loaded = np.load(p, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{where}: not a NumPy .npy file ({exc})") from None
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            if len(loaded.files) != 1:
                raise ValueError(f"{where}: an .npz of {len(loaded.files)} arrays ({', '.join(loaded.files)}); "
                                 f"expected one direction (a .npy file)")
            loaded = loaded[loaded.files[0]]
    if loaded.dtype.kind not in "fiu":
        raise ValueError(f"{where}: expected numbers, found an array of dtype {loaded.dtype}")
    return loaded


def analyse_spectra(path, param: str | None = None, teacher=None, ratio: float | None = None,
                    level: float = 0.99, output=None, figure=None) -> dict:
    """Analyse the spectra of a saved run (see :func:`load_weight_stack` for accepted files).

    ``teacher``: None (use a ``teacher`` array stored in the file, if any), an array, or a path
    to ``.npy``. ``output``: HDF5 path for the full trace; ``figure``: PNG path. Returns the
    JSON-able summary (:meth:`SpectralTrace.summary`) plus ``source``, ``param``, and the paths
    written, under stable keys.
    """
    steps, stack, stored_teacher = load_weight_stack(path, param)
    if isinstance(teacher, (str, os.PathLike)):
        teacher = read_teacher(teacher)
    if teacher is None:
        teacher = stored_teacher
    trace = spectral_monitor(stack, steps, teacher=teacher, ratio=ratio, level=level)
    out = trace.summary()
    out.update({"source": str(path), "param": param, "output": None, "figure": None})
    if output is not None:
        out["output"] = str(write_spectral_trace(trace, output))
    if figure is not None:
        from shockflow.figures import save_figure

        out["figure"] = str(save_figure(plot_spectral_evolution(trace), figure))
    return out


def spectra_table(summary: dict) -> str:
    """The summary of :func:`analyse_spectra` as text: a header and one row per snapshot step
    (4 significant digits; ``-`` where a value is undefined)."""
    def num(v, fmt="{:.4g}"):
        return "-" if v is None or (isinstance(v, float) and not np.isfinite(v)) else fmt.format(v)

    lines = [f"{summary.get('source')}" + (f" [{summary['param']}]" if summary.get("param") else "")
             + f": N x M = {summary.get('N')} x {summary.get('M')}, Tracy-Widom level {summary.get('level')}"]
    cols = ("step", "sigma2", "ratio", "lambda_plus", "threshold", "top_eigenvalue", "n_outliers", "theta",
            "q2_predicted", "q2", "fit_ok")
    header = ("step", "sigma2", "ratio", "lambda+", "threshold", "top_eig", "outliers", "theta", "q2_pred", "q2",
              "fit")
    rows = []
    for k in range(len(summary.get("step", []))):
        row = []
        for c in cols:
            v = summary[c][k]
            row.append(str(v) if c in ("step", "n_outliers") else ("yes" if v else "no") if c == "fit_ok" else num(v))
        rows.append(row)
    width = [max(len(h), *(len(r[j]) for r in rows)) if rows else len(h) for j, h in enumerate(header)]
    fmt = "  ".join(f"{{:>{w}}}" for w in width)
    lines += [fmt.format(*header), *(fmt.format(*r) for r in rows)]
    first = summary.get("first_outlier_step")
    lines.append(f"first outlier at step {first}" if first is not None else "no outlier above the threshold")
    for key in ("output", "figure"):
        if summary.get(key):
            lines.append(f"{key}: {summary[key]}")
    for step, why in (summary.get("fit_errors") or {}).items():
        lines.append(f"snapshot {step}: bulk not fitted ({why})")
    return "\n".join(lines)
