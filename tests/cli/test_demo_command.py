"""The default command: every number it reports is checked against its exact value."""

import json
import math

import pytest

from shockflow.cli import main
from shockflow.runners.demo import run_demo


def test_demo_matches_exact_burgers_values():
    r = run_demo(cells=800, amplitude=1.0, offset=0.25, t_end=0.4)
    assert abs(r.formation_time_measured - 1 / (2 * math.pi)) < 0.02 / (2 * math.pi)
    assert abs(r.shock_position_error_cells) < 1.0
    assert abs(r.shock_speed_measured - 0.25) < 2e-3
    assert abs(r.shock_speed_rankine_hugoniot - 0.25) < 2e-3
    assert r.mass_drift_relative < 1e-12


def test_demo_json_output_is_machine_readable(capsys):
    assert main(["demo", "--cells", "400", "--amplitude", "0.5", "--offset", "0", "--t-end", "0.6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cells"] == 400
    assert out["formation_time_exact"] == pytest.approx(1 / math.pi)
    assert out["formation_time_measured"] == pytest.approx(1 / math.pi, rel=0.03)
    assert abs(out["shock_position_error_cells"]) < 1.0


def test_demo_rejects_bad_arguments(capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--cells", "0"])
    assert "--cells" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["demo", "--t-end", "-1"])


def test_too_many_time_steps_name_the_option_that_asks_for_them(capsys):
    """A tester's --amplitude=1e300 was '--cells: about 1.78e+303 time steps would be needed'."""
    for option, value in (("--amplitude", "1e300"), ("--offset", "1e12"), ("--t-end", "1e9")):
        assert main(["demo", f"{option}={value}"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"shockflow: error: {option}: about ") and "time steps would be needed" in err, err
    assert main(["demo", "--cells", "400000", "--amplitude", "600"]) == 2
    assert "error: --amplitude: about " in capsys.readouterr().err


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "demo" in capsys.readouterr().out
