"""``afr bench slurm``: afr's own CPU per unit on a cluster (receiving and storing a result, a
task's round trip through the scheduler) and a run's units per minute with loky and in SLURM jobs,
each run's rows checked against ``--jobs 1`` (afr_cli/benchmarks/slurm_units.py). A module of its
own beside ``bench``; it checks, prints and records as the other benchmarks do."""

from __future__ import annotations

from pathlib import Path

import typer

from afr_cli.commands.bench import NOTE_HELP, RECORD_HELP, _checked, _emit, _record, chosen_datasets, worker_counts
from afr_cli.commands.options import at_least, reps_option


def slurm_bench(
    config: Path = typer.Argument(Path("configs/abrf_rf.yaml"), help="experiment YAML whose units are measured"),
    cluster: Path = typer.Option(
        ..., "--cluster", metavar="FILE", help="cluster file of the SLURM jobs (scheduler: slurm)"
    ),
    datasets: str = typer.Option("Yacht", "--datasets", help="comma-separated datasets of the config"),
    reps: int = reps_option("repetitions 0..reps-1", default=8),
    workers: str = typer.Option(
        "1,2", "--workers", help="comma-separated counts of loky workers and of one-core SLURM jobs"
    ),
    tasks: int = typer.Option(200, "--tasks", help="empty tasks timed through the scheduler", callback=at_least(1)),
    root: Path = typer.Option(
        Path("results"), "--root", help="the stores whose mean unit CPU sets the jobs afr keeps busy"
    ),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
    note: str = typer.Option("", "--note", help=NOTE_HELP),
) -> None:
    """afr's CPU per unit on a cluster (a result received and stored, a task's round trip through
    the scheduler), how many one-core jobs that keeps busy on the stores under --root, and units
    per minute of a whole run with loky and in SLURM jobs, rows checked against --jobs 1."""
    from afr_cli.config.cluster_file import load_cluster_file
    from afr_cli.config.experiment import load_experiment
    from afr_cli.errors import AfrInputError

    _checked(fmt, "AUTO", 20, 1)
    counts = worker_counts(workers, "1,2")
    spec = load_cluster_file(cluster)
    if spec.scheduler != "slurm":
        raise AfrInputError(f"{cluster}: scheduler: {spec.scheduler!r} is not allowed here; allowed: slurm")
    chosen = chosen_datasets(datasets, list(load_experiment(config).datasets))
    from afr_cli.benchmarks.slurm_units import run

    r = run(str(config), chosen, reps, spec, counts, tasks, root)
    _emit(r, fmt, lines(r))
    if record:
        _record("slurm", (config.stem, *chosen, f"reps{reps}"), r, note=note)


def lines(r: dict) -> list[str]:
    """The terminal's account of a result."""
    from tabulate import tabulate

    store, trip, scale, repro = r["receive_and_store"], r["round_trip"], r["scaling"], r["reproduction"]
    return [
        f"{Path(r['config']).stem} on {', '.join(r['datasets'])}, repetitions 0..{r['reps'] - 1}; load average "
        f"{r['load_average'][0]:.1f} before, {r['load_average'][1]:.1f} after",
        f"afr's process per unit: receive and store {store['cpu_ms_per_unit']} ms CPU ({store['wall_ms_per_unit']} ms "
        f"wall, {store['units']} units); a task's round trip through the scheduler {trip['cpu_ms_per_task']} ms CPU "
        f"({trip['tasks']} empty tasks); store wall + round trip: {r['afr_ms_per_unit']} ms",
        f"the stores' mean unit: {repro['mean_cpu_s']} s CPU ({repro['units']} units): afr keeps about "
        f"{r['jobs_kept_busy']} one-core jobs busy",
        f"{scale['units']} units per run:",
        tabulate(
            [[x["where"], x["workers"], x["wall_s"], x["units_per_min"], x["identical"]] for x in scale["rows"]],
            headers=["where", "workers or jobs", "wall s", "units per minute", "rows = --jobs 1"],
        ),
    ]
