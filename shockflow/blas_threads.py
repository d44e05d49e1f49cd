"""The number of BLAS threads under shockflow's matrix products: one per idle core, unless the user chose.

shockflow's networks multiply ``n × d`` by ``d × width`` matrices with ``d`` and ``width`` at most a few
hundred.  OpenBLAS splits such a product over its threads, and each thread spins while it waits for the
others; when another process holds one of the cores (a shared machine, a test run, a notebook beside a
browser) a two-thread product waits for a thread that is not running.  Measured on 2 cores at load 1.4
(`mlp-tanh-teacher`, 300 training steps): 0.24 s with one BLAS thread, 2.33 s with two; at load 7–9
its whole training took 92 s against about 2 s.  With the machine to itself the second thread does
help (1.36x at load 0.5; ``benchmarks/bench_blas_threads.py`` measures both, side by side).

So the count follows the rule of the solvers' threads (:mod:`solvers.conservation.thread_policy`): one
thread, plus one per core that other processes leave idle now (``/proc/loadavg``'s runnable tasks
minus this process's own).  :func:`blas_threads` — a decorator and a context manager — sets it for the
training loop, the prediction and the forecast (threadpoolctl, which sets it in every BLAS library
loaded: NumPy's and SciPy's OpenBLAS, MKL), decided when the block starts: a competitor that starts in
the middle of a training run is not seen.  A user who has chosen keeps the choice: with
``SHOCKFLOW_BLAS_THREADS=N`` shockflow uses ``N`` threads; with ``OPENBLAS_NUM_THREADS``,
``MKL_NUM_THREADS`` or ``OMP_NUM_THREADS`` set (and no ``SHOCKFLOW_BLAS_THREADS``) it leaves BLAS as
those say.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["blas_thread_limit", "blas_threads", "USER_VARIABLES"]

#: the environment variables by which a user sets the BLAS thread count themselves
USER_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def blas_thread_limit(environ=None, *, cores: int | None = None, competing: float | None = None) -> int | None:
    """The BLAS thread count shockflow sets (None: leave BLAS alone, the user chose): ``1 + idle cores``,
    at most ``cores``, from this process's cores and the runnable tasks of other processes (both sampled
    now unless given)."""
    from solvers.conservation.thread_policy import competing_tasks, usable_cores

    env = os.environ if environ is None else environ
    own = env.get("SHOCKFLOW_BLAS_THREADS", "").strip()
    if own:
        try:
            count = int(own)
        except ValueError:
            count = 0
        if count < 1:
            raise ValueError(f"SHOCKFLOW_BLAS_THREADS: expected a positive whole number of threads, found {own!r}")
        return count
    if any(env.get(name, "").strip() for name in USER_VARIABLES):
        return None
    cores = usable_cores() if cores is None else int(cores)
    competing = competing_tasks() if competing is None else float(competing)
    idle = int(max(0.0, cores - 1 - competing))
    return max(1, min(cores, 1 + idle))


@contextlib.contextmanager
def blas_threads():
    """Run the block, or the decorated function (``@blas_threads()``), with
    :func:`blas_thread_limit` BLAS threads; the previous counts are restored after it."""
    limit = blas_thread_limit()
    if limit is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=limit, user_api="blas"):
        yield
