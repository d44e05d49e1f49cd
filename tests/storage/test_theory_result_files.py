"""The theory cases' result files (nqf, bbp, scaling): netCDF-4/CF like the PDE and prediction results.

The document a runner reports comes back from the file exactly (curves included); xarray's h5netcdf
engine opens every group with the dimensions the theory names; a truncated, damaged or foreign
file gives a ResultFileError naming the file, the object and what was expected (exit 2 in ``show``).
"""

from __future__ import annotations

import json
import math
import shutil

import h5py
import numpy as np
import pytest

from shockflow.cli import main
from shockflow.storage import ResultFileError
from shockflow.storage.theory_results import Layout, read_theory_result, write_theory_result


class _Case:
    name, kind, text, path, overrides = "doc", "nqf", "kind = 'nqf'\n", None, ("experiment.eps=1e-4",)


DOCUMENT = {
    "label": "five modes", "count": 3, "ratio": 0.5, "flag": True, "missing": None, "nan": math.nan,
    "rates": [2.0, 1.0, 0.5], "steps": [10, 20, 30], "names": ["a", "b", "c"], "hit": [True, False, True],
    "gaps": [1.0, None, 3.0], "empty": [], "grid": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
    "window": [0.1, 0.9],
    "fit": {"exponent": -0.5, "local": [0.4, 0.5, 0.6, 0.7], "nested": {"deep": [1, 2]}},
    "rows": [{"eps": 0.3, "q2": 0.01, "ordered": False, "per_lambda": [1.0, 2.0]},
             {"eps": 0.8, "q2": 0.97, "ordered": True, "per_lambda": [3.0, 4.0]}],
    "runs": [{"theta": 0.0, "fit": {"exponent": 1.0}}, {"theta": 1.0, "fit": {"exponent": 0.5}}],
}
LAYOUT = Layout(dims={"rates": ("mode",), "steps": ("mode",), "names": ("mode",), "hit": ("mode",),
                      "gaps": ("mode",), "grid": ("row", "mode"), "window": ("bound",), "fit/local": ("sub_window",),
                      "rows": ("eps",), "rows/per_lambda": ("eps", "lambda")},
                describe={"rates": ("rate of the mode", "1/s"), "rows/q2": ("overlap", "1")},
                labels={"bound": ("lower", "upper")})


