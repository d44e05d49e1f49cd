"""Cost of one training step versus the bare forward+backward matrix products.

Two-layer tanh MLP, d = 100, width = 1000, batch B = 256 (docs/theory.md §2 two-layer MLP). Printed
as JSON lines, one per configuration, all measured in the same process:

  bare_products      X W^T, tanh, readout, the two gradient products and the elementwise
                     backward: the floor any NumPy implementation pays per step
  loss_and_grad      the model's own forward+backward (shockflow.models "mlp")
  train_gd_log1      train(): full batch n = B, loss logged every step, 50 snapshots
  train_sgd_log1     train(): SGD on n = 10 B, log_every = 1 (full training loss every step)
  train_sgd_log100   train(): SGD on n = 10 B, log_every = 100
  train_sgd_noise    train(): as log100 plus gradient-noise statistics every 100 steps on 32 samples

"ratio" is the median over ``--repeats`` interleaved repeats (order rotated) of the per-step time over
bare_products in the same repeat, with its smallest and largest; one BLAS thread everywhere
(``OPENBLAS_NUM_THREADS=1`` unless set); on a shared machine absolute timings are indicative only.

    python benchmarks/bench_training.py [--steps 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import time

# one BLAS thread on every side, set before NumPy loads OpenBLAS (train() then leaves BLAS as the user set it): on a
# shared machine a second BLAS thread waits for a busy core, which times the machine, not the step
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from shockflow import models  # noqa: E402
from shockflow.data import Dataset  # noqa: E402
from shockflow.training import TrainSettings, train  # noqa: E402

D, WIDTH, B = 100, 1000, 256


def bare_step(X, y, W, a, lr):
    """Minimal NumPy forward + backward + SGD update of f = tanh(X W^T) a / sqrt(width)."""
    c = 1.0 / np.sqrt(WIDTH)
    Z = X @ W.T
    H = np.tanh(Z)
    f = c * (H @ a)
    r = (f - y) / X.shape[0]
    da = c * (H.T @ r)
    dZ = (c * np.outer(r, a)) * (1.0 - H * H)
    dW = dZ.T @ X
    W -= lr * dW
    a -= lr * da


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    S = args.steps
    rng = np.random.default_rng(0)
    X_big = rng.standard_normal((10 * B, D))
    y_big = np.tanh(X_big[:, 0])
    small = Dataset(X_big[:B], y_big[:B], {"name": "bench"})
    big = Dataset(X_big, y_big, {"name": "bench"})
    spec = {"name": "mlp", "input_dim": D, "width": WIDTH, "seed": 1}

    W = rng.standard_normal((WIDTH, D)) / np.sqrt(D)
    a = rng.standard_normal(WIDTH)
    Xb, yb = small.X.copy(), small.y.copy()

    def run_bare():
        for _ in range(S):
            bare_step(Xb, yb, W, a, 1e-3)

    model = models.build(**spec)

    def run_model():
        for _ in range(S):
            model.loss_and_grad(Xb, yb)

    configs = {
        "train_gd_log1": (small, TrainSettings(optimizer="gd", lr=1e-3, steps=S, log_every=1)),
        "train_sgd_log1": (big, TrainSettings(optimizer="sgd", lr=1e-3, steps=S, batch_size=B, log_every=1)),
        "train_sgd_log100": (big, TrainSettings(optimizer="sgd", lr=1e-3, steps=S, batch_size=B, log_every=100)),
        "train_sgd_noise": (big, TrainSettings(optimizer="sgd", lr=1e-3, steps=S, batch_size=B, log_every=100,
                                               noise_every=100, noise_batch=32)),
    }
    runners = {"bare_products": run_bare, "loss_and_grad": run_model}
    for name, (data, settings) in configs.items():
        runners[name] = (lambda data=data, settings=settings: train(dict(spec), data, settings, quiet=True))
    # interleaved repeats, the order rotated from repeat to repeat: load from other processes hits every
    # configuration alike; each ratio is formed within its repeat, then its median taken
    samples = {name: [] for name in runners}
    names = list(runners)
    for r in range(args.repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            t0 = time.perf_counter()
            runners[name]()
            samples[name].append((time.perf_counter() - t0) / S)
    base = samples["bare_products"]
    for name, times in samples.items():
        ratios = [t / b for t, b in zip(times, base)]
        print(json.dumps({"benchmark": "training_step", "config": name, "d": D, "width": WIDTH, "batch": B,
                          "steps": S, "seconds_per_step": float(np.median(times)), "ratio": float(np.median(ratios)),
                          "ratio_low": min(ratios), "ratio_high": max(ratios), "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
