"""The ``afr`` command line: one typer app, and every command registered on it here.

Each command is a plain function in its group's module under afr_cli.commands; this module
imports those modules (each imports no more than typer at its top, so ``afr --help`` loads no
numerical library) and adds every command to the app, in the order ``afr --help`` lists them.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from typing import Any

import typer

from afr_cli.commands import (
    bench,
    bench_dask,
    bench_slurm,
    datasets,
    diff,
    dm,
    docs,
    export,
    fidelity,
    models,
    plot,
    regress,
    report,
    reproduce,
    run,
    stats,
    status,
    table,
    validate,
)
from afr_cli.commands.help_text import ProseGroup
from afr_cli.core.quiet_interrupt import Terminated, received_signal, sigterm_as_interrupt, stopped_line
from afr_cli.errors import AfrInputError, RunInterrupted, SolverError

app = typer.Typer(
    cls=ProseGroup,  # every --help in words: no <type> tags, no {placeholders}, whole sentences
    help="afr: reproduce the attention-based forest papers' experiments end to end.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# The commands of their own, in the order of the help (typer lists them before the groups).
COMMANDS: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("run", run.run),
    ("validate", validate.validate),
    ("report", report.report),
    ("models", models.models),
    ("reproduce", reproduce.reproduce),
    ("status", status.status),
    ("table", table.table),
    ("regress", regress.regress),
    ("export", export.export),
    ("diff", diff.diff),
)


def _group(name: str, help: str, commands: dict[str, Callable[..., Any]], no_args_is_help: bool = False) -> typer.Typer:
    """Add the command group ``afr NAME`` holding ``commands`` (subcommand name -> function, in
    the help's order) and return it."""
    group = typer.Typer(help=help, no_args_is_help=no_args_is_help)
    for command, function in commands.items():
        group.command(command)(function)
    app.add_typer(group, name=name)
    return group


for _name, _function in COMMANDS:
    app.command(_name)(_function)
_group(
    "datasets",
    datasets.HELP,
    {"list": datasets.list_datasets, "fetch": datasets.fetch, "verify": datasets.verify, "info": datasets.info},
)
_group("stats", stats.HELP, {"published": stats.published})
_bench = _group(
    "bench",
    bench.HELP,
    {
        "qp": bench.qp,
        "satrf": bench.satrf,
        "larf": bench.larf,
        "dm": bench.dm,
        "unit": bench.unit,
        "floor": bench.floor,
        "trees": bench.trees_bench,
        "fusion": bench.fusion,
        "steps": bench.steps,
        "regenerated": bench.regenerated,
        "baseline": bench.baseline,
        "interactive": bench.interactive,
        "sequential": bench.sequential,
        "dask": bench_dask.dask_bench,
        "slurm": bench_slurm.slurm_bench,
    },
    no_args_is_help=True,
)
_bench.command("time", context_settings=bench.TIME_CONTEXT)(bench.time_command)
_group("plot", plot.HELP, {"surface": plot.surface, "weights": plot.weights, "curve": plot.curve}, no_args_is_help=True)
_group("dm", dm.HELP, {"export": dm.export}, no_args_is_help=True)
_group("fidelity", fidelity.HELP, {"preprocessing": fidelity.preprocessing})
_group("docs", docs.HELP, {"config": docs.config, "cli": docs.cli})


def _print_version(value: bool) -> None:
    if value:
        from afr_cli.core.version import version_line

        typer.echo(version_line())
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="print the version and git commit, then exit"
    ),
) -> None:
    """afr: reproduce the attention-based forest papers' experiments end to end."""


def _is_usage_error(err: Exception) -> bool:
    """Click's usage errors (typer may vendor its own click, so match by shape, not class)."""
    return callable(getattr(err, "show", None)) and isinstance(getattr(err, "exit_code", None), int)


def _usage_line(err: Exception) -> str:
    """A usage error (a bad option value, an unknown option) as one line naming the command."""
    ctx = getattr(err, "ctx", None)
    command = getattr(ctx, "command_path", None) or "afr"
    return f"error: {command}: {' '.join(err.format_message().split())} (see {command} --help)"


def main() -> None:
    """Console entry point: input errors become one line on stderr and exit code 2, no traceback."""
    sigterm_as_interrupt()
    try:
        code = _run_app()
    except AfrInputError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(err.exit_code)
    except SolverError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(1)
    except RunInterrupted as err:
        print(f"interrupted: {err}", file=sys.stderr)
        sys.exit(err.exit_code)
    except KeyboardInterrupt as err:  # Terminated too
        _stopped(received_signal() or (("SIGTERM", None) if isinstance(err, Terminated) else None))
    except SystemExit as err:  # no command of afr's exits this way: a plugin or loader outside its guards did
        if _output_closed(err):  # `afr X | head`: the reader stopped reading; nothing to say, and nowhere to say it
            sys.exit(1)
        print(
            f"error: {_command()}: code of your own (a plugin or dataset loader of the config) called "
            f"exit({err.code!r}); afr never ends that way, so it stops here with exit 1",
            file=sys.stderr,
        )
        sys.exit(1)
    except Exception as err:
        if type(err).__name__ == "Abort":
            print("aborted", file=sys.stderr)
            sys.exit(130)
        if type(err).__name__ == "Exit":
            sys.exit(getattr(err, "exit_code", 0))
        if _is_usage_error(err):
            if type(err).__name__ == "NoArgsIsHelpError":  # `afr` alone: the help is the answer
                err.show()
            else:
                print(_usage_line(err), file=sys.stderr)
            sys.exit(err.exit_code)
        raise
    if code == 130 and received_signal() is not None:  # Typer turned an interrupt into a bare exit 130
        _stopped(received_signal())
    sys.exit(code if isinstance(code, int) else 0)


def _output_closed(err: SystemExit) -> bool:
    """Whether ``err`` is the exit 1 that click or rich make when stdout is a closed pipe (the
    reader, e.g. ``head``, went away), not a plugin's exit: click swaps in its flush-pacifying
    wrapper first, rich exits from its ``Console.on_broken_pipe`` (help text is printed by rich)."""
    if type(sys.stdout).__name__ == "PacifyFlushWrapper":
        return True
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_name == "on_broken_pipe"


def _command() -> str:
    """``afr`` and the command's name, as the user typed it (for a line that has no file to name)."""
    words = [w for w in sys.argv[1:] if not w.startswith("-")][:1]
    return " ".join(["afr", *words])


def _stopped(received: tuple[str, str | None] | None) -> None:
    """Ctrl-C or SIGTERM outside a run's loop: one line naming the command (and what it was doing
    when the signal came), exit 130 or 143."""
    line, code = stopped_line(_command(), received)
    print(line, file=sys.stderr)
    sys.exit(code)


def _run_app():
    """Run the command; once it has returned or raised, Ctrl-C is ignored: only the exit hooks
    (joining joblib's worker threads) remain, and an interrupt there prints a traceback, saves nothing."""
    try:
        return app(standalone_mode=False)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


if __name__ == "__main__":
    main()
