"""``afr docs``: write the generated reference pages under docs/ (today: the config reference)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from afr_cli.errors import AfrInputError


def register(app: typer.Typer) -> None:
    """Add the ``docs`` command group to the afr app."""
    docs = typer.Typer(help="Generated reference pages: docs/config.md from the config schema.")

    @docs.command("config")
    def config(out: Optional[Path] = typer.Option(None, "--out", help="where to write (default docs/config.md)"),
               check: bool = typer.Option(False, "--check", help="write nothing; exit 1 if the page is stale")) -> None:
        """The config reference (every section's keys, domains, defaults; families and ensembles)."""
        from afr_cli.config_docs import REFERENCE_FILE, reference_page

        path = out or REFERENCE_FILE
        text = reference_page()
        if check:
            current = path.read_text(encoding="utf-8") if path.is_file() else None
            if current != text:
                typer.echo(f"{path}: stale; regenerate it with `afr docs config`", err=True)
                raise typer.Exit(1)
            typer.echo(f"{path}: up to date")
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as err:
            raise AfrInputError(f"{path}: cannot write the config reference ({err.strerror})") from None
        typer.echo(f"wrote {path}")

    app.add_typer(docs, name="docs")
