"""The automatic-charts suite (issue 18): each case in cases/ scored against its parameter truth.

Acceptance: recall ≥ 90 % and median relative error ≤ 10 % over all true transitions (misses count 1).
Cases that miss the bar are listed as strict xfails with the measured cause (the README's suite table).
"""

import pytest

from shockflow.cases import RunOptions, load_case

#: suite entry -> (built-in case, --set overrides): the explicit-geometry cases charted automatically
RUNS = {
    "mean-field-linear (auto)": ("mean-field-linear", ['geometry={name = "auto"}']),
    "two-layer-staircase (auto)": ("two-layer-staircase", ['geometry={name = "auto"}', "extraction.charts=[]",
                                                           "extraction.chart_key=mode"]),
}

#: suite entry -> None (meets the bar) or the measured reason it does not
SUITE = {
    "mean-field-linear (auto)": None,      # measured 1/1, 0.4 %
    "two-layer-staircase (auto)": None,    # measured 4/4, 0.3 %
    "diagonal-staircase": None,            # the uv form, no [geometry]: measured 3/3 within 6 %
    "cnn2d-images": None,                  # measured 1/1, +0.7 % (−6.6 % before the learned strength)
    "wine-linear": None,                   # measured 2/2, 0.4 % (+0.5, +0.4 %; 1.1 % before); needs scikit-learn
    "breast-cancer-mlp": None,             # measured 1/1, +2.5 % (0/1 before the learned strength: the weights grow
                                           # on the separable labels, r² was half way at step 1039, the function at 55)
    "fourier-features": None,              # measured 6/6, 3.9 % (4.3 % before the learned strength, 13.1 % before the
                                           # half-learned exit of the log form)
    "moe-experts": None,                   # measured 3/3, 1.1 % (+0.1, +1.1, -20.8 %): the mixture's chain

    "attention-qk-4x2": None,              # measured 2/2, 1.6 % (+0.7, +2.5 %; 2.6 % before the learned strength)
    "deep-linear-3": None,                 # measured 4/4, 2.0 % (+0.3, −2.0, +1.9, +8.7 %): the aligned start
    "deep-linear-4": None,                 # measured 4/4, 5.2 % (+5.5, −3.1, +5.0, +7.0 %; exit 1 before it)
    "deep-mlp-tanh": "measured 3/4 within a factor 2, 4.6 % median (-7.3, -1.8, -1.9, +989 %; load 1-7): the fourth "
                     "mode's profile at the block-coordinate saddle of the first three has a near-stationary stretch "
                     "(|a L'| ~ 0.002 at r = 0.25), so the chain predicts 10 550 for its truth 969; along the run's own "
                     "parameters that section has none past r ~ 0.08 (the run sits off the section saddle). Before the "
                     "learned strength 2/4, 75 %",
}


def _run(name, tmp_path):
    from shockflow.runners.prediction import run_prediction_case

    case_name, overrides = RUNS.get(name, (name, []))
    case = load_case(case_name, list(overrides))
    if case.settings.data.name == "sklearn_table":
        pytest.importorskip("sklearn")
    return run_prediction_case(case, RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SUITE))
def test_suite_case_meets_the_bar(name, tmp_path, request):
    if SUITE[name] is not None:
        request.applymarker(pytest.mark.xfail(strict=True, reason=SUITE[name]))
    out = _run(name, tmp_path)
    assert out.comparison.truth == "parameters"
    assert out.comparison.recall >= 0.9
    assert out.comparison.median_relative_error <= 0.10


@pytest.mark.slow
def test_the_tanh_chains_first_three_modes_are_within_ten_percent_and_the_fourth_is_missed(tmp_path):
    """The measured figure of ``deep-mlp-tanh`` (the README's suite table): the learned strength puts the truth of
    the first three modes at the steps where their radii jump (185, 331, 420: predicted −7.3, −1.8, −1.9 %); the
    fourth (truth 969) is predicted far beyond the run from the section saddle's near-stationary stretch."""
    out = _run("deep-mlp-tanh", tmp_path)
    c = out.comparison
    assert c.truth == "parameters" and len(c.observed) == 4
    true = {t.chart: t.step for t in out.truth.transitions}
    predicted = {p.chart: p.step for p in out.stage.predicted}
    for chart in ("r0", "r1", "r2"):
        assert abs(predicted[chart] / true[chart] - 1.0) <= 0.10
    assert 850 < true["r3"] < 1100 and predicted["r3"] > 5 * true["r3"]
    assert c.recall == pytest.approx(0.75) and c.median_relative_error <= 0.10
