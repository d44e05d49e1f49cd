"""Sweeps on a real two-worker LocalCluster (shared by the tests of this module).

What is measured: a PDE sweep's first-shock times against t* = 1/(2 pi A); that the tasks ran in
two worker processes other than this one with one Numba thread each; that a sweep killed half-way
(its client process SIGKILLed) and resumed runs exactly the missing tasks once and leaves the
finished files untouched (same inode and mtime); that a failing task is reported with its
traceback while the others finish; the BBP phase point run on the engine against direct calls
and against the theory's phase.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import cloudpickle
import numpy as np
import pytest

pytest.importorskip("distributed")

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # pytest runs with --import-mode=importlib: the helper module is found here
    sys.path.insert(0, str(HERE))
import sweep_task_functions as funcs  # noqa: E402

from shockflow.storage import read_result  # noqa: E402
from shockflow.sweeps import case_sweep, function_sweep, local_cluster, read_index, run_sweep  # noqa: E402
from shockflow.sweeps.engine import failure_record  # noqa: E402

cloudpickle.register_pickle_by_value(funcs)


@pytest.fixture(scope="module")
def client():
    from distributed import Client

    with local_cluster(2) as cluster, Client(cluster) as c:
        c.wait_for_workers(2, timeout=60)
        yield c


def _wait_idle(client, timeout=30.0):
    """Until no worker executes anything (tasks of a killed client run to their end)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = client.run(lambda dask_worker: len(dask_worker.state.executing) + len(dask_worker.state.ready))
        if not any(busy.values()):
            return
        time.sleep(0.05)
    raise AssertionError(f"workers still busy after {timeout} s: {busy}")


def test_pde_sweep_on_two_workers_recovers_formation_times(client, tmp_path):
    amplitudes = (0.5, 1.0, 2.0)
    sweep = case_sweep("burgers-sine", ["initial.amplitude=" + ",".join(map(str, amplitudes)), "domain.cells=200",
                                        "output.snapshots=41"])
    summary = run_sweep(sweep, tmp_path, client=client, progress=False)
    assert summary.ok and summary.count("done") == 3 and summary.workers == 2
    idx = read_index(summary.index_path)
    assert list(idx["status"]) == ["done"] * 3
    np.testing.assert_array_equal(idx["initial.amplitude"], amplitudes)
    exact = 1.0 / (2.0 * math.pi * np.array(amplitudes))
    assert np.max(np.abs(idx["formation_time"] / exact - 1.0)) < 0.01
    # each task's file is the case's own result file, with its overrides and the task's seed
    for t in sweep.tasks:
        r = read_result(tmp_path / "tasks" / t.filename)
        assert r.overrides == t.overrides and r.seed == t.seed
        assert r.settings["initial"]["amplitude"] == t.params_dict["initial.amplitude"]


def test_local_workers_are_separate_single_threaded_processes(client, tmp_path):
    sweep = function_sweep(funcs.counted, {"x": list(range(8))}, fixed={"log": str(tmp_path / "log"), "sleep": 0.3},
                           name="threads")
    summary = run_sweep(sweep, tmp_path / "out", client=client, progress=False)
    assert summary.ok
    pids = {r.figures["pid"] for r in summary.reports}
    assert len(pids) == 2 and os.getpid() not in pids
    assert all(r.figures["numba_threads"] == 1 and r.figures["env_numba"] == "1" and r.figures["omp"] == "1"
               for r in summary.reports)
    assert [r.figures["x2"] for r in summary.reports] == [x * x for x in range(8)]
    assert [r.figures["seed_seen"] for r in summary.reports] == [t.seed for t in sweep.tasks]


