"""Commented template case files for ``shockflow init KIND [NAME]``: a starting point that
validates and runs as written, with every key explained beside it (``docs/case-reference.md``
lists all of them)."""

from __future__ import annotations

__all__ = ["TEMPLATE_KINDS", "template_text"]

_PDE = '''\
kind = "pde"
description = "{name}: Burgers from sine data; the first shock forms at t* = 1/(2 pi A)"

# A PDE case: an equation, a domain, initial data and what to write.  Solve it with
#   shockflow solve {name}.toml
# and override any key without editing the file, e.g. --set domain.cells=1600.
# Every key is documented in docs/case-reference.md; the exact references in docs/theory.md §5.

[equation]
kind = "burgers"          # p_t + (p^2/2)_x = nu p_xx; "hamilton_jacobi" and others: docs/case-reference.md

[domain]
kind = "interval"
lower = 0.0
upper = 1.0
cells = 400               # finite-volume cells
boundary = "periodic"

[initial]
function = "sine"         # p(x, 0) = amplitude * sin(2 pi x) + offset
amplitude = 1.0
offset = 0.25

[output]
t_end = 0.3               # past the first shock at 1/(2 pi) = 0.159
snapshots = 31            # solution snapshots kept in the result file
'''

_NETWORK = '''\
kind = "network"
seed = 0
description = "{name}: two-layer diagonal linear network, two sudden drops predicted from the quotient PDE"

# A network case: a model, a data set, a training run and (for a prediction) the quotient
# geometry and the charts to extract.  Run it end to end (train, predict, compare) with
#   shockflow run {name}.toml
# or only train it with `shockflow train {name}.toml`.  Every key: docs/case-reference.md;
# the prediction model: docs/prediction.md and docs/theory.md §1, §6.

[model]
name = "diagonal"         # f(x) = sum_k x_k u_k^2 / 4 (form "u2")
input_dim = 2
form = "u2"
init = "constant"         # every u_k starts at init_scale: small initialisation, long plateaus
init_scale = 1e-3

[data]
name = "power_law_covariance"
n = 1024                  # samples
d = 2
exponent = 0.0            # isotropic inputs
teacher_weights = [6.0, 1.5]   # one sudden drop per teacher strength
noise = 0.01

[training]
optimizer = "gd"
lr = 0.02
steps = 1500

[geometry]
name = "gram"             # the quotient M = u u^T; `shockflow geometries` lists the others
coordinate = "r"          # flat chart coordinate r = |u_k|

[extraction]
charts = [0, 1]           # one chart per mode
chart_key = "modes"
'''

_TEMPLATES = {"pde": _PDE, "network": _NETWORK}
TEMPLATE_KINDS = tuple(_TEMPLATES)


def template_text(kind: str, name: str) -> str:
    """The template of ``kind`` (``pde`` or ``network``) for a case called ``name``."""
    if kind not in _TEMPLATES:
        raise ValueError(f"KIND: expected one of {', '.join(TEMPLATE_KINDS)}, found {kind!r}")
    return _TEMPLATES[kind].format(name=name)
