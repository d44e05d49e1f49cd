"""Axis syntax, product and zip order, the [sweep] table and its removal from the case text."""

from __future__ import annotations

import tomllib

import numpy as np
import pytest

from shockflow.cases.sweep_axes import (Axis, SweepAxes, SweepSpecError, build_axes, parse_set, parse_values,
                                   split_sweep_table, toml_value)


def test_linspace_logspace_range_values():
    lin = parse_values("a", "linspace:0.1:1.0:10")
    assert len(lin) == 10 and lin[0] == 0.1 and lin[-1] == 1.0
    np.testing.assert_allclose(np.diff(lin), 0.1, rtol=1e-12)
    log = parse_values("a", "logspace:1e-3:1:7")
    assert len(log) == 7 and log[0] == pytest.approx(1e-3, rel=1e-14) and log[-1] == pytest.approx(1.0, rel=1e-14)
    np.testing.assert_allclose(np.array(log[1:]) / np.array(log[:-1]), 10 ** 0.5, rtol=1e-12)
    assert parse_values("a", "range:2:11:3") == (2, 5, 8)
    assert parse_values("a", "range:0:3") == (0, 1, 2)
    assert parse_values("a", "linspace:0.5:0.5:1") == (0.5,)


def test_comma_lists_are_toml_values_and_respect_brackets_and_quotes():
    assert parse_values("a", "1,2.5,true,word") == (1, 2.5, True, "word")
    assert parse_values("a", '[1, 2],[3, 4]') == ([1, 2], [3, 4])
    assert parse_values("a", '"x,y","z"') == ("x,y", "z")
    assert parse_set("domain.cells=100,200") == ("domain.cells", (100, 200))


@pytest.mark.parametrize("spec, words", [
    ("linspace:0:1", "three fields"),
    ("linspace:0:1:0", "count n"),
    ("linspace:0:x:3", "b must be a finite number"),
    ("logspace:0:1:3", "a > 0 and b > 0"),
    ("range:5:5", "empty"),
    ("range:0:4:0", "step must not be 0"),
    ("1,,2", "empty value"),
    ("1,1.0", "the value 1.0 repeats 1"),          # one case run twice under two task keys
])
def test_bad_axis_specs_name_the_key_and_the_problem(spec, words):
    with pytest.raises(SweepSpecError) as info:
        parse_values("training.lr", spec)
    assert "training.lr" in str(info.value) and words in str(info.value)


def test_bad_set_item_names_the_expected_form():
    with pytest.raises(SweepSpecError, match="expected KEY=VALUES"):
        parse_set("no-equals-sign")


def test_product_order_and_zip_groups():
    axes = SweepAxes(axes=(Axis("a", (1, 2)), Axis("b", ("x", "y", "z"))))
    assert len(axes) == 6
    assert axes.points()[:4] == [{"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 1, "b": "z"}, {"a": 2, "b": "x"}]
    zipped = SweepAxes(axes=(Axis("a", (1, 2, 3)), Axis("c", (0.5,) * 2 + (0.7,)), Axis("b", (10, 20, 30))),
                       zips=(("a", "b"),))
    assert zipped.shape == (3, 3) and len(zipped) == 9
    pts = zipped.points()
    assert all(p["b"] == 10 * p["a"] for p in pts)
    assert [p["c"] for p in pts[:3]] == [0.5, 0.5, 0.7]


def test_zip_errors():
    with pytest.raises(SweepSpecError, match="equal lengths"):
        SweepAxes(axes=(Axis("a", (1, 2)), Axis("b", (1, 2, 3))), zips=(("a", "b"),))
    with pytest.raises(SweepSpecError, match="not a swept key; swept keys: a, b"):
        SweepAxes(axes=(Axis("a", (1, 2)), Axis("b", (1, 2))), zips=(("a", "c"),))
    with pytest.raises(SweepSpecError, match="swept twice"):
        SweepAxes(axes=(Axis("a", (1, 2)), Axis("a", (3, 4))))


CASE = '''kind = "pde"
seed = 3

[equation]
kind = "burgers"

[sweep]
seed = 9
zip = [["initial.amplitude", "output.t_end"]]

[sweep.axes]
"initial.amplitude" = "linspace:0.5:1.0:3"
"output.t_end" = [0.4, 0.3, 0.2]
domain.cells = [100]

[domain]
kind = "interval"
cells = 50
'''


def test_sweep_table_is_parsed_and_removed_from_the_case_text():
    body, table = split_sweep_table(CASE)
    parsed = tomllib.loads(body)
    assert "sweep" not in parsed and parsed["domain"]["cells"] == 50 and parsed["seed"] == 3
    assert {k: v for k, v in tomllib.loads(CASE).items() if k != "sweep"} == parsed
    assert table.seed == 9
    axes = build_axes(["output.t_end=0.4,0.35,0.3"], [], table)
    assert axes.keys == ("initial.amplitude", "output.t_end")
    assert axes.fixed == (("domain.cells", 100),)
    assert len(axes) == 3 and axes.points()[1] == {"initial.amplitude": 0.75, "output.t_end": 0.35}
    # without a table the text is unchanged
    text = 'kind = "pde"\n'
    assert split_sweep_table(text) == (text, None)


def test_sweep_table_as_dotted_keys_is_rejected():
    with pytest.raises(SweepSpecError, match=r"write the sweep as a \[sweep\] section"):
        split_sweep_table('kind = "pde"\nsweep.seed = 1\n')
    with pytest.raises(SweepSpecError, match="unknown keys"):
        split_sweep_table('kind = "pde"\n[sweep]\naxis = 1\n')


def test_toml_value_round_trips():
    for v in (1, -2, 0.1, 1e-5, 2.5e16, True, "a \"q\"", [1, 2.5], float("inf")):
        assert tomllib.loads(f"v = {toml_value(v)}")["v"] == v
