"""``afr run``: run an experiment from its YAML config (its keys: afr_cli.config.schema), resuming.

Heavy modules (the engine, cvxpy, scikit-learn) are imported inside the command, so ``afr --help``
and every other command start fast.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from afr_cli.commands.options import (
    at_least,
    check_directory,
    given_command,
    jobs_option,
    reps_option,
    trees_option,
)
from afr_cli.errors import AfrInputError

if TYPE_CHECKING:  # the engine is imported inside the command, so `afr --help` stays light
    from afr_cli.config.experiment import Experiment
    from afr_cli.engine.runner import RunOptions


def run(
    ctx: typer.Context,
    config: Path = typer.Argument(..., help="experiment YAML, e.g. configs/quickstart.yaml"),
    reps: int | None = reps_option("repetitions (protocol.reps)"),
    jobs: int = jobs_option(),
    datasets: str | None = typer.Option(None, "--datasets", help="comma-separated subset, e.g. Diabetes,Yacht"),
    out: str | None = typer.Option(None, "--out", metavar="DIR", help="store directory (default results/<name>/)"),
    set_: list[str] = typer.Option([], "--set", help="override a config key: protocol.reps=10"),
    fresh: bool = typer.Option(
        False, "--fresh", help="discard an existing store first (asks, or needs --yes, when it holds results)"
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="confirm --fresh on a store that holds results"),
    backend: str = typer.Option("loky", "--backend", help="loky (this machine) or dask"),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Dask scheduler address"),
    cluster: Path | None = typer.Option(
        None,
        "--cluster",
        metavar="FILE",
        help="run the units in batch jobs (SLURM, PBS, SGE, LSF) a cluster file describes",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
    trees: str = trees_option(),
    until_decided: tuple[str, str] | None = typer.Option(
        None,
        "--until-decided",
        metavar="A B",
        help="add repetitions in batches until the comparison of models A and B (afr table --compare) "
        "names a winner or practical equivalence at P >= 0.95 on every base, or --max-reps is reached; "
        "the store records why it stopped",
    ),
    max_reps: int | None = typer.Option(
        None,
        "--max-reps",
        callback=at_least(1),
        help="with --until-decided: the most repetitions to run (default: the config's protocol.reps, or --reps)",
    ),
    batch: int = typer.Option(
        10, "--batch", callback=at_least(1), help="with --until-decided: repetitions added between decisions"
    ),
) -> None:
    """Run an experiment (resumes: only units missing from the store are computed)."""
    from afr_cli.catalogue.knowledge import is_reference_store
    from afr_cli.config.cluster_file import load_cluster_file
    from afr_cli.config.experiment import load_experiment
    from afr_cli.engine.runner import RunOptions, run_experiment
    from afr_cli.engine.shared_work import speedups_for

    speedups = speedups_for(trees)
    check_directory("--out", out)
    spec = load_cluster_file(cluster) if cluster is not None else None
    exp = load_experiment(config, _overrides(reps, datasets, set_, config), out)
    # The committed export is written for the stores a paper folder declares, and kept current
    # where one exists; a store of one's own stays a single git-ignored store.sqlite (`afr export`).
    options = RunOptions(
        jobs=jobs,
        backend=backend,
        scheduler=scheduler,
        fresh=fresh,
        progress=not quiet,
        confirm=_fresh_confirmation(yes),
        command=given_command(ctx, leave_out=("fresh", "yes")),
        export=is_reference_store(exp.results) or (exp.results / "export").is_dir(),
        speedups=speedups,
        cluster=spec,
    )
    if until_decided is None:
        if max_reps is not None or ctx.get_parameter_source("batch").name == "COMMANDLINE":
            raise AfrInputError("--max-reps and --batch go with --until-decided A B")
        run_experiment(exp, options, echo=typer.echo)
        return
    _run_until_decided(
        exp,
        options,
        until_decided,
        max_reps,
        batch,
        lambda n: load_experiment(config, _overrides(n, datasets, set_, config), out),
    )


def _run_until_decided(
    exp: Experiment,
    options: RunOptions,
    models: tuple[str, str],
    max_reps: int | None,
    batch: int,
    experiment_at: Callable[[int], Experiment],
) -> None:
    """--until-decided: batches of repetitions until A against B is decided (afr_cli/engine/until_decided.py);
    --fresh applies to the first batch only, and an interrupt names the whole command to resume."""
    from dataclasses import replace

    from afr_cli.engine.runner import run_experiment
    from afr_cli.engine.until_decided import check_models, run_until_decided

    check_models(exp, *models)
    maximum = max_reps if max_reps is not None else exp.protocol.reps
    batches_run: list[int] = []

    def run_batch(at: Experiment):
        fresh = options.fresh and not batches_run  # the first batch starts afresh, the others extend it
        batches_run.append(at.protocol.reps)
        quiet = replace(options, command=None, resume=options.command, fresh=fresh)
        return run_experiment(at, quiet, echo=typer.echo)

    run_until_decided(
        experiment_at, run_batch, *models, batch, maximum, typer.echo, options.command, fresh=options.fresh
    )


def _overrides(
    reps: int | None, datasets: str | None, sets: list[str], config: Path | None = None
) -> list[str | tuple[str, object]]:
    """--reps and --datasets as overrides after the --set ones, so one code path validates them all.
    They are (key, value) pairs, the value built here: an option's text is never parsed as YAML,
    so a name holding a quote or a bracket stays a plain (unknown) dataset name. A name of
    --datasets that a config entry gives to a file or loader stands for that whole entry."""
    out: list[str | tuple[str, object]] = list(sets)
    if reps is not None:
        out.append(("protocol.reps", reps))
    if datasets:
        from afr_cli.config.dataset_option import datasets_override

        out.append(("datasets", datasets_override(datasets, config)))
    return out


def _fresh_confirmation(yes: bool):
    """How --fresh is confirmed: --yes, else a prompt when stdin is a terminal, else not at all."""
    import sys

    if yes:
        return lambda question: True
    if sys.stdin.isatty():
        return lambda question: typer.confirm(question, default=False, err=True)
    return None
