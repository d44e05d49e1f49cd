"""Fused Numba kernels for one Runge–Kutta stage of a scalar conservation law, and their NumPy reference.

The equation (docs/theory.md §1) on a uniform grid (1, 2 or 3 axes), with a(x) > 0 per axis and nu D(x) >= 0:

    q_t + sum_k d_k( a_k(x) f(q) ) = div( nu D(x) grad q ) + s(q, c(x))

A stage (Shu–Osher form, :mod:`solvers.time_stepping`) writes

    out = alpha q0 + beta (q + dt L(q)),
    L(q)_i = - sum_k (H_{k,i+1/2} - H_{k,i-1/2}) / dx_k + s(q_i, c_i),
    H_{k,i+1/2} = a_{k,i+1/2} F(q_L, q_R) - nu D_{k,i+1/2} (q_{i+1} - q_i) / dx_k,

with ``F`` the numerical flux (:mod:`solvers.conservation.numerical_fluxes`) of the reconstructed face states
(:mod:`solvers.conservation.reconstruction`), in one pass over the cells: every face flux and every cell
reconstruction is computed once (the lower face along the fastest axis is carried in a
register, the lower faces along the slower axis in a row buffer).  Each kernel returns the largest
hyperbolic *rate* ``max_i |f'(out_i)| * arate_i`` of the new values, with
``arate_i = sum_k max(a_{k,i-1/2}, a_{k,i+1/2}) / dx_k``, so the next stable step is
``1 / rate``; it returns NaN (early) when a non-finite value appears.

Coefficient arrays (``a_k``, ``nu D_k`` on faces, ``arate`` and the source field ``c`` on cells)
have the padded shape; the face array entry ``i`` along axis ``k`` is the face between padded
cells ``i`` and ``i + 1``.

Sources (code, s(q, c)): 0 none, 1 linear ``c q`` (relaxation with c = -k), 2 a field ``c``,
3 a user compiled function ``user_source(q, c)`` (substituted like a user flux).

The most common case (Burgers, exact Godunov, first order, forward Euler, constant a, no source)
has its own kernels in :mod:`solvers.conservation.burgers_fast_path`; tests compare them with these.
"""

from __future__ import annotations

import functools
import types

import numba
import numpy as np

from solvers.conservation import numerical_fluxes
from solvers.conservation.flux_functions import ConvexFlux, recompile_with
from solvers.conservation.flux_functions import burgers_derivative as flux_derivative
from solvers.conservation.numerical_fluxes import numerical_flux, numerical_flux_reference
from solvers.conservation.reconstruction import cell_faces, face_states_reference

NO_SOURCE, LINEAR_SOURCE, FIELD_SOURCE, USER_SOURCE = 0, 1, 2, 3
SOURCES = {"none": NO_SOURCE, "linear": LINEAR_SOURCE, "field": FIELD_SOURCE, "user": USER_SOURCE}


@numba.njit(cache=True)
def user_source(q, c):
    """Placeholder for a user source s(q, c); rebound by :func:`kernels_for`."""
    return 0.0


@numba.njit(cache=True)
def source_value(code, q, c):
    if code == LINEAR_SOURCE:
        return c * q
    elif code == FIELD_SOURCE:
        return c
    elif code == USER_SOURCE:
        return user_source(q, c)
    return 0.0


@numba.njit(cache=True)
def stage_1d(qp, q0, out, alpha, beta, dt, g, dx, af, nud, has_diff, nf, recon, lim, src, sfield, arate):
    """One fused stage in 1-D (see the module docstring); returns the hyperbolic rate of ``out``."""
    # Views offset so that every index below is non-negative (Numba then drops its wrap-around code).
    n = qp.shape[0] - 2 * g
    qb = qp[g - 3:]  # cell m (interior numbering) is qb[m + 3]
    q0b = q0[g:]
    ob = out[g:]
    afb = af[g - 1:]  # face m + 1/2 is afb[m + 1]
    nb = nud[g - 1:]
    sb = sfield[g:]
    rb = arate[g:]
    inv_dx = 1.0 / dx
    lo_m, hi_m = cell_faces(recon, lim, qb[0], qb[1], qb[2], qb[3], qb[4])  # cell -1
    lo_c, hi_c = cell_faces(recon, lim, qb[1], qb[2], qb[3], qb[4], qb[5])  # cell 0
    h_lo = afb[0] * numerical_flux(nf, hi_m, lo_c)
    if has_diff:
        h_lo -= nb[0] * (qb[3] - qb[2]) * inv_dx
    rate = 0.0
    for m in range(n):
        q = qb[m + 3]
        qn = qb[m + 4]
        lo_n, hi_n = cell_faces(recon, lim, qb[m + 2], q, qn, qb[m + 5], qb[m + 6])  # cell m + 1
        h = afb[m + 1] * numerical_flux(nf, hi_c, lo_n)
        if has_diff:
            h -= nb[m + 1] * (qn - q) * inv_dx
        rhs = -(h - h_lo) * inv_dx
        if src != NO_SOURCE:
            rhs += source_value(src, q, sb[m])
        v = alpha * q0b[m] + beta * (q + dt * rhs)
        ob[m] = v
        r = rb[m] * abs(flux_derivative(v))
        if not (r <= rate):
            rate = r
            if r != r:
                return r
        h_lo = h
        hi_c = hi_n
    return rate


