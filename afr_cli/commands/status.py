"""``afr status``: what each results store holds (coverage, compute, solver outcomes)."""

from __future__ import annotations

from pathlib import Path

import typer


def status(
    dirs: list[Path] | None = typer.Argument(None, help="store directories (default: every store under --root)"),
    root: Path = typer.Option(Path("results"), "--root", help="where to look for stores when none is named"),
    detail: bool = typer.Option(False, "--detail", help="always print repetitions per dataset and base"),
    at: int | None = typer.Option(
        None, "--at", min=1, help="also project the stores' compute to this many repetitions each"
    ),
    workers: int = typer.Option(
        2, "--workers", min=1, help="worker processes the wall-time bound of the totals assumes"
    ),
) -> None:
    """Units stored per dataset and base, gaps, compute time, solves by solver and status, fallbacks;
    with several stores (or --at), their compute summed and the wall time it means."""
    from afr_cli.errors import AfrInputError
    from afr_cli.store.reader import find_stores
    from afr_cli.store.status import render_status, render_totals, store_status

    chosen = list(dirs) if dirs else find_stores(root)
    if not chosen:
        raise AfrInputError(f"{root}: no results stores below it; run `afr run CONFIG` first")
    statuses = [store_status(d) for d in chosen]  # every error before any output
    typer.echo("\n".join(render_status(s, detail) for s in statuses))
    if len(statuses) > 1 or at is not None:
        typer.echo(render_totals(statuses, workers, at))
