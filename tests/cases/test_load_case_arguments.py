"""``load_case``'s arguments from Python: a source that is no path, overrides in every form the other API
functions take them, a directory given for a case file.  Each error names the argument or the file."""

from __future__ import annotations

import pickle
import re

import pytest

from shockflow.cases import CaseError, load_case
from shockflow.cases.errors import ArgumentError, ArgumentTypeError


@pytest.mark.parametrize("source", [123, None, b"burgers-sine", 1.5, ["burgers-sine"]])
def test_a_source_that_is_no_path_names_the_argument_and_what_was_expected(source):
    with pytest.raises(ArgumentTypeError) as info:
        load_case(source)
    message = str(info.value)
    assert message.startswith("source: expected a built-in case name or a path to a case file (str or os.PathLike)")
    assert f"found {source!r}" in message and "case file '" not in message
    # the documented error (CaseError), and a TypeError as Python's own would be
    assert isinstance(info.value, CaseError) and isinstance(info.value, TypeError)
    assert info.value.keys == ("source",)


def test_a_single_override_string_is_one_override_as_in_run_and_forecast():
    one = load_case("burgers-sine", overrides="domain.cells=96")
    listed = load_case("burgers-sine", overrides=["domain.cells=96"])
    assert one.settings.domain.cells == listed.settings.domain.cells == 96
    assert one.overrides == listed.overrides == ("domain.cells=96",)


def test_no_overrides_may_be_said_with_none():
    assert load_case("burgers-sine", overrides=None).settings == load_case("burgers-sine").settings


@pytest.mark.parametrize("overrides, named", [(b"domain.cells=96", "overrides"), (96, "overrides"),
                                              ({"domain.cells": 96}, "overrides"),
                                              (["domain.cells=96", 3], "overrides[1]")])
def test_overrides_that_are_not_key_value_strings_are_refused_naming_them(overrides, named):
    with pytest.raises(ArgumentTypeError, match="^" + re.escape(named) + ": expected .*'KEY=VALUE' string"):
        load_case("burgers-sine", overrides=overrides)


def test_a_directory_is_said_to_be_one(tmp_path):
    (tmp_path / "adir").mkdir()
    with pytest.raises(CaseError) as info:
        load_case(tmp_path / "adir")
    assert "is a directory; expected a case file (TOML)" in str(info.value)
    assert "no such case file" not in str(info.value)


def test_a_directory_named_like_a_built_in_case_does_not_hide_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "burgers-sine").mkdir()   # e.g. an output directory named after the case
    assert load_case("burgers-sine").name == "burgers-sine"


def test_argument_errors_travel_between_processes_whole():
    error = ArgumentTypeError.expected("case", "a path", 123)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is ArgumentTypeError and str(copy) == str(error) == "case: expected a path, found 123"
    assert copy.spelled("--case").parameter == "--case" and str(copy.spelled("--case")).startswith("--case: ")
    network = CaseError("Net", [], source="network")
    assert str(pickle.loads(pickle.dumps(network))) == str(network)
    assert isinstance(ArgumentError("x", "y"), ValueError) and not isinstance(ArgumentError("x", "y"), TypeError)


def test_the_argument_errors_are_where_docs_api_md_names_them():
    import shockflow.cases as cases

    assert (cases.ArgumentError, cases.ArgumentTypeError) == (ArgumentError, ArgumentTypeError)
