"""``afr regress``: run the reduced CI protocol and fail (exit 1) when its numbers regress."""

from __future__ import annotations

import tempfile
from pathlib import Path

import typer

from afr_cli.commands.options import jobs_option
from afr_cli.core.paths import PROJECT_ROOT

DEFAULT_CONFIG = PROJECT_ROOT / "configs" / "regress.yaml"
DEFAULT_GOLDEN = PROJECT_ROOT / "results" / "regress" / "golden.csv"


def regress(
    config: Path = typer.Option(
        DEFAULT_CONFIG,
        "--config",
        show_default=False,
        help="reduced-protocol experiment (default: the project's configs/regress.yaml)",
    ),
    golden: Path = typer.Option(
        DEFAULT_GOLDEN,
        "--golden",
        show_default=False,
        help="golden long-form summary CSV (default: the project's results/regress/golden.csv)",
    ),
    out: Path | None = typer.Option(None, "--out", help="keep the run's store here (default: temporary)"),
    jobs: int = jobs_option("parallel workers"),
    update: bool = typer.Option(False, "--update", help="write the run's summary as the new golden file"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
) -> None:
    """Reduced protocol vs committed golden numbers and the papers' baselines; exit 1 on a regression."""
    from tabulate import tabulate

    from afr_cli.config.experiment import load_experiment
    from afr_cli.engine.runner import RunOptions, run_experiment
    from afr_cli.store import load_results
    from afr_cli.tables import summary_long
    from afr_cli.tables.regress import GOLDEN_COLUMNS, compare, read_golden

    reference = None if update else read_golden(golden)
    with tempfile.TemporaryDirectory(prefix="afr-regress-") as tmp:
        exp = load_experiment(config, results_dir=out or Path(tmp))
        run_experiment(exp, RunOptions(jobs=jobs, progress=not quiet), echo=typer.echo)
        summary = summary_long(load_results(exp.results))
    if update:
        golden.parent.mkdir(parents=True, exist_ok=True)
        summary[GOLDEN_COLUMNS].to_csv(golden, index=False, float_format="%.6f")
        typer.echo(f"wrote {len(summary)} golden values to {golden}")
        return
    forest_model = next(m.id for m in exp.models if m.family == "forest")
    report = compare(summary, reference, forest_model, {b.id: b.kind for b in exp.bases})
    shown = report.table.copy()
    for col in ("reference", "ours", "diff"):
        shown[col] = shown[col].map(lambda v: f"{v:.4f}")
    typer.echo(tabulate(shown.values.tolist(), headers=list(shown.columns), tablefmt="simple"))
    from afr_cli.tables.regress import FAILING

    bad = int(report.table.status.isin(FAILING).sum())
    typer.echo(f"{len(report.table)} checks, {bad} failed (moved beyond tolerance either way, or missing)")
    if report.failed:
        raise typer.Exit(1)
