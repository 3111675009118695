"""Generated blocks of the code's own constants: the solver layer's size limit, ridges and
acceptance tolerances, ``afr regress``'s tolerances (with its golden files' sizes) and the input
limits, read from the modules that use them, and the families' differences from their authors'
code (``afr models``'s table, line numbers and formula constants included). The documentation
names a constant and the block beside it shows its value, so a page can never quote a tolerance
the code no longer has (``afr report --check`` fails when one changes and the page is not
regenerated).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from afr_cli.core import yaml_safe
from afr_cli.data import checks as data_checks
from afr_cli.ensembles import params as ensemble_params
from afr_cli.models import readings_help
from afr_cli.publish.markdown import short_exponent, table
from afr_cli.solvers import checks, cvxpy_backend, dense_qp, solve
from afr_cli.store import export, sizes
from afr_cli.tables import regress

SOLVER_BLOCK = "code:solver_constants"
REGRESS_BLOCK = "code:regress_constants"
LIMITS_BLOCK = "code:input_limits"
EXPORT_BLOCK = "code:export_constants"
READINGS_BLOCK = "code:readings"


@dataclass(frozen=True)
class Constant:
    """One module constant a page names: where it lives and what it is for."""

    module: object
    name: str
    meaning: str

    @property
    def value(self):
        return getattr(self.module, self.name)


SOLVER_CONSTANTS = (
    Constant(solve, "DAQP_MAX_WEIGHTS", "`solver: auto` sends a QP to DAQP up to this many weights, to PIQP above"),
    Constant(dense_qp, "DAQP_RIDGE", "ridge added to DAQP's H, relative to its largest entry"),
    Constant(checks, "FEASIBILITY_TOL", "an answer is refused when a constraint is violated by more"),
    Constant(checks, "KKT_TOL", "a QP answer is refused when its relative KKT residual is larger"),
    Constant(cvxpy_backend, "GRAM_JITTER", "relative ridge of the Cholesky factor the cvxpy solvers get"),
)

LIMIT_CONSTANTS = (
    Constant(yaml_safe, "MAX_NODES", "values a YAML file may expand to through its aliases"),
    Constant(ensemble_params, "MAX_TREES", "trees an ensemble may declare"),
    Constant(data_checks, "MAX_MAGNITUDE", "size of a value a file or loader dataset may hold"),
)


EXPORT_CONSTANTS = (
    Constant(
        export, "GRID_DIGITS", "significant digits of the grid's per-point test scores in a first export (0 = exact)"
    ),
    Constant(
        sizes, "RESULTS_BUDGET_MB", "megabytes `results/` is held to (`afr export --sizes` prints it beside the total)"
    ),
)


def _show(value) -> str:
    if isinstance(value, float):
        return short_exponent(value, "g")  # 1e-9, not 1e-09
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _table(constants: tuple[Constant, ...]) -> str:
    return table(
        ["constant", "value", "what it is"],
        [[f"`{c.module.__name__}.{c.name}`", _show(c.value), c.meaning] for c in constants],
        ["---", "---:", "---"],
    )


def solver_constants_block() -> str:
    """The solver layer's constants, read from its modules."""
    return _table(SOLVER_CONSTANTS)


GOLDEN_FILES = ("regress/golden.csv", "regress/golden_agboost.csv")  # under the results root


def regress_constants_block(root: Path) -> str:
    """``afr regress``'s golden files (how many values each holds) and its tolerances: per metric
    against the golden values, and against the papers."""
    golden = [
        f"`results/{name}`: {len(pd.read_csv(Path(root) / name))} golden values"
        for name in GOLDEN_FILES
        if (Path(root) / name).is_file()
    ]
    rows = [
        [
            f"{metric.upper().replace('R2', 'R²')} against `results/regress/golden.csv`",
            _show(tol) if kind == "abs" else f"{tol * 100:g} %",
            "absolute" if kind == "abs" else "relative",
        ]
        for metric, (kind, tol) in regress.TOLERANCES.items()
    ]
    rows += [
        [
            "baselines against the papers' published values (`BASELINE_TOLERANCE`)",
            _show(regress.BASELINE_TOLERANCE),
            "absolute",
        ],
        ["an expected value, a documented gap (`EXPECTED_TOLERANCE`)", _show(regress.EXPECTED_TOLERANCE), "absolute"],
    ]
    return "; ".join(golden) + ".\n\n" + table(["checked", "tolerance", "kind"], rows, ["---", "---:", "---"])


def input_limits_block() -> str:
    """The bounds on input sizes afr refuses to go past, read from their modules."""
    return _table(LIMIT_CONSTANTS)


def readings_block() -> str:
    """Every place a family's authors' code computes another model than its paper's text, with the
    file and lines, as ``afr models`` prints it from the families (``Family.code_differences``)."""
    lines = [
        "| families | what | the paper's text | the authors' code | where (repository@commit, file:lines) |",
        "|---|---|---|---|---|",
    ]
    for families, what, text, code, where in readings_help():
        cells = " | ".join(c.replace("|", "\\|") for c in (families, what, text, code))
        lines.append(f"| {cells} | `{where}` |")
    return "\n".join(lines)


def code_blocks(root: Path) -> dict[str, str]:
    """The blocks of the code's constants, by name (the golden files are read under ``root``)."""
    return {
        SOLVER_BLOCK: solver_constants_block(),
        REGRESS_BLOCK: regress_constants_block(root),
        LIMITS_BLOCK: input_limits_block(),
        EXPORT_BLOCK: _table(EXPORT_CONSTANTS),
        READINGS_BLOCK: readings_block(),
    }
