"""The built-in NQF experiments against NumPy training runs: five-mode switch-on times (goal < 2 %),
Fourier-feature exponents, where the theory fails (large init, Adam, momentum), the shock-link
reference, and the figures. Default: reduced sizes asserting the same properties; full sizes are slow."""

import numpy as np
import pytest

from shockflow.nqf.experiments import (
    HALVING_STRENGTHS, failure_modes, five_mode_switch_on, fourier_feature_exponents, shock_link_reference,
)
from shockflow.figures import save_figure
from shockflow.nqf.figures import mode_strengths_figure, power_law_figure


def test_three_modes_diagonal_network_switch_on():
    """Reduced: three halving modes, ε = 1e-4; measured t* within 2 % of the exact closed form."""
    r = five_mode_switch_on(eps=1e-4, lr=0.01, strengths=HALVING_STRENGTHS[:3])
    assert len(r["t_measured"]) == 3
    assert r["max_abs_relative_error"] < 0.02
    # the discretisation error of GD is O(η ζ): the fastest mode has the largest error
    assert abs(r["relative_error"][0]) >= abs(r["relative_error"][-1])


def test_three_modes_fourier_network_switch_on(tmp_path):
    """Reduced: the tanh Fourier MLP with small targets (amplitude 0.01): within 2 % of the NQF closed form."""
    r = five_mode_switch_on(eps=1e-4, lr=1.0, strengths=HALVING_STRENGTHS[:3], network="fourier", amplitude=0.01)
    assert r["max_abs_relative_error"] < 0.02
    png = save_figure(mode_strengths_figure(r), tmp_path / "modes.png")
    assert png.stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.parametrize("network, lr, amplitude", [("diagonal", 0.01, 1.0), ("fourier", 1.0, 0.01)])
def test_five_modes_switch_on(network, lr, amplitude):
    """The issue's experiment: five halving modes, ε = 1e-6, full-batch GD: every mode within 2 %."""
    r = five_mode_switch_on(eps=1e-6, lr=lr, network=network, amplitude=amplitude)
    assert len(r["t_measured"]) == 5 and r["max_abs_relative_error"] < 0.02
    if network == "diagonal":
        # the transition detector on the loss curve alone finds the five drops at the predicted times
        # (on the Fourier MLP the drops of b_k² = 1e-4·4^{-k} are partly missed: 4 of 5 found)
        assert r["loss_transitions_detected"] == 5
        assert np.max(np.abs(r["loss_transition_relative_error"])) < 0.03


def test_fourier_network_follows_the_nqf_loss(tmp_path):
    """Reduced (P = 12, θ = 0): the network's loss follows the NQF closed form within 5 % over the window and
    its fitted exponent equals the closed form's to 0.03 (the asymptotic (2β−1)/(θ+β) is reported, see docs)."""
    r = fourier_feature_exponents(thetas=(0.0,), modes=12, window_modes=(2, 5))
    run = r["runs"][0]
    assert run["network_vs_nqf_max_relative_deviation"] < 0.05
    assert abs(run["fit"]["exponent"] - run["fit_nqf"]["exponent"]) < 0.03
    png = save_figure(power_law_figure(run["curves"]["t"], run["curves"]["loss"], run["fit"],
                                       {"(2β−1)/(θ+β)": run["exponent_predicted"]}), tmp_path / "fourier.png")
    assert png.stat().st_size > 10_000


@pytest.mark.slow
def test_fourier_exponents_three_thetas():
    """P = 32, θ = 0, 0.5, 1: network = NQF closed form (loss within 5 %, exponent within 0.03); the fitted
    exponents decrease with θ like (2β−1)/(θ+β) and exceed it by the finite-window excess of the closed form."""
    r = fourier_feature_exponents()
    fits = [run["fit"]["exponent"] for run in r["runs"]]
    assert np.all(np.diff(fits) < 0)
    for run in r["runs"]:
        assert run["network_vs_nqf_max_relative_deviation"] < 0.05
        assert abs(run["fit"]["exponent"] - run["fit_nqf"]["exponent"]) < 0.03
        assert run["exponent_predicted"] < run["fit"]["exponent"] < 1.4 * run["exponent_predicted"]


def test_shock_link_reference_escape_reading():
    """docs/theory.md §1 escape time γ* ln(d_exit/d_0) in r = √z equals the exact t*(1/2) to O(ε) for every mode."""
    r = shock_link_reference(eps=1e-6)
    assert np.allclose(r["gamma_star"], 2 / np.asarray(r["rates"]), rtol=1e-5)
    assert np.max(np.abs(r["escape_relative_difference"])) < 1e-5
    # the leading term ln(1/ε)/ζ is off by O(1/ln(1/ε)) for the same modes
    lead = np.asarray(r["t_leading"]) / np.asarray(r["t_switch_on"]) - 1
    assert np.max(np.abs(lead)) > 0.05


def test_momentum_and_adam_reduced():
    """Reduced (diagonal net, three modes, ε = 1e-4). Heavy ball with η(1 − μ) follows the NQF times of the
    effective step to 10 %, with an error falling with the mode's rate (the O(μ η ζ/(1 − μ)²) lag of the
    momentum buffer); Adam moves every weight at about the same speed, so weaker modes switch on *earlier*:
    successive switch-on ratios fall below 1 where gradient flow predicts ≈ 2."""
    mom = five_mode_switch_on(eps=1e-4, lr=0.01 * 0.1, strengths=HALVING_STRENGTHS[:3], optimizer="momentum",
                              momentum=0.9)
    err = np.abs(mom["relative_error"])
    assert np.max(err) < 0.10 and err[0] > err[-1]
    adam = five_mode_switch_on(eps=1e-4, lr=1e-3, strengths=HALVING_STRENGTHS[:3], optimizer="adam", steps=3000)
    assert np.all(np.asarray(adam["successive_ratio_predicted"]) > 1.5)
    assert np.all(np.asarray(adam["successive_ratio_measured"]) < 1.0)


@pytest.mark.slow
def test_failure_modes_full():
    """The five-mode teacher on the tanh Fourier MLP: baseline GD within 2 %, momentum within 10 % (error
    falling with ζ), Adam inverts the order, a large initialisation starts most modes above half strength."""
    r = failure_modes()["runs"]
    assert r["baseline_gd"]["max_abs_relative_error"] < 0.02
    err = np.abs(r["momentum"]["relative_error"])
    assert np.max(err) < 0.10 and err[0] > err[-1]
    assert np.all(np.asarray(r["adam"]["successive_ratio_measured"]) < 1.0)
    assert len(r["large_init"]["t_measured"]) < 5
