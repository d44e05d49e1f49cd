"""Phase diagram from simulation against the theory's phases and boundaries."""

import math

import numpy as np
import pytest

from shockflow.figures import save_figure
from shockflow.spectra.phase_diagram import phase_diagram, phase_point, plot_phase_diagram, theory_boundaries
from shockflow.spectra.teacher_student import population_theory


def test_simulated_phases_agree_away_from_the_boundary(tmp_path):
    # N = 100: the BBP window is |θ/θ_c − 1| ~ N^{-1/3} ≈ 0.2; outside ±35% of θ_c every simulated
    # point must be in the theory's phase (t = 1 and t = 2, including ε > 1)
    for t in (1, 2):
        res = phase_diagram(np.linspace(0.1, 2.4, 10), np.linspace(0.3, 2.4, 6), 100, 200, t=t, seed=t)
        for i, sw in enumerate(res["sigma_w"]):
            for j, e in enumerate(res["eps"]):
                th = population_theory(e, t, sw, 0.5)
                ratio = math.sqrt(th["theta2"]) / 0.5**0.25
                if abs(ratio - 1) > 0.35:
                    assert res["ordered"][i, j] == th["ordered"], (t, sw, e, ratio)
        assert res["agreement"] > 0.8
    save_figure(plot_phase_diagram(res), tmp_path / "pd.png")
    assert (tmp_path / "pd.png").read_bytes()[:4] == b"\x89PNG"


def test_phase_point_is_pure_and_validates():
    p = {"N": 60, "M": 120, "eps": 0.8, "sigma_w": 1.0, "seed": 7}
    assert phase_point(p) == phase_point(dict(p))
    assert phase_point({**p, "eps": 1.0})["ordered"]          # the bulk is removed exactly
    with pytest.raises(ValueError, match="unknown keys"):
        phase_point({**p, "lr": 0.1})
    with pytest.raises(ValueError, match="missing keys"):
        phase_point({"N": 10})


def test_theory_boundaries_shape():
    b = theory_boundaries([0.5, 2.0], 1, 0.5)
    assert np.isnan(b["upper"][0, 0]) and b["upper"][1, 0] == pytest.approx(1 + 1 / (2 * 0.5**0.25 - 1))