def _same(a, b, where="") -> None:
    """Equal documents, None in a numeric list read back as NaN."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), (where, list(a), list(b))
        for k in a:
            _same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, list) and len(a) == len(b), (where, a, b)
        for k, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{k}]")
    elif isinstance(a, float) and math.isnan(a) or (a is None and isinstance(b, float)):
        assert isinstance(b, float) and math.isnan(b), (where, a, b)
    else:
        assert a == b and type(a) is type(b), (where, a, b)


def test_every_kind_of_value_comes_back_exactly(tmp_path):
    path = write_theory_result(tmp_path / "doc.h5", DOCUMENT, LAYOUT, case=_Case, seed=7, settings={"eps": 1e-4}, versions={"numpy": "2"},
                               wall_time=1.5)
    back = read_theory_result(path)
    _same(DOCUMENT, back.document)
    assert back.document["missing"] is None and back.document["hit"] == [True, False, True]
    assert (back.case_name, back.case_kind, back.seed, back.settings) == ("doc", "nqf", 7, {"eps": 1e-4})
    assert back.overrides == ("experiment.eps=1e-4",) and back.wall_time == 1.5 and back.versions == {"numpy": "2"}
    with h5py.File(path) as f:
        assert f["rates"].attrs["units"] == "1/s" and f["rates"].dims[0][0].name == "/mode"
        assert f["rows/per_lambda"].dims[1][0].name == "/rows/lambda"
        assert f["hit"].dtype == np.uint8 and f["hit"].attrs["flag_meanings"] == "false true"


def test_a_list_shorter_than_its_dimension_keeps_a_dimension_of_its_own(tmp_path):
    doc = {"rates": [1.0, 2.0, 3.0], "gaps": [1.0, 2.0]}
    path = write_theory_result(tmp_path / "short.h5", doc, LAYOUT, case=_Case, seed=None, settings={}, versions={})
    back = read_theory_result(path)
    assert back.document == doc
    assert back.groups[""]["variables"]["gaps"][0] == ("gaps_mode",) and back.groups[""]["variables"]["rates"][0] == ("mode",)


def test_a_list_the_layout_cannot_hold_is_named_and_no_file_is_left(tmp_path):
    with pytest.raises(ValueError, match=r"/rows/q2: expected a rectangular list"):
        write_theory_result(tmp_path / "bad.h5", {"rows": [{"q2": [1.0]}, {"q2": [1.0, 2.0]}]}, LAYOUT,
                            case=_Case, seed=None, settings={}, versions={})
    with pytest.raises(ValueError, match=r"provenance attributes"):
        write_theory_result(tmp_path / "bad.h5", {"seed": 3}, LAYOUT, case=_Case, seed=None, settings={}, versions={})
    assert not (tmp_path / "bad.h5").exists()


# ---- the three theory kinds, run small through the command line ---------------------------------

RUNS = {
    "nqf": (["nqf-five-mode", "--set", "experiment.kind=power_law", "--set", "experiment.modes=200",
             "--set", "experiment.network_check=false"], "nqf-five-mode.h5"),
    "bbp": (["bbp-linear", "--set", "teacher_student.N=40", "--set", "teacher_student.M=80",
             "--set", "teacher_student.eps=[0.2, 0.9]", "--set", "teacher_student.seeds=2",
             "--set", "phase_diagram.eps=[0.15, 0.9, 1.3]", "--set", "phase_diagram.sigma_w=[0.5, 1.0]",
             "--set", "finite_size.sizes=[16, 32]", "--set", "finite_size.samples=20"],
            "bbp-linear-bbp.h5"),
    "scaling": (["scaling-data-limited", "--set", "scaling.grid.d=[8]", "--set", "scaling.grid.n=[16, 32, 48, 64]",
                 "--set", "scaling.grid.lam=[0.3, 0.1]", "--set", "scaling.grid.seeds=2", "--set", "scaling.fit.margin=1.0",
                 "--set", "scaling.target.gamma=1.5"], "scaling.h5"),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{kind: (the --json output, the result file)} of each theory kind, run small."""
    out, found = tmp_path_factory.mktemp("theories"), {}
    mp = pytest.MonkeyPatch()
    import io
    import sys

    for kind, (args, name) in RUNS.items():
        buf = io.StringIO()
        mp.setattr(sys, "stdout", buf)
        try:
            assert main(["run", *args, "--out", str(out / kind), "--json", "--no-figures", "--quiet"]) == 0
        finally:
            mp.undo()
        doc = json.loads(buf.getvalue())
        assert doc["result_file"] == str(out / kind / name)
        found[kind] = (doc, out / kind / name)
    return found


def test_each_theory_file_holds_what_the_run_reported(runs):
    doc, path = runs["nqf"]
    back = read_theory_result(path)
    assert back.case_kind == "nqf" and back.document["experiment"] == "power_law"
    reported = {k: v for k, v in back.document.items() if k not in ("experiment", "curves")}
    _same(doc["result"], reported)
    curves = back.document["curves"]     # the curve behind the fit, which --json leaves out
    assert len(curves["t"]) == len(curves["loss"]) > 100
    doc, path = runs["bbp"]
    back = read_theory_result(path)
    for key in ("teacher_student", "phase_diagram", "finite_size"):
        _same(doc[key], back.document[key], key)
    doc, path = runs["scaling"]
    back = read_theory_result(path)
    for key in ("points", "optimal_lambda", "regime_map", "fit", "predicted_exponents"):
        _same(doc[key], back.document[key], key)
    assert back.settings == doc["settings"]


