"""Case files: TOML in, validated frozen settings out, and the registry of case kinds.

A case file is TOML (read with the standard library's ``tomllib``) with a small header
(``kind``, optional ``name``, ``description``, ``seed``; see :mod:`shockflow.cases.loading`) and
the tables of its kind.  ``load_case(path_or_builtin_name, overrides)`` validates it into a
:class:`Case` whose ``settings`` is a tree of frozen dataclasses; every problem of the file is
reported at once in one :class:`CaseError` naming the file and each key path with what was
expected and what was found.

Plugging in a new case kind (how the theory modules — ``nqf``, ``bbp``, ``scaling`` — join)
-------------------------------------------------------------------------------------------
A kind is *only declarations plus a runner*; parsing, error messages, defaults, overrides and
the reference page come from the generic machinery in :mod:`shockflow.cases.schema`:

1. Declare the tables as frozen dataclasses whose fields are made with
   :func:`~shockflow.cases.schema.setting` (``doc=`` always; ``choices=``, ``bounds=``,
   ``factory=`` for an optional sub-table, ``tag=`` for a table whose keys depend on a
   discriminating key).  Cross-field rules go in a ``check(self)`` method yielding
   ``(key, message)``; never raise from the runner for something a file could have said.
2. Write ``run(case, options) -> outcome`` (``options`` is a :class:`RunOptions`: ``out``,
   ``seed``, ``quiet``, ``progress``, ``figures``); the outcome has ``as_dict()`` (the JSON the
   command line prints) and ``table()`` (the text it prints).  Write results with
   :mod:`shockflow.storage` (atomic) so an interrupted run leaves nothing behind.
3. Register it once, at import of your module::

       register_kind(CaseKind(name="nqf", settings=NQFCase, run=run_nqf_case, command="run",
                              description="neural quadratic forms: switch-on times", verify=None))

   and add the module to :data:`shockflow.cases.kinds.BUILTIN_KIND_MODULES` so the command
   line sees it.  ``verify(case)`` (optional) checks what needs the file system without running.
4. Add the kind's root class to ``docs/case-reference.md`` generation
   (:func:`shockflow.cases.reference.reference_page`) and regenerate the page
   (``python -m shockflow.cases.reference > docs/case-reference.md``); a test fails if the
   committed page differs from the generated one.
5. Put a built-in case in ``cases/`` (``kind = "nqf"``): the test suite runs every built-in
   case at a reduced size through ``--set`` overrides.

Built-in kinds: ``pde`` (:mod:`shockflow.cases.pde`, run by :mod:`shockflow.runners.pde`).
"""

from shockflow.cases.errors import ArgumentError, ArgumentTypeError, CaseError, Problem
from shockflow.cases.kinds import CaseKind, RunOptions, get_kind, kinds, register_kind
from shockflow.cases.loading import Case, apply_overrides, load_case, parse_case

__all__ = ["ArgumentError", "ArgumentTypeError", "Case", "CaseError", "CaseKind", "Problem", "RunOptions",
           "apply_overrides", "get_kind", "kinds", "load_case", "parse_case", "register_kind"]
