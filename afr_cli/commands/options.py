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


def given_command(ctx: typer.Context, leave_out: tuple[str, ...] = ()) -> list[str]:
    """The command the user typed, rebuilt from its parsed parameters: ``afr``, the command's
    name, its arguments as typed, then every option given on the command line in the order given
    (the parser records options in the order it meets them), each under its long name. An
    option named in ``leave_out`` (a parameter name such as ``fresh``) is left out: a hint that
    repeats the command must not repeat what must not be done twice. Quoting the words
    (``shlex.quote``) makes a line the shell gives back word for word."""
    names = []
    at = ctx
    while at is not None and at.parent is not None:  # the root's name is the program's, always afr
        names.insert(0, at.info_name)
        at = at.parent
    params = {p.name: p for p in ctx.command.get_params(ctx)}
    arguments: list[str] = []
    options: list[str] = []
    for name, value in ctx.params.items():
        param = params.get(name)
        source = ctx.get_parameter_source(name)
        if param is None or name in leave_out or getattr(source, "name", "") != "COMMANDLINE":
            continue
        many = param.multiple or (param.nargs != 1 and isinstance(value, (list, tuple)))
        values = list(value) if many else [value]
        if param.param_type_name == "argument":
            arguments += [str(v) for v in values]
            continue
        if getattr(param, "is_flag", False):
            chosen = param.opts if value else param.secondary_opts
            if chosen:
                options.append(_long(chosen))
            continue
        if param.nargs > 1 and not param.multiple:  # one option, several values: --until-decided A B
            options += [_long(param.opts), *(str(v) for v in values)]
            continue
        for v in values:
            options += [_long(param.opts), str(v)]
    return ["afr", *names, *arguments, *options]


def _long(opts: list[str]) -> str:
    """The long spelling of an option (``--quiet`` for ``-q/--quiet``)."""
    return next((o for o in opts if o.startswith("--")), opts[0])
