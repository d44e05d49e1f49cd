"""Items 2 and 5 of issue 21: sizes refused up front (the key that drives them), unstable schemes refused."""

import time

import numpy as np
import pytest

from shockflow.cases import CaseError, load_case
from shockflow.cases.cost import estimate, require_affordable
from solvers.conservation.reconstruction import RECONSTRUCTIONS
from solvers.hamilton_jacobi.derivatives import DERIVATIVES
from solvers.time_stepping import HIGH_ORDER_SCHEMES, INTEGRATORS, STABILITY_LIMITS

HUGE = [  # (case, overrides, the key the error must name)
    ("burgers-sine", ["domain.cells=1000000000"], "domain.cells"),
    ("burgers-sine", ["output.snapshots=1000000000000"], "output.snapshots"),
    ("hj-sphere", ["domain.frequency=100000"], "domain.frequency"),
    ("two-layer-staircase", ["data.n=1000000000000"], "data.n"),
    ("two-layer-staircase", ["training.steps=1000000000000"], "training.steps"),
    ("two-layer-staircase", ["extraction.cells=1000000000000"], "extraction.cells"),
    ("mean-field-linear", ["model.width=1000000000000"], "model.width"),
    ("bbp-linear", ["teacher_student.N=100000", "teacher_student.M=100000"], "teacher_student.N"),
    ("nqf-five-mode", ["experiment.lr=1e-12"], "experiment.lr"),
    ("scaling-data-limited", ["scaling.grid.n=[80000, 160000, 320000]", "scaling.grid.d=[20000]"], "scaling.grid.n"),
]


@pytest.mark.parametrize("name, overrides, key", HUGE, ids=[h[2] for h in HUGE])
def test_huge_inputs_are_refused_by_validate_at_once_naming_their_key(cli, name, overrides, key):
    start = time.perf_counter()
    args = ["validate", name] + [a for o in overrides for a in ("--set", o)]
    code, _, err = cli(*args)
    assert code == 2 and "Traceback" not in err
    assert f"{key}: the case " in err and "--allow-large" in err
    assert time.perf_counter() - start < 5.0  # computed from the settings, nothing allocated


def test_a_final_time_past_max_steps_is_refused_before_the_solve_naming_output_t_end(cli, workdir):
    """A tester's t_end = 1e9 ran 19 s into solver.max_steps: the step count at the initial data's Courant step is
    checked by validate and by solve before the solve (only far past max_steps: burgers' step grows as it decays)."""
    for name, override in (("burgers-sine", "output.t_end=1e9"), ("burgers-sine", "solver.max_steps=10"),
                           ("hj-cosine-ridge", "solver.max_steps=10")):
        for args in (("validate",), ("solve", "--out", "out", "--no-figures")):
            code, _, err = cli(args[0], name, *args[1:], "--set", override)
            assert code == 2 and "output.t_end: reaching t_end = " in err and " time steps " in err, err
            assert "solver.max_steps = " in err and "started (0/" not in err
    assert list((workdir / "out").iterdir()) == []
    # burgers-sine: about 890 steps at its first step; within ten times max_steps = 100 it is left to the solver
    assert cli("validate", "burgers-sine", "--set", "solver.max_steps=100")[0] == 0


def test_every_builtin_case_fits_and_costs_scale_with_their_sizes():
    small = load_case("burgers-sine", overrides=["domain.cells=100", "output.snapshots=11"])
    big = load_case("burgers-sine", overrides=["domain.cells=1000", "output.snapshots=11"])
    # memory linear in the cells; time quadratic (cells x steps, the step shrinking with the cell)
    assert estimate(big).bytes == pytest.approx(10 * estimate(small).bytes)
    assert estimate(big).seconds == pytest.approx(100 * estimate(small).seconds, rel=0.05)
    # an estimate is not below what the result stores: snapshots x cells doubles
    assert estimate(big).bytes >= 11 * 1000 * 8


def test_the_memory_limit_and_the_override(monkeypatch):
    case = load_case("burgers-sine")
    need = estimate(case).bytes
    with pytest.raises(CaseError) as info:
        require_affordable(case, memory=need / 2)
    assert info.value.keys == ("domain.cells",)
    assert require_affordable(case, memory=need / 2, allow_large=True).bytes == need
    monkeypatch.setenv("SHOCKFLOW_MAX_MEMORY", str(need / 2))
    with pytest.raises(CaseError):
        require_affordable(case)
    monkeypatch.setenv("SHOCKFLOW_MAX_MEMORY", str(need * 2))
    assert require_affordable(case).bytes == need


