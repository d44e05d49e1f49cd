"""Result files (round trip, provenance, reader errors), `shockflow cases/show`, figures, the reference page."""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pytest

from shockflow.cases import kinds
from shockflow.cli import main
from shockflow.storage import ResultFileError, read_result

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    out = tmp_path_factory.mktemp("solve")
    code = main(["solve", "hj-cosine-ridge", "--out", str(out), "--quiet", "--set", "domain.cells=128",
                 "--set", "output.snapshots=21"])
    assert code == 0
    return out / "hj-cosine-ridge.h5"


def test_result_file_holds_case_provenance_problem_and_solution(solved):
    res = read_result(solved)
    case_text = (REPO / "cases" / "hj-cosine-ridge.toml").read_text()
    assert res.case_text == case_text and res.case_kind == "pde"
    assert res.overrides == ("domain.cells=128", "output.snapshots=21")
    assert res.settings["domain"] == {"kind": "interval", "cells": 128, "lower": -0.5, "upper": 0.5,
                                      "boundary": "periodic", "boundary_value": 0.0}
    assert res.problem["solver"]["derivative"] == "eno2" and res.problem["quantity"] == "u"
    assert set(res.versions) >= {"numpy", "h5py", "shockflow"}
    x = res.coordinates["x"]
    assert np.allclose(res.initial, np.cos(2 * np.pi * x))
    assert res.values.shape == (21, 128) and np.array_equal(res.values[0], res.initial)
    assert np.allclose(res.times, np.linspace(0, 0.08, 21))
    with h5py.File(solved) as f:  # snapshots chunked per time and compressed
        ds = f["solution/values"]
        assert ds.chunks == (1, 128) and ds.compression == "gzip"
        assert set(f["transitions"]) == {"predicted", "observed", "matches"}


def test_case_text_in_the_result_reproduces_the_run(solved, tmp_path, capsys):
    res = read_result(solved)
    case = tmp_path / "hj-cosine-ridge.toml"
    case.write_text(res.case_text)
    args = ["solve", str(case), "--out", str(tmp_path), "--json", "--no-figures"]
    for o in res.overrides:
        args += ["--set", o]
    assert main(args) == 0
    again = read_result(json.loads(capsys.readouterr().out)["result_file"])
    assert np.array_equal(again.values, res.values)
    assert again.shock_rows() == res.shock_rows()


def test_reader_rejects_missing_and_foreign_files(tmp_path, capsys):
    with pytest.raises(ResultFileError, match="no such file"):
        read_result(tmp_path / "none.h5")
    (tmp_path / "text.h5").write_text("not hdf5")
    with pytest.raises(ResultFileError, match="not an HDF5 file"):
        read_result(tmp_path / "text.h5")
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f.attrs["format"] = "something-else"
    with pytest.raises(ResultFileError, match="not a shockflow result file"):
        read_result(tmp_path / "other.h5")
    assert main(["show", str(tmp_path / "other.h5")]) == 2
    assert "other.h5" in capsys.readouterr().err


def test_show_prints_the_shocks_and_draws_the_figure(solved, tmp_path, capsys):
    assert main(["show", str(solved), "--json", "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    res = read_result(solved)
    assert out["shocks"] == res.shock_rows() and len(out["shocks"]) == 1
    assert out["shocks"][0]["time"] == pytest.approx(1 / (4 * np.pi ** 2), rel=0.02)
    (png,) = out["figures"]
    data = Path(png).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1650, 645)  # 11 x 4.3 inches at the default 150 dpi
    assert main(["show", str(solved), "--json", "--out", str(tmp_path / "b"), "--dpi", "100"]) == 0
    data = Path(json.loads(capsys.readouterr().out)["figures"][0]).read_bytes()
    assert (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) == (1100, 430)
    for fmt, magic in (("svg", b"<?xml"), ("pdf", b"%PDF")):
        assert main(["show", str(solved), "--json", "--out", str(tmp_path / fmt), "--figure-format", fmt]) == 0
        (path,) = json.loads(capsys.readouterr().out)["figures"]
        assert path.endswith(f".{fmt}") and Path(path).read_bytes()[:len(magic)] == magic
    assert main(["show", str(solved)]) == 0
    text = capsys.readouterr().out
    assert "hj-cosine-ridge" in text and "first shock" in text


def test_cases_command_lists_builtin_cases(capsys):
    assert main(["cases", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    names = {c["name"] for c in listed}
    assert names == {p.stem for p in (REPO / "cases").glob("*.toml")}
    for c in listed:
        # "pde" and "network" (the two kinds) plus the theory kinds that plug in
        assert set(c) == {"name", "kind", "description"} and c["kind"] in kinds() and c["description"]
    assert {c["kind"] for c in listed} >= {"pde", "network", "nqf", "bbp", "scaling"}


def test_bad_arguments_exit_with_status_2(capsys):
    for argv in (["solve"], ["solve", "burgers-sine", "--seed", "-1"], ["show"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
    assert "--seed: expected a whole number >= 0, found '-1'" in capsys.readouterr().err


def test_blow_up_is_a_run_failure_with_exit_code_1(tmp_path, capsys, monkeypatch):
    # data of size 1e200: H = p^2/2 overflows to inf in the first step; the solver names step and cell (their step
    # count, about 1e204, is refused before the solve: let through here to reach the solver)
    from shockflow.runners import pde

    monkeypatch.setattr(pde, "STEP_MARGIN", float("inf"))
    case = tmp_path / "huge.toml"
    case.write_text((REPO / "cases" / "hj-cosine-ridge.toml").read_text())
    code = main(["solve", str(case), "--out", str(tmp_path), "--set", "initial.amplitude=1e200",
                 "--set", "domain.cells=32", "--no-figures", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and "became" in err and "step" in err
    assert not (tmp_path / "huge.h5").exists()


def test_committed_reference_page_equals_the_generated_one():
    from shockflow.cases.reference import reference_page

    committed = (REPO / "docs" / "case-reference.md").read_text()
    assert committed == reference_page(), "regenerate: python -m shockflow.cases.reference > docs/case-reference.md"


def test_a_builtin_case_is_found_by_its_name_alone():
    """builtin_case_path finds a case's file by its stem (with or without .toml) without reading the others: the
    listing's path for every built-in case, None for an unknown name and for anything that is not a bare stem."""
    from shockflow.cases.builtin import builtin_case_path, builtin_cases

    cases = builtin_cases()
    assert len(cases) > 20
    for c in cases:
        assert builtin_case_path(c.name) == c.path == builtin_case_path(c.name + ".toml")
    for name in ("no-such-case", "", ".toml", "../cases/two-layer-staircase", "cases/two-layer-staircase"):
        assert builtin_case_path(name) is None


def test_package_versions_are_read_once_and_handed_out_as_fresh_dicts(monkeypatch):
    from importlib import metadata

    from shockflow.logs import package_versions, provenance

    reads = []
    version = metadata.version
    monkeypatch.setattr(metadata, "version", lambda name: (reads.append(name), version(name))[1])
    provenance._versions.cache_clear()
    first = package_versions()
    assert package_versions() == first and len(reads) == len(set(reads)) == len(first) - 1   # python's is not read
    first["numpy"] = "changed by a caller"
    second = package_versions()
    assert second["numpy"] != "changed by a caller" and set(second) >= {"python", "numpy", "scipy", "h5py", "shockflow"}