@numba.njit(cache=True)
def stage_2d(qp, q0, out, alpha, beta, dt, g, dx, dy, ax, ay, nudx, nudy, has_diff, nf, recon, lim, src, sfield,
             arate, row_flux, row_upper):
    """One fused stage in 2-D; ``row_flux``, ``row_upper`` are work rows of length >= the interior of axis 1.

    ``row_flux[l]`` carries the flux through the lower x-face of the current cell of column l and
    ``row_upper[l]`` that cell's reconstructed value at its upper x-face.
    """
    nx = qp.shape[0] - 2 * g
    ny = qp.shape[1] - 2 * g
    qb = qp[g - 3:, g - 3:]  # cell (m, l) is qb[m + 3, l + 3]
    q0b = q0[g:, g:]
    ob = out[g:, g:]
    axb = ax[g - 1:, g:]  # x-face (m + 1/2, l) is axb[m + 1, l]
    ayb = ay[g:, g - 1:]  # y-face (m, l + 1/2) is ayb[m, l + 1]
    nxb = nudx[g - 1:, g:]
    nyb = nudy[g:, g - 1:]
    sb = sfield[g:, g:]
    rb = arate[g:, g:]
    idx = 1.0 / dx
    idy = 1.0 / dy
    for l in range(ny):
        c = l + 3
        lo_m, hi_m = cell_faces(recon, lim, qb[0, c], qb[1, c], qb[2, c], qb[3, c], qb[4, c])
        lo_c, hi_c = cell_faces(recon, lim, qb[1, c], qb[2, c], qb[3, c], qb[4, c], qb[5, c])
        h = axb[0, l] * numerical_flux(nf, hi_m, lo_c)
        if has_diff:
            h -= nxb[0, l] * (qb[3, c] - qb[2, c]) * idx
        row_flux[l] = h
        row_upper[l] = hi_c
    rate = 0.0
    for m in range(nx):
        r_m1 = qb[m + 2]
        r_0 = qb[m + 3]
        r_p1 = qb[m + 4]
        r_p2 = qb[m + 5]
        r_p3 = qb[m + 6]
        lo_m, hi_m = cell_faces(recon, lim, r_0[0], r_0[1], r_0[2], r_0[3], r_0[4])
        lo_c, hi_c = cell_faces(recon, lim, r_0[1], r_0[2], r_0[3], r_0[4], r_0[5])
        k_lo = ayb[m, 0] * numerical_flux(nf, hi_m, lo_c)
        if has_diff:
            k_lo -= nyb[m, 0] * (r_0[3] - r_0[2]) * idy
        for l in range(ny):
            c = l + 3
            q = r_0[c]
            qe = r_p1[c]
            qn = r_0[c + 1]
            lo_e, hi_e = cell_faces(recon, lim, r_m1[c], q, qe, r_p2[c], r_p3[c])  # cell (m + 1, l) in x
            h = axb[m + 1, l] * numerical_flux(nf, row_upper[l], lo_e)
            lo_n, hi_n = cell_faces(recon, lim, r_0[c - 1], q, qn, r_0[c + 2], r_0[c + 3])  # cell (m, l + 1) in y
            k = ayb[m, l + 1] * numerical_flux(nf, hi_c, lo_n)
            if has_diff:
                h -= nxb[m + 1, l] * (qe - q) * idx
                k -= nyb[m, l + 1] * (qn - q) * idy
            rhs = -(h - row_flux[l]) * idx - (k - k_lo) * idy
            if src != NO_SOURCE:
                rhs += source_value(src, q, sb[m, l])
            v = alpha * q0b[m, l] + beta * (q + dt * rhs)
            ob[m, l] = v
            r = rb[m, l] * abs(flux_derivative(v))
            if not (r <= rate):
                rate = r
                if r != r:
                    return r
            row_flux[l] = h
            row_upper[l] = hi_e
            k_lo = k
            hi_c = hi_n
    return rate


