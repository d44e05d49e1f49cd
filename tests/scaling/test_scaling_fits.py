"""Power-law fits: exact recovery, a calibrated bootstrap over seeds, window errors."""

import numpy as np
import pytest

from shockflow.scaling.fits import bootstrap_exponent, fit_power_law, regime_window


def test_exact_power_law_is_recovered_only_inside_the_window():
    x = np.geomspace(1, 1000, 13)
    E = np.where(x < 100, 3.0 * x**-0.7, 3.0 * 100**-0.7 * (x / 100) ** -2.0)   # a kink at x = 100
    f = fit_power_law(x, E, (1, 100))
    assert abs(f.exponent + 0.7) < 1e-12 and abs(f.prefactor - 3.0) < 1e-10 and f.rms_log_residual < 1e-12
    assert abs(fit_power_law(x, E, (100, 1000)).exponent + 2.0) < 1e-12


def test_bootstrap_spread_matches_the_seed_to_seed_scatter():
    # 6 seeds with 10 % multiplicative noise: the bootstrap std of the exponent must agree with
    # the spread of the exponent over independent repetitions (within 35 %: with 6 seeds the
    # bootstrap underestimates by sqrt(5/6) and each estimate has ~30 % relative scatter, so we
    # compare averages over 150 repetitions)
    rng = np.random.default_rng(1)
    x = np.geomspace(4, 25, 6)
    slopes, stds = [], []
    for _ in range(150):
        E = 2.0 * x**-0.5 * np.exp(0.1 * rng.standard_normal((6, x.size)))
        f = bootstrap_exponent(x, E, (4, 25), n_boot=200, seed=int(rng.integers(1 << 30)))
        slopes.append(f.exponent)
        stds.append(f.exponent_std)
        assert f.exponent_lo <= f.exponent_hi
    assert abs(np.mean(slopes) + 0.5) < 3 * np.std(slopes) / np.sqrt(150)
    assert 0.65 < np.mean(stds) / np.std(slopes) < 1.35


@pytest.mark.parametrize("window, match", [((30, 100), "at least 3 points"), ((0, 10), "0 < lo <= hi")])
def test_window_errors(window, match):
    with pytest.raises(ValueError, match=match):
        fit_power_law(np.geomspace(1, 40, 8), np.ones(8), window)


def test_bootstrap_needs_seeds_and_regime_windows_follow_the_rule():
    with pytest.raises(ValueError, match="at least 2 seeds"):
        bootstrap_exponent([1, 2, 3], [[1.0, 0.5, 0.3]], (1, 3))
    assert regime_window("data", 100) == (4.0, 25.0)
    assert regime_window("large_sample", 100, margin=2)[0] == 200
    assert regime_window("width", 100, gamma=1.0, n_eff=400.0, margin=2) == (2.0, 10.0)
    with pytest.raises(ValueError, match="valid values: data, large_sample, width"):
        regime_window("bulk", 100)
