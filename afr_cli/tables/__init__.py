"""Tables of our results, one job per module (pure functions over DataFrames, md/LaTeX/CSV):

- ``format``: orders (from the papers' data files), number formats, md/LaTeX rendering;
- ``selection``: which repetitions, and the one definition of best-test;
- ``summary``: per-dataset summaries in the papers' layout;
- ``agreement``: the one rule for "ours agrees with the paper";
- ``paper_compare``: ours beside a published table;
- ``compare``: B against A over datasets (paired t-test, Wilcoxon, effect sizes, wins, Holm,
  Bayesian signed-rank and per-dataset correlated t-tests);
- ``friedman``: Friedman test and Nemenyi critical differences over a table's models.

``results`` is the long frame of afr_cli.store.load_results: dataset, base, model, rep,
r2, mae, rmse, params (dict of the selected hyperparameters), selection.
"""

from afr_cli.tables.agreement import (
    ERROR_REL_TOL,
    R2_TOL,
    agreement,
    as_printed,
    check_tolerance,
)
from afr_cli.tables.agreement import (
    RULE as AGREEMENT_RULE,
)
from afr_cli.tables.format import DATASET_ORDER, FORMATS, METRIC_NAMES, METRICS, MODEL_ORDER, format_value
from afr_cli.tables.paper_compare import (
    COMPARISON_COLUMNS,
    agreement_summary,
    best_counts,
    name_plain_forests,
    paper_comparison,
    render_paper_comparison,
    repetitions_note,
)
from afr_cli.tables.selection import BEST_TEST_NOTE, best_test_results, first_reps, results_in_view, selection_note
from afr_cli.tables.summary import mode_value, param_modes, render_summary, summary_long, summary_wide

# ``compare`` (and with it scipy.stats and the Bayesian tests) is imported when one of its names is
# first used: a table without --compare computes no test and should not pay for loading them.
_COMPARE_NAMES = (
    "TEST_COLUMNS",
    "BaseComparison",
    "ModelComparison",
    "WinRecord",
    "compare_models",
    "render_comparison_lead",
    "render_comparison_overview",
    "render_model_comparison",
)


def __getattr__(name: str):
    if name in _COMPARE_NAMES:
        from afr_cli.tables import compare

        return getattr(compare, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AGREEMENT_RULE",
    "BEST_TEST_NOTE",
    "COMPARISON_COLUMNS",
    "DATASET_ORDER",
    "ERROR_REL_TOL",
    "FORMATS",
    "METRICS",
    "METRIC_NAMES",
    "MODEL_ORDER",
    "R2_TOL",
    "TEST_COLUMNS",
    "BaseComparison",
    "ModelComparison",
    "WinRecord",
    "agreement",
    "agreement_summary",
    "as_printed",
    "best_counts",
    "best_test_results",
    "check_tolerance",
    "compare_models",
    "first_reps",
    "format_value",
    "mode_value",
    "name_plain_forests",
    "paper_comparison",
    "param_modes",
    "render_comparison_lead",
    "render_comparison_overview",
    "render_model_comparison",
    "render_paper_comparison",
    "render_summary",
    "repetitions_note",
    "results_in_view",
    "selection_note",
    "summary_long",
    "summary_wide",
]
