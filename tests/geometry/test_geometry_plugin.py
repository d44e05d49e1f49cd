"""A geometry registered from a separate package through the ``shockflow.geometries`` entry point.

The tiny package in tests/geometry/plugin_pkg is installed into a temporary site directory put on
sys.path: its sources are copied and a ``*.dist-info`` (METADATA, entry_points.txt, RECORD) is
written from its pyproject.toml — the layout pip produces — so the registry finds it through
importlib.metadata like any plug-in.  (``pip install`` itself needs the ``wheel`` package for a
setuptools project without build isolation, which the project venv does not carry; with it,
``pip install --no-deps --no-build-isolation --target DIR tests/geometry/plugin_pkg`` gives the same.)
"""

import shutil
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from shockflow import geometry, models
from shockflow.geometry import GeometryError

PACKAGE = Path(__file__).parent / "plugin_pkg"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    target = tmp_path_factory.mktemp("plugin_site")
    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text())["project"]
    shutil.copytree(PACKAGE / "src" / "hadamard_geometry", target / "hadamard_geometry")
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
    geometry.reload_plugins()
    yield target
    sys.path.remove(str(target))
    for name in [m for m in sys.modules if m.startswith("hadamard_geometry")]:
        del sys.modules[name]
    geometry.reload_plugins()


def test_entry_point_geometry_is_found_and_predicts_gradient_flow(installed):
    assert "hadamard" in geometry.available()
    cls = geometry.geometry_class("hadamard")
    assert cls.__module__ == "hadamard_geometry" and "λ u_k" in cls.symmetry
    rng = np.random.default_rng(0)
    net = models.build("diagonal", input_dim=3, form="uv", init_scale=0.7, seed=1)
    X = rng.normal(size=(40, 3))
    y = X @ np.array([1.0, -0.5, 0.2])
    geo = geometry.build("hadamard", model=net, coordinate=1, extent=2.0)
    beta = geo.coordinates(net.params)
    eta = 1e-6
    _, g = net.loss_and_grad(X, y)
    fwd = {k: v - eta * g[k] for k, v in net.params.items()}
    bwd = {k: v + eta * g[k] for k, v in net.params.items()}
    measured = (geo.coordinates(fwd) - geo.coordinates(bwd)) / (2 * eta)
    np.testing.assert_allclose(geo.velocity(beta, X, y), measured, rtol=1e-5)
    problem = geo.chart_problem(64, X, y)  # the plug-in gets the whole interface: PDE problem included
    assert np.all(np.isfinite(problem.solve([0.2], nu=0.01).u[-1]))


def test_unknown_name_lists_the_plugin(installed):
    with pytest.raises(GeometryError, match=r"unknown name 'hadamart' \(did you mean 'hadamard'\?\)"):
        geometry.build("hadamart")


def test_broken_plugin_is_named(tmp_path):
    dist = tmp_path / "broken_geometry-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-geometry\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[shockflow.geometries]\nbroken = no_such_module:Nothing\n")
    sys.path.insert(0, str(tmp_path))
    geometry.reload_plugins()
    try:
        with pytest.raises(GeometryError, match=r"entry point 'broken' = 'no_such_module:Nothing' .* failed to load"):
            geometry.available()
    finally:
        sys.path.remove(str(tmp_path))
        geometry.reload_plugins()
    assert "broken" not in geometry.available()
