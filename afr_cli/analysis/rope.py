"""The default region of practical equivalence of afr's Bayesian tests, on its own: the option
``afr table --rope`` and the paper folders' ``compare_rope`` show it as their default, and
neither should load the Bayesian tests (afr_cli/analysis/bayesian.py, which re-exports it) to do so."""

DEFAULT_ROPE = 0.01  # ±0.01 on R² (and on the error metrics, in their own unit): the stated default
