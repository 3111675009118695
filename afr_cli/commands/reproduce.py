"""``afr reproduce``: everything a paper needs, from its folder, in one command."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from afr_cli.commands.options import given_command, jobs_option, reps_option, trees_option
from afr_cli.errors import AfrInputError


def reproduce(
    ctx: typer.Context,
    targets: list[str] | None = typer.Argument(
        None,
        help="paper ids (satrf, larf, ...), paper folders (a directory holding paper.yaml, anywhere) or config files",
    ),
    every: bool = typer.Option(False, "--all", help="every paper"),
    reps: int | None = reps_option(
        "repetitions of every experiment (default: each experiment's count in its paper's data file)"
    ),
    datasets: str | None = typer.Option(None, "--datasets", help="comma-separated subset, e.g. Diabetes,Yacht"),
    jobs: int = jobs_option(),
    root_option: str = typer.Option(
        "results",
        "--root",
        metavar="DIR",
        help="results root every store "
        "and report goes under (another directory for scratch runs; committed "
        "pages stay untouched)",
    ),
    plan_only: bool = typer.Option(
        False, "--plan", help="print the plan (stored, missing, projected compute per experiment) and run nothing"
    ),
    backend: str = typer.Option("loky", "--backend", help="loky (this machine) or dask"),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Dask scheduler address"),
    cluster: Path | None = typer.Option(
        None,
        "--cluster",
        metavar="FILE",
        help="run the units in batch jobs (SLURM, PBS, SGE, LSF) a cluster file describes",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
    no_site: bool = typer.Option(False, "--no-site", help="skip the HTML site"),
    trees: str = trees_option(),
) -> None:
    """Plan, run the missing units (resumably, one progress bar), then draw the figures and
    rebuild the tables, claims, pages and site of the targets."""
    import time

    from joblib import effective_n_jobs

    from afr_cli.config.cluster_file import load_cluster_file
    from afr_cli.engine.messages import shell_line
    from afr_cli.engine.runner import RunOptions
    from afr_cli.engine.shared_work import speedups_for
    from afr_cli.reproduction.checks import check_root
    from afr_cli.reproduction.pipeline import (
        build_reports,
        draw_outputs,
        plan,
        render_plan,
        resolve_targets,
        run_plan,
        times_section,
        times_table,
        write_times,
    )

    speedups = speedups_for(trees)
    # every option checked before any target is read; an interrupt names this command to resume
    options = RunOptions(
        jobs=jobs,
        backend=backend,
        scheduler=scheduler,
        progress=not quiet,
        speedups=speedups,
        resume=given_command(ctx),
        cluster=load_cluster_file(cluster) if cluster is not None else None,
    )
    chosen = [d.strip() for d in datasets.split(",") if d.strip()] if datasets is not None else None
    if chosen is not None and not chosen:
        raise AfrInputError("--datasets: empty; a comma-separated list of dataset names")
    root = check_root(root_option, writing=not plan_only)  # before any target: nothing is made yet
    chosen_targets = resolve_targets(list(targets or []), every)
    planned = plan(chosen_targets, root, reps, chosen, probe=plan_only)  # every input error before anything runs
    workers = effective_n_jobs(jobs) if backend == "loky" else 1
    if options.cluster is not None:  # the batch jobs' worker processes
        workers = options.cluster.max_jobs * options.cluster.cores
    typer.echo(render_plan(planned, root, workers))
    if plan_only:
        if any(p.missing for p in planned):
            typer.echo(f"to run it: {shell_line(given_command(ctx, leave_out=('plan_only',)))}")
        return
    times = run_plan(planned, options, echo=typer.echo)
    started = time.perf_counter()
    failed = draw_outputs(chosen_targets, root, reps, echo=typer.echo, datasets=chosen)
    times.append(("figures and extra tables (outputs)", time.perf_counter() - started))
    started = time.perf_counter()
    try:
        written = build_reports(root, html=not no_site)
    except OSError as err:
        raise AfrInputError(f"{err.filename}: cannot write the report ({err.strerror})") from None
    times.append(("tables, claims, pages, site (report build)", time.perf_counter() - started))
    typer.echo(f"report build: {len(written)} files written under {root} and the papers' pages")

    typer.echo(times_table(times, workers))  # the terminal never shows the README block's markup
    readme = root / "README.md"
    if every and readme.is_file():
        write_times(readme, times_section(times, workers, "afr " + " ".join(sys.argv[1:])))
        typer.echo(f"wrote the wall times into {readme}")
    if failed:
        typer.echo(f"error: {len(failed)} output(s) failed; first: {failed[0]}", err=True)
        raise typer.Exit(1)
