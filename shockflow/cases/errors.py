"""The error of bad input: :class:`CaseError`, naming the file and every problem in it.

A problem is a key path (``solver.cfl``, ``domain.cells[1]``; empty for the file as a whole)
and a message saying what was expected and what was found.  Validation collects every
problem of a file before raising, so a user fixes them in one pass; missing required keys are
gathered into one line.

Input that is not a file says what it is instead (``source``): a network given to
``shockflow.forecast`` from Python is ``network 'Net'``, never a case file.  A bad argument of a call
(``shockflow.run(case=123)``) or option of the command line is an :class:`ArgumentError`, a CaseError
whose one problem is at the parameter, named as the caller spelled it (``seed``; ``--seed`` on the
command line); a value of the wrong type (a number where a path was expected) an
:class:`ArgumentTypeError`, which is a :class:`TypeError` too, as Python's own would be.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass

__all__ = ["ArgumentError", "ArgumentTypeError", "CaseError", "Problem"]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a case: where (a dotted key path) and what."""

    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message}" if self.key else self.message


class CaseError(ValueError):
    """A case file (or a settings table) is invalid; raised before anything runs.

    ``file`` is the case file (or ``"<string>"``), ``problems`` the key-path problems and
    ``missing`` the dotted paths of required keys that were not given; ``source`` says what ``file`` names
    (``"network"``: a network given from Python; ``""``: nothing, the problems name themselves).
    """

    def __init__(self, file: str, problems=(), missing=(), *, source: str = "case file"):
        self.file = str(file)
        self.problems = tuple(problems)
        self.missing = tuple(missing)
        self.source = source
        lines = [str(p) for p in self.problems]
        if self.missing:
            lines.insert(0, "missing required keys: " + ", ".join(self.missing))
        count = len(self.problems) + (1 if self.missing else 0)
        head = f"{source} {self.file!r}: " if source else ""
        if count == 1:
            message = head + lines[0]
        else:
            message = head + f"{count} problems\n" + "\n".join("  " + line for line in lines)
        super().__init__(message)

    def __reduce__(self):   # pickled with its fields (the training of a run answers from a second process)
        return _rebuilt, (type(self), self.file, self.problems, self.missing, self.source), self.__dict__

    @classmethod
    def at(cls, case, key: str, message: str) -> "CaseError":
        """One problem at ``key`` of a loaded case (its file, or ``"<string>"`` for a case from text); a key an
        override of the case set (``--set``) says so.  A case made in Python (``case.origin``: a network given to
        ``shockflow.forecast``) is named as what it is, and a key of a table an argument gave (``case.arguments``:
        ``[training]`` from ``optimiser``) by that argument."""
        origin = getattr(case, "origin", None)
        if origin is not None:
            for table, argument in getattr(case, "arguments", ()):
                if key == table or key.startswith(table + "."):
                    key = argument + key[len(table):]
            return cls(case.name, [Problem(key, message)], source=origin)
        error = cls(str(case.path) if case.path is not None else "<string>", [Problem(key, message)])
        return error.from_overrides(getattr(case, "overrides", ()))

    def from_overrides(self, overrides) -> "CaseError":
        """This error with each problem at a key that an override (``--set KEY=VALUE``) set, or set inside, naming
        that override: the value came from the command line, not from the file."""
        given = [(str(o).partition("=")[0].strip(), str(o)) for o in overrides or ()]
        if not given:
            return self
        problems = []
        for p in self.problems:
            named = [item for key, item in given if p.key and key and (key == p.key or key.startswith(p.key + ".")
                                                                       or p.key.startswith(key + "."))]
            problems.append(Problem(p.key, f"{p.message} (from the override {', '.join(map(repr, named))})")
                            if named else p)
        return type(self)(self.file, problems, self.missing, source=self.source)

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key path named by the error (missing keys included)."""
        return tuple(p.key for p in self.problems) + self.missing


def _rebuilt(cls, file, problems, missing, source):
    error = CaseError.__new__(cls)
    CaseError.__init__(error, file, problems, missing, source=source)
    return error


#: how a value found is shown in a message: its repr, shortened (an array, a long string)
_FOUND = reprlib.Repr()
_FOUND.maxstring = _FOUND.maxother = 80


class ArgumentError(CaseError):
    """A bad argument of a Python call or option of the command line: ``parameter: expected ..., found ...``.

    ``parameter`` is the name as the caller spelled it; :meth:`spelled` gives the same error under another
    spelling (the command line names its options ``--transition`` where the library says ``transition``)."""

    def __init__(self, parameter: str, message: str):
        self.parameter, self.detail = parameter, message
        self.what = None   # what was expected (set by :meth:`expected`)
        super().__init__("", [Problem(parameter, message)], source="")

    def __reduce__(self):
        return type(self), (self.parameter, self.detail), self.__dict__

    def from_overrides(self, overrides) -> "ArgumentError":
        return self   # an argument, not a key of a case file

    @classmethod
    def expected(cls, parameter: str, what: str, found, hint: str = "") -> "ArgumentError":
        """``parameter: expected <what>, found <repr of found>[; <hint>]``; ``what`` kept as :attr:`what`."""
        error = cls(parameter, f"expected {what}, found {_FOUND.repr(found)}" + (f"; {hint}" if hint else ""))
        error.what = what
        return error

    def spelled(self, parameter: str) -> "ArgumentError":
        """This error naming the parameter ``parameter`` instead."""
        error = type(self)(parameter, self.detail)
        error.what = self.what
        return error


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of the wrong type (a number where a path was expected): a :class:`TypeError` as well."""
