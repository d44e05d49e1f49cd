"""Units whose activation has φ(0) ≠ 0 (sigmoid): every unit adds the constant φ(0) a_i to the outputs, an
intercept no mode learns (docs/theory.md §6, "The intercept"; shockflow.geometry.auto.split_stiffness).

Two consequences, each tested here: the learned strength must not read the intercept as the mode (a one-sided
difference from the origin did: sigmoid strengths were 1e-3 of the teacher's and every true transition was
"uncharted"), and the units' common part of a mode's split is held back by the intercept's stiffness, so the
section follows the units' differences (with the raw split the predictions were 20–52 % off).
"""

import numpy as np
import pytest

from shockflow import geometry, models
from shockflow.cases import RunOptions, load_case
from shockflow.geometry.auto import find_modes
from shockflow.prediction.truth import strength_along


def _teacher(n=600, d=6, o=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    U, _ = np.linalg.qr(rng.standard_normal((o, o)))
    V, _ = np.linalg.qr(rng.standard_normal((d, o)))
    return X, X @ (V * np.array([4.0, 2.5, 1.5])) @ U.T


def test_the_intercept_stiffens_the_units_common_split_and_only_that():
    # half-MSE, sigmoid, no bias: h_i = φ(0) e_a for every unit, so T_k = φ(0)² |e_a|² 𝟙𝟙ᵀ (rank one, along the
    # units' common split, eigenvalue d φ(0)² |e_a|²); tanh (φ(0) = 0) has no intercept at all
    X, y = _teacher()
    width = 8
    net = models.build("mlp", input_dim=6, width=width, output_dim=3, activation="sigmoid", init_scale=1e-3,
                       seed=1, bias=False)
    found = find_modes(net, X, y)
    assert found.stiff_splits is not None and found.stiff_splits.shape[:2] == (found.rates.size, width)
    p = found.directions.shape[0]
    for k in range(found.rates.size):
        e_a = found.directions[p - 3:, k]                 # the unit's readout entries come last in the mlp layout
        T = found.rates[k] * found.stiff_splits[k] @ found.stiff_splits[k].T
        expected = 0.25 * float(e_a @ e_a) * np.ones((width, width))
        np.testing.assert_allclose(T, expected, rtol=1e-6, atol=1e-9)
    tanh = models.build("mlp", input_dim=6, width=width, output_dim=3, activation="tanh", init_scale=1e-3, seed=1,
                        bias=False)
    assert find_modes(tanh, X, y).stiff_splits is None


def test_a_sigmoid_section_from_the_origin_learns_r_squared_and_moves_no_intercept():
    # along the section from zero weights the mode's function is r² g (its second order) plus the intercept the
    # relaxed split no longer carries; the learned strength is r² in the linear regime (it read 1e-3 of it)
    X, y = _teacher(seed=2)
    net = models.build("mlp", input_dim=6, width=8, output_dim=3, activation="sigmoid", init_scale=1e-12, seed=0,
                       bias=False)
    found = find_modes(net, X, y)
    geo = geometry.build("auto", model=net, modes=found.directions, mode=0, stiff_splits=found.stiff_splits)
    r = np.array([[1e-3], [3e-3], [1e-2]])
    np.testing.assert_allclose(strength_along(geo, r, X), r[:, 0] ** 2, rtol=2e-2)
    # the split the section uses has no common part left (r0 ≈ 1e-12: relaxed by r0^(σ²/λ))
    c_hat = geo._layout.unit_matrix(geo._direction).T @ geo._e
    assert abs(c_hat.sum()) < 1e-6 * np.linalg.norm(c_hat)


def test_a_sigmoid_mlp_predicts_each_mode_against_its_parameter_truth(tmp_path):
    # mlp-tanh-teacher with sigmoid units at a reduced size: 3 modes, each within 5 % (measured +4.9, +1.5, +0.8 %
    # against the learned strength; before: one mode matched at +56 %, the others' truth unreadable)
    from shockflow.runners.prediction import run_prediction_case

    case = load_case("mlp-tanh-teacher", ["model.activation=sigmoid", "data.n=1024", "model.output_dim=3",
                                          "data.singular_values=[6.0, 4.0, 2.5]", "training.steps=1500"])
    out = run_prediction_case(case, RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))
    c = out.comparison
    assert c.truth == "parameters" and len(c.observed) == 3 and c.recall == 1.0 and c.precision == 1.0
    assert max(m.relative_error for m in c.matches) < 0.06
    assert c.median_relative_error < 0.03
