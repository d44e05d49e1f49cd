"""Real tables shipped inside scikit-learn: the wine and breast-cancer data sets, standardised.

``sklearn_table(table)`` reads the table from the installed scikit-learn package (its bundled CSV
files: nothing is downloaded, at run time or ever) and returns

* ``X`` (n, d): every feature standardised to mean 0 and variance 1 over the table;
* ``y`` (n, classes): the one-hot class labels minus their class frequencies (mean 0 per output, so a
  network without biases can fit them; for two classes ``y`` (n,), the centred ±1 label).

scikit-learn is optional (the ``datasets`` extra installs it: ``pip install 'shockflow[datasets]'``); without it
the generator says how to get it.

=================  =====  ==  ========
``table``          n      d   classes
=================  =====  ==  ========
``wine``           178    13  3
``breast_cancer``  569    30  2
=================  =====  ==  ========
"""

from __future__ import annotations

import numpy as np

from .dataset import Dataset

__all__ = ["sklearn_table", "TABLES"]

#: the extra of pyproject.toml that installs scikit-learn
EXTRA = "datasets"
#: table name -> scikit-learn loader name
TABLES = {"wine": "load_wine", "breast_cancer": "load_breast_cancer"}


def sklearn_table(table: str) -> Dataset:
    """The standardised table ``table`` (module docstring)."""
    name = table
    if name not in TABLES:
        raise ValueError(f"sklearn_table: unknown table {name!r}; valid names: {', '.join(sorted(TABLES))}")
    try:
        from sklearn import datasets
    except ImportError:
        raise ValueError(f"sklearn_table: needs scikit-learn, which is not installed: pip install "
                         f"'shockflow[{EXTRA}]' (or pip install scikit-learn)") from None
    loaded = getattr(datasets, TABLES[name])()
    X = np.asarray(loaded.data, dtype=np.float64)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    labels = np.asarray(loaded.target)
    classes = np.unique(labels)
    onehot = (labels[:, None] == classes[None, :]).astype(np.float64)
    y = onehot - onehot.mean(axis=0)
    if classes.size == 2:
        y = y[:, 1] - y[:, 0]          # one output (shape (n,)): the centred ±1 label
    spec = {"name": "sklearn_table", "table": name, "n": int(X.shape[0]), "d": int(X.shape[1]),
            "classes": int(classes.size)}
    return Dataset(X, y, spec)