@numba.njit(cache=True)
def stage_3d(qp, q0, out, alpha, beta, dt, g, dx, dy, dz, ax, ay, az, nudx, nudy, nudz, has_diff, nf, recon, lim,
             src, sfield, arate, plane_flux, plane_upper, row_flux, row_upper):
    """One fused stage in 3-D.  ``plane_*`` (shape >= (ny, nz)) carry the lower x-faces, ``row_*`` (>= nz) the
    lower y-faces of the current cells; the lower z-face is carried in registers."""
    nx = qp.shape[0] - 2 * g
    ny = qp.shape[1] - 2 * g
    nz = qp.shape[2] - 2 * g
    qb = qp[g - 3:, g - 3:, g - 3:]  # cell (m, l, p) is qb[m + 3, l + 3, p + 3]
    q0b = q0[g:, g:, g:]
    ob = out[g:, g:, g:]
    axb = ax[g - 1:, g:, g:]
    ayb = ay[g:, g - 1:, g:]
    azb = az[g:, g:, g - 1:]
    nxb = nudx[g - 1:, g:, g:]
    nyb = nudy[g:, g - 1:, g:]
    nzb = nudz[g:, g:, g - 1:]
    sb = sfield[g:, g:, g:]
    rb = arate[g:, g:, g:]
    idx = 1.0 / dx
    idy = 1.0 / dy
    idz = 1.0 / dz
    for l in range(ny):
        for p in range(nz):
            c, d = l + 3, p + 3
            lo_m, hi_m = cell_faces(recon, lim, qb[0, c, d], qb[1, c, d], qb[2, c, d], qb[3, c, d], qb[4, c, d])
            lo_c, hi_c = cell_faces(recon, lim, qb[1, c, d], qb[2, c, d], qb[3, c, d], qb[4, c, d], qb[5, c, d])
            h = axb[0, l, p] * numerical_flux(nf, hi_m, lo_c)
            if has_diff:
                h -= nxb[0, l, p] * (qb[3, c, d] - qb[2, c, d]) * idx
            plane_flux[l, p] = h
            plane_upper[l, p] = hi_c
    rate = 0.0
    for m in range(nx):
        s0 = qb[m + 3]
        for p in range(nz):
            d = p + 3
            lo_m, hi_m = cell_faces(recon, lim, s0[0, d], s0[1, d], s0[2, d], s0[3, d], s0[4, d])
            lo_c, hi_c = cell_faces(recon, lim, s0[1, d], s0[2, d], s0[3, d], s0[4, d], s0[5, d])
            k = ayb[m, 0, p] * numerical_flux(nf, hi_m, lo_c)
            if has_diff:
                k -= nyb[m, 0, p] * (s0[3, d] - s0[2, d]) * idy
            row_flux[p] = k
            row_upper[p] = hi_c
        for l in range(ny):
            c = l + 3
            r0 = s0[c]
            lo_m, hi_m = cell_faces(recon, lim, r0[0], r0[1], r0[2], r0[3], r0[4])
            lo_c, hi_zc = cell_faces(recon, lim, r0[1], r0[2], r0[3], r0[4], r0[5])
            z_lo = azb[m, l, 0] * numerical_flux(nf, hi_m, lo_c)
            if has_diff:
                z_lo -= nzb[m, l, 0] * (r0[3] - r0[2]) * idz
            for p in range(nz):
                d = p + 3
                q = r0[d]
                qe = qb[m + 4, c, d]
                qn = qb[m + 3, c + 1, d]
                qt = r0[d + 1]
                lo_e, hi_e = cell_faces(recon, lim, qb[m + 2, c, d], q, qe, qb[m + 5, c, d], qb[m + 6, c, d])
                h = axb[m + 1, l, p] * numerical_flux(nf, plane_upper[l, p], lo_e)
                lo_n, hi_n = cell_faces(recon, lim, s0[c - 1, d], q, qn, s0[c + 2, d], s0[c + 3, d])
                k = ayb[m, l + 1, p] * numerical_flux(nf, row_upper[p], lo_n)
                lo_t, hi_t = cell_faces(recon, lim, r0[d - 1], q, qt, r0[d + 2], r0[d + 3])
                z = azb[m, l, p + 1] * numerical_flux(nf, hi_zc, lo_t)
                if has_diff:
                    h -= nxb[m + 1, l, p] * (qe - q) * idx
                    k -= nyb[m, l + 1, p] * (qn - q) * idy
                    z -= nzb[m, l, p + 1] * (qt - q) * idz
                rhs = -(h - plane_flux[l, p]) * idx - (k - row_flux[p]) * idy - (z - z_lo) * idz
                if src != NO_SOURCE:
                    rhs += source_value(src, q, sb[m, l, p])
                v = alpha * q0b[m, l, p] + beta * (q + dt * rhs)
                ob[m, l, p] = v
                r = rb[m, l, p] * abs(flux_derivative(v))
                if not (r <= rate):
                    rate = r
                    if r != r:
                        return r
                plane_flux[l, p] = h
                plane_upper[l, p] = hi_e
                row_flux[p] = k
                row_upper[p] = hi_n
                z_lo = z
                hi_zc = hi_t
    return rate


