"""``afr plot``: figures from a results store (the SAT-RF paper's Figures 1-4 surfaces, learning curves)."""

from __future__ import annotations

from pathlib import Path

import typer

from afr_cli.commands.options import reps_option
from afr_cli.errors import AfrInputError

HELP = (
    "Figures: score surfaces over two hyperparameters and metric curves over the "
    "training fraction (from a store), attention weights over the iterations "
    "(refit on one split)."
)


def _check_png(out: Path) -> None:
    """Refuse an ``--out`` that is not a .png before any work is done (nothing is written)."""
    if out.suffix.lower() != ".png":
        raise AfrInputError(f"--out: {out} must name a .png file")


def _save(draw, out: Path) -> None:
    """Draw the figure (matplotlib, or a one-line error without it) and write it to ``out``,
    creating its directory; say where the file went, and which directory was created."""
    from afr_cli.errors import require

    require("matplotlib", "afr plot").use("Agg")
    fig = draw()
    created = not out.parent.exists()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=120)
    except OSError as err:
        raise AfrInputError(f"--out: {err.filename or out}: cannot write the figure ({err.strerror})") from None
    typer.echo(f"wrote {out.resolve()}" + (f" (created the directory {out.parent.resolve()})" if created else ""))


def surface(
    results: Path = typer.Option(..., "--results", help="a results store directory, e.g. results/satrf_surfaces"),
    dataset: str = typer.Option(..., "--dataset", help="a dataset of the store, e.g. Sparse"),
    model: list[str] = typer.Option(
        ...,
        "--model",
        help="a model id of the store, e.g. sat-rf-yx-tau-eps; repeat --model/--x/--y for panels side by side",
    ),
    x: list[str] = typer.Option(..., "--x", help="hyperparameter across (columns), e.g. tau; one per --model"),
    y: list[str] = typer.Option(..., "--y", help="hyperparameter up (rows), e.g. eps; one per --model"),
    out: Path = typer.Option(..., "--out", help="the PNG file to write"),
    metric: str = typer.Option("r2", "--metric", help="r2 or mae"),
    score: str = typer.Option("test", "--score", help="test (80/20 split) or cv (mean inner CV)"),
    base: str | None = typer.Option(None, "--base", help="base id (RF, ERT, ...) when the store has several"),
) -> None:
    """Heatmap of the mean (over reps) score of a model as a function of two hyperparameters."""
    from afr_cli.figures import plots
    from afr_cli.store import STORE_FILE, has_results, load_grid
    from afr_cli.store.discover import stores_under

    if metric not in plots.METRICS:
        raise AfrInputError(f"--metric: {metric!r} is not allowed; allowed: {', '.join(plots.METRICS)}")
    if score not in plots.SCORES:
        raise AfrInputError(f"--score: {score!r} is not allowed; allowed: {', '.join(plots.SCORES)}")
    _check_png(out)
    if not has_results(results):
        stores = [str(d) for d in stores_under()]
        raise AfrInputError(
            f"--results: {results} is not a results store (no {STORE_FILE} or export); "
            f"stores under ./results: {', '.join(stores) or 'none'}"
        )
    if not len(model) == len(x) == len(y):
        raise AfrInputError(
            f"--model/--x/--y: give one --x and one --y per --model "
            f"(got {len(model)} --model, {len(x)} --x, {len(y)} --y)"
        )
    grid = load_grid(results)
    if f"{score}_{metric}" not in grid:
        raise AfrInputError(
            f"--score: {results}'s export holds no {score}_{metric} grid scores (exported "
            f"without --grid-cv); use --score test, or rebuild the store with afr run"
        )
    panels = [plots.surface_table(grid, dataset, m, px, py, metric, score, base) for m, px, py in zip(model, x, y)]
    for s in panels:
        if not s.table.notna().to_numpy().any():
            raise AfrInputError(f"{s.model} on {dataset}: every {s.column} value is missing (failed solves)")

    _save(lambda: plots.surface_figure(*panels), out)
    for s in panels:
        bx, by, best = s.best()
        fixed = ", ".join(f"{k}={v if isinstance(v, str) else format(v, 'g')}" for k, v in s.fixed.items()) or "none"
        typer.echo(
            f"  {s.dataset} {s.model} on {s.base}, mean {s.column} over {s.reps} reps, "
            f"{len(s.table.index)} {s.y} x {len(s.table.columns)} {s.x} values (fixed: {fixed}); "
            f"best {best:.4g} at {s.x}={bx:g}, {s.y}={by:g}"
        )


