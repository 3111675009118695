"""The ``afr`` command line: one typer app; each command group lives in afr_cli.commands."""

from __future__ import annotations

import sys

import typer

from afr_cli.errors import AfrInputError

app = typer.Typer(
    help="afr: reproduce the attention-based forest papers' experiments end to end.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each module defines register(app) and adds its commands; the order is the help order.
_COMMAND_MODULES = (
    "datasets",
)


def _register_all() -> None:
    import importlib

    for name in _COMMAND_MODULES:
        importlib.import_module(f"afr_cli.commands.{name}").register(app)


_register_all()


def main() -> None:
    """Console entry point: run the app, turning input errors into one line and exit code 2."""
    try:
        app(standalone_mode=False)
    except AfrInputError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(err.exit_code)
    except typer.Exit as err:
        sys.exit(err.exit_code)
    except typer.Abort:
        print("aborted", file=sys.stderr)
        sys.exit(130)
    except Exception as err:  # click usage errors carry their own exit code
        import click

        if isinstance(err, click.ClickException):
            err.show()
            sys.exit(err.exit_code)
        raise
