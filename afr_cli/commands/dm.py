"""``afr dm``: Decision Machines from the command line (export a table cell's forest as matrices)."""

from __future__ import annotations

from pathlib import Path

import typer

HELP = "Decision Machines: trees and forests as matrices (S, t, B, v)."


def export(
    config: Path = typer.Argument(..., help="experiment YAML, e.g. configs/abrf_rf.yaml"),
    dataset: str = typer.Option(..., "--dataset", help="a dataset of the experiment"),
    base: str = typer.Option(..., "--base", help="a base id of the experiment, e.g. RF"),
    rep: int = typer.Option(..., "--rep", help="repetition index"),
    out: Path = typer.Option(..., "--out", help="the .npz to write"),
    set_: list[str] = typer.Option([], "--set", help="override a config key, as in afr run"),
) -> None:
    """One cell's forest, refit as the protocol fits it, as matrices plus its scaled rows in a .npz."""
    from afr_cli.engine.cell_forest import export_forest

    machine = export_forest(config, dataset, base, rep, out, set_)
    typer.echo(
        f"{out}: {machine.n_trees} trees, {machine.n_leaves} leaves, {machine.n_nodes} internal nodes, "
        f"{machine.n_features} features (S, t, B, v; X_train, y_train, X_test, y_test)"
    )
