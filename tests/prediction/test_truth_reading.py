"""The parameter truth's reading of one chart (shockflow/prediction/truth.py): a mode that leaves a minimum next to
its start is not a transition; one that learns, growing or shrinking towards its minimum, is."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from shockflow.prediction.truth import parameter_truth

STEPS = np.arange(0.0, 101.0)


def _chart(label, strength, at_min):
    s = np.asarray(strength, dtype=np.float64)
    return SimpleNamespace(label=label, trajectory_steps=STEPS, trajectory=s, trajectory_strength=s,
                           strength_at_min=at_min, geometry=None, coordinate="x", x_min=at_min)


def _logistic(s0, s1, mid, width=4.0):
    return s0 + (s1 - s0) / (1.0 + np.exp(-(STEPS - mid) / width))


def test_a_mode_that_leaves_the_minimum_next_to_its_start_is_not_learned_and_one_that_learns_is():
    dies = _chart("dying", _logistic(9.4e-7, -6.3e-9, 5.0), 9.16e-7)          # a relu channel that dies
    grows = _chart("grows", _logistic(1e-6, 1.27, 50.0), 1.27)                 # an escape from small weights
    shrinks = _chart("shrinks", _logistic(1.2, 1e-3, 30.0), 0.0)               # an angle closing on its teacher
    truth = parameter_truth(SimpleNamespace(charts=(dies, grows, shrinks)))
    assert truth.not_learned == ("dying",)
    steps = {t.chart: t.step for t in truth.transitions}
    assert set(steps) == {"grows", "shrinks"}
    assert abs(steps["grows"] - 50.0) < 0.6 and abs(steps["shrinks"] - 30.0) < 0.6
    # the same dying channel whose minimum lay far from its start (a real escape it did not make) is not learned
    # either, by the older reading (it moved less than half way); one that reaches its nearby minimum still counts
    far = _chart("far", _logistic(9.4e-7, -6.3e-9, 5.0), 2.0)
    assert parameter_truth(SimpleNamespace(charts=(far,))).transitions == ()
    settles = _chart("settles", _logistic(1.0e-3, 0.8e-3, 20.0), 0.8e-3)
    assert [t.chart for t in parameter_truth(SimpleNamespace(charts=(settles,))).transitions] == ["settles"]
    # cnn-relu-channels at seed 8: a channel grows through zero to the other side of a minimum found on its start's
    # side (1.7e-6 to -0.15): it learns
    grown = _logistic(1.67e-6, -0.15, 58.0)
    through = _chart("through", grown, grown[0] - 1.3e-15)   # its minimum as the search found it, at the start
    assert [t.chart for t in parameter_truth(SimpleNamespace(charts=(through,))).transitions] == ["through"]
