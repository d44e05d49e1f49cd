"""The one error a case file can raise: :class:`CaseError`, naming the file and every problem in it.

A problem is a key path (``solver.cfl``, ``domain.cells[1]``; empty for the file as a whole)
and a message saying what was expected and what was found.  Validation collects every
problem of a file before raising, so a user fixes them in one pass; missing required keys are
gathered into one line.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CaseError", "Problem"]


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
    ``missing`` the dotted paths of required keys that were not given.
    """

    def __init__(self, file: str, problems=(), missing=()):
        self.file = str(file)
        self.problems = tuple(problems)
        self.missing = tuple(missing)
        lines = [str(p) for p in self.problems]
        if self.missing:
            lines.insert(0, "missing required keys: " + ", ".join(self.missing))
        count = len(self.problems) + (1 if self.missing else 0)
        head = f"case file {self.file!r}: "
        if count == 1:
            message = head + lines[0]
        else:
            message = head + f"{count} problems\n" + "\n".join("  " + line for line in lines)
        super().__init__(message)

    def __reduce__(self):   # pickled with its fields (the training of a run answers from a second process)
        return type(self), (self.file, self.problems, self.missing), self.__dict__

    @classmethod
    def at(cls, case, key: str, message: str) -> "CaseError":
        """One problem at ``key`` of a loaded case (its file, or ``"<string>"`` for a case from text); a key an
        override of the case set (``--set``) says so."""
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
        return type(self)(self.file, problems, self.missing)

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key path named by the error (missing keys included)."""
        return tuple(p.key for p in self.problems) + self.missing
