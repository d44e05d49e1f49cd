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
    "cnn2d-images": None,                  # measured 1/1, −6.6 % (one mode: the patch sum's linear part)
    "wine-linear": None,                   # measured 2/2, 1.1 % (−1.7, −0.4 %); needs scikit-learn
    "breast-cancer-mlp": "measured 0/1: predicted step 58, truth 1039: the tanh MLP keeps growing its weights on "
                         "the separable ±1 labels after the mode is learned (no plateau of r), so half its final "
                         "strength is reached late; with the identity activation the same case is 1/1 at "
                         "−13.8 % (30 strongly correlated features)",
    "fourier-features": None,              # measured 6/6, 4.3 % (13.1 % before the half-learned exit of the log form)
    "moe-experts": None,                   # measured 3/3, 1.1 % (+0.1, +1.1, -20.8 %): the mixture's chain

    "attention-qk-4x2": None,              # measured 2/2, 2.6 % (−0.1, −5.0 %): the waiting mode's unit split
                                           # loses its share held by the learned mode's units at the saddle (27 % early before)
    "deep-linear-3": None,                 # measured 4/4, 2.2 % (+0.2, −1.9, +2.4, +8.9 %): the aligned start
    "deep-linear-4": None,                 # measured 4/4, 5.0 % (+5.3, −3.3, +4.7, +7.0 %; exit 1 before it)
    "deep-mlp-tanh": "measured 2/4 within a factor 2, 75 % median (-74, -49, -23, +832 %, re-measured load 2.1; 1/4 at "
                     "100 % before the aligned start): the chain's steps for r0-r2 (184, 336, 419) are where each balanced "
                     "radius jumps in the run, but the tanh chain saturates and the mode strengths z = r^3 keep creeping "
                     "up long after (r0: z = 11 at step 400, 27.6 at 2500), so half the final strength is reached late "
                     "(702, 662, 546); r3's profile at the saddles has a near-stationary stretch (|a L'| ~ 0.004 at "
                     "r = 0.22) that the run leaves after ~400 steps by directions off its section",
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
