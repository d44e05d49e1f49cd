"""Atomic file writing and the progress bar."""

import io
import os

import pytest

from shockflow.storage import atomic_open, atomic_path
from shockflow.progress import ProgressBar, format_duration


def test_atomic_open_replaces_only_on_success(tmp_path):
    target = tmp_path / "out.txt"
    with atomic_open(target) as fh:
        fh.write("first")
    assert target.read_text() == "first"
    with pytest.raises(RuntimeError):
        with atomic_open(target) as fh:
            fh.write("half")
            raise RuntimeError("crash mid-write")
    assert target.read_text() == "first"
    assert os.listdir(tmp_path) == ["out.txt"]          # the temporary file is gone


def test_atomic_path_new_target_is_absent_after_failure_and_missing_directory_is_reported(tmp_path):
    target = tmp_path / "new.bin"
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(target) as tmp:
            assert tmp.parent == tmp_path and tmp.exists()
            tmp.write_bytes(b"partial")
            raise KeyboardInterrupt
    assert not target.exists() and os.listdir(tmp_path) == []
    with pytest.raises(FileNotFoundError, match="does not exist"):
        with atomic_path(tmp_path / "no" / "such" / "file"):
            pass


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_atomic_files_get_the_umask_permissions_or_keep_the_replaced_ones(tmp_path, umask):
    """Not the temporary file's 0o600: a new file gets 0o666 less the umask, a replaced file keeps its mode."""
    previous = os.umask(umask)
    try:
        new = tmp_path / "new.txt"
        with atomic_open(new) as fh:
            fh.write("x")
        assert new.stat().st_mode & 0o777 == 0o666 & ~umask
        old = tmp_path / "old.txt"
        old.write_text("old")
        old.chmod(0o640)
        with atomic_path(old) as tmp:
            tmp.write_text("new")
        assert old.read_text() == "new" and old.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(previous)


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_throttles_and_reports_rate_and_eta():
    stream = FakeTTY()
    bar = ProgressBar(1000, "train", stream=stream, min_interval=3600.0)
    for i in range(1, 1001):
        bar.update(i)
    bar.close()
    frames = stream.getvalue().split("\r")[1:]
    assert len(frames) == 2                  # first update and the final one; the rest throttled
    assert "1000/1000" in frames[-1] and "it/s" in frames[-1] and "ETA 0:00" in frames[-1]


def test_progress_bar_silent_when_not_a_tty_or_disabled():
    s1, s2 = io.StringIO(), FakeTTY()
    for bar in (ProgressBar(5, stream=s1), ProgressBar(5, stream=s2, enabled=False)):
        bar.update(5)
        bar.close()
    assert s1.getvalue() == "" and s2.getvalue() == ""


def test_format_duration():
    assert format_duration(3725) == "1:02:05"
    assert format_duration(65) == "1:05"
    assert format_duration(float("nan")) == "--:--"
