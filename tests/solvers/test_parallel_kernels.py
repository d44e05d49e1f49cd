"""solvers.parallel_kernels: bitwise the serial fast path for any number of chunks, and its NumPy reference."""

import numpy as np
import pytest

from solvers import conservation_kernels as ck
from solvers import parallel_kernels as pk
from solvers.boundary import BoundaryConditions, fill_ghosts_compiled
from solvers.grid import Grid


def _field(grid, seed=0):
    q = grid.pad(np.random.default_rng(seed).uniform(-1.0, 1.0, grid.shape))  # both signs: every flux branch
    kinds, values = BoundaryConditions.parse("periodic", grid.ndim).arrays()
    fill_ghosts_compiled(q, grid.ghost, kinds, values)
    return q


@pytest.mark.parametrize("chunks", [1, 2, 3, 7])
def test_1d_bitwise_equal_to_serial(chunks):
    grid = Grid.line(5 * pk.BLOCK + 17)  # several blocks and a ragged last one
    q = _field(grid)
    dt = 0.4 * grid.dx[0]
    serial, par = grid.zeros(), grid.zeros()
    r_serial = ck.burgers_godunov_euler_1d(q, serial, dt, grid.ghost, grid.dx[0], 1.0)
    r_par = pk.burgers_godunov_euler_1d_parallel(q, par, dt, grid.ghost, grid.dx[0], 1.0, pk.scratch_1d(chunks))
    assert r_par == r_serial
    assert np.array_equal(par, serial)


@pytest.mark.parametrize("chunks", [1, 2, 5])
def test_2d_bitwise_equal_to_serial(chunks):
    grid = Grid((0, 0), (1, 2), (23, 41))
    q = _field(grid, 1)
    dt = 0.2 * grid.dx[0]
    serial, par = grid.zeros(), grid.zeros()
    r_serial = ck.burgers_godunov_euler_2d(q, serial, dt, grid.ghost, *grid.dx, 1.0, 0.5, np.zeros(grid.padded_shape[1]))
    r_par = pk.burgers_godunov_euler_2d_parallel(q, par, dt, grid.ghost, *grid.dx, 1.0, 0.5, pk.scratch_2d(chunks, 41))
    assert r_par == r_serial
    assert np.array_equal(par, serial)


@pytest.mark.parametrize("shape", [(301,), (17, 29)])
def test_reference_matches_kernels(shape):
    grid = Grid.line(shape[0]) if len(shape) == 1 else Grid((0, 0), (1, 1), shape)
    q = _field(grid, 2)
    dt = 0.3 * grid.dx[0]
    out = grid.zeros()
    if grid.ndim == 1:
        rate = pk.burgers_godunov_euler_1d_parallel(q, out, dt, grid.ghost, grid.dx[0], 1.0, pk.scratch_1d(2))
    else:
        rate = pk.burgers_godunov_euler_2d_parallel(q, out, dt, grid.ghost, *grid.dx, 1.0, 1.0, pk.scratch_2d(2, shape[1]))
    ref, ref_rate = pk.burgers_godunov_euler_reference(q, dt, grid.ghost, grid.dx, 1.0)
    np.testing.assert_allclose(out[grid.interior], ref, rtol=0, atol=1e-14)
    assert rate == pytest.approx(ref_rate, rel=1e-14)


def test_non_finite_value_gives_a_non_finite_rate():
    grid = Grid.line(3000)
    q = _field(grid)
    q[grid.ghost + 2500] = np.inf
    rate = pk.burgers_godunov_euler_1d_parallel(q, grid.zeros(), 1e-5, grid.ghost, grid.dx[0], 1.0, pk.scratch_1d(2))
    assert not np.isfinite(rate)  # the driver stops on it (solve_conservation checks isfinite)


def test_scratch_rejects_zero_chunks():
    with pytest.raises(ValueError, match="chunks"):
        pk.scratch_1d(0)


@pytest.mark.parametrize("chunks", [1, 3])
def test_driver_on_parallel_kernels_reproduces_solve_conservation(chunks):
    """The benchmark's prange driver takes shockflow's steps: same step count, identical bits, past the shock."""
    from benchmarks.problems import PROBLEMS
    from benchmarks.tools.shockflow_runs import parallel_fast_path
    from solvers.conservation import solve_conservation

    for name, n in (("burgers_1d", 2500), ("burgers_2d", 40)):
        p = PROBLEMS[name]
        grid = p.grid(n)
        q0 = p.exact(grid, 0.0)
        u, steps = parallel_fast_path(grid, q0, 0.0, p.t_accuracy, chunks)()
        sol = solve_conservation(grid, q0, [p.t_accuracy], integrator="euler")
        assert steps == sol.steps
        assert np.array_equal(u, sol.final)


@pytest.mark.parametrize("shape", [(pk.PARALLEL_THRESHOLD + 1234,), (448, 451)])
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
        par = solve_conservation(grid, q0, [0.5 * t, t], integrator="euler")
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