def test_each_theory_file_opens_in_xarray_with_named_dimensions_and_coordinates(runs):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")

    def open_(kind, group=None):
        return xr.open_dataset(runs[kind][1], engine="h5netcdf", group=group)

    doc = runs["nqf"][0]["result"]
    with open_("nqf") as ds:
        assert ds["window_times"].dims == ("bound",) and ds["bound"].values.tolist() == ["lower", "upper"]
        np.testing.assert_array_equal(ds["window_times"].values, doc["window_times"])
        assert ds.attrs["experiment"] == "power_law" and ds.attrs["exponent_asymptotic"] == doc["exponent_asymptotic"]
    with open_("nqf", "fit") as ds:
        assert ds["local_exponents"].dims == ("sub_window",) and ds.attrs["exponent"] == doc["fit"]["exponent"]
    with open_("nqf", "curves") as ds:
        assert ds["loss"].dims == ("t",) and "t" in ds.coords and ds["loss"].attrs["long_name"] == "loss"
    doc = runs["bbp"][0]
    with open_("bbp", "teacher_student/rows") as ds:
        assert ds["q2"].dims == ("eps",)
        np.testing.assert_array_equal(ds["eps"].values, [r["eps"] for r in doc["teacher_student"]["rows"]])
        assert ds["theory_ordered"].values.tolist() == [int(r["theory_ordered"]) for r in doc["teacher_student"]["rows"]]
    with open_("bbp", "phase_diagram") as ds:
        assert ds["q2"].dims == ("sigma_w", "eps")
        assert ds["eps"].values.tolist() == [0.15, 0.9, 1.3] and ds["sigma_w"].values.tolist() == [0.5, 1.0]
        np.testing.assert_array_equal(ds["q2"].values, doc["phase_diagram"]["q2"])
    with open_("bbp", "finite_size") as ds:
        assert ds["U4"].dims == ("sizes", "eps") and ds["sizes"].values.tolist() == [16, 32]
    doc = runs["scaling"][0]
    with open_("scaling", "points") as ds:
        assert ds["excess_error"].dims == ("point", "lambda") and ds.sizes["point"] == len(doc["points"])
        np.testing.assert_array_equal(ds["excess_error"].values, [p["excess_error"] for p in doc["points"]])
        assert ds["n"].dims == ("point",) and ds["converged"].dtype == np.uint8
    with open_("scaling", "regime_map") as ds:
        assert ds["regime"].values.tolist() == doc["regime_map"]["regime"] and ds["n_eff"].dims == ("grid_point",)
    with open_("scaling", "fit") as ds:
        assert ds["bound"].values.tolist() == ["lower", "upper"] and ds.attrs["exponent"] == doc["fit"]["exponent"]
    back = read_theory_result(runs["scaling"][1])
    assert back.to_xarray("points")["lam"].dims == ("point", "lambda")
    assert back.to_dataframe("regime_map")["regime"].tolist() == doc["regime_map"]["regime"]
    with pytest.raises(ValueError, match="unknown group 'nope'.*'points'"):
        back.to_xarray("nope")


def test_strings_are_utf8_and_numbers_carry_checksums_in_theory_files(runs):
    for _, path in runs.values():
        with h5py.File(path) as f:
            def check(name, obj):
                if isinstance(obj, h5py.Dataset):
                    assert obj.dtype.kind != "S", name
                    if obj.dtype.kind == "O":
                        assert h5py.check_string_dtype(obj.dtype).encoding == "utf-8", name
                    elif obj.size:
                        assert obj.fletcher32, name
                    assert "long_name" in obj.attrs and "units" in obj.attrs, name
            f.visititems(check)


# ---- damaged files -------------------------------------------------------------------------------