def weights(
    config: Path = typer.Option(..., "--config", help="an experiment config, e.g. configs/agboost_dt.yaml"),
    dataset: str = typer.Option(..., "--dataset", help="a dataset of the config, e.g. Friedman1"),
    out: Path = typer.Option(..., "--out", help="the PNG file to write"),
    model: str = typer.Option("agboost", "--model", help="a model id of the config whose family has softmax attention"),
    sweep: str = typer.Option("delta", "--sweep", help="design parameter whose grid values give the lines"),
    at: list[str] = typer.Option([], "--at", help="NAME=VALUE for the model's other parameters, e.g. eps=0.5"),
    rep: int = typer.Option(0, "--rep", help="the repetition whose split is refit"),
    base: str | None = typer.Option(None, "--base", help="base id when the config has several"),
) -> None:
    """Trained w_t over the iterations and the mean softmax attention over t, per swept value."""
    from afr_cli.config.experiment import load_experiment
    from afr_cli.figures import plots

    _check_png(out)
    fixed = {}
    for item in at:
        name, sep, text = item.partition("=")
        try:
            fixed[name.strip()] = float(text)
        except ValueError:
            sep = ""
        if not sep:
            raise AfrInputError(f"--at {item!r}: expected NAME=NUMBER, e.g. eps=0.5")
    curves = plots.weight_curves(load_experiment(config), model, dataset, rep, sweep, fixed, base)
    _save(lambda: plots.weights_figure(curves), out)
    for value, w, a in zip(curves.values, curves.weights, curves.attention):
        typer.echo(
            f"  {curves.sweep}={value:g}: w_t max {w.max():.3g} at t={int(w.argmax()) + 1}, "
            f"mass on the first 10% of iterations {w[: max(1, len(w) // 10)].sum():.3f}; "
            f"attention max {a.max():.3g} at t={int(a.argmax()) + 1}"
        )


def curve(
    results: Path = typer.Option(..., "--results", help="a results store with protocol.train_fractions"),
    dataset: str = typer.Option(..., "--dataset", help="a dataset of the store, e.g. Diabetes"),
    model: list[str] = typer.Option(
        ..., "--model", help="a model id; repeat; the first is the reference, drawn dash-dot, the others solid"
    ),
    out: Path = typer.Option(..., "--out", help="the PNG file to write"),
    metric: str = typer.Option("rmse", "--metric", help="rmse, mae or r2"),
    noise_eta: float = typer.Option(0.0, "--noise-eta", help="the noise level to draw (a value of the store)"),
    selection: str = typer.Option(
        "stored",
        "--selection",
        help="stored (the run's selection) or best-test (grid point with the best mean test score, labelled)",
    ),
    base: str | None = typer.Option(None, "--base", help="base id when the store has several"),
    reps: int | None = reps_option("use only repetitions 0..N-1"),
) -> None:
    """Mean metric against the training fraction, bands of +- one std over repetitions."""
    from afr_cli.commands.table import _load
    from afr_cli.figures import curves

    _check_png(out)
    results_frame = _load([results], selection, reps)  # best-test over the repetitions shown
    table = curves.curve_table(results_frame, dataset, model, metric, noise_eta, base)
    fig = curves.curve_figure(table)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    typer.echo(f"wrote {out}")
    wide = table.table.pivot(index="train_fraction", columns="model", values="mean")[list(table.models)]
    typer.echo(
        f"  mean {metric} over reps ({table.dataset}, {table.base}, noise eta {noise_eta:g}, "
        f"selection {table.selection}):"
    )
    typer.echo(wide.to_string(float_format=lambda v: f"{v:.3f}"))
