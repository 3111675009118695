"""``afr export``: write each store's committed form, ``export/`` beside ``store.sqlite``."""

from __future__ import annotations

from pathlib import Path

import typer


def export(
    dirs: list[Path] | None = typer.Argument(None, help="store directories (default: every store under --root)"),
    root: Path = typer.Option(Path("results"), "--root", help="where to look for stores when none is named"),
    grid_cv: bool | None = typer.Option(
        None,
        "--grid-cv/--no-grid-cv",
        help="keep every grid point's inner-CV scores (afr plot surface --score cv); default: as the "
        "existing export, else no (they add more than half to the grid's size)",
    ),
    grid_solves: bool | None = typer.Option(
        None,
        "--grid-solves/--no-grid-solves",
        help="keep every grid point's per-solve log (solver, status, objective, ms); default: as the "
        "existing export, else no (the working store keeps it)",
    ),
    grid_digits: int | None = typer.Option(
        None,
        "--grid-digits",
        help="significant digits of the grid's test scores (0: exact); default: as the existing "
        "export, else 10 (5e-11 relative; the working store keeps every digit)",
    ),
    sizes: bool = typer.Option(
        False,
        "--sizes",
        help="write nothing; print each export's size, per repetition and extrapolated to --at repetitions",
    ),
    at: int = typer.Option(100, "--at", help="with --sizes: the repetition count to extrapolate to"),
    as_stored: list[Path] | None = typer.Option(
        None,
        "--as-stored",
        help="with --sizes: an export kept at its stored size (a study committed "
        "at its own repetition count); repeatable",
    ),
) -> None:
    """Deterministic compressed export of each store (unchanged data gives identical bytes)."""
    from afr_cli.errors import AfrInputError

    if sizes:
        from afr_cli.store.sizes import render_sizes

        typer.echo(render_sizes(root, at, as_stored))
        return
    from afr_cli.store import STORE_FILE, ResultsStore
    from afr_cli.store.export import EXPORT_DIR, export_store

    chosen = list(dirs) if dirs else sorted(p.parent for p in root.rglob(STORE_FILE))
    if not chosen:
        raise AfrInputError(f"{root}: no results stores ({STORE_FILE}) below it; run `afr run CONFIG` first")
    for d in chosen:  # every store readable before any export is written
        store = ResultsStore(d)
        if not store.exists():
            raise AfrInputError(f"{d}: no results store here (expected {STORE_FILE}) to export")
        store.columns("units")
    for d in chosen:
        changed = export_store(d, grid_cv, grid_solves, grid_digits)
        size = sum(f.stat().st_size for f in (d / EXPORT_DIR).iterdir())
        state = f"{len(changed)} file(s) changed" if changed else "unchanged"
        typer.echo(f"{d / EXPORT_DIR}: {state}, {size / 1e6:.2f} MB")
