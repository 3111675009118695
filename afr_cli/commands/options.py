"""The options several commands share, each declared once with its one check.

``--reps``, ``--jobs`` and ``--trees`` appear on several commands with the same meaning; each
command takes its option from here, so the bound and its one-line message are written once. A
bound is a typer callback (run while the command line is parsed, before the command's body)
that raises AfrInputError: the entry point prints it as ``error: --reps: 0 is not allowed; ...``
and exits 2. Typer's own ``min=`` is not used for these: it would print click's ``x>=1`` message
and add ``at least 1`` to the option's help, changing docs/cli.md. (``--backend`` and
``--scheduler`` are checked where they are used, when afr_cli.engine.runner.RunOptions is made.)

Nothing here imports more than typer, afr_cli.errors and afr_cli.core.path_rules: every command
module imports this, and ``afr --help`` must stay light (tests/test_command_imports.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from afr_cli.core.path_rules import directory_error
from afr_cli.errors import AfrInputError

# The tree path's default and help (afr_cli.ensembles.tree_path checks the name): importing that
# package would load scikit-learn into every command's start, so the default is the literal
# tree_path.FAST (tests/test_cli_options.py holds the two equal).
FAST_TREES = "fast"
TREES_HELP = (
    "scikit-learn's trees: fast (its trees built and applied without its per-tree overhead, "
    "the same bytes) or sklearn (its own fit/apply/predict, the reference)"
)


def at_least(low: int) -> Callable[[typer.CallbackParam, int | None], int | None]:
    """A typer callback refusing an integer option's value below ``low`` (None, the option not
    given, passes), in one line naming the option: ``--max-m: 0 is not allowed; an integer >= 1``."""

    def check(param: typer.CallbackParam, value: int | None) -> int | None:
        if value is not None and value < low:
            raise AfrInputError(f"{_long_name(param)}: {value} is not allowed; an integer >= {low}")
        return value

    return check


def _jobs(value: int) -> int:
    """--jobs: a positive count of workers, or -1 for all cores (joblib's meaning)."""
    if value == 0 or value < -1:
        raise AfrInputError(f"--jobs: {value} is not allowed; a positive count or -1 for all cores")
    return value


def _long_name(param: typer.CallbackParam) -> str:
    """The option's long name as the user can type it (``--max-m``)."""
    return next((o for o in param.opts if o.startswith("--")), param.opts[0])


def reps_option(help: str, default: int | None = None) -> Any:
    """``--reps N``: a count of repetitions, at least 1."""
    return typer.Option(default, "--reps", help=help, callback=at_least(1))


def jobs_option(help: str = "parallel workers (-1 = all cores)") -> Any:
    """``--jobs/-j N``: parallel workers, a positive count or -1 for all cores."""
    return typer.Option(-1, "--jobs", "-j", help=help, callback=_jobs)


def trees_option(help: str = TREES_HELP) -> Any:
    """``--trees fast|sklearn``: which path fits scikit-learn's trees (checked by the engine's
    ``speedups_for``, which turns the name into the run's speedups)."""
    return typer.Option(FAST_TREES, "--trees", help=help)


def check_directory(option: str, value: str | None) -> None:
    """A directory option's value, refused in one line when empty, a file, or otherwise unusable."""
    problem = directory_error(option, value)
    if problem:
        raise AfrInputError(problem)
