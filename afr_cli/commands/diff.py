"""``afr diff``: how far the scores moved between two stores of one experiment."""

from __future__ import annotations

from pathlib import Path

import typer


def diff(
    old: Path = typer.Argument(..., help="the first store (or export) directory"),
    new: Path = typer.Argument(..., help="the second, e.g. the same config re-run with --out"),
    metric: str = typer.Option("r2", "--metric", help="r2, mae or rmse"),
    threshold: float = typer.Option(1e-4, "--threshold", help="count the cells whose largest change exceeds this"),
    top: int = typer.Option(20, "--top", help="cells to print, largest change first (0: all)"),
    fmt: str = typer.Option("md", "--format", help="md or csv (csv: every cell)"),
) -> None:
    """Per (dataset, base, model) on the units both stores hold: the largest and mean change of
    the selected score, and how often the selected hyperparameters differ."""
    from afr_cli.errors import AfrInputError
    from afr_cli.store.diff import diff_stores, render_diff

    if fmt not in ("md", "csv"):
        raise AfrInputError(f"--format: {fmt!r} is not allowed; allowed: md, csv")
    if top < 0:
        raise AfrInputError(f"--top: {top} is not allowed; allowed: 0 (all) or more")
    typer.echo(render_diff(diff_stores(old, new, metric), threshold, top or None, fmt))
