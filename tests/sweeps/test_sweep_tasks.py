"""Task hashes, keys and seeds: what changes them and what does not."""

from __future__ import annotations

import numpy as np
import pytest

from shockflow.cases.sweep_axes import Axis, SweepAxes
from shockflow.sweeps.tasks import make_tasks, task_hash, task_seed

TEXT = 'kind = "pde"\n[equation]\nkind = "burgers"\n'


def _tasks(a_values, b_values, seed=0, text=TEXT, version="0.1.0", fixed=()):
    axes = SweepAxes(axes=(Axis("a", tuple(a_values)), Axis("b", tuple(b_values))), fixed=tuple(fixed))
    return {tuple(sorted(t.params_dict.items())): t for t in make_tasks(text, axes, seed, version)}


def test_hash_changes_with_case_text_params_seed_and_version_only():
    base = _tasks([1, 2], [0.5, 0.7])
    assert base == _tasks([1, 2], [0.5, 0.7])  # deterministic
    for other in (_tasks([1, 2], [0.5, 0.7], text=TEXT + "# comment\n"),
                  _tasks([1, 2], [0.5, 0.7], version="0.1.1"),
                  _tasks([1, 2], [0.5, 0.7], seed=1),
                  _tasks([1, 2], [0.5, 0.7], fixed=(("c", 3),))):
        assert all(other[p].hash != base[p].hash for p in base)
        assert all(other[p].key == base[p].key for p in base)  # same file, so a stale one is replaced
    hashes = {t.hash for t in base.values()}
    keys = {t.key for t in base.values()}
    assert len(hashes) == len(keys) == 4
    h = task_hash(TEXT, ("a=1",), 5, "0.1.0")
    assert h != task_hash(TEXT, ("a=2",), 5, "0.1.0") and h != task_hash(TEXT, ("a=1",), 6, "0.1.0")


def test_seeds_depend_on_parameters_not_on_order():
    forward = _tasks([1, 2, 3], [0.5, 0.7], seed=42)
    backward = _tasks([3, 2, 1], [0.7, 0.5], seed=42)
    assert {p: t.seed for p, t in forward.items()} == {p: t.seed for p, t in backward.items()}
    assert [t.index for t in forward.values()] != [backward[p].index for p in forward]  # the order did change
    # a larger grid keeps the seeds of the points it shares
    larger = _tasks([0, 1, 2, 3, 4], [0.5, 0.6, 0.7], seed=42)
    assert all(larger[p].seed == t.seed for p, t in forward.items())
    seeds = [t.seed for t in larger.values()]
    assert len(set(seeds)) == len(seeds) and all(0 <= s < 2 ** 63 for s in seeds)
    other = _tasks([1, 2, 3], [0.5, 0.7], seed=43)
    assert all(other[p].seed != t.seed for p, t in forward.items())


def test_seed_streams_are_uncorrelated_across_tasks():
    seeds = [task_seed(7, {"lr": float(lr)}) for lr in np.linspace(0.01, 1.0, 40)]
    draws = np.array([np.random.default_rng(s).standard_normal(2000) for s in seeds])
    corr = np.corrcoef(draws)
    off = corr[~np.eye(len(seeds), dtype=bool)]
    assert np.max(np.abs(off)) < 5.0 / np.sqrt(2000)  # no pair beyond ~5 sigma of independent samples


def test_explicit_seed_axis_wins_and_bad_inputs_are_named():
    axes = SweepAxes(axes=(Axis("seed", (3, 4)),))
    assert [t.seed for t in make_tasks(TEXT, axes, 0, "v")] == [3, 4]
    with pytest.raises(ValueError, match="sweep seed: expected an integer >= 0"):
        task_seed(-1, {})
    with pytest.raises(ValueError, match="occurs twice"):
        make_tasks(TEXT, SweepAxes(axes=(Axis("a", (1, 1)),)), 0, "v")
