"""The Python examples of README.md and docs/api.md run and print exactly what the docs show.

An example is a ```python block followed directly by a ```text block: its expected output."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAIR = re.compile(r"```python\n(.*?)```\s*\n```text\n(.*?)```", re.S)


def _examples():
    for doc in ("README.md", "docs/api.md"):
        for k, m in enumerate(PAIR.finditer((ROOT / doc).read_text(encoding="utf-8"))):
            yield pytest.param(m.group(1), m.group(2), id=f"{doc}#{k + 1}")


EXAMPLES = list(_examples())
_RUN: dict[str, str] = {}  # identical examples in both files run once


def test_the_docs_hold_the_api_and_solver_examples():
    codes = {p.values[0] for p in EXAMPLES}
    assert any("shockflow.run(" in c and "shockflow.read_result(" in c and "shockflow.solve(" in c for c in codes)
    assert any("solve_conservation(" in c for c in codes)
    assert len(EXAMPLES) >= 4  # two in README.md, two in docs/api.md


@pytest.mark.parametrize("code, expected", EXAMPLES)
def test_example_prints_what_the_docs_show(code, expected, tmp_path, monkeypatch):
    if code not in _RUN:
        monkeypatch.chdir(tmp_path)  # the example writes ./shockflow-results/
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            exec(compile(code, "<example>", "exec"), {"__name__": "__example__"})
        _RUN[code] = buffer.getvalue()
    assert _RUN[code].rstrip("\n") == expected.rstrip("\n")
