"""Result file format 2 (netCDF-4/CF): every result kind opens with xarray's h5netcdf engine with
named dimensions and coordinates; the reader still reads format 1 (stored files); a damaged file
gives a ResultFileError naming the file, the object and what was expected (exit 2, no traceback)."""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import h5py
import numpy as np
import pytest

from shockflow.cli import main
from shockflow.storage import FORMAT_VERSION, ResultFileError, read_result, write_result

xr = pytest.importorskip("xarray")
pytest.importorskip("h5netcdf")
pd = pytest.importorskip("pandas")

DATA = Path(__file__).parent / "data"
V1_SOLVE = DATA / "result-v1-burgers-sine.h5"
V1_RUN = DATA / "result-v1-two-layer-staircase.h5"
TEACHER = (8.0, 3.0, 1.0, 0.35)  # cases/two-layer-staircase.toml: gamma*_k = 2 / w_k (docs/theory.md §2)

BOX_CASE = """kind = "pde"
[equation]
kind = "hamilton_jacobi"
[domain]
kind = "box"
lower = [-1.0, -1.0]
upper = [1.0, 1.0]
cells = [24, 20]
boundary = "periodic"
[initial]
function = "gaussian"
amplitude = 1.0
width = 0.3
center = [0.0, 0.0]
[output]
t_end = 0.1
snapshots = 5
"""


def _open(path, group):
    return xr.open_dataset(path, engine="h5netcdf", group=group)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """One result file of every kind: interval, box, surface (solved here, small), network (format 1
    stored file rewritten by the format-2 writer)."""
    out = tmp_path_factory.mktemp("kinds")
    (out / "box.toml").write_text(BOX_CASE)
    runs = {"interval": ["burgers-sine", "--set", "domain.cells=64", "--set", "output.snapshots=9"],
            "box": [str(out / "box.toml")],
            "surface": ["hj-sphere", "--set", "domain.frequency=4", "--set", "output.snapshots=5",
                        "--set", "output.t_end=0.2"]}
    paths = {}
    for kind, args in runs.items():
        assert main(["solve", *args, "--out", str(out / kind), "--quiet", "--no-figures"]) == 0
        paths[kind] = next((out / kind).glob("*.h5"))
    paths["network"] = write_result(read_result(V1_RUN), out / "network.h5")
    return paths


def test_format_1_files_are_still_read():
    old = read_result(V1_SOLVE)
    assert old.format_version == 1 and FORMAT_VERSION == 2
    x = old.coordinates["x"]
    assert old.values.shape == (9, 64) and np.allclose(old.times, np.linspace(0, 0.4, 9))
    # cell averages of 0.25 + sin(2 pi x) on 64 cells (exact integral)
    h = 1 / 64
    exact = 0.25 + (np.cos(2 * np.pi * (x - h / 2)) - np.cos(2 * np.pi * (x + h / 2))) / (2 * np.pi * h)
    np.testing.assert_allclose(old.initial, exact, atol=1e-12)
    run = read_result(V1_RUN)
    assert run.charts == ("r0", "r1", "r2", "r3")
    # format 1 kept each chart's shocks under its solution: the reader rebuilds the chart column
    assert [r["chart"] for r in run.shock_rows()] == ["r0", "r1", "r2", "r3"]
    np.testing.assert_allclose([r["time"] for r in run.shock_rows()], [2 / w for w in TEACHER], rtol=0.15)
    assert run.transitions["predicted"]["chart"].tolist() == ["r0", "r1", "r2", "r3"]   # bytes decoded
    np.testing.assert_array_equal(run.values, run.extraction["charts"]["r0"]["values"])


def test_format_1_to_2_round_trip_keeps_every_number(files):
    old, new = read_result(V1_RUN), read_result(files["network"])
    assert new.format_version == 2
    np.testing.assert_array_equal(new.values, old.values)
    np.testing.assert_array_equal(new.times, old.times)
    for label in old.charts:
        for name, a in old.extraction["charts"][label].items():
            if name != "attrs":
                np.testing.assert_array_equal(new.extraction["charts"][label][name], a)
        assert new.extraction["charts"][label]["attrs"]["gamma_star"] == old.extraction["charts"][label]["attrs"]["gamma_star"]
    assert new.shock_rows() == old.shock_rows()
    for g in ("predicted", "observed", "matches"):
        for col, a in old.transitions[g].items():
            assert np.asarray(new.transitions[g][col]).tolist() == np.asarray(a).tolist()
    with h5py.File(files["network"]) as f:      # stored once: no root /solution beside the charts'
        assert "solution" not in f and f.attrs["main_solution"] == "extraction/r0"
        assert "solution" not in f["extraction/r0"]


@pytest.mark.parametrize("kind, dims", [("interval", ("times", "x")), ("box", ("times", "axis0", "axis1")),
                                        ("surface", ("times", "vertex"))])