def test_killed_sweep_resumes_only_missing_tasks_without_rewriting(client, tmp_path):
    n, log, out = 16, tmp_path / "runs.log", tmp_path / "out"
    script = (
        "import sys, cloudpickle\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "import sweep_task_functions as f\n"
        "cloudpickle.register_pickle_by_value(f)\n"
        "from shockflow.sweeps import run_sweep\n"
        f"run_sweep(f.counting_sweep({str(log)!r}, {n}, 0.25), {str(out)!r}, scheduler={client.scheduler.address!r}, "
        "progress=False)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tasks_dir = out / "tasks"
    try:
        deadline = time.monotonic() + 60
        while len(list(tasks_dir.glob("t-*.h5"))) < 5:
            assert proc.poll() is None, f"the sweep process ended early: {proc.stderr.read().decode()[-2000:]}"
            assert time.monotonic() < deadline, "no result files appeared within 60 s"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    _wait_idle(client)
    time.sleep(0.2)
    sweep = funcs.counting_sweep(str(log), n, 0.25)
    finished = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in tasks_dir.glob("t-*.h5")}
    done_before = {t.params_dict["x"] for t in sweep.tasks if t.filename in finished}
    assert 5 <= len(done_before) < n, "the kill should leave the sweep half-way"
    before = funcs.log_counts(log)
    assert before == {x: 1 for x in done_before}  # every started task finished, each once
    assert not list(tasks_dir.glob(".*.tmp")) and not list(tasks_dir.glob(".work-*"))

    summary = run_sweep(sweep, out, client=client, progress=False)
    after = funcs.log_counts(log)
    assert after == {x: 1 for x in range(n)}  # the missing ran once, the finished never again
    assert summary.count("reused") == len(done_before) and summary.count("done") == n - len(done_before)
    for name, stamp in finished.items():
        p = tasks_dir / name
        assert (p.stat().st_ino, p.stat().st_mtime_ns) == stamp, f"{name} was rewritten"
    idx = read_index(out / "index.h5")
    assert set(idx["status"]) == {"done", "reused"} and list(idx["x2"]) == [x * x for x in range(n)]


def test_failing_task_is_reported_and_the_others_finish(client, tmp_path):
    sweep = function_sweep(funcs.fails_at, {"x": list(range(6))}, fixed={"bad": 3}, name="fails")
    summary = run_sweep(sweep, tmp_path, client=client, progress=False)
    assert not summary.ok and [r.index for r in summary.failed] == [3]
    assert summary.failed[0].params == {"x": 3} and "fails on purpose" in summary.failed[0].error
    assert [r.figures.get("x2") for r in summary.reports if r.status == "done"] == [0, 1, 4, 16, 25]
    record = failure_record(summary, 3)
    assert record["params"] == {"x": 3} and record["type"] == "ValueError"
    assert "fails_at" in record["traceback"] and "fails on purpose" in record["traceback"]
    assert "FAILED task 3 (x=3)" in summary.table()
    idx = read_index(summary.index_path)
    assert list(idx["status"]) == ["done", "done", "done", "failed", "done", "done"]
    assert np.isnan(idx["x2"][3]) and idx["x2"][5] == 25
    # a rerun retries the failure only
    again = run_sweep(sweep, tmp_path, client=client, progress=False)
    assert again.count("reused") == 5 and [r.index for r in again.failed] == [3]


def test_bbp_phase_diagram_on_the_engine(client, tmp_path):
    from shockflow.spectra.phase_diagram import phase_point
    from shockflow.sweeps import grid_map

    sigma, eps = [0.3, 0.6], [0.2, 0.9, 1.6]
    res = grid_map(phase_point, {"sigma_w": sigma, "eps": eps}, fixed={"N": 50, "M": 100, "t": 1}, seed=5,
                   client=client, out=tmp_path)
    assert res["summary"].ok and res["summary"].workers == 2
    assert res["q2"].shape == res["ordered"].shape == res["seed"].shape == (2, 3)
    for i, s in enumerate(sigma):  # the engine returns what the plain call gives at the task's seed
        for j, e in enumerate(eps):
            direct = phase_point({"N": 50, "M": 100, "t": 1, "sigma_w": s, "eps": e, "seed": int(res["seed"][i, j])})
            assert res["ordered"][i, j] == direct["ordered"] and res["n_outliers"][i, j] == direct["n_outliers"]
            assert res["q2"][i, j] == pytest.approx(direct["q2"], rel=1e-9, abs=1e-12)
    # away from the boundary the simulated phase is the theory's, and q2 follows the theory's
    np.testing.assert_array_equal(res["ordered"], res["theory_ordered"])
    ordered = res["theory_ordered"]
    assert ordered.sum() >= 2 and not ordered.all()
    assert np.max(np.abs(res["q2"][ordered] - res["theory_q2"][ordered])) < 0.02


@pytest.mark.slow
def test_a_local_cluster_does_not_warn_when_the_dashboard_port_is_taken():
    import socket
    import warnings

    from shockflow.sweeps.engine import local_cluster

    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", 8787))       # taken here, or already taken by another cluster
        holder.listen(1)
    except OSError:
        pass
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with local_cluster(1) as cluster:
                assert len(cluster.workers) == 1
        assert not [w for w in seen if "already in use" in str(w.message)]
    finally:
        holder.close()
