"""A [sweep] table belongs to `shockflow sweep`; a single run validates it and otherwise ignores it."""

from pathlib import Path

import pytest

from shockflow.cases import CaseError, load_case

BASE = (Path(__file__).resolve().parents[2] / "cases" / "burgers-sine.toml").read_text()


def test_valid_sweep_table_is_accepted_and_ignored_by_a_single_run(tmp_path):
    path = tmp_path / "with-sweep.toml"
    path.write_text(BASE + '\n[sweep]\nseed = 3\n[sweep.axes]\n"domain.cells" = [100, 200]\n')
    plain = tmp_path / "plain.toml"
    plain.write_text(BASE)
    assert load_case(path).settings == load_case(plain).settings


def test_invalid_sweep_table_names_the_file_and_the_key(tmp_path):
    path = tmp_path / "bad-sweep.toml"
    path.write_text(BASE + "\n[sweep]\nbogus = 3\n")
    with pytest.raises(CaseError) as info:
        load_case(path)
    text = str(info.value)
    assert "bad-sweep.toml" in text and "sweep" in text and "bogus" in text
