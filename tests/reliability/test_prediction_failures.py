"""Item 7 of issue 21: the prediction's crashes on modest departures, each a clear exit code naming the chart
(or a correct prediction), never a traceback and never an absurd number reported as a prediction."""


import pytest

ATTENTION_2 = """kind = "network"
seed = 0
[model]
name = "attention_qk"
d_model = 2
d_k = 2
init_scale = 1e-3
[data]
name = "token_sequences"
n = 256
tokens = 4
d_model = 2
teacher = { name = "attention_qk", d_model = 2, d_k = 2, init_scale = 1.5, seed = 5 }
noise = 0.01
[training]
optimizer = "gd"
lr = 0.5
steps = 400
[geometry]
name = "attention"
[extraction]
cells = 201
noise_samples = 64
"""


def test_attention_chart_of_a_two_dimensional_head_is_no_prediction(cli, workdir, listing):
    """d_model = d_k = 2 with the `attention` geometry: the flow runs from σ0 = 5e-7 into σ = 0 (the chart keeps the
    initial B's singular vectors, the data do not), the chart's minimum lies at its start.  It exited 0 with
    d0 = 4e137 and a predicted step 0.3 (true 320); now exit 1 naming the chart, and no result file."""
    (workdir / "att.toml").write_text(ATTENTION_2)
    code, out, err = cli("run", "att.toml", "--out", "out", "--no-figures", "--json")
    assert code == 1, err
    assert "chart 'sigma0'" in err and "ln(d_exit/d0) = 0.677 < 1" in err and "Traceback" not in err
    assert "e+137" not in err and not listing(workdir / "out")


def test_a_point_a_hair_outside_a_closed_chart_end_is_moved_onto_it_and_one_clearly_outside_is_an_error():
    import numpy as np

    from shockflow.geometry.base import CHART_TOLERANCE, Chart, GeometryError

    chart = Chart(("r", "theta"), (0.0, 0.0), (2.0, 6.0), periodic=(False, True))
    hair = 0.5 * CHART_TOLERANCE * 2.0
    got = chart.check(np.array([[-hair, 7.0], [2.0 + hair, -1.0], [1.0, 3.0]]))
    np.testing.assert_array_equal(got, [[0.0, 7.0], [2.0, -1.0], [1.0, 3.0]])   # the periodic axis is left as it is
    with pytest.raises(GeometryError, match=r"point \(1,\) = \(-4e-06, 1\) lies outside the chart \[0, 2\] x \[0, 6\]"):
        chart.check(np.array([[1.0, 1.0], [-4e-6, 1.0]]))


@pytest.mark.parametrize("seed, exponent", [(1, 0.5), (0, 2.0)])
def test_the_default_net_on_a_covariance_not_diagonal_in_its_modes_is_a_clear_exit(cli, workdir, listing, seed, exponent):
    """A rotated power-law covariance: the diagonal net's gram charts do not commute with the data.  The minimum search
    put r0's minimum at -4.3e-9 (-8.2e-9) on its chart [0, 1], and the run stopped with exit 2 "lies outside the
    chart", blaming the case's geometry.  Now the point is moved onto the chart's end and the run fails where the
    chart fails (exit 1, naming it: its data do not focus)."""
    code, _, err = cli("run", "--out", "out", "--no-figures", "--seed", seed, "--set", "data.rotate=true", "--set",
                       f"data.exponent={exponent}", "--set", "data.n=2048", "--set", "extraction.cells=201",
                       "--set", "extraction.noise_samples=64")
    assert code == 1, err
    assert "chart r0 (1 of 4)" in err and "lies outside" not in err and "Traceback" not in err
    assert not listing(workdir / "out")
