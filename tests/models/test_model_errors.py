"""Bad input gets a clear error naming the argument, what was expected and what was found."""

from __future__ import annotations

import numpy as np
import pytest

from shockflow import models


def test_unknown_model_name_lists_valid_names():
    with pytest.raises(ValueError, match=r"model: unknown name 'resnet'; valid names: .*mlp.*quadratic"):
        models.build("resnet", input_dim=3)


def test_available_is_sorted_and_complete():
    names = models.available()
    assert names == sorted(names)
    assert {"mlp", "cnn1d", "cnn2d", "attention", "attention_qk", "moe", "mean_field", "linear",
            "quadratic", "fourier", "diagonal", "linear2", "deep_linear", "phase_retrieval"} <= set(names)


@pytest.mark.parametrize(
    "name, kwargs, pattern",
    [
        ("mlp", dict(input_dim=3, width=4, activation="swish"), r"activation: unknown name 'swish'; valid names: erf, gelu, identity, relu, sigmoid, tanh"),
        ("mlp", dict(input_dim=3, width=4, loss="l1"), r"loss: unknown name 'l1'; valid names: cross_entropy, half_mse, logistic, mse"),
        ("quadratic", dict(input_dim=3, width=2, form="cubic"), r"form: unknown value 'cubic'; valid values: sum, trace"),
        ("moe", dict(input_dim=3, experts=2, expert="tree"), r"expert: unknown value 'tree'; valid values: linear, mlp"),
        ("mlp", dict(input_dim=0, width=4), r"input_dim: expected a positive integer, found 0"),
        ("mlp", dict(input_dim=3, width=-2), r"width: expected a positive integer, found -2"),
        ("deep_mlp", dict(input_dim=3, widths=[]), r"widths: expected at least one hidden width"),
        ("deep_mlp", dict(input_dim=3, widths=[4, 0]), r"widths\[1\]: expected a positive integer, found 0"),
        ("cnn1d", dict(input_size=4, in_channels=1, out_channels=2, kernel_size=5), r"kernel_size: expected at most input_size along axis 0 \(4\), found 5"),
        ("cnn2d", dict(input_size=[4, 4], in_channels=1, out_channels=2, kernel_size=3), r"kernel_size: expected a pair of positive integers, found 3"),
        ("attention", dict(d_model=4, heads=0), r"heads: expected a positive integer, found 0"),
        ("attention_qk", dict(d_model=3, readout=[1.0, 2.0]), r"readout: expected 3 finite numbers \(d_model\), found shape \(2,\)"),
        ("mlp", dict(input_dim=3, width=4, init_scale=-1.0), r"init_scale: expected a finite non-negative number, found -1.0"),
        ("mlp", dict(input_dim=3, width=4, init_scale=float("nan")), r"init_scale: expected a finite non-negative number"),
        ("mlp", dict(input_dim=3, width=4, seed=-1), r"seed: expected a non-negative integer, found -1"),
        ("mlp", dict(input_dim=3, width=4, loss="cross_entropy"), r"'cross_entropy' needs output_dim >= 2"),
        ("linear", dict(input_dim=3, output_dim=2, loss="logistic"), r"'logistic' needs output_dim = 1"),
        ("linear", dict(input_dim=3, output_dim=0), r"output_dim: expected a positive integer, found 0"),
        ("fourier", dict(modes=3, theta=float("inf")), r"theta: expected a finite real number"),
    ],
)
def test_bad_constructor_arguments(name, kwargs, pattern):
    with pytest.raises((ValueError, TypeError), match=pattern):
        models.build(name, **kwargs)


def test_non_integer_dimension_is_a_type_error():
    with pytest.raises(TypeError, match=r"width: expected a positive integer, found 2.5"):
        models.build("mlp", input_dim=3, width=2.5)


def test_missing_or_unexpected_argument_names_the_model():
    with pytest.raises(TypeError, match=r"model 'mlp':.*width"):
        models.build("mlp", input_dim=3)
    with pytest.raises(TypeError, match=r"model 'linear':.*hidden"):
        models.build("linear", input_dim=3, hidden=2)


@pytest.mark.parametrize(
    "name, kwargs, X_shape, pattern",
    [
        ("mlp", dict(input_dim=3, width=4), (5, 4), r"X: TwoLayerMLP expects inputs of shape \(n, 3\), found \(5, 4\)"),
        ("mlp", dict(input_dim=3, width=4), (3,), r"expects inputs of shape \(n, 3\), found \(3,\)"),
        ("cnn2d", dict(input_size=[5, 4], in_channels=2, out_channels=1, kernel_size=[2, 2]), (3, 5, 4), r"expects inputs of shape \(n, 5, 4, 2\), found \(3, 5, 4\)"),
        ("attention", dict(d_model=4), (2, 6, 3), r"expects inputs of shape \(n, any, 4\), found \(2, 6, 3\)"),
        ("fourier", dict(modes=3), (7,), r"expects inputs of shape \(n, 1\), found \(7,\)"),
        ("mlp", dict(input_dim=3, width=4), (0, 3), r"X: expected at least one sample, found n = 0"),
    ],
)
def test_forward_shape_mismatch_reports_expected_and_found(name, kwargs, X_shape, pattern):
    m = models.build(name, **kwargs)
    with pytest.raises(ValueError, match=pattern):
        m.forward(np.zeros(X_shape))


def test_non_finite_inputs_and_bad_targets():
    m = models.build("mlp", input_dim=2, width=3, output_dim=2)
    X = np.ones((4, 2))
    with pytest.raises(ValueError, match="X: contains NaN or inf"):
        m.forward(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match=r"y: expected targets of shape \(4, 2\), found \(4,\)"):
        m.loss(X, np.zeros(4))
    s = models.build("mlp", input_dim=2, width=3)
    with pytest.raises(ValueError, match=r"y: expected targets of shape \(4,\) or \(4, 1\), found \(3,\)"):
        s.loss_and_grad(X, np.zeros(3))
    ce = models.build("mlp", input_dim=2, width=3, output_dim=3, loss="cross_entropy")
    with pytest.raises(ValueError, match=r"y: class labels must lie in \[0, 2\], found range \[0, 3\]"):
        ce.loss(X, np.array([0, 1, 2, 3]))
    lo = models.build("mlp", input_dim=2, width=3, loss="logistic")
    with pytest.raises(ValueError, match="y: logistic labels must be -1 or \\+1"):
        lo.loss(X, np.array([0.0, 1.0, 1.0, -1.0]))


def test_set_parameter_vector_checks_length():
    m = models.build("mlp", input_dim=2, width=3)
    with pytest.raises(ValueError, match=r"v: expected a flat vector of length 9, found shape \(8,\)"):
        m.set_parameter_vector(np.zeros(8))
