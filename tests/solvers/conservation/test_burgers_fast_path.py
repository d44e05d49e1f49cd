"""solvers.conservation.burgers_fast_path: the general kernel's arithmetic, its NumPy reference, bitwise the same for any number
of chunks, an exact max|out| from integer bit patterns, and the solver's choice of kernel."""

import numpy as np
import pytest

from solvers.conservation import burgers_fast_path as fp
from solvers.conservation import kernels as ck
from solvers.grid import BoundaryConditions, fill_ghosts_compiled
from solvers.conservation import get_flux
from solvers.grid import Grid
from solvers.conservation import LIMITERS, RECONSTRUCTIONS

BURGERS = get_flux("burgers")


def _field(grid, seed=0):
    q = grid.pad(np.random.default_rng(seed).uniform(-1.0, 1.0, grid.shape))  # both signs: every flux branch
    kinds, values = BoundaryConditions.parse("periodic", grid.ndim).arrays()
    fill_ghosts_compiled(q, grid.ghost, kinds, values)
    return q


def _fast(q, out, dt, grid, a, nu, chunks=None, blend=None, limiter=None):
    """One fast-path step: the serial kernel (chunks None) or the prange kernel over ``chunks`` pieces."""
    code = None if limiter is None else LIMITERS[limiter]
    if grid.ndim == 1:
        if chunks is None:
            return fp.burgers_godunov_euler_1d(q, out, dt, grid.ghost, grid.dx[0], a[0], nu, code, blend,
                                               fp.scratch_1d())
        return fp.burgers_godunov_euler_1d_parallel(q, out, dt, grid.ghost, grid.dx[0], a[0], nu, code, blend,
                                                    fp.scratch_1d(chunks))
    if chunks is None:
        return fp.burgers_godunov_euler_2d(q, out, dt, grid.ghost, *grid.dx, *a, nu, code, blend,
                                           fp.scratch_2d(grid.shape[1]))
    return fp.burgers_godunov_euler_2d_parallel(q, out, dt, grid.ghost, *grid.dx, *a, nu, code, blend,
                                                fp.scratch_2d(grid.shape[1], chunks))


GRIDS = {"1d": lambda: Grid.line(5 * fp.BLOCK + 17),  # several blocks and a ragged last one
         "2d": lambda: Grid((0.0, 0.0), (1.0, 2.0), (23, 41))}


@pytest.mark.parametrize("limiter", [None, "minmod", "mc", "van_leer"])
@pytest.mark.parametrize("nu", [None, 3e-4])
@pytest.mark.parametrize("dims", ["1d", "2d"])
def test_matches_general_kernel_and_stage_reference(dims, nu, limiter):
    """The fast step against the general stage kernel and solvers.conservation.kernels.stage_reference."""
    grid = GRIDS[dims]()
    q = _field(grid, 11)
    a = (1.7,) if grid.ndim == 1 else (0.8, 1.3)
    dt = 0.2 * min(grid.dx) / max(a)
    out = grid.zeros()
    rate = _fast(q, out, dt, grid, a, nu, limiter=limiter)
    recon = ("first_order", "minmod") if limiter is None else ("muscl", limiter)
    codes = (0, RECONSTRUCTIONS[recon[0]], LIMITERS[recon[1]])
    a_faces = [np.full(grid.padded_shape, ak) for ak in a]
    nud = [np.full(grid.padded_shape, 0.0 if nu is None else nu) for _ in a]
    arate = grid.zeros()
    arate[grid.interior] = sum(ak / dk for ak, dk in zip(a, grid.dx))
    zero = grid.zeros()
    ref, ref_rate = ck.stage_reference(q, q, 0.0, 1.0, dt, grid.ghost, grid.dx, a_faces, nud, "godunov", *recon,
                                       BURGERS, ck.NO_SOURCE, zero, arate)
    general = grid.zeros()
    if grid.ndim == 1:
        grate = ck.stage_1d(q, q, general, 0.0, 1.0, dt, grid.ghost, grid.dx[0], a_faces[0], nud[0], nu is not None,
                            *codes, ck.NO_SOURCE, zero, arate)
    else:
        rows = [np.zeros(grid.padded_shape[1]) for _ in range(2)]
        grate = ck.stage_2d(q, q, general, 0.0, 1.0, dt, grid.ghost, *grid.dx, *a_faces, *nud, nu is not None,
                            *codes, ck.NO_SOURCE, zero, arate, *rows)
    assert np.abs(out[grid.interior] - ref).max() <= 1e-14
    assert np.abs(out - general)[grid.interior].max() <= 1e-14
    assert rate == pytest.approx(ref_rate, rel=1e-14) and rate == pytest.approx(grate, rel=1e-14)


