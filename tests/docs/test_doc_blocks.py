"""The Python blocks of the reference pages run as written, and what the pages name exists.

docs/result-file.md, docs/adding-a-geometry.md and docs/training-log.md: every ```python block runs, in order,
each page in one namespace (as a notebook would run it), in a directory holding the files the page says how to
make; a block that is only an excerpt says so in an HTML comment ``<!-- sketch ... -->`` just before it and is
not run.  (README.md and docs/api.md, whose examples print, are tests/docs/test_examples.py's.)"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"(<!-- sketch[^>]*-->\s*)?```python\n(.*?)```", re.S)
STORED_RUN = ROOT / "tests" / "storage" / "data" / "result-v1-two-layer-staircase.h5"


def _blocks(doc: str) -> list[str]:
    return [m.group(2) for m in BLOCK.finditer((ROOT / doc).read_text(encoding="utf-8")) if not m.group(1)]


#: the theory cases docs/result-file.md reads, at the reduced sizes of tests/storage/test_theory_result_files.py
THEORY_RUNS = {"bbp-linear": ["teacher_student.N=40", "teacher_student.M=80", "teacher_student.eps=[0.2, 0.9]",
                              "teacher_student.seeds=2", "phase_diagram.eps=[0.15, 0.9, 1.3]",
                              "phase_diagram.sigma_w=[0.5, 1.0]", "finite_size.sizes=[16, 32]",
                              "finite_size.samples=20"],
               "scaling-data-limited": ["scaling.grid.d=[8]", "scaling.grid.n=[16, 32, 48, 64]",
                                        "scaling.grid.lam=[0.3, 0.1]", "scaling.grid.seeds=2",
                                        "scaling.fit.margin=1.0", "scaling.target.gamma=1.5"]}


def _result_files(directory: Path) -> None:
    """What docs/result-file.md reads: `shockflow solve burgers-sine --out out`, `shockflow run --out out` (the
    default case; a stored run of it, rewritten in the current format) and two theory runs (smaller here)."""
    import shockflow
    from shockflow.storage import read_result, write_result

    out = directory / "out"
    shockflow.solve("burgers-sine", out=out, overrides=["domain.cells=64"], figures=False)
    write_result(read_result(STORED_RUN), out / "two-layer-staircase.h5")
    for case, overrides in THEORY_RUNS.items():
        shockflow.run(case, out=out, overrides=overrides, figures=False)


@pytest.mark.parametrize("doc, prepare", [("docs/result-file.md", _result_files),
                                          ("docs/adding-a-geometry.md", None),
                                          ("docs/training-log.md", None)])
def test_the_python_blocks_of_a_page_run_in_order(doc, prepare, tmp_path, monkeypatch):
    blocks = _blocks(doc)
    assert blocks, f"{doc}: no Python block to run"
    monkeypatch.chdir(tmp_path)
    if prepare is not None:
        prepare(tmp_path)
    namespace = {"__name__": "__doc_block__"}
    for k, code in enumerate(blocks, start=1):
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, f"{doc} block {k}", "exec"), namespace)


def test_a_sketch_is_marked_and_not_run():
    text = (ROOT / "docs" / "adding-a-geometry.md").read_text(encoding="utf-8")
    sketches = [m for m in BLOCK.finditer(text) if m.group(1)]
    assert len(sketches) == 1 and "class HadamardGeometry" in sketches[0].group(2)
    assert "class HadamardGeometry" not in "".join(_blocks("docs/adding-a-geometry.md"))


def test_the_stage_attributes_api_md_lists_are_the_prediction_stages_fields():
    from shockflow.prediction.predict import PredictionStage

    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    listed = re.search(r"`stage` \(a `PredictionStage`: ([^)]*)\)", text).group(1)
    names = re.findall(r"`(\w+)`", listed)
    public = [f.name for f in dataclasses.fields(PredictionStage)]
    assert names and set(names) <= set(public)
    assert {"extraction", "solutions", "shocks", "predicted"} <= set(names)


def test_the_sweep_directory_docs_sweeps_md_names_is_the_commands_default(tmp_path, monkeypatch, capsys):
    from shockflow.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "burgers-sine", "--set", "initial.amplitude=0.5,1", "--dry-run", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["out"]
    assert f"It writes into `{out}/`" in (ROOT / "docs" / "sweeps.md").read_text(encoding="utf-8")
