"""``afr docs``: write the generated reference pages under docs/: the config reference (from the
schema table) and the CLI reference (from every command's ``--help``)."""

from __future__ import annotations

from pathlib import Path

import typer

from afr_cli.errors import AfrInputError


def _write_or_check(path: Path, text: str, what: str, command: str, check: bool) -> None:
    """Write ``text`` to ``path``; with ``check`` write nothing and exit 1 when the file differs."""
    if check:
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            typer.echo(f"{path}: stale; regenerate it with `{command}`", err=True)
            raise typer.Exit(1)
        typer.echo(f"{path}: up to date")
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise AfrInputError(f"{path}: cannot write the {what} ({err.strerror})") from None
    typer.echo(f"wrote {path}")


HELP = "Generated reference pages: docs/config.md from the config schema, docs/cli.md from every command's --help."


def config(
    out: Path | None = typer.Option(None, "--out", help="where to write (default docs/config.md)"),
    check: bool = typer.Option(False, "--check", help="write nothing; exit 1 if the page is stale"),
) -> None:
    """The config reference (every section's keys, domains, defaults; families and ensembles)."""
    from afr_cli.config.key_docs import REFERENCE_FILE, reference_page

    _write_or_check(out or REFERENCE_FILE, reference_page(), "config reference", "afr docs config", check)


def cli(
    ctx: typer.Context,
    out: Path | None = typer.Option(None, "--out", help="where to write (default docs/cli.md)"),
    check: bool = typer.Option(False, "--check", help="write nothing; exit 1 if the page is stale"),
) -> None:
    """The CLI reference: every command's --help at a fixed width, whatever the terminal."""
    from afr_cli.commands.cli_docs import CLI_REFERENCE_FILE, cli_reference

    # the root of the running command line is the whole afr app (afr_cli.cli, a floor above)
    text = cli_reference(ctx.find_root().command)
    _write_or_check(out or CLI_REFERENCE_FILE, text, "CLI reference", "afr docs cli", check)