def test_pde_solutions_open_in_xarray_with_named_dimensions_and_coordinates(files, kind, dims):
    res = read_result(files[kind])
    with _open(files[kind], "solution") as ds:
        assert ds["values"].dims == dims and ds["initial"].dims == dims[1:]
        np.testing.assert_array_equal(ds["times"].values, res.times)
        np.testing.assert_array_equal(ds["values"].values, res.values)
        for name in dims[1:]:
            assert name in ds.coords
        if kind == "surface":
            assert ds["vertices"].dims == ("vertex", "space") and ds["triangles"].dims == ("triangle", "corner")
            np.testing.assert_array_equal(ds["vertices"].values, res.coordinates["vertices"])
            assert ds["space"].values.tolist() == ["x", "y", "z"]
        else:
            for name in dims[1:]:
                np.testing.assert_array_equal(ds[name].values, res.coordinates[name])
        assert ds["values"].attrs["long_name"] == "solution snapshots" and ds["times"].attrs["units"] == "1"
    with _open(files[kind], "shocks") as sh:
        assert sh["location"].dims == ("shock", "component")
        assert sh["location"].shape == (res.shock_count, len(dims) - 1 if kind != "surface" else 3)
        np.testing.assert_array_equal(sh["time"].values, res.shocks["time"])
        assert sh["component"].values.tolist() == (list(dims[1:]) if kind != "surface" else ["x", "y", "z"])
    with _open(files[kind], "shocks/steepness") as st:
        assert st["values"].dims == ("times",)
    # the in-memory view is the same as the file's
    mem = res.to_xarray()
    assert mem["values"].dims == dims
    np.testing.assert_array_equal(mem["values"].values, res.values)


def test_network_result_opens_per_chart_and_per_table(files):
    res = read_result(files["network"])
    for label in res.charts:
        with _open(files["network"], f"extraction/{label}") as ds:
            chart = res.extraction["charts"][label]
            assert ds["values"].dims == ("times", "x") and ds["u0"].dims == ("x",)
            np.testing.assert_array_equal(ds["x"].values, chart["x"])
            np.testing.assert_array_equal(ds["times"].values, chart["times"])
            assert ds["trajectory"].dims == ("trajectory_steps",)
            assert ds.attrs["coordinate"] == label and ds.attrs["gamma_star"] == chart["attrs"]["gamma_star"]
    with _open(files["network"], "shocks") as sh:
        assert sh["chart"].dims == ("shock",) and sh["chart"].values.tolist() == list(res.charts)
    with _open(files["network"], "transitions/predicted") as p:
        assert p["step"].dims == ("transition",) and p["chart"].values.tolist() == list(res.charts)
        assert p["step"].attrs["long_name"] == "training step"
    with _open(files["network"], "transitions/matches") as m:
        assert m["relative_error"].dims == ("match",)
        steps = dict(zip(res.transitions["predicted"]["step"], res.transitions["predicted"]["chart"]))
        assert m["chart"].values.tolist() == [steps[s] for s in m["predicted_step"].values]
    # every chart's problem: one (lower, upper) per chart
    assert len(res.problem["lower"]) == len(res.charts) == len(res.problem["upper"])
    df = res.to_dataframe("shocks")
    assert df["chart"].tolist() == list(res.charts) and np.allclose(df["time"], res.shocks["time"])
    assert res.to_dataframe("matches").shape[0] == len(res.transitions["matches"]["relative_error"])
    assert res.to_xarray("r1")["values"].dims == ("times", "x")
    with pytest.raises(ValueError, match="unknown group 'r9'.*r0, r1, r2, r3"):
        res.to_xarray("r9")


def test_strings_are_utf8_variable_length_and_numbers_carry_checksums(files):
    for path in files.values():
        with h5py.File(path) as f:
            def check(name, obj):
                if isinstance(obj, h5py.Dataset):
                    assert obj.dtype.kind != "S", f"{name}: fixed-length bytes"
                    if obj.dtype.kind == "O":
                        assert h5py.check_string_dtype(obj.dtype).encoding == "utf-8", name
                    elif obj.size:
                        assert obj.fletcher32, name
                    assert "long_name" in obj.attrs and "units" in obj.attrs, name
            f.visititems(check)


# ---- damaged files -------------------------------------------------------------------------------

def _damaged(src, tmp_path, change):
    path = tmp_path / "damaged.h5"
    shutil.copy(src, path)
    with h5py.File(path, "r+") as f:
        change(f)
    return path