#: (nu, blended) pairs: each pair is a separately compiled kernel, and a cold Numba cache pays seconds for each, so
#: the default run takes the two that switch every branch together; the mixed pairs run with the slow tests.
VARIANTS = [(None, False), (3e-4, True),
            pytest.param(None, True, marks=pytest.mark.slow), pytest.param(3e-4, False, marks=pytest.mark.slow)]


@pytest.mark.parametrize("limiter", [None, "minmod", "mc", "van_leer"])
@pytest.mark.parametrize("nu, blended", VARIANTS)
@pytest.mark.parametrize("dims", ["1d", "2d"])
def test_matches_own_reference(dims, nu, blended, limiter):
    stage = (0.75, 0.25) if blended else None
    grid = GRIDS[dims]()
    q = _field(grid, 2)
    blend = None if stage is None else (_field(grid, 5), *stage)
    a = (1.0,) if grid.ndim == 1 else (1.0, 0.5)
    dt = 0.3 * min(grid.dx)
    out = grid.zeros()
    rate = _fast(q, out, dt, grid, a, nu, blend=blend, limiter=limiter)
    ref, ref_rate = fp.burgers_godunov_euler_reference(q, dt, grid.ghost, grid.dx, a, nu, blend, limiter)
    np.testing.assert_allclose(out[grid.interior], ref, rtol=0, atol=1e-14)
    assert rate == pytest.approx(ref_rate, rel=1e-14)


@pytest.mark.parametrize("limiter", [None, "mc"])
@pytest.mark.parametrize("nu, blended", VARIANTS)
@pytest.mark.parametrize("dims, chunks", [("1d", 1), ("1d", 2), ("1d", 3), ("1d", 7), ("2d", 1), ("2d", 2), ("2d", 5)])
def test_chunks_are_bitwise_the_serial_kernel(dims, chunks, nu, blended, limiter):
    grid = GRIDS[dims]()
    q = _field(grid, 1)
    blend = (_field(grid, 6), 0.75, 0.25) if blended else None
    a = (1.0,) if grid.ndim == 1 else (1.0, 0.5)
    dt = 0.2 * min(grid.dx)
    serial, par = grid.zeros(), grid.zeros()
    r_serial = _fast(q, serial, dt, grid, a, nu, blend=blend, limiter=limiter)
    r_par = _fast(q, par, dt, grid, a, nu, chunks, blend=blend, limiter=limiter)
    assert r_par == r_serial
    assert np.array_equal(par, serial)


def test_rate_is_exactly_max_abs_for_awkward_values():
    """The integer maximum of the bit patterns is the float maximum, for signed zeros and subnormals too."""
    grid = Grid.line(2 * fp.BLOCK + 5)
    for values in ([-0.0, 0.0], [5e-324, -1e-310, 0.0], [-3.5, 3.25, -0.0, 1e-300]):
        q = grid.pad(np.resize(np.array(values), grid.shape))
        fill_ghosts_compiled(q, grid.ghost, *BoundaryConditions.parse("periodic", 1).arrays())
        for chunks in (None, 3):
            out = grid.zeros()
            rate = _fast(q, out, 1e-6 * grid.dx[0], grid, (1.0,), None, chunks)
            assert rate == np.max(np.abs(out[grid.interior])) / grid.dx[0]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", [0, 2500, 5 * fp.BLOCK + 16])  # first cell, inside, the ragged last block
@pytest.mark.parametrize("chunks", [None, 2])
def test_non_finite_value_gives_nan_rate(bad, where, chunks):
    grid = Grid.line(5 * fp.BLOCK + 17)
    q = _field(grid)
    q[grid.ghost + where] = bad
    assert np.isnan(_fast(q, grid.zeros(), 1e-5, grid, (1.0,), None, chunks))  # the solver stops on it
    q2 = _field(GRIDS["2d"]())
    q2[5, 7] = bad
    assert np.isnan(_fast(q2, np.zeros_like(q2), 1e-5, GRIDS["2d"](), (1.0, 1.0), 1e-3, chunks))


