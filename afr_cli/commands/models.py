"""``afr models``: the registered model families, base ensembles and config keys, as tables."""

from __future__ import annotations

import typer


def models() -> None:
    """The registered model families and base ensembles, with their hyperparameters."""
    from tabulate import tabulate

    from afr_cli.config.experiment import families_help
    from afr_cli.config.schema import key_rows
    from afr_cli.ensembles import ensembles_help
    from afr_cli.models import readings_help

    typer.echo(
        tabulate(
            families_help(),
            headers=["family", "what it is", "hyperparameters"],
            tablefmt="simple",
            maxcolwidths=[14, 40, 60],
        )
    )
    typer.echo("")
    typer.echo("Readings (reading: code): where the authors' public code computes another model than the paper's text")
    typer.echo(
        tabulate(
            readings_help(),
            headers=["families", "what", "the paper's text", "the authors' code", "where (repo@commit file:lines)"],
            tablefmt="simple",
            maxcolwidths=[14, 14, 34, 34, 28],
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
