"""The arguments of the Python API and the options of the command line: one check of each kind of value.

Each check takes the value and the parameter's name as the caller spelled it (``seed`` in Python,
``--seed`` on the command line) and returns the value in its working form, or raises an
:class:`~shockflow.cases.errors.ArgumentError` (an :class:`~shockflow.cases.errors.ArgumentTypeError`
for a value of the wrong type) naming the parameter, what was expected and what was found.  The command
line's option types parse their text and call the same checks (:func:`from_text`), so an option and the
argument of the same name are refused alike.  A bool is never taken for a number, nor a number for a bool.
"""

from __future__ import annotations

import math
import numbers
import os

from shockflow.cases.errors import ArgumentError, ArgumentTypeError

__all__ = ["DPI_RANGE", "SEED_LIMIT", "factor", "figure_dpi", "flag", "from_text", "learning_rates", "overrides",
           "path", "positive_number", "positive_whole", "seed", "wait_seconds"]

#: seeds are stored as 64-bit integers in the result files
SEED_LIMIT = 2 ** 63


def path(value, name: str, what: str = "a path (str or os.PathLike)"):
    """``value`` if it is a path: a str or an :class:`os.PathLike` giving one (bytes are not taken)."""
    if isinstance(value, str) or (isinstance(value, os.PathLike) and isinstance(os.fspath(value), str)):
        return value
    raise ArgumentTypeError.expected(name, what, value)


def flag(value, name: str) -> bool:
    """``value`` if it is True or False (a string such as ``"no"`` is not taken for either)."""
    if isinstance(value, bool):
        return value
    raise ArgumentTypeError.expected(name, "True or False", value)


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def seed(value, name: str) -> int | None:
    """``None`` (the case's own seed) or a whole number in ``[0, 2**63)``, as an int."""
    if value is None:
        return None
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise ArgumentTypeError.expected(name, "a whole number >= 0", value)
    if value < 0:
        raise ArgumentError.expected(name, "a whole number >= 0", value)
    if value >= SEED_LIMIT:
        raise ArgumentError.expected(name, "a whole number below 2**63", value)
    return int(value)


def _finite_above(value, name: str, bound: float, what: str) -> float:
    """A finite number > ``bound``, as a float."""
    if not _real(value):
        raise ArgumentTypeError.expected(name, what, value)
    if not (math.isfinite(value) and value > bound):
        raise ArgumentError.expected(name, what, value)
    return float(value)


def positive_number(value, name: str) -> float:
    """A finite number > 0, as a float."""
    return _finite_above(value, name, 0.0, "a finite positive number")


#: the figure resolutions accepted (dots per inch): below, FreeType cannot size the text (1 dpi fails); above, one
#: figure of the default size takes gigabytes (a tester's 100 000 dpi ran out of memory after the whole run, and its
#: results, committed with the figures, were lost)
DPI_RANGE = (10.0, 1200.0)


def figure_dpi(value, name: str) -> float:
    """A figure resolution in :data:`DPI_RANGE`, as a float."""
    lo, hi = DPI_RANGE
    number = _finite_above(value, name, 0.0, f"a resolution from {lo:g} to {hi:g} dots per inch")
    if not lo <= number <= hi:
        raise ArgumentError.expected(name, f"a resolution from {lo:g} to {hi:g} dots per inch", value)
    return number


#: the longest wait between two reads of a followed log, and before one that does not grow is given up (a day)
MAX_WAIT = 86_400.0


def wait_seconds(value, name: str) -> float:
    """A finite positive number of seconds up to :data:`MAX_WAIT`, as a float (a clock cannot add 1e308 s)."""
    what = f"a number of seconds > 0 and at most {MAX_WAIT:g} (a day)"
    number = _finite_above(value, name, 0.0, what)
    if number > MAX_WAIT:
        raise ArgumentError.expected(name, what, value)
    return number


def positive_whole(value, name: str) -> int:
    """A whole number >= 1, as an int."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise ArgumentTypeError.expected(name, "a positive whole number", value)
    if value < 1:
        raise ArgumentError.expected(name, "a positive whole number", value)
    return int(value)


def factor(value, name: str) -> float:
    """A finite number > 1 (a matching factor: one of 1 would match only exact equality), as a float."""
    return _finite_above(value, name, 1.0, "a finite number > 1")


def learning_rates(value, name: str) -> list[float]:
    """A non-empty sequence of finite positive numbers (learning rates), as a list of floats."""
    what = "a sequence of learning rates (finite positive numbers)"
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):   # a string is a sequence of characters
        raise ArgumentTypeError.expected(name, what, value)
    rates = list(value)
    if not rates:
        raise ArgumentError.expected(name, what, value)
    for i, rate in enumerate(rates):
        positive_number(rate, f"{name}[{i}]")
    return [float(r) for r in rates]


def overrides(value, name: str = "overrides") -> tuple[str, ...]:
    """``"KEY=VALUE"`` strings: a list (any iterable) of them, one given bare (a list of one, not its characters),
    or None (none)."""
    what = "'KEY=VALUE' strings (a list of them, or one)"
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (bytes, dict)) or not hasattr(value, "__iter__"):
        raise ArgumentTypeError.expected(name, what, value)
    items = tuple(value)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise ArgumentTypeError.expected(f"{name}[{i}]", "a 'KEY=VALUE' string", item)
    return items


def from_text(text: str, parse, check):
    """The command line's form of a check: ``text`` parsed (``float``, ``int``) and given to ``check``.  A
    :class:`ValueError` (argparse reports it under the option's name) says what was expected and the text found."""
    try:
        value = parse(text)
    except ValueError:
        value = text   # not even of the type: the check refuses it, saying what it expected
    try:
        return check(value, "")
    except ArgumentError as exc:
        raise ValueError(f"expected {exc.what}, found {text!r}") from None
