"""Scaling laws of ℓ2-regularised quadratic networks (docs/theory.md §4).

Modules: :mod:`target` (power-law and user spectra, label noise, data), :mod:`design` (the
measurement operator A(S)_μ = Tr[S Z_μ] without forming Z_μ), :mod:`convex_erm` (FISTA on
S ⪰ 0, nuclear norm, rank ≤ p), :mod:`direct_erm` (training W by L-BFGS / GD; the exact
λ_W = λ/√(p d) equivalence), :mod:`test_error` (2‖Ŝ − S*‖²_F/d + Δ and its Monte Carlo check),
:mod:`fits` (power-law fits, window rule, seed bootstrap), :mod:`sweeps` (λ paths as pure grid
points), :mod:`interpolation` (the p d − p(p−1)/2 onset), :mod:`regimes` (regime rule and
predicted exponents), :mod:`figures`, :mod:`case` (the ``scaling`` case kind).
"""
