"""``afr validate``: check an experiment config without running it.

It reads the config, the plugin files it names and the user's own data files, and checks that
the experiment can run. It imports no solver (cvxpy) and no plotting or cluster library: none is
needed to check a config (tests/test_command_imports.py). It still imports scikit-learn, and with
it scipy.stats: the families a config names are declared beside their scikit-learn estimators.
"""

from __future__ import annotations

from pathlib import Path

import typer


def validate(
    config: Path = typer.Argument(..., help="experiment YAML"),
    set_: list[str] = typer.Option([], "--set", help="override a config key: protocol.reps=10"),
) -> None:
    """Check a config without running it (exit 0, or exit 2 with one line naming the key)."""
    from afr_cli.config.experiment import load_experiment
    from afr_cli.engine.experiment_data import load_experiment_data
    from afr_cli.engine.preflight import check_runnable

    exp = load_experiment(config, set_)
    check_runnable(exp)
    load_experiment_data(exp, registered=False)  # the user's files and loaders: read and checked
    points = sum(len(m.grid_points()) for m in exp.models if not m.best_of)
    typer.echo(
        f"{config}: ok ({exp.name}: {len(exp.datasets)} datasets, {len(exp.bases)} bases, "
        f"{len(exp.models)} models, {points} grid points, {exp.protocol.reps} reps)"
    )
