"""``afr bench dask``: a unit's CPU on a Dask worker against a loky worker and afr's own process,
and a run's units per minute on each count of local Dask workers with its rows checked against
``--jobs 1`` (afr_cli/benchmarks/dask_units.py). A module of its own beside ``bench`` (which is
long already); it checks, prints and records as the other benchmarks do, through bench's helpers."""

from __future__ import annotations

from pathlib import Path

import typer

from afr_cli.commands.bench import NOTE_HELP, RECORD_HELP, _checked, _emit, _record, chosen_datasets, worker_counts
from afr_cli.commands.options import at_least, reps_option
from afr_cli.errors import AfrInputError


def dask_bench(
    config: Path = typer.Argument(Path("configs/abrf_rf.yaml"), help="experiment YAML whose units are measured"),
    datasets: str = typer.Option("Yacht,Concrete", "--datasets", help="comma-separated datasets of the config"),
    reps: int = reps_option("repetitions 0..reps-1", default=4),
    workers: str = typer.Option("1,2", "--workers", help="comma-separated counts of local Dask workers"),
    rounds: int = typer.Option(2, "--rounds", help="rounds of every task in every place", callback=at_least(1)),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
    note: str = typer.Option("", "--note", help=NOTE_HELP),
) -> None:
    """A unit's CPU on a Dask worker against a loky worker and afr's own process (the same
    tasks, one at a time, in turn), and units per minute of a whole run on each count of local Dask
    workers that --workers names, each run's rows checked cell for cell against --jobs 1."""
    from afr_cli.config.experiment import load_experiment

    _checked(fmt, "AUTO", 20, 1)
    counts = worker_counts(workers, "1,2,4")
    chosen = chosen_datasets(datasets, list(load_experiment(config).datasets))
    try:
        import distributed  # noqa: F401  (the measurement starts local clusters)
    except ImportError:
        raise AfrInputError("afr bench dask needs the dask extra: pip install 'afr[dask]'") from None
    from afr_cli.benchmarks.dask_units import run

    r = run(str(config), chosen, reps, counts, rounds)
    _emit(r, fmt, lines(r))
    if record:
        _record("dask", (config.stem, *chosen, f"reps{reps}"), r, note=note)


def lines(r: dict) -> list[str]:
    """The terminal's account of a result: CPU per task by place, then units per minute."""
    from tabulate import tabulate

    cpu, scale = r["unit_cpu"], r["scaling"]
    return [
        f"{Path(r['config']).stem} on {', '.join(r['datasets'])}, repetitions 0..{r['reps'] - 1}: "
        f"{cpu['tasks']} tasks x {cpu['rounds']} round{'s' * (cpu['rounds'] != 1)} in every place; load average "
        f"{r['load_average'][0]:.1f} before, {r['load_average'][1]:.1f} after",
        tabulate(
            [
                [
                    p["place"],
                    p["median_cpu_s"],
                    p["median_thread_cpu_s"],
                    f"{p['ratio_to_loky']:.2f}x",
                    p["total_cpu_s"],
                ]
                for p in cpu["places"]
            ],
            headers=["where", "CPU s per task (median)", "its thread's CPU s", "x loky (paired)", "CPU s in all"],
        ),
        f"{scale['units']} units per run:",
        tabulate(
            [[x["where"], x["workers"], x["wall_s"], x["units_per_min"], x["identical"]] for x in scale["rows"]],
            headers=["where", "workers", "wall s", "units per minute", "rows = --jobs 1"],
        ),
    ]
