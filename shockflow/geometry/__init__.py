"""Quotient geometries as plug-ins (docs/theory.md §1): symmetry, coordinates, metric, section.

Build one bound to a model (its current parameters are the reference point)::

    from shockflow import geometry, models
    net = models.build("linear2", input_dim=1, hidden=1, init_scale=0.1, seed=0)
    geo = geometry.build("rescaling", model=net, unit=0, extent=2.0)
    x = geo.coordinates(net.params)            # quotient coordinates, shape (dim,)
    geo.conserved(net.params)                  # {"c": a² - |w|²}
    geo.chart                                  # Chart(names, lower, upper, periodic, degenerate)
    geo.mobility(points)                       # g^{-1}, (..., dim, dim); metric(), volume_density()
    geo.section(points)                        # batched parameter arrays realising the points
    geo.chart_loss(points, X, y)               # L̄ at many points in one batched pass
    geo.velocity(points, X, y)                 # predicted quotient velocity -g^{-1} ∇L̄
    problem = geo.chart_problem(200, X, y)     # grid, u0 = L̄, mobility, density (1-D/2-D charts)
    sol = problem.solve([0.1, 0.5], nu=0.01)   # solvers.charts.hamilton_jacobi.solve_chart_hj -> .u[n] at .times[n]
    burgers = problem.solve_burgers([0.1], X, y, nu=0.01)   # 1-D: p = ∂u, solvers.charts.burgers -> .p[n]

Geometry-specific extras: ``gram.mode_strengths(params)``; ``sphere.loss_and_grad(params, X, y)``
(the normalised layer's backward), ``WeightNormalised(sphere, model)`` (its training view, used by ``shockflow run``)
and ``sphere.mesh_problem(n, X, y)`` (whole S² on an icosphere);
``attention.product(params)`` (B = W_Q W_Kᵀ); ``mean_field.velocity_field``, ``.density`` and
``.continuity_problem`` (McKean–Vlasov data); the full-matrix mobilities ``gram.gram_mobility(M, G)``,
``attention.attention_mobility(B, G)`` and ``rescaling.rescaling_mobility(q, c)``.

``geometry.available()`` lists the names (built-ins: ``flat``, ``gram``, ``rescaling``,
``sphere``, ``attention``, ``mean_field``, ``mean_field_collective``, plus plug-ins from the entry-point group
``shockflow.geometries``); ``geometry_class(name).symmetry`` is the one-line description.
Errors are :class:`GeometryError` (a ``ValueError``) naming the offending array or point.
"""

from shockflow.geometry.base import Chart, ChartProblem, Geometry, GeometryError
from shockflow.geometry.batched_loss import batched_loss, batched_outputs
from shockflow.geometry.registry import ENTRY_POINT_GROUP, available, build, geometry_class, register, reload_plugins

# Importing the built-in modules registers them.
from shockflow.geometry import attention, auto, flat, gram, mean_field, mixture, rescaling, saddle, sphere  # noqa: F401,E402

__all__ = [
    "Geometry", "Chart", "ChartProblem", "GeometryError", "batched_loss", "batched_outputs",
    "available", "build", "geometry_class", "register", "reload_plugins", "ENTRY_POINT_GROUP",
]