def test_allow_large_lets_validate_pass_what_the_limit_refuses(cli, monkeypatch):
    monkeypatch.setenv("SHOCKFLOW_MAX_MEMORY", "1000")
    assert cli("validate", "burgers-sine")[0] == 2
    assert cli("validate", "burgers-sine", "--allow-large")[0] == 0


# -- stability limits ------------------------------------------------------------------------------
def test_the_table_covers_every_scheme_and_integrator():
    schemes = set(RECONSTRUCTIONS) | set(DERIVATIVES)
    assert {(s, i) for s in schemes for i in INTEGRATORS} == set(STABILITY_LIMITS)
    assert set(HIGH_ORDER_SCHEMES) == schemes - {"first_order"}
    for (scheme, integrator), limit in STABILITY_LIMITS.items():
        assert 0 <= limit <= 1
        if scheme == "first_order":
            assert limit == 1.0  # monotone / TVD up to 1 with every SSP method


@pytest.mark.parametrize("case, overrides, key, text", [
    ("burgers-sine", ["solver.cfl=1.0", "solver.integrator=euler"], "solver.integrator", "forward Euler"),
    ("burgers-sine", ["solver.cfl=0.7"], "solver.cfl", "<= 0.5"),
    ("burgers-sine", ["solver.reconstruction=weno5", "solver.integrator=euler", "solver.cfl=1"], "solver.integrator",
     "unstable at every Courant number"),
    ("burgers-sine", ["solver.reconstruction=weno5", "solver.integrator=ssprk3", "solver.cfl=1"], "solver.cfl", "<= 0.5"),
    ("hj-cosine-ridge", ["solver.integrator=euler"], "solver.integrator", '"eno2"'),
    ("hj-cosine-ridge", ["solver.derivative=weno5", "solver.integrator=euler"], "solver.integrator", '"weno5"'),
])
def test_unstable_pairs_are_refused_with_the_limit(case, overrides, key, text):
    with pytest.raises(CaseError) as info:
        load_case(case, overrides=overrides)
    assert info.value.keys == (key,) and text in str(info.value)
    assert load_case(case, overrides=overrides + ["solver.force_unstable=true"]).settings.solver.force_unstable


def test_the_limit_is_real_first_order_at_its_limit_keeps_the_maximum_principle_muscl_euler_beyond_does_not(cli, tmp_path):
    """Godunov + Euler at CFL 1 (its limit) creates no new extremum; MUSCL + forward Euler at CFL 1 (forced,
    twice its limit) does: the refusal protects from a real failure, not a formality."""
    from shockflow.storage import read_result

    base = ["solve", "burgers-sine", "--set", "domain.cells=200", "--set", "output.snapshots=5", "--no-figures",
            "--quiet", "--set", "solver.cfl=1.0", "--set", "solver.integrator=euler"]
    code, _, err = cli(*base, "--set", "solver.reconstruction=first_order", "--out", tmp_path / "a")
    assert code == 0, err
    code, _, err = cli(*base, "--set", "solver.force_unstable=true", "--out", tmp_path / "b")
    assert code == 0, err
    ok, bad = read_result(tmp_path / "a" / "burgers-sine.h5"), read_result(tmp_path / "b" / "burgers-sine.h5")
    top = float(np.max(ok.values[0]))
    assert float(np.max(ok.values)) <= top * (1 + 1e-12)
    assert float(np.max(bad.values)) > 1.05 * top


@pytest.mark.parametrize("sets, text", [
    (["domain.cells=range:4:1000000004"], "1000000000 values, expected at most 100000 on one axis"),
    (["domain.cells=linspace:4:100:1000000000000"], "expected at most 100000 on one axis"),
    (["domain.cells=range:4:1004", "output.snapshots=range:2:1002"],
     "sweep.axes.domain.cells: the sweep has 1000000 tasks, more than 100000"),
    (["domain.cells=100,1000000000"], "domain.cells: the case needs about"),
])
def test_huge_sweeps_are_refused_before_their_task_list_exists(cli, workdir, sets, text):
    import tracemalloc

    tracemalloc.start()
    start = time.perf_counter()
    code, _, err = cli("sweep", "burgers-sine", *[a for s in sets for a in ("--set", s)], "--dry-run", "--out", "sw")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert code == 2 and text in err and "Traceback" not in err
    assert time.perf_counter() - start < 10.0 and peak < 200 * 2 ** 20
    assert not (workdir / "sw").exists()  # a dry run creates nothing
