"""The default thread count of the fast path (solvers/conservation/thread_policy.py): its decisions, not timings."""

import subprocess
import sys
import time

import numpy as np
import pytest

from solvers.conservation import solve_conservation
from solvers.conservation import thread_policy as tp
from solvers.grid import Grid

BIG = tp.PARALLEL_THRESHOLD


@pytest.mark.parametrize("cells, pool, cores, competing, expected", [
    (BIG - 1, 2, 2, 0.0, 1),  # below the size threshold: serial
    (BIG, 2, 2, 0.0, 2),  # idle machine: a thread per core
    (BIG, 2, 2, 1.0, 1),  # one busy competitor on 2 cores: serial (the 2-thread path ran 9-13x slower)
    (BIG, 2, 2, 0.4, 1),  # a part-time competitor still takes the second core now and then
    (BIG, 2, 2, 5.0, 1),
    (10 * BIG, 8, 8, 1.0, 7),  # 8 cores, one taken
    (10 * BIG, 8, 8, 0.0, 8),
    (10 * BIG, 4, 8, 0.0, 4),  # Numba's pool limits
    (10 * BIG, 8, 2, 0.0, 2),  # the affinity mask limits
    (10 * BIG, 1, 8, 0.0, 1),
])
def test_choose_threads(cells, pool, cores, competing, expected):
    assert tp.choose_threads(cells, pool, cores, competing) == expected


@pytest.mark.parametrize("text, expected", [("0.52 0.40 0.31 3/250 1234\n", 3), ("1 2 3 12/900 5", 12),
                                            ("garbage", None), ("1 2 3 x/9 1", None)])
def test_parse_running(text, expected):
    assert tp.parse_running(text) == expected


def test_own_running_threads_counts_at_least_the_caller(tmp_path):
    assert tp.own_running_threads(tmp_path / "missing") == 1
    for i, state in enumerate("RSRD"):
        (tmp_path / str(i)).mkdir()
        (tmp_path / str(i) / "stat").write_text(f"{100 + i} (python (x) y) {state} 1 2 3")
    assert tp.own_running_threads(tmp_path) == 2


def test_small_grids_never_sample_the_load(monkeypatch):
    def fail():
        raise AssertionError("sampled")

    monkeypatch.setattr(tp, "competing_tasks", fail)
    assert tp.default_threads(BIG - 1, 8) == 1


@pytest.fixture
def busy_competitors():
    """One busy process per core but one (a Python busy loop each), killed at the end."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(max(1, tp.usable_cores() - 1))]
    time.sleep(0.3)
    yield procs
    for p in procs:
        p.kill()
        p.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the runnable count is read from /proc")
def test_busy_competitors_are_seen_and_the_default_goes_serial(busy_competitors):
    seen = max(tp.competing_tasks() for _ in range(5))
    assert seen >= len(busy_competitors)
    assert tp.default_threads(10 * BIG, tp.usable_cores()) == 1
    grid = Grid.line(BIG + 10)
    sol = solve_conservation(grid, np.full(BIG + 10, 0.5), [1e-5], integrator="euler")  # threads=None
    assert sol.kernel == "fast"
