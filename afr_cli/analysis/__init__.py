"""Pure statistics: the tests the papers use and the ones a reviewer asks for today.

``stats`` (Demšar's paired t-test, Wilcoxon, Holm, Friedman with Nemenyi), ``signed_rank`` and
``distributions`` (the same floats scipy.stats gives, without importing it), ``posthoc``
(Wilcoxon-Holm cliques), ``bayesian`` and ``rope`` (the Bayesian signed-rank test and its region of
practical equivalence), ``hierarchical`` (the hierarchical Bayesian test over datasets) and
``effect_intervals`` (intervals on effect sizes). Functions over arrays and DataFrames: may import
afr_cli.core and afr_cli.errors only, and know nothing of papers, stores or configs.
"""