DAMAGES = {
    "deleted dataset": (lambda f: f["solution"].__delitem__("values"), "/solution/values", "a dataset"),
    "deleted group": (lambda f: f.__delitem__("shocks"), "/shocks", "a group"),
    "deleted attribute": (lambda f: f["solution"].attrs.__delitem__("steps"), "'steps' of /solution", "an integer"),
    "group for dataset": (lambda f: (f["solution"].__delitem__("times"), f["solution"].create_group("times")),
                          "/solution/times", "a dataset"),
    "non-JSON settings": (lambda f: f.attrs.__setitem__("settings", "{not json"), "'settings' of /", "a JSON text"),
    "string seed": (lambda f: f.attrs.__setitem__("seed", "seven"), "'seed' of /", "an integer"),
    "empty times": (lambda f: (f["solution"].__delitem__("times"), f["solution"].create_dataset("times", data=np.zeros(0))),
                    "/solution/times", "at least one output time"),
    "deleted problem key": (lambda f: f["problem"].attrs.__delitem__("nu"), "'nu' of /problem", "an attribute"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_file_names_the_file_the_object_and_what_was_expected(files, tmp_path, capsys, damage):
    change, obj, expected = DAMAGES[damage]
    path = _damaged(files["interval"], tmp_path, change)
    with pytest.raises(ResultFileError) as info:
        read_result(path)
    msg = str(info.value)
    assert str(path) in msg and obj in msg and f"expected {expected}" in msg
    assert main(["show", str(path), "--no-figures"]) == 2
    err = capsys.readouterr().err
    assert obj in err and "Traceback" not in err


def test_a_corrupted_byte_is_caught_by_the_checksum(files, tmp_path):
    path = tmp_path / "flipped.h5"
    shutil.copy(files["interval"], path)
    with h5py.File(path) as f:
        chunk = f["solution/initial"].id.get_chunk_info(0)
        offset, n = chunk.byte_offset, chunk.size
    raw = bytearray(path.read_bytes())
    raw[offset + n // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(ResultFileError, match=r"/solution/initial: expected readable data, found a damaged dataset"):
        read_result(path)


def test_a_missing_chart_group_of_a_network_result_is_named(files, tmp_path):
    path = _damaged(files["network"], tmp_path, lambda f: f["extraction"].__delitem__("r2"))
    with pytest.raises(ResultFileError, match=r"/extraction/r2: expected a group, found nothing"):
        read_result(path)


def test_writer_names_arrays_it_has_no_dimensions_for(tmp_path):
    res = read_result(V1_RUN)
    charts = dict(res.extraction["charts"])
    charts["r0"] = {**charts["r0"], "mystery": np.zeros(3)}
    bad = replace(res, extraction={**res.extraction, "charts": charts})
    with pytest.raises(ValueError, match=r"/extraction/r0: no dimensions known for \['mystery'\]"):
        write_result(bad, tmp_path / "bad.h5")
    assert not (tmp_path / "bad.h5").exists()


def test_the_spectral_trace_opens_in_xarray_with_the_step_coordinate(tmp_path):
    from shockflow.spectra.monitor import read_spectral_trace, spectral_monitor, write_spectral_trace

    rng = np.random.default_rng(3)
    stack = rng.standard_normal((3, 40, 80)) / np.sqrt(80)
    trace = spectral_monitor(stack, [0, 5, 50])
    path = write_spectral_trace(trace, tmp_path / "trace.h5")
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        assert ds["eigenvalues"].dims == ("step", "eigenvalue") and ds["outliers"].dims[0] == "step"
        assert ds["step"].values.tolist() == [0, 5, 50] and ds["lambda_plus"].dims == ("step",)
        np.testing.assert_array_equal(ds["eigenvalues"].values, trace.eigenvalues)
        assert ds["q2"].attrs["long_name"] == "overlap q2 measured with the teacher"
    back = read_spectral_trace(path)
    np.testing.assert_array_equal(back.eigenvalues, trace.eigenvalues)
    np.testing.assert_array_equal(back.step, trace.step)


@pytest.mark.parametrize("path", [123, None, b"result.h5", ["result.h5"]])
def test_a_path_that_is_no_path_is_a_result_file_error_naming_the_argument(path):
    # (pathlib's own TypeError named neither the argument nor what read_result takes)
    with pytest.raises(ResultFileError, match=r"^path: expected the path of a result file \(str or os\.PathLike\), "
                                              rf"found {re.escape(repr(path))}$"):
        read_result(path)


@pytest.mark.parametrize("method, module", [("to_xarray", "xarray"), ("to_dataframe", "pandas")])
def test_the_notebook_methods_say_how_to_install_what_they_need(monkeypatch, method, module):
    """Without xarray or pandas they raised a plain ModuleNotFoundError ('No module named ...')."""
    result = read_result(V1_RUN)
    monkeypatch.setitem(sys.modules, module, None)   # as if not installed
    with pytest.raises(ModuleNotFoundError, match=rf"^{method} needs {module}, which is not installed: "
                                                  rf"pip install 'shockflow\[xarray\]' \(or pip install {module}\)$"):
        getattr(result, method)()
    # the extra named is the one pyproject.toml declares, and it installs the module
    import tomllib

    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(req.startswith(module) for req in extras["xarray"])
