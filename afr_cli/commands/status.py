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
    from afr_cli.commands.answer_memo import answer_key, answered, store_parts
    from afr_cli.store.discover import stores_below

    chosen = list(dirs) if dirs else stores_below(root)
    options = {"dirs": [str(d) for d in dirs or []], "root": str(root), "detail": detail, "at": at, "workers": workers}
    key = answer_key("status", options, store_parts(chosen) if chosen else None)
    answered(key, lambda: _answer(chosen, root, detail, at, workers))


def _answer(chosen: list[Path], root: Path, detail: bool, at: int | None, workers: int) -> bool:
    """What ``afr status`` prints for the ``chosen`` stores; True when that is a function of their
    exports alone (no working store, no run's progress, which depends on the clock), so that its
    memo may keep it (afr_cli/commands/answer_memo.py)."""
    from afr_cli.errors import AfrInputError
    from afr_cli.store.status import render_status, render_totals, store_status

    if not chosen:
        raise AfrInputError(f"{root}: no results stores below it; run `afr run CONFIG` first")
    statuses = [store_status(d) for d in chosen]  # every error before any output
    typer.echo("\n".join(render_status(s, detail) for s in statuses))
    if len(statuses) > 1 or at is not None:
        typer.echo(render_totals(statuses, workers, at))
    return all(s.source == "export" and s.progress is None for s in statuses)
