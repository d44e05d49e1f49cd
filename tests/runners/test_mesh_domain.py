"""[domain] kind = "mesh": a mesh file read by meshio, checked like a generated mesh, solves to the
same numbers as the generated icosphere; surface results also written as .vtu for ParaView."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from shockflow.cli import main
from shockflow.storage import read_result
from solvers.surfaces import icosphere

meshio = pytest.importorskip("meshio")

REPO = Path(__file__).resolve().parents[2]
SPHERE_CASE = (REPO / "cases" / "hj-sphere.toml").read_text()


def _mesh_case(tmp_path, mesh_name, frequency=None):
    text = SPHERE_CASE.replace('kind = "icosphere"', f'kind = "mesh"\npath = "{mesh_name}"')
    text = "\n".join(l for l in text.splitlines() if not l.startswith("frequency"))
    path = tmp_path / "sphere-from-file.toml"
    path.write_text(text)
    return path


def _write_icosphere(path, frequency):
    m = icosphere(frequency)
    meshio.write(path, meshio.Mesh(m.vertices, [("triangle", m.triangles)]))
    return m


def _solve(args, capsys):
    assert main(["solve", *args, "--json", "--no-figures"]) == 0
    out = json.loads(capsys.readouterr().out)
    return out, read_result(out["result_file"])


@pytest.mark.parametrize("suffix", [".vtu", ".msh"])
def test_a_mesh_file_solves_to_the_numbers_of_the_generated_icosphere(tmp_path, capsys, suffix):
    _write_icosphere(tmp_path / f"ico6{suffix}", 6)
    case = _mesh_case(tmp_path, f"ico6{suffix}")
    snaps = ["--set", "output.snapshots=11"]
    out, res = _solve([str(case), "--out", str(tmp_path / "file"), *snaps], capsys)
    ref_out, ref = _solve(["hj-sphere", "--set", "domain.frequency=6", "--out", str(tmp_path / "ref"), *snaps], capsys)
    np.testing.assert_array_equal(res.coordinates["vertices"], ref.coordinates["vertices"])
    np.testing.assert_array_equal(res.values, ref.values)
    assert out["shocks"] == ref_out["shocks"] and out["formation_time"] == ref_out["formation_time"]
    assert res.problem["domain"] == "mesh" and res.settings["domain"] == {"kind": "mesh", "path": f"ico6{suffix}"}
    # beside the result file: the snapshots as an XDMF time series, which meshio (and ParaView) read back
    xdmf, heavy = (Path(p) for p in out["paraview"])
    assert xdmf.name == "sphere-from-file-surface.xdmf"
    assert heavy == xdmf.with_suffix(".h5") and heavy != Path(out["result_file"])
    with meshio.xdmf.TimeSeriesReader(xdmf) as r:
        points, cells = r.read_points_cells()
        np.testing.assert_array_equal(points, res.coordinates["vertices"])
        np.testing.assert_array_equal(cells[0].data, res.coordinates["triangles"])
        assert r.num_steps == res.times.size
        for k in range(r.num_steps):
            t, point_data, _ = r.read_data(k)
            assert t == res.times[k]
            np.testing.assert_array_equal(point_data["u"], res.values[k])
    assert not [p for p in xdmf.parent.iterdir() if p.name.startswith(".")]   # no scratch left


@pytest.mark.slow
def test_mesh_round_trip_reproduces_the_hj_sphere_reference_numbers(tmp_path, capsys):
    """The icosphere of hj-sphere (frequency 24) through a file: identical to the built-in case, and
    its reference numbers: one shock on the equator, t* from the data within 2 % of 1/2."""
    _write_icosphere(tmp_path / "ico24.vtu", 24)
    out, res = _solve([str(_mesh_case(tmp_path, "ico24.vtu")), "--out", str(tmp_path / "file")], capsys)
    ref_out, ref = _solve(["hj-sphere", "--out", str(tmp_path / "ref")], capsys)
    np.testing.assert_array_equal(res.values, ref.values)
    assert out["shocks"] == ref_out["shocks"] and len(out["shocks"]) == 1
    v, tri = res.coordinates["vertices"], res.coordinates["triangles"]
    h = float(np.max(np.linalg.norm(v[tri[:, 0]] - v[tri[:, 1]], axis=1)))
    assert abs(out["shocks"][0]["location"][2]) < h
    assert res.shock_info["formation_time_from_data"] == pytest.approx(0.5, rel=0.02)


def test_mesh_file_errors_name_the_case_file_the_key_and_the_problem(tmp_path, capsys):
    case = _mesh_case(tmp_path, "absent.vtu")
    assert main(["solve", str(case), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert str(case) in err and "domain.path" in err and "no such mesh file" in err and "Traceback" not in err
    (tmp_path / "junk.vtu").write_text("not a mesh")
    case = _mesh_case(tmp_path, "junk.vtu")
    assert main(["solve", str(case), "--out", str(tmp_path)]) == 2
    assert "is not a mesh meshio reads" in capsys.readouterr().err
    # an open surface (a hemisphere's triangles) fails the manifold check: boundary edges are named
    m = icosphere(4)
    keep = m.triangles[m.vertices[m.triangles].mean(axis=1)[:, 2] > 0]
    used, index = np.unique(keep, return_inverse=True)
    meshio.write(tmp_path / "open.vtu", meshio.Mesh(m.vertices[used], [("triangle", index.reshape(keep.shape))]))
    case = _mesh_case(tmp_path, "open.vtu")
    assert main(["solve", str(case), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "domain.path" in err and "open.vtu" in err and "boundary" in err
    # lines only: not a surface
    meshio.write(tmp_path / "lines.vtu", meshio.Mesh(m.vertices, [("line", m.triangles[:, :2])]))
    case = _mesh_case(tmp_path, "lines.vtu")
    assert main(["solve", str(case), "--out", str(tmp_path)]) == 2
    assert "expected triangle cells (a surface mesh), found line" in capsys.readouterr().err
