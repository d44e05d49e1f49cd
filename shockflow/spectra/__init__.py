"""BBP spectral transitions during training (docs/theory.md §3) and spectral Burgers (docs/theory.md §1).

Modules (one concept each):
  marchenko_pastur   MP density, edges, CDF, quantiles, Stieltjes transform
  tracy_widom        TW₁ constants and the finite-size edge location/scale
  bulk_fit           robust MP fit of a spectrum (σ², and r if unknown)
  outliers           eigenvalues above the fitted edge + a TW margin
  bbp                rank-one thresholds, outlier positions, overlaps (rectangular, spiked Wigner)
  teacher_student    docs/theory.md §3 population-GD theory and NumPy simulations
  finite_size        Binder cumulant, crossings, replica overlap, an exact reduced sampler
  nonlinear          μ₁, μ₂ by Gauss–Hermite; ε_o, ε_c; one-step Monte Carlo test
  phase_diagram      (ε, σ_W) diagram from simulation with theory boundaries
  monitor            spectra of logged weight snapshots; analyse_spectra (file → JSON dict)
  spectral_burgers   complex Burgers for the Stieltjes transform by characteristics
"""

# names are imported from their modules on first use (PEP 562), so that importing one
# submodule (a case kind's registration) does not import them all and their scipy modules
_LAZY = {
    **dict.fromkeys(('rectangular_outlier', 'rectangular_overlap', 'rectangular_theta_from_outlier', 'rectangular_threshold', 'wigner_outlier', 'wigner_overlap', 'wigner_threshold'), '.bbp'),
    **dict.fromkeys(('BulkFit', 'BulkFitError', 'fit_bulk'), '.bulk_fit'),
    **dict.fromkeys(('mp_cdf', 'mp_density', 'mp_edges', 'mp_quantile', 'mp_stieltjes'), '.marchenko_pastur'),
    **dict.fromkeys(('SpectralTrace', 'analyse_spectra', 'load_weight_stack', 'spectral_monitor'), '.monitor'),
    **dict.fromkeys(('Outliers', 'detect_outliers'), '.outliers'),
    **dict.fromkeys(('critical_step', 'critical_steps', 'critical_time', 'population_theory'), '.teacher_student'),
    **dict.fromkeys(('TW1_MEAN', 'TW1_STD', 'wishart_edge_location', 'wishart_edge_scale'), '.tracy_widom'),
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


__all__ = ["BulkFit", "BulkFitError", "Outliers", "SpectralTrace", "TW1_MEAN", "TW1_STD",
           "analyse_spectra", "critical_step", "critical_steps", "critical_time", "detect_outliers",
           "fit_bulk", "load_weight_stack", "mp_cdf", "mp_density", "mp_edges", "mp_quantile",
           "mp_stieltjes", "population_theory", "rectangular_outlier", "rectangular_overlap",
           "rectangular_theta_from_outlier", "rectangular_threshold", "spectral_monitor",
           "wigner_outlier", "wigner_overlap", "wigner_threshold", "wishart_edge_location",
           "wishart_edge_scale"]
