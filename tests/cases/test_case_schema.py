"""The generic settings machinery: TOML tables -> frozen dataclasses, errors with key paths."""

from __future__ import annotations

import tomllib
from dataclasses import FrozenInstanceError, dataclass
from typing import ClassVar

import pytest

from shockflow.cases.errors import CaseError
from shockflow.cases.schema import (at_least, greater_than, interval, parse_settings, reference_markdown, setting,
                                    to_plain)


@dataclass(frozen=True)
class Inner:
    """An inner table."""

    cfl: float = setting(0.5, doc="Courant number", bounds=interval(0, 1, closed="right"))
    steps: int = setting(10, doc="steps", bounds=at_least(1))
    scheme: str = setting("a", doc="scheme", choices=("alpha", "a", "beta"))


@dataclass(frozen=True)
class Circle:
    TAG: ClassVar[str] = "circle"
    radius: float = setting(doc="radius", bounds=greater_than(0))


@dataclass(frozen=True)
class Square:
    TAG: ClassVar[str] = "square"
    side: float = setting(doc="side")
    corners: tuple[float, ...] = setting((0.0, 0.0), doc="corner")


@dataclass(frozen=True)
class Root:
    """The root."""

    title: str = setting(doc="a title")
    count: int = setting(doc="a count")
    flag: bool = setting(False, doc="a flag")
    inner: Inner = setting(doc="inner", factory=Inner)
    shape: Circle | Square = setting(doc="a shape", tag="kind")
    scale: float | None = setting(None, doc="optional")

    def check(self):
        if self.flag and self.count > 3:
            yield "count", f"expected at most 3 with flag = true, found {self.count}"


def parse(text: str):
    return parse_settings(Root, tomllib.loads(text), file="x.toml")


GOOD = 'title = "t"\ncount = 2\n[shape]\nkind = "square"\nside = 2\ncorners = [1, 2.5]\n'


def test_parse_fills_defaults_converts_types_and_freezes():
    r = parse(GOOD)
    assert r.count == 2 and r.flag is False and r.scale is None
    assert isinstance(r.shape, Square) and r.shape.side == 2.0 and isinstance(r.shape.side, float)
    assert r.shape.corners == (1.0, 2.5)
    assert r.inner == Inner()
    with pytest.raises(FrozenInstanceError):
        r.count = 3  # type: ignore[misc]
    plain = to_plain(r)
    assert plain["shape"] == {"kind": "square", "side": 2.0, "corners": [1.0, 2.5]}
    assert parse_settings(Root, plain, file="again") == r  # round trip through plain data


def test_single_number_is_a_one_tuple():
    r = parse(GOOD.replace("corners = [1, 2.5]", "corners = 3"))
    assert r.shape.corners == (3.0,)


def test_every_problem_is_reported_at_once_with_key_paths():
    text = ('title = 5\ncount = true\nflagg = true\n[inner]\ncfl = 1.5\nscheme = "alfa"\n'
            '[shape]\nkind = "circle"\nradius = -1\n')
    with pytest.raises(CaseError) as info:
        parse(text)
    err = info.value
    assert err.file == "x.toml"
    assert set(err.keys) == {"title", "count", "flagg", "inner.cfl", "inner.scheme", "shape.radius"}
    msg = str(err)
    assert "x.toml" in msg and "6 problems" in msg
    assert "title: expected a string, found 5 (integer)" in msg
    assert "count: expected an integer, found true (boolean)" in msg
    assert "flagg: unknown key (did you mean 'flag'?)" in msg
    assert "inner.cfl: expected a number in (0, 1], found 1.5 (float)" in msg
    assert 'inner.scheme: unknown name "alfa" (did you mean "alpha"?)' in msg
    assert "shape.radius: expected a number > 0, found -1 (integer)" in msg


def test_missing_required_keys_are_listed_together():
    with pytest.raises(CaseError) as info:
        parse('[shape]\nkind = "circle"\n')
    assert info.value.missing == ("title", "count", "shape.radius")
    assert "missing required keys: title, count, shape.radius" in str(info.value)


def test_variant_tag_unknown_and_missing():
    with pytest.raises(CaseError) as info:
        parse('title = "t"\ncount = 1\n[shape]\nkind = "squar"\n')
    assert 'shape.kind: unknown name "squar" (did you mean "square"?)' in str(info.value)
    with pytest.raises(CaseError) as info:
        parse('title = "t"\ncount = 1\n[shape]\nradius = 1\n')
    assert info.value.missing == ("shape.kind",)


def test_keys_of_another_variant_are_unknown_with_a_suggestion_from_this_one():
    with pytest.raises(CaseError) as info:
        parse('title = "t"\ncount = 1\n[shape]\nkind = "circle"\nradius = 1\nside = 2\n')
    assert info.value.keys == ("shape.side",)


def test_cross_field_check_names_the_key():
    with pytest.raises(CaseError) as info:
        parse(GOOD.replace("count = 2", "count = 5\nflag = true"))
    assert info.value.keys == ("count",)
    assert "at most 3 with flag = true, found 5" in str(info.value)


def test_non_finite_numbers_and_tables_in_place_of_values_are_rejected():
    with pytest.raises(CaseError) as info:
        parse(GOOD + "[inner]\ncfl = nan\nsteps = 0\n")
    assert set(info.value.keys) == {"inner.cfl", "inner.steps"}
    with pytest.raises(CaseError) as info:
        parse(GOOD.replace('title = "t"', "[title]\nx = 1\n[other]"))
    assert "title" in info.value.keys


def test_reference_lists_every_key_with_type_default_and_meaning():
    page = reference_markdown(Root, "Root")
    for row in ("| `title` | string | **required** | a title |",
                "| `cfl` | number | `0.5` | Courant number Must be in (0, 1]. |",
                '| `scheme` | string | `"a"` | scheme One of `"alpha"`, `"a"`, `"beta"`. |',
                "| `corners` | array of numbers | `[0.0, 0.0]` | corner |",
                "| `scale` | number | not set | optional |"):
        assert row in page
    assert '`[shape]` with `kind = "circle"`' in page and '`[shape]` with `kind = "square"`' in page
