"""Data generators: each test checks a property the generator promises."""

import json

import numpy as np
import pytest

from shockflow import models
from shockflow.data import (Dataset, available, build_dataset, fourier_basis, fourier_grid, load_arrays,
                            power_law_covariance, teacher_student, token_sequences, train_test_split,
                            whiten_inputs)


def test_teacher_student_labels_are_teacher_outputs_plus_noise_of_given_std():
    teacher = models.build("mlp", input_dim=4, width=8, seed=5)
    clean = teacher_student(4000, 4, teacher, seed=1)
    np.testing.assert_array_equal(clean.y, teacher.forward(clean.X))
    noisy = teacher_student(4000, 4, teacher, noise=0.3, seed=1)
    np.testing.assert_array_equal(noisy.X, clean.X)
    resid = noisy.y - clean.y
    assert abs(resid.std() - 0.3) < 0.3 * 4 / np.sqrt(2 * 4000)    # 4σ of the sample std
    assert abs(np.cov(clean.X.T) - np.eye(4)).max() < 0.1
    json.dumps(noisy.spec)
    assert noisy.spec["teacher"]["name"] == "mlp"


def test_teacher_from_spec_dict_and_whitening_is_exact():
    data = teacher_student(50, 5, {"name": "linear", "input_dim": 5, "seed": 2}, whiten=True, seed=0)
    np.testing.assert_allclose(data.X.T @ data.X / 50, np.eye(5), atol=1e-12)
    with pytest.raises(ValueError, match="at least d = 5"):
        whiten_inputs(np.ones((3, 5)))


def test_same_seed_same_bits_other_seed_other_data():
    a = power_law_covariance(100, 10, 1.5, seed=3)
    b = power_law_covariance(100, 10, 1.5, seed=3)
    c = power_law_covariance(100, 10, 1.5, seed=4)
    assert a.X.tobytes() == b.X.tobytes() and a.y.tobytes() == b.y.tobytes()
    assert not np.array_equal(a.X, c.X)


def test_power_law_sample_covariance_spectrum_and_linear_target():
    n, d, a = 40_000, 8, 1.5
    data = power_law_covariance(n, d, a, target_exponent=1.0, rotate=True, seed=0)
    evals = np.sort(np.linalg.eigvalsh(data.X.T @ data.X / n))[::-1]
    lam = np.arange(1, d + 1) ** -a
    np.testing.assert_allclose(evals, lam, rtol=0.05)
    # noise-free linear target: least squares recovers it exactly
    w, *_ = np.linalg.lstsq(data.X, data.y, rcond=None)
    np.testing.assert_allclose(data.X @ w, data.y, atol=1e-10)


def test_fourier_grid_modes_are_orthonormal_and_target_coefficients_are_k_pow_minus_beta():
    data = fourier_grid(256, 20, beta=1.25)
    Psi = fourier_basis(data.X[:, 0], 20)
    np.testing.assert_allclose(Psi.T @ Psi / 256, np.eye(20), atol=1e-12)
    b = Psi.T @ data.y / 256
    np.testing.assert_allclose(b, np.arange(1, 21) ** -1.25, atol=1e-12)
    assert data.X.min() == 0.0 and data.X.max() < 1.0
    with pytest.raises(ValueError, match="n_modes = 20 must be < n/2"):
        fourier_grid(40, 20, beta=1.0)


def test_token_sequences_shape_and_mean_token_readout():
    u = np.array([1.0, 0.0, 0.0])
    data = token_sequences(30, 5, 3, readout=u, seed=1)
    assert data.X.shape == (30, 5, 3)
    np.testing.assert_allclose(data.y, data.X[:, :, 0].mean(axis=1))
    with pytest.raises(ValueError, match="readout must have shape"):
        token_sequences(3, 2, 3, readout=np.ones(2))


def test_load_arrays_npz_and_npy_with_clear_errors(tmp_path):
    X, y = np.arange(12.0).reshape(6, 2), np.arange(6.0)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    data = load_arrays(tmp_path / "d.npz")
    np.testing.assert_array_equal(data.X, X)
    np.savez(tmp_path / "bad.npz", inputs=X, y=y)
    with pytest.raises(KeyError, match=r"bad\.npz.*no array 'X'.*\['inputs', 'y'\]"):
        load_arrays(tmp_path / "bad.npz")
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y[:5])
    with pytest.raises(ValueError, match="X has 6 samples but y has 5"):
        load_arrays(tmp_path / "X.npy", y_path=tmp_path / "y.npy")
    with pytest.raises(FileNotFoundError, match="missing.npy"):
        load_arrays(tmp_path / "X.npy", y_path=tmp_path / "missing.npy")
    with pytest.raises(ValueError, match="pass y_path"):
        load_arrays(tmp_path / "X.npy")


def test_split_is_a_seeded_partition():
    data = power_law_covariance(101, 3, 1.0, seed=0)
    tr, te = train_test_split(data, 0.3, seed=7)
    assert (tr.n, te.n) == (71, 30)
    rows = {tuple(r) for r in np.vstack([tr.X, te.X])}
    assert rows == {tuple(r) for r in data.X}
    tr2, _ = train_test_split(data, 0.3, seed=7)
    assert tr.X.tobytes() == tr2.X.tobytes()
    with pytest.raises(ValueError, match="test_fraction"):
        train_test_split(data, 1.0)


def test_registry_and_dataset_validation():
    assert {"teacher_student", "power_law_covariance", "fourier_grid", "token_sequences", "arrays"} <= set(available())
    with pytest.raises(ValueError, match="unknown data generator 'nope'; valid names"):
        build_dataset("nope")
    assert build_dataset("fourier_grid", n=16, n_modes=3, beta=1.0).n == 16
    with pytest.raises(ValueError, match="NaN"):
        Dataset(np.array([[np.nan]]), np.array([1.0]))
    d = fourier_grid(16, 3, 1.0)
    with pytest.raises(ValueError):
        d.X[0, 0] = 1.0          # read-only arrays


def test_a_teacher_spec_whose_input_size_differs_from_the_data_is_refused_before_it_is_built():
    # found by the fuzz: a teacher with d_model = 1e12 was built (out of memory) before anything compared it
    import pytest

    from shockflow.data import teacher_student, token_sequences

    with pytest.raises(ValueError, match="teacher: its d_model = 1000000000000 does not match the data's 4"):
        token_sequences(8, 3, 4, teacher={"name": "attention_qk", "d_model": 10 ** 12, "d_k": 2})
    with pytest.raises(ValueError, match="teacher: its input_dim = 7 does not match the data's 5"):
        teacher_student(8, 5, {"name": "linear", "input_dim": 7})
