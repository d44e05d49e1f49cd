"""The C reference loop compiles and gives bitwise shockflow's answer (skipped without a C compiler)."""

import numpy as np
import pytest

from benchmarks.c_reference import VARIANTS, CBurgers, compile_reference, find_compiler
from benchmarks.problems import PROBLEMS
from solvers.conservation import solve_conservation

pytestmark = pytest.mark.skipif(find_compiler() is None, reason="no C compiler: the C reference is skipped")


@pytest.fixture(scope="module", params=["strict", "fair"])
def c_solver(request):
    """The strict build and the fair one (``-ffinite-math-only -fno-signed-zeros``, the flags gcc needs to
    vectorise the max/min selects): both must give shockflow's bits on finite data."""
    library, message = compile_reference(request.param)
    assert library is not None, message
    return CBurgers(library)


@pytest.mark.parametrize("problem, n", [("burgers_1d", 3000), ("burgers_2d", 48)])
@pytest.mark.parametrize("variant", VARIANTS)
def test_c_matches_shockflow_bitwise(c_solver, problem, n, variant):
    """Past the shock, both step rules and both updates are the same arithmetic: identical bits, same steps."""
    p = PROBLEMS[problem]
    grid = p.grid(n)
    q0 = p.exact(grid, 0.0)
    sol = solve_conservation(grid, q0, [p.t_accuracy], integrator="euler")
    q = grid.pad(q0)
    steps = c_solver.solve(q, grid.ghost, grid.dx, 0.0, p.t_accuracy, variant=variant)
    assert steps == sol.steps
    assert np.array_equal(q[grid.interior], sol.final)


def test_c_reports_blow_up():
    library, message = compile_reference("strict")  # the fair build deletes the NaN tests
    assert library is not None, message
    c_solver = CBurgers(library)
    grid = PROBLEMS["burgers_1d"].grid(100)
    q = grid.pad(np.full(100, 0.1))
    q[10] = np.nan
    with pytest.raises(FloatingPointError, match="step 1"):
        c_solver.solve(q, grid.ghost, grid.dx, 0.0, 0.01)
