"""``afr fidelity``: protocol settings identified from the papers' baseline columns only."""

from __future__ import annotations

from pathlib import Path

import typer

from afr_cli.commands.options import jobs_option
from afr_cli.core.paths import PROJECT_ROOT

DEFAULT_STUDY = PROJECT_ROOT / "configs" / "fidelity" / "preprocessing.yaml"
DEFAULT_OUT = PROJECT_ROOT / "results" / "fidelity"
HELP = "Protocol settings identified from the papers' baselines and texts."


def preprocessing(
    study: Path = typer.Option(
        DEFAULT_STUDY,
        "--study",
        help="study file: forests, candidates, published cells",
        show_default="configs/fidelity/preprocessing.yaml (in the project)",
    ),
    out: Path = typer.Option(
        DEFAULT_OUT,
        "--out",
        help="directory for <name>.md / .csv / _scores.csv",
        show_default="results/fidelity (in the project)",
    ),
    name: str = typer.Option("preprocessing", "--name", help="file stem of the outputs"),
    jobs: int = jobs_option("parallel workers"),
) -> None:
    """Fit the plain forests under each candidate preprocessing and count the papers' baseline
    cells each reproduces as printed (no attention model takes part)."""
    from afr_cli.studies.preprocessing import (
        decide,
        forest_scores,
        load_study,
        match_cells,
        published_cells,
        write_report,
    )

    spec = load_study(study)
    scores = forest_scores(spec, jobs=jobs)
    shown = study.relative_to(PROJECT_ROOT) if study.is_relative_to(PROJECT_ROOT) else study
    command = f"afr fidelity preprocessing --study {shown}" + ("" if name == "preprocessing" else f" --name {name}")
    for path in write_report(spec, scores, out, name, command):
        typer.echo(f"wrote {path}")
    order = [c.name for c in spec.candidates]
    typer.echo(decide(match_cells(scores, published_cells(spec)), order).text)
