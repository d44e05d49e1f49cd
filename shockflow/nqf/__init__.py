"""Neural quadratic forms (docs/theory.md §2): structure matrices from the models, closed (μ, M) dynamics,
Lotka–Volterra reduction, switch-on times, power laws, and the built-in experiments.

Example (docs/nqf.md has more)::

    from shockflow import models
    from shockflow.nqf import structure_matrices, expansion_remainder
    net = models.build("mlp", input_dim=4, width=3, activation="gelu", loss="mse")
    form = structure_matrices(net, X)          # f0, g, B, A(x) for every sample
    expansion_remainder(net, X, form).slope    # ≈ 3
"""

# names are imported from their modules on first use (PEP 562), so that importing one
# submodule (a case kind's registration) does not import them all and their scipy modules
_LAZY = {
    **dict.fromkeys(('NonCommutingDataError', 'commutation', 'integrate_lv', 'isotropic_mode_strength', 'isotropic_solution', 'isotropy_constant', 'lv_coefficients', 'mode_strengths', 'orthogonal_features_solution', 'saxe_mode_strength', 'shared_eigenbasis'), 'shockflow.nqf.lotka_volterra'),
    **dict.fromkeys(('OrderState', 'compress', 'compressed_form', 'order_parameter_step', 'simulate_order_parameters', 'simulate_units'), 'shockflow.nqf.order_parameters'),
    **dict.fromkeys(('asymptotic_exponent', 'excess_loss', 'finite_eps_slope', 'fit_power_law', 'power_law_modes', 'samplewise_exponent'), 'shockflow.nqf.power_law'),
    **dict.fromkeys(('QuadraticForm', 'expansion_remainder', 'expected_remainder_order', 'structure_matrices', 'supported_models', 'unit_layout', 'unit_matrix'), 'shockflow.nqf.structure_matrices'),
    **dict.fromkeys(('escape_time', 'escape_time_prediction', 'leading_switch_on_time', 'measured_switch_on', 'switch_on_time', 'switch_on_time_eps'), 'shockflow.nqf.switch_on'),
    **dict.fromkeys(('mode_analysis',), 'shockflow.nqf.experiments'),
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module = _LAZY[name]
        value = getattr(importlib.import_module(module if module.startswith("shockflow") else __name__ + module), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "NonCommutingDataError", "OrderState", "QuadraticForm", "asymptotic_exponent", "commutation", "compress",
    "compressed_form", "escape_time", "escape_time_prediction", "excess_loss", "expansion_remainder",
    "expected_remainder_order", "finite_eps_slope", "fit_power_law", "integrate_lv", "isotropic_mode_strength",
    "isotropic_solution", "isotropy_constant", "leading_switch_on_time", "lv_coefficients", "measured_switch_on",
    "mode_analysis", "mode_strengths", "order_parameter_step", "orthogonal_features_solution", "power_law_modes",
    "samplewise_exponent", "saxe_mode_strength", "shared_eigenbasis", "simulate_order_parameters",
    "simulate_units", "structure_matrices", "supported_models", "switch_on_time", "switch_on_time_eps",
    "unit_layout", "unit_matrix",
]
