"""open_hdf5: each way a file can fail to be the expected one raises the caller's error, naming the file,
what was expected and what was found; a good file opens and is closed on leaving."""

from __future__ import annotations

import re

import h5py
import numpy as np
import pytest

from shockflow.storage.hdf5 import open_hdf5

FORMAT = "shockflow-test-format"
KIND = "a shockflow test file"


class CallerError(ValueError):
    """Stands for a reader's own error type (like ResultFileError)."""


class CallerMissing(LookupError):
    """A separate type for missing files, to see that ``missing`` is honoured."""


def _file(path, **attrs):
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(5.0))
        for key, value in attrs.items():
            f.attrs[key] = value
    return path


def _open(path, **kw):
    kw = {"format": FORMAT, "kind": KIND, "error": CallerError, **kw}
    with open_hdf5(path, **kw) as f:
        return f["x"][()]


def test_good_file_opens_read_only_and_is_closed_after(tmp_path):
    path = _file(tmp_path / "good.h5", format=FORMAT, format_version=2)
    with open_hdf5(path, format=FORMAT, kind=KIND, error=CallerError, max_version=2) as f:
        assert f.mode == "r"
        np.testing.assert_array_equal(f["x"][()], np.arange(5.0))
        handle = f
    assert not handle.id.valid
    # an older version is read too; str paths work as well as Path
    assert np.array_equal(_open(str(_file(tmp_path / "old.h5", format=FORMAT, format_version=1)), max_version=2),
                          np.arange(5.0))


def test_file_is_closed_when_the_reader_fails(tmp_path):
    path = _file(tmp_path / "good.h5", format=FORMAT)
    with pytest.raises(KeyError):
        with open_hdf5(path, format=FORMAT, kind=KIND, error=CallerError) as f:
            handle = f
            f["absent"]
    assert not handle.id.valid
    with h5py.File(path, "r+"):     # nothing keeps it open
        pass


def test_missing_file(tmp_path):
    path = tmp_path / "nope.h5"
    with pytest.raises(CallerError, match=r"nope\.h5'?: no such file \(expected a shockflow test file\)"):
        _open(path)
    with pytest.raises(CallerMissing, match=r"nope\.h5"):
        _open(path, missing=CallerMissing)
    with pytest.raises(CallerError, match=r"is a directory \(expected a shockflow test file\)"):   # not a file
        _open(tmp_path)


def test_text_file_is_not_hdf5(tmp_path):
    path = tmp_path / "notes.h5"
    path.write_text("step,loss\n0,1.0\n")
    with pytest.raises(CallerError, match=r"notes\.h5' is not an HDF5 file \(expected a shockflow test file; h5py: "):
        _open(path)
    with pytest.raises(CallerError, match="is not an HDF5 file"):   # also when nothing else is checked
        _open(path, format=None)


def test_wrong_format_attribute(tmp_path):
    path = _file(tmp_path / "other.h5", format="something-else", format_version=1)
    expected = (r"other\.h5' is not a shockflow test file: root attribute 'format' is 'something-else', "
                r"expected 'shockflow-test-format'")
    with pytest.raises(CallerError, match=expected):
        _open(path)
    assert np.array_equal(_open(path, format=None), np.arange(5.0))    # format=None accepts any HDF5 file


def test_missing_format_attribute(tmp_path):
    path = _file(tmp_path / "bare.h5")
    with pytest.raises(CallerError, match=r"bare\.h5' is not a shockflow test file: root attribute 'format' "
                                          r"is missing, expected 'shockflow-test-format'"):
        _open(path)


@pytest.mark.parametrize("stored", [np.bytes_(FORMAT.encode()), np.array([1, 2])])
def test_format_attribute_of_another_type_is_rejected(tmp_path, stored):
    path = _file(tmp_path / "odd.h5", format=stored)
    with pytest.raises(CallerError, match=r"odd\.h5' is not a shockflow test file: root attribute 'format' is "):
        _open(path)


def test_unsupported_version(tmp_path):
    path = _file(tmp_path / "new.h5", format=FORMAT, format_version=3)
    with pytest.raises(CallerError, match=re.escape("new.h5': 'shockflow-test-format' format version 3 is newer "
                                                    "than this shockflow reads (versions up to 2)")):
        _open(path, max_version=2)
    assert np.array_equal(_open(path), np.arange(5.0))     # versions unchecked without max_version


def test_missing_or_unreadable_version(tmp_path):
    path = _file(tmp_path / "unversioned.h5", format=FORMAT)
    with pytest.raises(CallerError, match=r"unversioned\.h5' is not a shockflow test file: root attribute "
                                          r"'format_version' is missing, expected an integer format version up to 1"):
        _open(path, max_version=1)
    path = _file(tmp_path / "textversion.h5", format=FORMAT, format_version="one")
    with pytest.raises(CallerError, match=r"textversion\.h5' .*'format_version' is 'one', expected an integer"):
        _open(path, max_version=1)