@numba.njit(cache=True)
def hyperbolic_rate(q, arate):
    """max |f'(q)| * arate over a padded field (arate is 0 in the ghost cells); NaN if a value is not finite."""
    qf = q.reshape(q.size)
    af = arate.reshape(arate.size)
    rate = 0.0
    for i in range(qf.size):
        r = af[i] * abs(flux_derivative(qf[i]))
        if not (r <= rate):
            rate = r
            if r != r:
                return r
    return rate


@numba.njit(cache=True)
def max_abs(values):
    """max |v| over a contiguous 1-D array, without a temporary (0 for an empty one; NaN if a value is NaN).

    An integer maximum over the bit patterns with the sign cleared (for non-negative doubles their order is the
    values' order, +inf's pattern is above every finite one and NaN's above +inf's): one pass that vectorises and
    is exact.  Reference: ``np.max(np.abs(values))``."""
    bits = values.view(np.int64)
    top = np.zeros(1, dtype=np.int64)
    peak = 0
    for i in range(bits.size):
        peak = max(peak, bits[i] & 0x7FFF_FFFF_FFFF_FFFF)
    if peak > 0x7FF0_0000_0000_0000:
        return np.nan
    top[0] = peak
    return top.view(np.float64)[0]


#: The compiled functions of this module that see the flux or the source, in dependency order.
COMPILED = (user_source, source_value, stage_1d, stage_2d, stage_3d, hyperbolic_rate)


@functools.lru_cache(maxsize=32)
def kernels_for(flux: ConvexFlux, user_source_function=None) -> types.SimpleNamespace:
    """The stage kernels for ``flux`` and a user source: the cached module kernels for built-ins,
    otherwise the same source recompiled with the user's functions (see :mod:`solvers.conservation.flux_functions`)."""
    if flux.builtin and user_source_function is None:
        return types.SimpleNamespace(stage_1d=stage_1d, stage_2d=stage_2d, stage_3d=stage_3d, hyperbolic_rate=hyperbolic_rate)
    overrides = {}
    if not flux.builtin:
        overrides.update(flux_value=flux.f, flux_derivative=flux.df, SONIC=flux.sonic)
    if user_source_function is not None:
        overrides["user_source"] = user_source_function
    rebuilt = {}
    for fn in numerical_fluxes.COMPILED + COMPILED:
        name = fn.py_func.__name__
        if name == "user_source":
            continue
        rebuilt[name] = recompile_with(fn, {**overrides, **rebuilt})
    return types.SimpleNamespace(**{k: rebuilt[k] for k in ("stage_1d", "stage_2d", "stage_3d", "hyperbolic_rate")})


# -- NumPy reference ----------------------------------------------------------------------------------------------------
def stage_reference(qp, q0, alpha, beta, dt, g, dx, a_faces, nud_faces, numerical_flux_name, reconstruction, limiter,
                    flux, source_code, source_field, arate, user_source_function=None):
    """NumPy reference of one stage: returns ``(out_interior, rate)`` (``qp`` ghost cells already filled)."""
    ndim = qp.ndim
    interior = tuple(slice(g, s - g) for s in qp.shape)
    rhs = np.zeros(tuple(s - 2 * g for s in qp.shape))
    for k in range(ndim):
        ql, qr = face_states_reference(qp, k, reconstruction, limiter)  # entry m: face between m and m+1
        faces = numerical_flux_reference(numerical_flux_name, flux, ql, qr)
        n = qp.shape[k] - 2 * g
        fsel = list(interior)
        fsel[k] = slice(g - 1, g + n)  # the faces of the interior cells along k
        h = a_faces[k][tuple(fsel)] * faces[tuple(fsel)]
        if nud_faces is not None:
            lo = list(interior)
            lo[k] = slice(g - 1, g + n)
            hi = list(interior)
            hi[k] = slice(g, g + n + 1)
            h = h - nud_faces[k][tuple(fsel)] * (qp[tuple(hi)] - qp[tuple(lo)]) / dx[k]
        h = np.moveaxis(h, k, 0)
        rhs -= np.moveaxis((h[1:] - h[:-1]) / dx[k], 0, k)
    q = qp[interior]
    c = source_field[interior]
    if source_code == LINEAR_SOURCE:
        rhs += c * q
    elif source_code == FIELD_SOURCE:
        rhs += c
    elif source_code == USER_SOURCE:
        rhs += np.vectorize(user_source_function, otypes=[np.float64])(q, c)
    out = alpha * q0[interior] + beta * (q + dt * rhs)
    rate = float(np.max(arate[interior] * np.abs(flux.derivative(out))))
    return out, rate
