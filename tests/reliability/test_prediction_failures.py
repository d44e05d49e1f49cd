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
