"""``afr run``: run an experiment from its YAML config (its keys: afr_cli.config.schema), resuming.

Heavy modules (the engine, cvxpy, scikit-learn) are imported inside the command, so ``afr --help``
and every other command start fast.
"""

from __future__ import annotations

from pathlib import Path

import typer

from afr_cli.commands.options import check_directory, jobs_option, reps_option, trees_option
from afr_cli.errors import AfrInputError


def run(
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
) -> None:
    """Run an experiment (resumes: only units missing from the store are computed)."""
    from afr_cli.catalogue.knowledge import is_reference_store
    from afr_cli.config.cluster_file import load_cluster_file
    from afr_cli.config.experiment import load_experiment
    from afr_cli.engine.messages import rerun_command
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
        command=rerun_command(config, datasets, set_, out),
        export=is_reference_store(exp.results) or (exp.results / "export").is_dir(),
        speedups=speedups,
        cluster=spec,
    )
    run_experiment(exp, options, echo=typer.echo)


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
        names = [d.strip() for d in datasets.split(",") if d.strip()]
        own = _own_dataset_entries(config) if config is not None else {}
        out.append(("datasets", [own.get(n, n) for n in names]))
    return out


def _own_dataset_entries(config: Path) -> dict[str, dict]:
    """The config's ``{name: ..., file|loader: ...}`` dataset entries by name (none when the
    file cannot be read: loading it reports that)."""
    from afr_cli.config.experiment import read_yaml_file

    try:
        raw = read_yaml_file(config, "config")
    except AfrInputError:
        return {}
    entries = raw.get("datasets") if isinstance(raw, dict) else None
    return {e["name"]: e for e in entries or [] if isinstance(e, dict) and isinstance(e.get("name"), str)}


def _fresh_confirmation(yes: bool):
    """How --fresh is confirmed: --yes, else a prompt when stdin is a terminal, else not at all."""
    import sys

    if yes:
        return lambda question: True
    if sys.stdin.isatty():
        return lambda question: typer.confirm(question, default=False, err=True)
    return None
