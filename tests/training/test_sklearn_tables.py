"""shockflow.data.sklearn_tables: real tables from the installed scikit-learn (optional; skipped without it)."""

import builtins

import numpy as np
import pytest

from shockflow.data import build_dataset


def test_wine_is_standardised_with_centred_one_hot_classes():
    pytest.importorskip("sklearn")
    data = build_dataset("sklearn_table", table="wine")
    assert data.X.shape == (178, 13) and data.y.shape == (178, 3)
    np.testing.assert_allclose(data.X.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(data.X.std(axis=0), 1.0, rtol=1e-12)
    np.testing.assert_allclose(data.y.mean(axis=0), 0.0, atol=1e-12)
    # each row is a one-hot vector minus the class frequencies (59, 71, 48 of 178)
    freq = np.array([59, 71, 48]) / 178
    np.testing.assert_allclose(np.sort(np.unique(np.round(data.y + freq, 12))), [0.0, 1.0])
    assert data.spec == {"name": "sklearn_table", "table": "wine", "n": 178, "d": 13, "classes": 3}


def test_breast_cancer_has_one_centred_output():
    pytest.importorskip("sklearn")
    data = build_dataset("sklearn_table", table="breast_cancer")
    assert data.X.shape == (569, 30) and data.y.shape == (569,)
    assert data.y.mean() == pytest.approx(0.0, abs=1e-12)
    assert np.unique(np.round(data.y, 12)).size == 2 and np.ptp(data.y) == pytest.approx(2.0)


def test_an_unknown_table_is_named():
    with pytest.raises(ValueError, match="unknown table 'iris'.*breast_cancer, wine"):
        build_dataset("sklearn_table", table="iris")


def test_without_scikit_learn_the_generator_says_how_to_get_it(monkeypatch):
    real = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name == "sklearn" or name.startswith("sklearn."):
            raise ImportError("no sklearn here")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)
    with pytest.raises(ValueError) as info:
        build_dataset("sklearn_table", table="wine")
    # a wheel install has no checkout to `pip install -e '.[test]'` in: the message said so
    assert str(info.value).endswith("needs scikit-learn, which is not installed: pip install 'shockflow[datasets]' "
                                    "(or pip install scikit-learn)")
    monkeypatch.undo()
    import tomllib
    from pathlib import Path

    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(req.startswith("scikit-learn") for req in extras["datasets"])