def test_a_truncated_theory_file_names_the_file(runs, tmp_path, capsys):
    src = runs["bbp"][1]
    path = tmp_path / "truncated.h5"
    path.write_bytes(src.read_bytes()[: src.stat().st_size // 2])
    with pytest.raises(ResultFileError, match=r"truncated\.h5") as info:
        read_theory_result(path)
    assert "expected" in str(info.value) or "cannot read" in str(info.value)
    assert main(["show", str(path), "--no-figures"]) == 2
    err = capsys.readouterr().err
    assert "truncated.h5" in err and "Traceback" not in err


def _damaged(src, tmp_path, change):
    path = tmp_path / "damaged.h5"
    shutil.copy(src, path)
    with h5py.File(path, "r+") as f:
        change(f)
    return path


@pytest.mark.parametrize("change, obj, expected", [
    (lambda f: f["phase_diagram"].__delitem__("q2"), "/phase_diagram/q2", "a dataset, group or attribute"),
    (lambda f: f["teacher_student"].attrs.__delitem__("eps_c"), "/teacher_student/eps_c", "a dataset, group or attribute"),
    (lambda f: f["finite_size"].attrs.__setitem__("keys", "[not json"), "'keys' of /finite_size", "a JSON text"),
    (lambda f: f.attrs.__setitem__("seed", "seven"), "'seed' of /", "an integer"),
    (lambda f: f.attrs.__setitem__("format", "shockflow-result"), "root attribute 'format'", "'shockflow-theory-result'"),
])
def test_a_damaged_theory_file_names_the_object_and_what_was_expected(runs, tmp_path, change, obj, expected):
    path = _damaged(runs["bbp"][1], tmp_path, change)
    with pytest.raises(ResultFileError) as info:
        read_theory_result(path)
    msg = str(info.value)
    assert str(path) in msg and obj in msg and expected in msg, msg


def test_a_flipped_byte_is_caught_by_the_checksum(runs, tmp_path):
    path = tmp_path / "flipped.h5"
    shutil.copy(runs["scaling"][1], path)
    with h5py.File(path) as f:
        info = f["points/excess_error"].id.get_chunk_info(0) if f["points/excess_error"].chunks else None
        offset = info.byte_offset if info else f["points/excess_error"].id.get_offset()
        size = info.size if info else f["points/excess_error"].id.get_storage_size()
    raw = bytearray(path.read_bytes())
    raw[offset + size // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(ResultFileError, match=r"/points/excess_error: expected readable data, found a damaged dataset"):
        read_theory_result(path)


def test_show_prints_a_theory_files_table_and_redraws_its_figures_from_the_file(runs, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    doc, path = runs["bbp"]
    assert main(["show", str(path), "--out", str(tmp_path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["kind"] == "bbp" and shown["teacher_student"]["rows"] == doc["teacher_student"]["rows"]
    assert [p.rsplit("/", 1)[1] for p in shown["figures"]] == ["bbp-linear-bbp-transition.png", "bbp-linear-bbp-phase.png"]
    assert all((tmp_path / p.rsplit("/", 1)[1]).stat().st_size > 10_000 for p in shown["figures"])
    doc, path = runs["scaling"]
    assert main(["show", str(path), "--out", str(tmp_path / "s")]) == 0
    text = capsys.readouterr().out
    assert f"exponent (data): {doc['fit']['exponent']:.3f}" in text and (tmp_path / "s" / "scaling_error.png").is_file()
    doc, path = runs["nqf"]
    assert main(["show", str(path), "--no-figures", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["kind"] == "nqf" and shown["experiment"] == "power_law" and shown["figures"] == []
    assert shown["result"]["fit"] == doc["result"]["fit"]


def test_failure_modes_keep_each_run_whole_once_and_come_back_as_reported(tmp_path):
    """The failure modes report a summary of each run (``runs``) and the whole runs (``details``, their
    curves); the file keeps the whole runs once and gives both back (a run whose later modes never
    switch on has fewer switch-on times than modes)."""
    from shockflow.nqf.case import _RUN_SUMMARY, _document, _from_document, _plain, nqf_layout
    from shockflow.nqf.experiments import five_mode_switch_on

    run = five_mode_switch_on(eps=1e-3, lr=0.02, strengths=(1.0, 0.5, 0.25))
    short = {**run, "t_measured": run["t_measured"][:1], "t_predicted": run["t_predicted"][:1],
             "relative_error": run["relative_error"][:1]}
    details = {"baseline_gd": run, "large_init": short}
    result = {"runs": {k: {key: r[key] for key in _RUN_SUMMARY} for k, r in details.items()}, "details": details}
    path = write_theory_result(tmp_path / "fm.h5", {"experiment": "failure_modes", **_document(result)},
                               nqf_layout("failure_modes"), case=_Case, seed=None, settings={}, versions={})
    back = read_theory_result(path)
    with h5py.File(path) as f:
        assert "details" not in f and "curves" in f["runs/large_init"]
        assert [d[0].name for d in f["runs/large_init/t_measured"].dims] == ["/runs/large_init/t_measured_mode"]
    again = _from_document(back.document)
    _same(_plain(result), _plain(again))
    assert np.asarray(again["details"]["large_init"]["curves"]["z"]).shape == np.asarray(run["curves"]["z"]).shape
