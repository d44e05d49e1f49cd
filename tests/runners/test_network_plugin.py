"""A network written outside shockflow (tests/runners/network_pkg: plain NumPy, the network protocol), its
data generator, both found through the entry-point groups ``shockflow.models`` / ``shockflow.data``, named
in a case file, forecast and trained end to end.

The package is installed into a temporary site directory put on sys.path, as the geometry plug-in test
does it (tests/geometry/test_geometry_plugin.py): its sources copied and a ``*.dist-info`` (METADATA,
entry_points.txt, RECORD) written from its pyproject.toml — the layout pip produces.
"""

import shutil
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from shockflow import models
from shockflow.cli import main
from shockflow.data import registry as data_registry

PACKAGE = Path(__file__).parent / "network_pkg"
CASE = """kind = "network"
name = "ridge-plugin"
seed = 0
[model]
name = "ridge_net"
input_dim = 6
hidden = 8
output_dim = 3
[data]
name = "ridge_teacher"
n = 1024
d = 6
[training]
optimizer = "gd"
lr = 0.02
steps = 1500
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    target = tmp_path_factory.mktemp("network_site")
    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text())["project"]
    shutil.copytree(PACKAGE / "src" / "ridge_net", target / "ridge_net")
    dist = target / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    lines = []
    for group, entries in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in entries.items()]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
    (dist / "RECORD").write_text("")
    sys.path.insert(0, str(target))
    models.reload_plugins()
    data_registry.reload_plugins()
    yield target
    sys.path.remove(str(target))
    for name in [m for m in sys.modules if m.startswith("ridge_net")]:
        del sys.modules[name]
    models.reload_plugins()
    data_registry.reload_plugins()


def test_the_plugins_are_found_and_the_adapter_reaches_the_users_loss(installed):
    from shockflow.runners.training import adapt_network

    assert "ridge_net" in models.available() and "ridge_teacher" in data_registry.available()
    ridge = sys.modules["ridge_net"]
    net = ridge.RidgeNet(init_scale=0.3, seed=2)
    data = ridge.ridge_teacher(n=50)
    model, ds = adapt_network(net, data.X, data.y)
    assert model.loss(ds.X, ds.y) == pytest.approx(net.loss(data.X, data.y), rel=1e-14)
    rows = np.array([[3.0], [7.0]])
    assert np.allclose(model.per_sample_losses(rows, None), net.per_sample_losses(data.X[[3, 7]], data.y[[3, 7]]))
    # the protocol's gradient, through the adapter's flat vector, against central differences of its loss
    theta = model.parameter_vector()
    _, g = model.loss_and_grad(ds.X, ds.y)
    e = np.zeros_like(theta)
    for j in (0, 5, theta.size - 1):
        e[:] = 0
        e[j] = 1e-6
        model.set_parameter_vector(theta + e)
        up = model.loss(ds.X, ds.y)
        model.set_parameter_vector(theta - e)
        down = model.loss(ds.X, ds.y)
        assert model.grad_vector(g)[j] == pytest.approx((up - down) / 2e-6, rel=1e-6, abs=1e-10)
    model.set_parameter_vector(theta)


def test_the_batched_chart_losses_of_a_users_network_are_its_own_losses(installed):
    """The chunked batched evaluation the charts use (shockflow.geometry.batched_loss) at several parameter sets
    equals the user's own loss at each (it read the first sample of each set once: predictions 10x late)."""
    from shockflow.geometry.batched_loss import batched_loss, batched_sample_losses
    from shockflow.runners.training import adapt_network

    ridge = sys.modules["ridge_net"]
    net = ridge.RidgeNet(init_scale=0.3, seed=2)
    data = ridge.ridge_teacher(n=40)
    model, ds = adapt_network(net, data.X, data.y)
    rng = np.random.default_rng(0)
    sets = {k: v[None] + 0.1 * rng.standard_normal((3, *v.shape)) for k, v in model.params.items()}
    direct, per = [], []
    for b in range(3):
        net.set_params({k: v[b] for k, v in sets.items()})
        direct.append(net.loss(data.X, data.y))
        per.append(net.per_sample_losses(data.X, data.y))
    assert batched_loss(model, sets, ds.X, ds.y) == pytest.approx(direct, rel=1e-12)
    assert np.allclose(batched_sample_losses(model, sets, ds.X, ds.y), np.array(per), rtol=1e-12)


def test_a_network_without_units_is_refused_by_the_automatic_charts(installed, tmp_path):
    from shockflow.cases import CaseError

    import shockflow

    ridge = sys.modules["ridge_net"]

    class NoUnits(ridge.RidgeNet):
        units = None

    data = ridge.ridge_teacher(n=64)
    with pytest.raises(CaseError, match="model"):
        shockflow.forecast(NoUnits(), (data.X, data.y), {"lr": 0.02, "steps": 100}, out=tmp_path, figures=False)
    with pytest.raises(CaseError, match="optimiser.optimizer: .*no validated escape model for .adam."):
        shockflow.forecast(ridge.RidgeNet(), (data.X, data.y), {"optimizer": "adam"}, out=tmp_path, figures=False)


@pytest.mark.slow
def test_the_plugin_network_is_forecast_and_trained_end_to_end(installed, tmp_path, capsys):
    import json

    import shockflow

    case = tmp_path / "ridge.toml"
    case.write_text(CASE)
    assert main(["forecast", str(case), "--out", str(tmp_path / "f"), "--json", "--no-figures"]) == 0
    forecast = json.loads(capsys.readouterr().out)
    assert main(["run", str(case), "--out", str(tmp_path / "r"), "--json", "--no-figures"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert [p["step"] for p in forecast["predicted"]] == [p["step"] for p in run["predicted"]]
    assert run["score"]["recall"] == 1.0 and run["median_relative_error"] <= 0.10   # against the parameter truth
    # the same network from Python, with the protocol object itself
    ridge = sys.modules["ridge_net"]
    data = ridge.ridge_teacher(n=1024, d=6)
    f = shockflow.forecast(ridge.RidgeNet(input_dim=6, hidden=8, output_dim=3, seed=0), (data.X, data.y),
                           {"optimizer": "gd", "lr": 0.02, "steps": 1500}, out=tmp_path / "p", figures=False)
    assert [p["step"] for p in f.predicted] == pytest.approx([p["step"] for p in run["predicted"]], rel=1e-12)
