"""``afr validate``: check an experiment config, or a cluster file, without running anything.

It reads the config, the plugin files it names and the user's own data files, and checks that
the experiment can run. It imports no solver (cvxpy) and no plotting or cluster library: none is
needed to check a config (tests/test_command_imports.py). It still imports scikit-learn, and with
it scipy.stats: the families a config names are declared beside their scikit-learn estimators.
With ``--cluster FILE`` it checks the cluster file and prints the job script afr would submit
(that one imports dask-jobqueue, which writes the script).
"""

from __future__ import annotations

from pathlib import Path

import typer

from afr_cli.errors import AfrInputError


def validate(
    config: Path | None = typer.Argument(None, help="experiment YAML (optional with --cluster)"),
    set_: list[str] = typer.Option([], "--set", help="override a config key: protocol.reps=10"),
    cluster: Path | None = typer.Option(
        None, "--cluster", metavar="FILE", help="check a cluster file and print the job script afr would submit"
    ),
) -> None:
    """Check a config without running it (exit 0, or exit 2 with one line naming the key)."""
    if config is None and cluster is None:
        raise AfrInputError(
            "afr validate: Missing argument 'CONFIG' (an experiment YAML); "
            "or --cluster FILE alone checks a cluster file"
        )
    if cluster is not None:
        from afr_cli.config.cluster_file import load_cluster_file

        spec = load_cluster_file(cluster)
        try:
            from afr_cli.engine.cluster_jobs import job_script
        except ImportError:
            raise AfrInputError("--cluster needs the dask extra: pip install 'afr[dask]'") from None
        typer.echo(job_script(spec).rstrip())
        typer.echo(f"{cluster}: ok (at most {spec.max_jobs} {spec.scheduler} jobs of {spec.cores} cores)")
    if config is None:
        return
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
