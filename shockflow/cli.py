"""The ``shockflow`` command line.  It imports the library; the library never imports it."""

from __future__ import annotations

import argparse
import json
import sys

from shockflow import __version__


def _demo(args: argparse.Namespace) -> int:
    from shockflow.demo import run_demo

    result = run_demo(cells=args.cells, amplitude=args.amplitude, offset=args.offset, t_end=args.t_end)
    if args.json:
        print(json.dumps(result.as_dict()))
    elif not args.quiet:
        print(result.table())
    return 0


def _version(args: argparse.Namespace) -> int:
    import h5py
    import numba
    import numpy
    import scipy

    versions = {"shockflow": __version__, "python": sys.version.split()[0], "numpy": numpy.__version__,
                "scipy": scipy.__version__, "numba": numba.__version__, "h5py": h5py.__version__}
    print(json.dumps(versions) if args.json else "\n".join(f"{k} {v}" for k, v in versions.items()))
    return 0


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, found {text!r}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, found {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="shockflow", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"shockflow {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = commands.add_parser(
        "demo", help="solve the built-in default case (Burgers from sine data past the first shock) "
                     "and compare every measured number with its exact value")
    demo.add_argument("--cells", type=_positive_int, default=2000, help="grid cells (default 2000)")
    demo.add_argument("--amplitude", type=_positive_float, default=1.0, help="A in u0 = A sin(2 pi x) + c (default 1)")
    demo.add_argument("--offset", type=float, default=0.25, help="c in u0 = A sin(2 pi x) + c (default 0.25)")
    demo.add_argument("--t-end", type=_positive_float, default=0.4, help="final time (default 0.4)")
    demo.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    demo.add_argument("--quiet", action="store_true", help="print nothing (exit status only)")
    demo.set_defaults(run=_demo)

    version = commands.add_parser("version", help="print the versions of shockflow and its dependencies")
    version.add_argument("--json", action="store_true")
    version.set_defaults(run=_version)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
