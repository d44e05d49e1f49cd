"""The mixture of experts (docs/theory.md §6, "The mixture of experts"): its order parameters (the truth), its charts
and the chain of shockflow/prediction/gate.py against training runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shockflow import geometry, models
from shockflow.models.units import unit_layout
from shockflow.prediction.truth import mixture_strengths


def _mixture(K=3, d=4, seed=0, scale=1.0):
    return models.build(name="moe", input_dim=d, experts=K, init_scale=scale, seed=seed)


def test_the_order_parameters_are_the_mean_expert_and_the_breaking_matrixs_singular_values():
    net = _mixture(K=4, d=5, seed=2)
    index = unit_layout(net).index
    theta = net.parameter_vector()
    units = theta[index]
    got = mixture_strengths(net, net.params)
    assert got == mixture_strengths(net, theta)                      # a dict or a flat vector
    assert got["mean"] == pytest.approx(2.0 * np.linalg.norm(net.params["experts"].mean(axis=0)), rel=1e-12)
    sigma = np.linalg.svd(units - units.mean(axis=0), compute_uv=False)
    assert [got[f"split{r}"] for r in range(3)] == pytest.approx(sigma[:3], rel=1e-12)
    assert sorted(got) == ["mean", "split0", "split1", "split2"]
    # invariant under the units' permutations (each expert with its gate row): the network is unchanged by them
    perm = np.array([2, 0, 3, 1])
    moved = theta.copy()
    moved[index] = units[perm]
    assert mixture_strengths(net, moved) == pytest.approx(got, rel=1e-12)
    X = np.random.default_rng(0).standard_normal((7, 5))
    other = net.copy()
    other.set_parameter_vector(moved)
    assert other.forward(X) == pytest.approx(net.forward(X), rel=1e-12)


def test_a_symmetric_mixture_has_no_split_and_a_rank_one_breaking_has_one():
    net = _mixture(K=3, d=4, seed=1)
    index = unit_layout(net).index
    theta = net.parameter_vector()
    m = theta[index].mean(axis=0)
    sym = theta.copy()
    sym[index] = m[None, :]
    got = mixture_strengths(net, sym)
    assert got["split0"] == pytest.approx(0.0, abs=1e-14) and got["split1"] == pytest.approx(0.0, abs=1e-14)
    c, v = np.array([1.0, -0.25, -0.75]), np.random.default_rng(3).standard_normal(index.shape[1])
    split = sym.copy()
    split[index] += np.outer(c, v)
    got = mixture_strengths(net, split)
    assert got["split0"] == pytest.approx(np.linalg.norm(c) * np.linalg.norm(v), rel=1e-12)
    assert got["split1"] == pytest.approx(0.0, abs=1e-12)


def test_the_mixture_charts_coordinate_is_its_order_parameter_along_the_section():
    net = _mixture(K=3, d=4, seed=4)
    index = unit_layout(net).index
    n = net.num_parameters
    rng = np.random.default_rng(5)
    # chart 0 (the mean) through a point with zero experts along a shared expert direction
    mean_origin = net.parameter_vector()
    mean_origin[index[:, :4]] = 0.0          # unit k = [expert k ; gate row k]
    e = np.zeros(n)
    w = rng.standard_normal(4)
    e[index[:, :4]] = w[None, :]
    e /= np.linalg.norm(e)
    # chart 1 (split 0) through a symmetric point along a rank-one breaking direction
    sym = net.parameter_vector()
    sym[index] = sym[index].mean(axis=0)[None, :]
    b = np.zeros(n)
    b[index] = np.outer([2.0, -1.0, -1.0], rng.standard_normal(index.shape[1]))
    b /= np.linalg.norm(b)
    geo = [geometry.build("mixture", model=net, origins=np.array([mean_origin, sym]), directions=np.array([e, b]),
                          escape=k, extent=3.0) for k in (0, 1)]
    for g in geo:
        for x in (0.01, 0.7, 2.5):
            assert g.coordinates(g.section(np.array([x]))) == pytest.approx([x], rel=1e-10)
    with pytest.raises(geometry.GeometryError, match="escape"):
        geometry.build("mixture", model=net, origins=np.array([sym]), directions=np.array([b]), escape=1)
    with pytest.raises(geometry.GeometryError, match="unit vector"):
        geometry.build("mixture", model=net, origins=np.array([sym]), directions=np.array([2 * b]))


def test_the_steps_of_a_linear_growth_are_its_log_over_the_per_step_gain():
    from shockflow.prediction.gate import _steps_to
    from shockflow.prediction.mapping import Optimiser

    kappa, eta = 0.08, 0.1
    opt = Optimiser(np.full(100, eta))
    # gradient descent: x_{n+1} = (1 + ηκ) x_n, also past the schedule's end (the last rate continues)
    for growth in (math.log(3.0), math.log(1e4)):
        assert _steps_to(opt, kappa, growth, 0.0) == pytest.approx(growth / math.log1p(eta * kappa), rel=1e-9)
        assert _steps_to(opt, kappa, growth, 40.0) == pytest.approx(growth / math.log1p(eta * kappa), rel=1e-9)
    # a schedule: the gains are summed from the start step on
    opt = Optimiser(np.concatenate([np.full(10, 0.2), np.full(90, 0.05)]))
    n = _steps_to(opt, kappa, 10 * math.log1p(0.2 * kappa) + 5 * math.log1p(0.05 * kappa), 0.0)
    assert n == pytest.approx(15.0, abs=1e-9)


def test_the_averaged_experts_relaxation_is_the_rules_linear_recurrence_from_rest():
    from shockflow.prediction.gate import _relaxation
    from shockflow.prediction.mapping import Optimiser

    c = np.array([0.5, 2.0])
    got = _relaxation(Optimiser(np.full(30, 0.1)), c, 30)
    assert got == pytest.approx((1.0 - 0.1 * c[:, None]) ** np.arange(31)[None, :], rel=1e-12)
    # heavy ball from rest: (e, v) -> (e - η(μv + c e), μv + c e), the 2x2 map's powers; it overshoots (e < 0)
    eta, mu = 0.5, 0.9
    got = _relaxation(Optimiser(np.full(40, eta), "momentum", mu), c, 40)
    for j, cj in enumerate(c):
        M = np.array([[1.0 - eta * cj, -eta * mu], [cj, mu]])
        want = [np.linalg.matrix_power(M, n)[0, 0] for n in range(41)]
        assert got[j] == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert got.min() < 0


def _run(seed, tmp_path):
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case

    case = load_case("moe-experts", [f"seed={seed}"])
    return run_prediction_case(case, RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_shockflow_run_predicts_the_averaged_expert_and_both_gate_splits(seed, tmp_path):
    """`shockflow run` on moe-experts (3 linear experts on a 3-expert teacher): the averaged expert (closed form
    of the symmetric flow), the escape from the symmetric plateau (split 0: Lanczos rates, linear growth, the
    escape integral along the section) and from the rank-1 saddle (split 1), against the order parameters'
    half-learned steps.  Measured, seeds 0-5: split0 within 1.1 %, split1 -20.8, -11.5, 0.0, -13.6, -8.6, -8.0 %
    (early: the run never reaches the rank-1 saddle, it leaves on the way), every median ≤ 4.1 %."""
    out = _run(seed, tmp_path)
    c = out.comparison
    assert c.truth == "parameters"
    assert [p.chart for p in out.stage.predicted] == ["mean", "split0", "split1"]
    assert c.recall >= 0.9 and c.median_relative_error <= 0.10
    from shockflow.prediction.truth import parameter_truth

    truth = {t.chart: t.step for t in parameter_truth(out.stage.extraction).transitions}
    errors = {p.chart: p.step / truth[p.chart] - 1 for p in out.stage.predicted}
    print(f"seed {seed}: " + ", ".join(f"{k} {100 * v:+.1f} %" for k, v in errors.items()))
    assert abs(errors["split0"]) <= 0.05             # the escape from the symmetric plateau
    assert abs(errors["mean"]) <= 0.05               # the closed form of the symmetric flow
    assert abs(errors["split1"]) <= 0.25             # the rank-1 saddle: early by 0-21 %


@pytest.mark.slow
def test_a_mixture_on_a_linear_teacher_predicts_the_averaged_expert_and_abstains_on_the_splits(tmp_path):
    """A teacher the averaged expert fits exactly (one linear expert): the symmetric plateau is the minimum, no split
    has an unstable direction; both split charts abstain naming why, and the run has no true split either."""
    from shockflow.cli import main

    path = tmp_path / "moe-linear.toml"
    path.write_text('kind = "network"\nname = "moe-linear"\n[model]\nname = "moe"\ninput_dim = 6\nexperts = 3\n'
                    'init_scale = 1e-4\n[data]\nname = "teacher_student"\nn = 1024\nd = 6\n'
                    'teacher = {name = "moe", input_dim = 6, experts = 1, init_scale = 1.5, seed = 11}\n'
                    '[training]\noptimizer = "gd"\nlr = 0.1\nsteps = 400\nn_snapshots = 80\n')
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case

    out = run_prediction_case(load_case(str(path)), RunOptions(out=str(tmp_path), quiet=True, progress=False,
                                                                figures=False))
    assert [p.chart for p in out.stage.predicted] == ["mean"]
    assert [a.chart for a in out.stage.abstained] == ["split0", "split1"]
    assert all("no unstable direction" in a.reason for a in out.stage.abstained)
    # the chain ends at the symmetric plateau, reached when the averaged expert is learned: nothing waits there
    assert [(s.active, bool(s.rates)) for s in out.stage.saddles] == [((), True), (("mean",), False)]
    assert out.stage.saddles[-1].step == out.stage.predicted[0].step
    assert out.comparison.recall == 1.0 and out.comparison.median_relative_error <= 0.05
    # one expert: a linear model, refused before training
    path.write_text(path.read_text().replace("experts = 3\n", "experts = 1\n", 1))
    assert main(["validate", str(path)]) == 2


def test_the_mixture_chains_saddles_are_the_points_it_leaves_with_their_losses_and_rates():
    """The saddles the mixture's chain reports (``/chain``, ``--json saddles``, the staircase figure): one per escape,
    at the point the escape leaves and the step it starts, its loss the network's loss there, its rate the escape's
    κ and its exit the log distance to the next saddle; then the bottom, everything learned, no lower than before."""
    from shockflow.prediction.gate import mixture_chain, mixture_saddles
    from shockflow.prediction.mapping import Optimiser

    net = _mixture(K=3, d=6, seed=1, scale=1e-4)
    teacher = _mixture(K=3, d=6, seed=11, scale=1.5)
    X = np.random.default_rng(3).standard_normal((1024, 6))
    y = teacher.forward(X)
    chain = mixture_chain(net, X, y, Optimiser(np.full(2000, 0.1)))
    saddles = mixture_saddles(chain)
    escapes = [e for e in chain.escapes if e.method != "abstain"]
    assert [s.active for s in saddles[:len(escapes)]] == [tuple(e.label for e in escapes[:k]) for k in range(len(escapes))]
    for s, e in zip(saddles, escapes):
        probe = net.copy()
        probe.set_parameter_vector(e.saddle)
        assert s.loss == pytest.approx(probe.loss(X, y), rel=1e-9)
        assert s.step == e.start
        assert s.rates == {e.label: e.kappa}
        assert s.log_exit[e.label] == pytest.approx(math.log(np.linalg.norm(e.target - e.saddle)), rel=1e-12)
    bottom = saddles[-1]
    assert bottom.active == tuple(e.label for e in escapes) and not bottom.rates
    assert bottom.step == max(e.step for e in escapes)
    assert bottom.loss <= min(s.loss for s in saddles[:-1])
    steps = [s.step for s in saddles]
    assert steps == sorted(steps)


def test_a_split_escapes_on_the_side_its_saddles_slope_carries_it_to():
    """4 experts on a 4-expert teacher, the rank-2 saddle: the loss's slope there outweighs the waiting perturbation
    (x + g/κ grows, not x), so the split escapes on the slope's side, where the loss along its section falls to a
    minimum.  On the perturbation's side the loss only rises (the split abstained: "no minimum" up to 9.9e4)."""
    from shockflow.prediction.gate import mixture_chain
    from shockflow.prediction.mapping import Optimiser
    from shockflow.prediction.plateau import UnitLandscape

    net = models.build(name="moe", input_dim=10, experts=4, init_scale=1e-4, seed=0)
    teacher = models.build(name="moe", input_dim=10, experts=4, init_scale=1.5, seed=11)
    X = np.random.default_rng(5).standard_normal((2048, 10))
    y = teacher.forward(X)
    chain = mixture_chain(net, X, y, Optimiser(np.full(3000, 0.1)))
    assert [e.method != "abstain" for e in chain.escapes] == [True] * 4
    land = UnitLandscape(net, X, y, ())
    for e in chain.escapes[2:]:                                # the splits from a rank r >= 1 saddle
        offset = -float(e.direction @ land.grad(e.saddle)) / e.kappa
        assert e.d0 + offset > 0                               # x + g/κ > 0 along the escape's direction
        along = [land.loss(e.saddle + s * e.direction) for s in np.linspace(0.0, 4.0, 41)]
        assert min(along) < along[0]                           # the section falls on this side


@pytest.mark.slow
def test_four_experts_on_a_four_expert_teacher_predict_every_split(tmp_path):
    """Every split of the run predicted (the third abstained before the escape's side followed the slope), each within
    10 % of the parameter truth."""
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case

    case = load_case("moe-experts", ["model.experts=4", "data.teacher.experts=4", "training.steps=3000"])
    out = run_prediction_case(case, RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))
    assert not out.stage.abstained
    truth = {t.chart: t.step for t in out.truth.transitions}
    predicted = {p.chart: p.step for p in out.stage.predicted}
    assert sorted(truth) == sorted(predicted) == ["mean", "split0", "split1", "split2"]
    assert all(abs(predicted[k] / truth[k] - 1.0) < 0.1 for k in truth)
