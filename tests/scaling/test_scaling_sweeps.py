"""Grid points as pure functions, tables, optimal λ, the regime rule and the dof onset."""

import numpy as np
import pytest

from shockflow.scaling.interpolation import dof_count, onset_curve
from shockflow.scaling.regimes import classify, predicted_exponents, regime_map
from shockflow.scaling.sweeps import PATH_KEYS, PathParams, error_table, grid, optimal_lambda, run_grid, run_path


def test_run_path_is_pure_and_complete():
    pt = PathParams(d=8, n=60, p=3, lams=(2.0, 0.3, 0.05), gamma=1.0, noise=0.1, seed=4)
    a, b = run_path(pt), run_path(pt.as_dict())
    assert tuple(a) == PATH_KEYS
    for k in PATH_KEYS:
        if k != "seconds":
            assert a[k] == b[k], k
    assert all(a["converged"]) and all(r <= pt.tol for r in a["residual"])
    # λ ≥ λ_0 gives Ŝ = 0, whose excess error is the target variance 2‖S*‖²/d = 1
    assert a["rank"][0] == 0 and abs(a["excess_error"][0] - 1.0) < 1e-12
    assert a["rank"][1] <= 3 and a["rank"][2] <= 3
    assert a["test_mse"][2] == a["excess_error"][2] + 0.1


def test_grid_tables_and_optimal_lambda():
    pts = grid(d=[8], n=[40, 80, 160], p=[None], seeds=[0, 1], lams=(0.5, 0.1, 0.02), gamma=1.5, noise=0.05)
    res = run_grid(pts)
    xs, seeds, E = error_table(res, x="n", lam_index=2)
    assert xs.tolist() == [40, 80, 160] and seeds.tolist() == [0, 1] and E.shape == (2, 3)
    _, _, B = error_table(res, x="n", lam_index="best")
    assert np.all(B.mean(axis=0) <= E.mean(axis=0) + 1e-15)
    opt = optimal_lambda(res)
    assert opt["n"] == [40, 80, 160] and np.allclose(opt["excess_error"], B.mean(axis=0))
    assert E.mean(axis=0)[2] < E.mean(axis=0)[0]                 # more data, less error
    res[0]["converged"][2] = False
    with pytest.raises(ValueError, match="did not converge"):
        error_table(res, x="n", lam_index=2)


@pytest.mark.parametrize("kwargs, match", [(dict(p=0), "p: expected"), (dict(gamma=0.5), "gamma > 1/2"),
                                           (dict(lams=(-1.0,)), "lams"), (dict(noise=-0.1), "noise"),
                                           (dict(lam_units="per_sample"), "lam_units")])
def test_bad_grid_point(kwargs, match):
    base = dict(d=8, n=40, lams=(0.1,))
    base.update(kwargs)
    with pytest.raises(ValueError, match=match):
        PathParams(**base)


def test_regime_rule_and_predictions():
    assert predicted_exponents(1.0) == {"data": -0.5, "width": -1.0, "large_sample": -1.0}
    assert classify(error=0.1, floor=0.06, n=10, p=2, d=10) == "width"
    assert classify(error=0.1, floor=0.01, n=18, p=2, d=10) == "data"           # k(2, 10) = 19
    assert classify(error=0.1, floor=0.01, n=19, p=2, d=10) == "large_sample"
    fake = [dict(n=n, p=2, d=10, seed=s, rank_floor=0.01, excess_error=[e, e / 2]) for n, e in ((10, 0.5), (40, 0.016))
            for s in (0, 1)]
    m = regime_map(fake)
    assert m["regime"] == ["data", "width"] and np.allclose(m["floor_fraction"], [0.04, 1.25])


def test_dof_count_and_interpolation_onset():
    assert [dof_count(p, 8) for p in (1, 2, 8, 20)] == [8, 15, 36, 36]
    d, p = 8, 2
    k = dof_count(p, d)                                              # 15
    seeds = range(12)
    below = onset_curve(d, p, [12], seeds=range(2), max_iter=1000)
    assert np.max(below["rss_over_noise"]) < 1e-3                    # interpolates below the count
    above = onset_curve(d, p, [2 * k], seeds=seeds)
    # E[RSS/Δ] = n − k with variance 2(n − k) per seed: 4 standard errors
    assert abs(above["dof_estimate_mean"] - k) < 4 * np.sqrt(2 * k / len(seeds)), above["dof_estimate_mean"]


def test_grid_on_the_sweep_engine_matches_the_loop_and_resumes(tmp_path):
    pts = grid(d=[6], n=[30, 60], p=[None, 2], seeds=[0], lams=(0.5, 0.05), gamma=1.5, noise=0.05)
    loop = run_grid(pts)
    engine = run_grid(pts, scheduler="serial", out=tmp_path)
    for a, b in zip(loop, engine):
        for k in PATH_KEYS:
            if k != "seconds":
                assert a[k] == b[k], k
    files = sorted((tmp_path / "tasks").glob("*.h5"))
    assert len(files) == len(pts)
    stamps = [f.stat().st_mtime_ns for f in files]
    again = run_grid(pts, scheduler="serial", out=tmp_path)          # finished points are reused, not rerun
    assert [f.stat().st_mtime_ns for f in files] == stamps
    assert [r["excess_error"] for r in again] == [r["excess_error"] for r in engine]
