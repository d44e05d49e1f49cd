"""A sum of logistic switch-ons on a log scale, and its Jacobian: the model a loss curve's drops are fitted by.

    f(t) = ln(A + Σ_k V_k (1 − σ(r_k (t − t_k)))²) − β ln(1 + t),     σ(x) = (1 + tanh(x/2))/2,

parameters p = (ln A, β, then ln V_k, t_k, ln r_k per switch-on), ln A and ln V_k clipped to ±700 and ln r_k to
±50 (exp stays finite; a clipped parameter has derivative 0).  With g_k = 1 − σ(x_k), x_k = r_k (t − t_k) and S
the sum: ∂f/∂ln A = A/S, ∂f/∂β = −ln(1 + t), ∂f/∂ln V_k = w_k := V_k g_k²/S,
∂f/∂t_k = 2 r_k w_k (1 − g_k), ∂f/∂ln r_k = −2 x_k w_k (1 − g_k).

:func:`switch_on_log_model` is the NumPy reference; :func:`switch_on_log_model_fast` gives the same numbers to the
last bit (tested) in about 0.4 of the time on the few hundred points a fit has (12.6 against 31.0 µs at K = 3, 300 points; the NumPy version is some
forty array operations, each of them mostly call overhead at this size): NumPy computes the hyperbolic tangents
(its own SIMD tanh, which a compiled ``math.tanh`` does not match bit for bit: 14 % of values differ in the last
place), the exponentials of the parameters (the reference's own :func:`_clipped`) and the logarithm of the sum, and
two compiled loops do the rest, operation for operation in NumPy's order (the sum over switch-ons from the first to
the last, as ``np.add.reduce`` along the first axis adds rows; no fastmath).  NumPy's exp and log are its own SIMD
code where the CPU has AVX-512 (NumPy 2.4 on a Xeon: 4.5 % of exp values and 0.04 % of log values differ in the last
place from the C library's, which a compiled ``np.exp`` calls), so every transcendental is NumPy's in both.  The Jacobian comes as rows, one per parameter (MINPACK's column-major layout:
``col_deriv``).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["switch_on_log_model", "switch_on_log_model_fast"]


def _clipped(p, K: int):
    """(A, ln V, t, ln r, V, r) with the clipping of the module docstring."""
    A = np.exp(min(max(p[0], -700.0), 700.0))
    q = np.asarray(p[2:2 + 3 * K], dtype=np.float64).reshape(K, 3)
    V = np.exp(np.minimum(np.maximum(q[:, 0], -700.0), 700.0))
    r = np.exp(np.minimum(np.maximum(q[:, 2], -50.0), 50.0))
    return A, q, V, r


def switch_on_log_model(p, t, K: int, jacobian: bool = True, log1p_t=None):
    """``(f(t), J)``: J of shape (2 + 3K, t.size), one row per parameter (None unless ``jacobian``); NumPy."""
    t = np.asarray(t, dtype=np.float64)
    A, q, V, r = _clipped(p, K)
    x = r[:, None] * (t - q[:, 1:2])
    g = 0.5 * (1.0 - np.tanh(0.5 * x))
    vg2 = V[:, None] * g * g
    total = np.maximum(A + np.add.reduce(vg2, axis=0), 1e-300)
    log1p_t = np.log1p(t) if log1p_t is None else log1p_t
    value = np.log(total) - p[1] * log1p_t
    if not jacobian:
        return value, None
    w = vg2 / total
    fall = 1.0 - g
    J = np.empty((2 + 3 * K, t.size))
    J[0] = (A / total) * (abs(p[0]) < 700)
    J[1] = -log1p_t
    J[2::3] = w * (np.abs(q[:, 0:1]) < 700)
    J[3::3] = 2.0 * r[:, None] * w * fall
    J[4::3] = -2.0 * x * w * fall * (np.abs(q[:, 2:3]) < 50)
    return value, J


def switch_on_log_model_fast(p, t, K: int, jacobian: bool = True, log1p_t=None):
    """:func:`switch_on_log_model`, the same numbers: NumPy's exp, tanh and log, the rest in two compiled loops."""
    t = np.asarray(t, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    log1p_t = np.log1p(t) if log1p_t is None else log1p_t
    A, q, V, r = _clipped(p, K)
    x = np.empty((K, t.size))
    th = np.empty((K, t.size))
    _phases(p, r, t, x, th)
    np.tanh(th, out=th)
    total = np.empty(t.size)
    J = np.empty((2 + 3 * K, t.size)) if jacobian else np.empty((0, t.size))
    _terms(p, float(A), V, r, x, th, log1p_t, total, J, jacobian)
    value = np.log(total, out=total)
    value -= p[1] * log1p_t
    return value, (J if jacobian else None)


@numba.njit(cache=True)
def _phases(p, r, t, x, half):
    """x_k = r_k (t − t_k) and x_k / 2 (whose tanh NumPy takes)."""
    K, n = x.shape
    for k in range(K):
        tk = p[3 + 3 * k]
        for j in range(n):
            x[k, j] = r[k] * (t[j] - tk)
            half[k, j] = 0.5 * x[k, j]


@numba.njit(cache=True)
def _terms(p, A, V, r, x, th, log1p_t, total_out, J, jacobian):
    """The sum ``S`` into ``total_out`` (its logarithm is NumPy's) and, with ``jacobian``, the rows of ``J``: the
    operations of :func:`switch_on_log_model` in its order (no fastmath: no contraction, no reassociation)."""
    K, n = x.shape
    keep_a = 1.0 if abs(p[0]) < 700 else 0.0
    keep_v = np.empty(K)
    keep_r = np.empty(K)
    for k in range(K):
        keep_v[k] = 1.0 if abs(p[2 + 3 * k]) < 700 else 0.0
        keep_r[k] = 1.0 if abs(p[4 + 3 * k]) < 50 else 0.0
    for j in range(n):
        s = 0.0
        for k in range(K):
            g = 0.5 * (1.0 - th[k, j])
            vg2 = V[k] * g * g
            s = vg2 if k == 0 else s + vg2
        total = A + s
        if total < 1e-300:   # np.maximum's floor: a NaN stays NaN
            total = 1e-300
        total_out[j] = total
        if not jacobian:
            continue
        J[0, j] = (A / total) * keep_a
        J[1, j] = -log1p_t[j]
        for k in range(K):
            g = 0.5 * (1.0 - th[k, j])
            w = (V[k] * g * g) / total
            fall = 1.0 - g
            J[2 + 3 * k, j] = w * keep_v[k]
            J[3 + 3 * k, j] = 2.0 * r[k] * w * fall
            J[4 + 3 * k, j] = -2.0 * x[k, j] * w * fall * keep_r[k]
