"""Result files: one HDF5 file per run, written atomically, with a reader (layout: docs/result-file.md)."""

from shockflow.results.store import FORMAT, FORMAT_VERSION, Result, ResultFileError, read_result, write_result

__all__ = ["FORMAT", "FORMAT_VERSION", "Result", "ResultFileError", "read_result", "write_result"]
