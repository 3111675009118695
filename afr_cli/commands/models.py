"""``afr models``: the registered model families, base ensembles and config keys, as tables."""

from __future__ import annotations

import typer


def models() -> None:
    """The registered model families and base ensembles, with their hyperparameters."""
    from tabulate import tabulate

    from afr_cli.config.experiment import families_help
    from afr_cli.config.schema import key_rows
    from afr_cli.ensembles import ensembles_help

    typer.echo(
        tabulate(
            families_help(),
            headers=["family", "what it is", "hyperparameters"],
            tablefmt="simple",
            maxcolwidths=[14, 40, 60],
        )
    )
    typer.echo("")
    typer.echo(
        tabulate(
            ensembles_help(),
            headers=["ensemble (bases: kind)", "what it is", "parameters"],
            tablefmt="simple",
            maxcolwidths=[14, 40, 60],
        )
    )
    typer.echo("")
    typer.echo(
        tabulate(
            key_rows(),
            headers=["config key", "allowed", "default", "what it is"],
            tablefmt="simple",
            maxcolwidths=[26, 34, 18, 50],
        )
    )
