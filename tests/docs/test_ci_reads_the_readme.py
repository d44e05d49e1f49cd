"""CI runs README.md's set-up lines as written: the block it reads holds the venv, install-and-run
and install-and-test commands, and .ci/run reads that block rather than its own copy."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _setup_lines() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- ci:setup[^>]*-->\s*```bash\n(.*?)```", text, re.S)
    assert m, "README.md: no ```bash block after <!-- ci:setup -->"
    return m.group(1).strip("\n").split("\n")


def test_the_readme_setup_block_creates_a_venv_installs_runs_and_tests():
    venv, run, test = (line.split("#")[0].strip() for line in _setup_lines())
    assert venv == "python3 -m venv .venv && . .venv/bin/activate"
    assert run == "pip install -e . && shockflow run"
    assert test == 'pip install -e ".[test]" && pytest'


def test_ci_extracts_exactly_those_lines():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    awk = re.search(r"awk '(.*?)' README.md", script, re.S).group(1)
    out = subprocess.run(["awk", awk, str(ROOT / "README.md")], check=True, capture_output=True, text=True).stdout
    assert out.strip("\n").split("\n") == _setup_lines()
    assert 'eval "$2"' in script and "pytest -q -p no:cacheprovider -m slow" in script
