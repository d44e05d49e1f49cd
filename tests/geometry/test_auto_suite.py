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
    "deep-linear-3": None,                 # measured 4/4, 3.0 % (−1.3, −6.4, −2.6, +3.4 %): the aligned start
                                           # (4.0 % before the escape on the mode's own path below r_1)
    "deep-linear-4": None,                 # measured 4/4, 3.4 % (−0.5, −5.2, +2.1, +4.8 %; 4.1 % before the own
                                           # path below r_1; exit 1 before the aligned start)
    "deep-mlp-tanh": None,                 # measured 4/4, 8.9 % (−8.5, −9.3, −6.7, +28 %; 8.5 % with +46 % before
                                           # the own path below r_1): the relaxing chain
                                           # (3/4 before it: the fourth mode held back at 10 550 for its truth 969;
                                           # tests/prediction/test_saddle_chain.py)
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
