"""Shared by the reliability tests: run the command line in-process and read back what it did."""

import os
from pathlib import Path

import pytest

from shockflow.cli import main


def files_under(root: Path) -> set[str]:
    """Every file below ``root`` (relative paths, hidden files included)."""
    return {str(p.relative_to(root)) for p in Path(root).rglob("*") if p.is_file() or p.is_symlink()}


@pytest.fixture
def listing():
    """``listing(root)``: the set of files below ``root`` (:func:`files_under`)."""
    return files_under


@pytest.fixture
def cli(capsys):
    """``cli(*args) -> (exit code, stdout, stderr)``; argparse's own exit (status 2) is returned, not raised."""

    def run(*args):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse: bad arguments
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def small_memory(monkeypatch):
    """The memory check sees 256 MiB, so no test can allocate gigabytes on a shared machine."""
    monkeypatch.setenv("SHOCKFLOW_MAX_MEMORY", str(256 * 2 ** 20))


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A fresh current directory with ``out/`` as the place writes belong; returns ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    return tmp_path
