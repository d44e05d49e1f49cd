"""The runners of the case kinds: each imports its kind's settings and registers the kind.

- :mod:`~shockflow.runners.pde` — ``pde`` cases (``shockflow solve``);
- :mod:`~shockflow.runners.training` — ``network`` cases (``shockflow train``);
- :mod:`~shockflow.runners.prediction` — ``shockflow run``: train, predict, observe, compare;
- :mod:`~shockflow.runners.demo` — ``shockflow demo``.

The theory kinds (``nqf``, ``bbp``, ``scaling``) are run by their own packages' ``case`` modules.
Settings never import runners: :data:`shockflow.cases.kinds.BUILTIN_KIND_MODULES` names the
modules that register a kind, and :func:`shockflow.cases.kinds.get_kind` imports them on first use.
"""
