"""Ship the built-in cases: the top-level ``cases/*.toml`` (their one source) are copied into the
package as ``shockflow/cases/data/`` when a wheel is built, where ``shockflow.cases.builtin``
finds them with ``importlib.resources``.  Everything else is in ``pyproject.toml``."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithCases(build_py):
    def run(self):
        super().run()
        source = Path(__file__).resolve().parent / "cases"
        target = Path(self.build_lib) / "shockflow" / "cases" / "data"
        files = sorted(source.glob("*.toml"))
        if not files:
            raise SystemExit(f"setup.py: no built-in cases in {source} (expected cases/*.toml)")
        target.mkdir(parents=True, exist_ok=True)
        for path in files:
            self.copy_file(str(path), str(target / path.name))


setup(cmdclass={"build_py": BuildPyWithCases})
