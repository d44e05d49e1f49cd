"""Reading ``.npz`` archives of named arrays (a network's initial parameters, a data set, a weight stack).

:func:`open_npz` is ``numpy.load`` without pickles, with one error for every way a file is not such an archive:
not a zip file, cut short, or a ``.npy`` (one unnamed array, which ``numpy.load`` returns as an array and which has
no names to read).  Callers name the case key or argument the path came from.
"""

from __future__ import annotations

import os
import zipfile

import numpy as np

__all__ = ["open_npz"]


def open_npz(path: str | os.PathLike) -> np.lib.npyio.NpzFile:
    """The open archive at ``path`` (use it as a context manager); :class:`ValueError` saying why for a file that is
    no ``.npz`` archive of named arrays; :class:`FileNotFoundError` and :class:`IsADirectoryError` as they come."""
    try:
        archive = np.load(path, allow_pickle=False)
    except (FileNotFoundError, IsADirectoryError):
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"not a readable .npz archive ({exc})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ValueError(f"it holds one unnamed array of shape {np.shape(archive)} (a .npy file); save the arrays by "
                         f"name with numpy.savez")
    return archive
