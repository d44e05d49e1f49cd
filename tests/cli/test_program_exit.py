"""The program ends itself without the interpreter's teardown (shockflow/cli.py, _end_process): the exit code,
everything printed and every atexit handler are kept; with another thread running, or under a profiler, main
returns and the interpreter ends the process as before."""

from __future__ import annotations

import json
import subprocess
import sys

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