@pytest.mark.parametrize("chunks", [0, -1, 1.5, True])
def test_scratch_rejects_bad_chunks(chunks):
    with pytest.raises(ValueError, match="chunks"):
        fp.scratch_1d(chunks)
    with pytest.raises(ValueError, match="chunks"):
        fp.scratch_2d(10, chunks)


@pytest.mark.parametrize("shape", [(fp.PARALLEL_THRESHOLD + 1234,), (448, 451)])
def test_solve_conservation_parallel_path_is_bitwise_the_serial_path(shape):
    """Above the threshold with 2 threads the solve runs the prange kernel and returns the serial path's bits."""
    import numba

    from solvers.conservation import solve_conservation

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("Numba has a single thread here")
    grid = Grid.line(shape[0]) if len(shape) == 1 else Grid((0, 0), (1, 1), shape)
    x = grid.mesh()
    q0 = 0.25 + 0.5 * np.sin(2 * np.pi * x[0]) * (1.0 if grid.ndim == 1 else np.cos(2 * np.pi * x[1]))
    # data of both signs (every flux branch), about 40 steps
    t = 40 * 0.9 / (0.75 * shape[0])
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(2)
        par = solve_conservation(grid, q0, [0.5 * t, t], integrator="euler", threads=2)
        numba.set_num_threads(1)
        serial = solve_conservation(grid, q0, [0.5 * t, t], integrator="euler")
        numba.set_num_threads(previous)
        forced = solve_conservation(grid, q0, [0.5 * t, t], integrator="euler", threads=1)
    finally:
        numba.set_num_threads(previous)
    assert par.kernel == "fast-parallel" and serial.kernel == "fast" and forced.kernel == "fast"
    assert par.steps == serial.steps > 10
    assert np.array_equal(par.snapshots, serial.snapshots)
    assert np.array_equal(forced.snapshots, serial.snapshots)


def test_solve_conservation_below_threshold_stays_serial():
    import numba

    from solvers.conservation import solve_conservation

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("Numba has a single thread here")
    grid = Grid.line(2000)
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(2)
        sol = solve_conservation(grid, np.sin(2 * np.pi * grid.mesh()[0]), [0.01], integrator="euler", threads=2)
    finally:
        numba.set_num_threads(previous)
    assert sol.kernel == "fast"


@pytest.mark.parametrize("threads", [0, 2.5, True, 10_000])
def test_solve_conservation_rejects_bad_threads(threads):
    from solvers.conservation import solve_conservation
    from solvers.errors import SolverInputError

    grid = Grid.line(100)
    with pytest.raises(SolverInputError, match="threads: expected None or a whole number"):
        solve_conservation(grid, np.zeros(100), [0.1], integrator="euler", threads=threads)


# -- the compiled step loop inside solve_conservation ----------------------------------------------------------------
@pytest.mark.parametrize("integrator", ["euler", "ssprk3"])
@pytest.mark.parametrize("n, threads", [(400, 1), (fp.PARALLEL_THRESHOLD + 10, 2)])
def test_blow_up_on_the_fast_path_names_step_and_cell(n, threads, integrator):
    """A value whose square overflows makes the first step non-finite: the error names step 1 and the cell."""
    import numba

    from solvers.conservation import solve_conservation
    from solvers.errors import BlowUpError

    if threads > numba.config.NUMBA_NUM_THREADS:
        pytest.skip("Numba has a single thread here")
    grid = Grid.line(n)
    q0 = np.zeros(n)
    q0[37] = 1e160
    with pytest.raises(BlowUpError) as info:
        solve_conservation(grid, q0, [1.0], integrator=integrator, threads=threads)
    err = info.value
    assert err.step == 1 and err.cell == (37,) and not np.isfinite(err.value)
    assert err.time == pytest.approx(0.9 * grid.dx[0] / 1e160, rel=1e-12)


