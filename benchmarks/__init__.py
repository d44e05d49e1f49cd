"""Benchmarks of shockflow against the tools a user would otherwise pick (not part of the tests).

Run everything with ``python benchmarks/run_all.py --out benchmarks/results/`` (see docs/benchmarks.md).
"""
