"""The equations of a quotient chart with its metric (docs/theory.md §1).

- :mod:`~solvers.charts.hamilton_jacobi` — viscous HJ with a mobility on 1-D/2-D charts (:func:`solve_chart_hj`);
- :mod:`~solvers.charts.burgers` — Burgers for ``p = ∂_x u`` on a 1-D chart (:func:`solve_chart_burgers`);
- :mod:`~solvers.charts.continuity` — the continuity (McKean–Vlasov) equation (:func:`solve_continuity`).
"""

from solvers.charts.burgers import solve_chart_burgers
from solvers.charts.continuity import ContinuitySettings, ContinuitySolution, solve_continuity
from solvers.charts.hamilton_jacobi import solve_chart_hj

__all__ = ["ContinuitySettings", "ContinuitySolution", "solve_chart_burgers", "solve_chart_hj", "solve_continuity"]