def test_step_limit_on_the_fast_path():
    from solvers.conservation import solve_conservation
    from solvers.errors import SolverInputError

    grid = Grid.line(200)
    q0 = np.sin(2 * np.pi * grid.mesh()[0])
    with pytest.raises(SolverInputError, match="max_steps: the solve needs more than 7 steps"):
        solve_conservation(grid, q0, [0.5], integrator="euler", max_steps=7)
    assert solve_conservation(grid, q0, [0.5], integrator="euler", max_steps=200).steps < 200


@pytest.mark.parametrize("nu", [1e300, 1.0, 1e-3])
def test_a_viscous_solve_that_cannot_end_within_max_steps_is_refused_before_its_first_step(nu):
    """Every explicit step is at most cfl / Σ 2ν/dx²: where that bound alone needs more than max_steps steps, the
    solve stops at once naming ν (with ν = 1e300 it took 10^7 steps, 110 s, before its step limit said so); a
    solve that the bound lets through ends, or stops at its step limit, as before."""
    import re
    import time

    from solvers.conservation import solve_conservation
    from solvers.errors import SolverInputError

    grid = Grid.line(100)
    q0 = np.sin(2 * np.pi * grid.mesh()[0])
    bound = 0.5 * 2.0 * nu / grid.dx[0] ** 2 / 0.9                   # t_end · par_rate / cfl
    start = time.perf_counter()
    if bound > 1000:
        with pytest.raises(SolverInputError, match="needs at least .* steps .* ν = " + re.escape(f"{nu:g}")):
            solve_conservation(grid, q0, [0.5], nu=nu, cfl=0.9, max_steps=1000)
        assert time.perf_counter() - start < 1.0
    else:
        out = solve_conservation(grid, q0, [0.5], nu=nu, cfl=0.9, max_steps=100_000)
        assert out.steps >= bound


@pytest.mark.parametrize("integrator", ["euler", "ssprk2", "ssprk3"])
@pytest.mark.parametrize("nu", [0.0, 1e-3])
def test_output_times_snapshots_and_steps_match_the_general_loop(nu, integrator):
    """Output at t0, several landings, one very close to the previous: the compiled loop takes the clock's steps."""
    from solvers.conservation import solve_conservation

    grid = Grid.line(257)
    q0 = 0.3 + np.sin(2 * np.pi * grid.mesh()[0])
    times = [0.0, 0.05, 0.05 + 1e-9, 0.2, 0.31]
    fast = solve_conservation(grid, q0, times, integrator=integrator, nu=nu)
    general = solve_conservation(grid, q0, times, integrator=integrator, nu=nu, fast_path=False)
    assert fast.kernel == "fast" and general.kernel == "general"
    assert fast.steps == general.steps
    assert np.array_equal(fast.snapshots[0], q0)
    assert np.abs(fast.snapshots - general.snapshots).max() <= 1e-13


def test_every_integrator_starts_with_a_plain_euler_stage():
    """The compiled loop runs stage 0 unblended: (alpha, beta) must be (0, 1) for every integrator."""
    from solvers.time_stepping import INTEGRATORS

    for tab in INTEGRATORS.values():
        assert tuple(tab[0]) == (0.0, 1.0)


def test_the_viscous_bound_covers_the_whole_solve_of_a_caller_that_solves_in_segments():
    """A caller solving output segment by output segment with one budget (shockflow's PDE runner) passes the time the
    budget must reach: the bound is checked against it at the first segment (burgers-sine with ν = 10 ran 208 s of
    segments before the one that could not fit said so)."""
    from solvers.conservation import solve_conservation
    from solvers.errors import SolverInputError

    grid = Grid.line(100)
    q0 = np.sin(2 * np.pi * grid.mesh()[0])
    nu, cfl = 1.0, 0.9
    need = 0.5 * 2.0 * nu / grid.dx[0] ** 2 / cfl                  # over [0, 0.5]: 1.1e4 steps at least
    first = solve_conservation(grid, q0, [0.01], nu=nu, cfl=cfl, max_steps=int(need / 2))   # the segment alone fits
    assert first.steps < need / 2
    with pytest.raises(SolverInputError, match="needs at least .* steps to reach t = 0.5"):
        solve_conservation(grid, q0, [0.01], nu=nu, cfl=cfl, max_steps=int(need / 2), t_final=0.5)
