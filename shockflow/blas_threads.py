"""The number of BLAS threads under shockflow's matrix products: one per idle core, unless the user chose.

shockflow's networks multiply ``n × d`` by ``d × width`` matrices with ``d`` and ``width`` at most a few
hundred.  OpenBLAS splits such a product over its threads, and each thread spins while it waits for the
others; when another process holds one of the cores (a shared machine, a test run, a notebook beside a
browser) a two-thread product waits for a thread that is not running.  Measured on 2 cores at load 1.4
(`mlp-tanh-teacher`, 300 training steps): 0.24 s with one BLAS thread, 2.33 s with two; at load 7–9
its whole training took 92 s against about 2 s.  With the machine to itself the second thread does
help (1.36x at load 0.5; ``benchmarks/bench_blas_threads.py`` measures both, side by side).

So the training loop's count follows the rule of the solvers' threads
(:mod:`solvers.conservation.thread_policy`): one thread, plus one per core that other processes leave idle
now (``/proc/loadavg``'s runnable tasks minus this process's own).

The prediction and the forecast take one thread even on an idle machine (``blas_threads(interleaved=True)``):
their products are short and separated by other work (an L-BFGS step, an eigensolver, Python between the
line fits), so OpenBLAS's second thread has gone to sleep before each product and waking it costs more than
it saves.  Measured on 2 idle cores (Xeon, load 0.5-1), ``forecast_stage`` with one thread against two:
``mlp-tanh-nonlinear-teacher`` 1.44 s against 5.73 s, ``committee-tanh-readout`` 1.08 against 3.02,
``mlp-tanh-teacher`` 2.06 against 2.50 (its stationary-point search alone 0.27 against 1.0 s), and on the
other 17 network cases of the suite between 0.96x and 1.43x of the one-thread time, never faster by more
than noise with two.  The training loop's products follow each other back to back and gain from the second
thread on an idle machine (1.36x at load 0.5 on a Zen 5 VM; equal on this Xeon).

:func:`blas_threads` — a decorator and a context manager — sets the count (threadpoolctl, which sets it in
every BLAS library loaded: NumPy's and SciPy's OpenBLAS, MKL), decided when the block starts: a
competitor that starts in the middle of a training run is not seen.  A user who has chosen keeps the choice: with
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


def blas_thread_limit(environ=None, *, cores: int | None = None, competing: float | None = None,
                      interleaved: bool = False) -> int | None:
    """The BLAS thread count shockflow sets (None: leave BLAS alone, the user chose): ``1 + idle cores``,
    at most ``cores``, from this process's cores and the runnable tasks of other processes (both sampled
    now unless given); 1 for ``interleaved`` work, whose products are short and separated by other work
    (the prediction's searches: module docstring)."""
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
    if interleaved:
        return 1
    cores = usable_cores() if cores is None else int(cores)
    competing = competing_tasks() if competing is None else float(competing)
    idle = int(max(0.0, cores - 1 - competing))
    return max(1, min(cores, 1 + idle))


@contextlib.contextmanager
def blas_threads(*, interleaved: bool = False):
    """Run the block, or the decorated function (``@blas_threads()``), with
    :func:`blas_thread_limit` BLAS threads (``interleaved``: one, for the prediction's short products between
    other work); the previous counts are restored after it."""
    limit = blas_thread_limit(interleaved=interleaved)
    if limit is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=limit, user_api="blas"):
        yield
