"""The program ends itself without the interpreter's teardown (shockflow/cli.py, _end_process): the exit code,
everything printed and every atexit handler are kept; with another thread running, or under a profiler, main
returns and the interpreter ends the process as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROGRAM = """
import atexit, sys, threading
atexit.register(lambda: print("atexit ran", flush=True))
sys.argv = ["shockflow", *{argv!r}]
release = threading.Event()
if {thread}:
    threading.Thread(target=release.wait, args=(60,)).start()   # alive until main has returned
from shockflow.cli import main
if {profiled}:
    sys.setprofile(lambda *event: None)   # as python -m cProfile does: it reports after main returns
code = main()
sys.setprofile(None)
print("main returned", code)
release.set()
sys.exit(code)
"""


def _program(argv, thread=False, profiled=False):
    return subprocess.run([sys.executable, "-c", PROGRAM.format(argv=argv, thread=thread, profiled=profiled)],
                          capture_output=True, text=True, timeout=120)


def test_the_program_keeps_its_exit_code_its_output_and_its_atexit_handlers():
    done = _program(["validate", "two-layer-staircase", "--json"])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert isinstance(json.loads(lines[0]), dict)      # the --json object, flushed
    assert lines[-1] == "atexit ran" and "main returned" not in done.stdout   # ended inside main, after the handlers
    bad = _program(["validate", "no-such-case"])
    assert bad.returncode == 2 and "no such case file" in bad.stderr and bad.stdout.strip() == "atexit ran"


def test_with_another_thread_running_main_returns_and_the_interpreter_ends_the_process():
    done = _program(["validate", "two-layer-staircase", "--quiet"], thread=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["main returned 0", "atexit ran"]


def test_under_a_profiler_main_returns_so_that_the_profiler_can_report():
    done = _program(["validate", "no-such-case"], profiled=True)
    assert done.returncode == 2 and done.stdout.splitlines() == ["main returned 2", "atexit ran"]


def test_called_with_arguments_main_returns_its_code():
    code = "from shockflow.cli import main\nprint('returned', main(['validate', 'no-such-case']))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "returned 2"


@pytest.mark.parametrize("argv", [["cases"], ["geometries"], ["cases", "--json"], ["--help"]])
def test_a_reader_that_closed_stdout_ends_the_program_quietly(argv):
    """`shockflow cases | head -1` exited 1 with 'the run failed in shockflow/cli.py:367 (_cases): BrokenPipeError'.
    Here the pipe's reading end is closed before the program starts, so its first write meets a closed pipe."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "shockflow.cli", *argv], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, "")


def test_a_broken_pipe_that_is_not_stdout_is_still_a_failure(capsys, monkeypatch):
    """Only stdout's reader going away is quiet: a BrokenPipeError of the command itself (a pipe to a process beside)
    is reported as the failure it is."""
    from shockflow import cli

    def broken(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "_cases", broken)
    assert cli.main(["cases"]) == 1
    assert "BrokenPipeError" in capsys.readouterr().err
