"""Learning curves from a results store: a metric against the training fraction, one line per model.

``curve_table`` is pure pandas: per model and training fraction, the mean over repetitions of a
metric and its spread (mean +- one standard deviation over repetitions), at one noise level.
``curve_figure`` draws it on a bare Agg figure: the first model is the reference, dash-dot, the
others solid (the robust-RF paper's Figures 1-2), the spread as a dotted outline in each line's
colour, unfilled, so overlapping bands stay readable. The models after the first
differ in line style, width and marker too, so a line that coincides with another stays visible
under it, and the title names every pair of models whose means print the same (``coincide``).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import pandas as pd

from afr_cli.errors import AfrInputError
from afr_cli.figures.plots import choose_base

CURVE_METRICS = ("rmse", "mae", "r2")
_LABEL = {"rmse": "RMSE", "mae": "MAE", "r2": "R²"}


@dataclass(frozen=True)
class Curves:
    """Rows (model, train_fraction, mean, std, reps) of one dataset, base and noise level."""

    table: pd.DataFrame
    dataset: str
    base: str
    metric: str
    noise_eta: float
    models: tuple[str, ...]
    selection: str


def curve_table(
    results: pd.DataFrame,
    dataset: str,
    models: list[str],
    metric: str = "rmse",
    noise_eta: float = 0.0,
    base: str | None = None,
) -> Curves:
    """Mean and std over reps of ``metric`` per model and training fraction; every problem is a
    one-line AfrInputError naming what is allowed."""
    if metric not in CURVE_METRICS:
        raise AfrInputError(f"--metric: {metric!r} is not allowed; allowed: {', '.join(CURVE_METRICS)}")
    if "train_fraction" not in results.columns:
        raise AfrInputError("the store has no train_fraction column; run a config with protocol.train_fractions")
    datasets = sorted(results["dataset"].unique())
    if dataset not in datasets:
        raise AfrInputError(f"--dataset: {dataset!r} is not in the store; allowed: {', '.join(datasets)}")
    rows = results[results["dataset"] == dataset]
    base = choose_base(sorted(rows["base"].unique()), base, dataset)
    rows = rows[rows["base"] == base]
    etas = sorted(rows["noise_eta"].unique())
    if not any(abs(e - noise_eta) < 1e-9 for e in etas):
        raise AfrInputError(
            f"--noise-eta: {noise_eta:g} is not in the store; allowed: {', '.join(f'{e:g}' for e in etas)}"
        )
    rows = rows[(rows["noise_eta"] - noise_eta).abs() < 1e-9]
    known = list(dict.fromkeys(rows["model"]))
    for m in models:
        if m not in known:
            raise AfrInputError(f"--model: {m!r} is not in the store for {dataset}; allowed: {', '.join(known)}")
    rows = rows[rows["model"].isin(models)]
    table = rows.groupby(["model", "train_fraction"])[metric].agg(mean="mean", std="std", reps="count").reset_index()
    selection = ", ".join(sorted(rows["selection"].unique())) if "selection" in rows else "stored"
    return Curves(table, dataset, base, metric, noise_eta, tuple(models), selection)


# Per model, in order: line style, marker, marker size, marker face ("none": hollow), line width. A
# later line is drawn thinner, dashed and over the one before it, with a smaller marker inside the
# earlier one's hollow marker: where two curves coincide both stay visible.
_STYLES = (
    ("-.", "o", 3, None, 1.5),
    ("-", "o", 7, "none", 2.6),
    ("--", "o", 3, None, 1.3),
    (":", "s", 3, None, 1.3),
)
PRINTED_DECIMALS = 3  # Table I prints RMSE to three decimals


def coincide(curves: Curves) -> list[str]:
    """Every pair of models whose mean prints the same (at ``PRINTED_DECIMALS``) at some training
    fraction, e.g. 'robust-rf-a0.2 and robust-rf-a0.05 coincide at 45, 55 %' (or 'at every training
    fraction'); [] when none do."""
    wide = curves.table.pivot(index="train_fraction", columns="model", values="mean").round(PRINTED_DECIMALS)
    out = []
    for k, a in enumerate(curves.models):
        for b in curves.models[k + 1 :]:
            if a not in wide or b not in wide:
                continue
            same = [f"{100 * f:g}" for f, x, y in zip(wide.index, wide[a], wide[b]) if x == y]
            if len(same) == len(wide.index) > 1:
                out.append(f"{a} and {b} coincide at every training fraction")
            elif same:
                out.append(f"{a} and {b} coincide at {', '.join(same)} %")
    return out


def curve_figure(curves: Curves):
    """RMSE (or another metric) against the training fraction in %: the first model dash-dot,
    the second solid, the next dashed and dotted (``_STYLES``), each with +- one std over
    repetitions as a dotted outline; the title names the models that coincide (``coincide``)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for k, model in enumerate(curves.models):
        part = curves.table[curves.table["model"] == model].sort_values("train_fraction")
        x = 100 * part["train_fraction"]
        style, marker, size, face, width = _STYLES[min(k, len(_STYLES) - 1)]
        (line,) = ax.plot(
            x, part["mean"], style, marker=marker, markersize=size, linewidth=width, label=model, zorder=2 + k
        )
        if face is not None:
            line.set_markerfacecolor(face)
        # the band as a dotted outline in the line's colour, unfilled: bands that overlap stay
        # apart as outlines instead of adding up to one opaque mass
        for edge in (part["mean"] - part["std"], part["mean"] + part["std"]):
            ax.fill_between(x, edge, edge, edgecolor=line.get_color(), facecolor="none", linestyle=":", linewidth=1.0)
    reps = int(curves.table["reps"].min()) if len(curves.table) else 0
    noise = "no noise" if curves.noise_eta == 0 else f"test-feature noise eta = {curves.noise_eta:g}"
    ax.set_title(
        f"{curves.dataset} ({curves.base}), {noise}\nmean over {reps} reps, "
        f"dotted: ±1 std over reps; selection: {curves.selection}"
        + "".join(
            "\n" + textwrap.fill(f"{note} (means to {PRINTED_DECIMALS} decimals)", 80) for note in coincide(curves)
        ),
        fontsize=9,
    )
    ax.set_xlabel("training fraction gamma (%)")
    ax.set_ylabel(_LABEL[curves.metric])
    ax.grid(alpha=0.3)
    ax.legend()
    return fig
