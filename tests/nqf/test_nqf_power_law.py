"""Power laws: the fit recovers a known exponent with an honest uncertainty, the finite-ε slope reduces
to docs/theory.md's formula at β = 0 and predicts the closed-form many-mode loss, and a diagonal network with
one-hot inputs realises the mode spectrum."""

import numpy as np
import pytest

from shockflow.nqf.experiments import power_law_modes_experiment
from shockflow.nqf.power_law import (
    asymptotic_exponent, finite_eps_slope, fit_power_law, power_law_modes, samplewise_exponent,
)


def test_fit_recovers_a_known_exponent():
    rng = np.random.default_rng(0)
    t = np.logspace(0, 4, 500)
    E = 3 * t ** -1.37 * np.exp(0.01 * rng.standard_normal(t.size))
    fit = fit_power_law(t, E, 10, 1000)
    assert abs(fit.exponent - 1.37) < 3 * fit.stderr + 0.01 and fit.spread < 0.05
    # a bent curve: the sub-window spread exposes the drift
    bent = fit_power_law(t, t ** -1.0 + 1e-2 * t ** -0.3, 10, 1000)
    assert bent.spread > 0.05
    with pytest.raises(ValueError, match="not inside the logged range"):
        fit_power_law(t, E, 0.5, 100)


def test_exponent_formulas():
    assert asymptotic_exponent(2.0, 0.8) == pytest.approx(1.25)
    assert samplewise_exponent(1.0, 0.5) == pytest.approx(2.0)
    # β = 0: docs/theory.md's (α1−1)/(α2 − (α1−α2)/ln(ζ/(Cε)))
    lr = np.log(40.0 / 1e-6)
    assert finite_eps_slope(2.0, 0.8, lr) == pytest.approx(1.0 / (0.8 - 1.2 / lr))
    # β = α1 − α2 removes the finite-ε correction; ln → ∞ recovers (α1−1)/α2
    assert finite_eps_slope(2.0, 0.8, 5.0, beta=1.2) == pytest.approx(1.25)
    assert finite_eps_slope(2.0, 0.8, 1e12) == pytest.approx(1.25, rel=1e-9)
    with pytest.raises(ValueError, match="alpha1 > 1"):
        asymptotic_exponent(0.9, 0.8)


def test_many_modes_network_follows_closed_form():
    """Reduced size (300 modes, window k = 5..40): a diagonal network with one-hot inputs realising the modes
    follows the closed-form excess loss to 2 % and gives the same fitted exponent to 0.01."""
    r = power_law_modes_experiment(n_modes=300, eps=1e-6, beta=0.0, window_modes=(5, 40), lr=0.1)
    assert r["network_max_relative_deviation"] < 0.02
    assert abs(r["network_fit"]["exponent"] - r["fit"]["exponent"]) < 0.01
    # ordering of the readings at finite ε: asymptotic < finite-ε slope < fitted exponent
    assert r["exponent_asymptotic"] < r["exponent_finite_eps"] < r["fit"]["exponent"]


def test_finite_eps_drift_of_the_exponent():
    """As ε goes from 1e-6 to 1e-24 the fitted exponent drifts towards (α1−1)/α2 by about what the finite-ε
    slope predicts when β = 0, and does not drift when β = α1 − α2 (where the correction vanishes)."""
    def fit(eps, beta):
        r = power_law_modes_experiment(n_modes=300, eps=eps, beta=beta, window_modes=(5, 40), network_check=False)
        return r["fit"]["exponent"], r["exponent_finite_eps"]

    (f6, p6), (f24, p24) = fit(1e-6, 0.0), fit(1e-24, 0.0)
    assert f6 - f24 > 0.1
    assert 0.7 < (f6 - f24) / (p6 - p24) < 1.5
    (g6, q6), (g24, q24) = fit(1e-6, 1.2), fit(1e-24, 1.2)
    assert q6 == pytest.approx(1.25) and q24 == pytest.approx(1.25)
    assert abs(g6 - g24) < 0.02


@pytest.mark.slow
def test_thousand_modes():
    """The paper's setting: 1000 modes, α1 = 2, α2 = 0.8, ε = 1e-6 (β = 0), window k = 10..100."""
    r = power_law_modes_experiment(n_modes=1000, eps=1e-6, beta=0.0, window_modes=(10, 100), lr=0.1)
    assert r["network_max_relative_deviation"] < 0.02
    assert abs(r["network_fit"]["exponent"] - r["fit"]["exponent"]) < 0.01
    assert r["exponent_asymptotic"] <= r["exponent_finite_eps"] < r["fit"]["exponent"]
