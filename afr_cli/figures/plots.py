"""Figures: score surfaces from a results store, and attention weights refit on one split.

``surface_table`` is pure pandas: the grid rows (``store.load_grid``) of one dataset, base and
model, the mean over repetitions of one score column (test_r2, cv_mae, ...) at every value pair
of two hyperparameters. Any other hyperparameter of the model must be constant over those rows:
averaging a surface over a third varying parameter would silently mix models, so it is an error
naming the parameter and its values. ``surface_figure`` draws the table as an annotated heatmap
on a bare Agg figure (no pyplot, no GUI backend); matplotlib is imported only there. Its colours
are those of the numbers as the cells print them (``as_printed``), and a surface whose cells all
print the same number is drawn in one colour and called flat in its title.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from afr_cli.errors import AfrInputError

METRICS = ("r2", "mae")
SCORES = ("test", "cv")
_METRIC_LABEL = {"r2": "R²", "mae": "MAE"}
_SCORE_LABEL = {"test": "test", "cv": "inner-CV"}


@dataclass(frozen=True)
class Surface:
    """Mean score per (y value, x value): rows are y values, columns x values, both ascending."""

    table: pd.DataFrame
    dataset: str
    model: str
    base: str
    x: str
    y: str
    metric: str
    score: str
    reps: int
    fixed: dict[str, float | str] = field(default_factory=dict)

    @property
    def column(self) -> str:
        return f"{self.score}_{self.metric}"

    def best(self) -> tuple[float, float, float]:
        """(x value, y value, mean score) of the best cell: highest R², lowest MAE."""
        values = self.table.to_numpy(dtype=float)
        flat = np.nanargmax(values) if self.metric == "r2" else np.nanargmin(values)
        i, j = np.unravel_index(flat, values.shape)
        return float(self.table.columns[j]), float(self.table.index[i]), float(values[i, j])


def _fmt(value: float | str) -> str:
    return value if isinstance(value, str) else f"{value:g}"


def choose_base(bases: list[str], base: str | None, what: str) -> str:
    """The ``--base`` a figure of ``what`` (a dataset, a model on it) is drawn for: the only one when
    omitted; a missing choice or an unknown base is a one-line AfrInputError listing the bases."""
    if base is None:
        if len(bases) > 1:
            raise AfrInputError(f"--base: {what} has several bases; choose one of {', '.join(bases)}")
        return bases[0]
    if base not in bases:
        raise AfrInputError(f"--base: {base!r} is not a base of {what}; allowed: {', '.join(bases)}")
    return base


def surface_table(
    grid: pd.DataFrame,
    dataset: str,
    model: str,
    x: str,
    y: str,
    metric: str = "r2",
    score: str = "test",
    base: str | None = None,
) -> Surface:
    """The mean (over reps) ``{score}_{metric}`` of ``model`` as a function of params ``x`` and ``y``.

    Every problem is a one-line AfrInputError naming what is allowed: an unknown dataset, base,
    model or parameter, x == y, or a third parameter that varies over the model's grid.
    """
    if metric not in METRICS:
        raise AfrInputError(f"--metric: {metric!r} is not allowed; allowed: {', '.join(METRICS)}")
    if score not in SCORES:
        raise AfrInputError(f"--score: {score!r} is not allowed; allowed: {', '.join(SCORES)}")
    if grid.empty:
        raise AfrInputError("the results store has no grid rows yet; run the experiment first")
    datasets = sorted(grid["dataset"].unique())
    if dataset not in datasets:
        raise AfrInputError(f"--dataset: {dataset!r} is not in the store; allowed: {', '.join(datasets)}")
    rows = grid[grid["dataset"] == dataset]
    models = sorted(rows["model"].unique())
    if model not in models:
        raise AfrInputError(f"--model: {model!r} has no grid rows for {dataset}; allowed: {', '.join(models)}")
    rows = rows[rows["model"] == model]
    base = choose_base(sorted(rows["base"].unique()), base, f"{model} on {dataset}")
    rows = rows[rows["base"] == base]

    points = pd.DataFrame(list(rows["point"]), index=rows.index)
    params = list(points.columns)
    for flag, name in (("--x", x), ("--y", y)):
        if name not in params:
            allowed = ", ".join(params) if params else "none (this model has no hyperparameters)"
            raise AfrInputError(f"{flag}: {name!r} is not a hyperparameter of {model}; allowed: {allowed}")
    if x == y:
        raise AfrInputError(f"--x and --y: both are {x!r}; choose two different hyperparameters of {model}")
    fixed, varying = {}, {}
    for name in params:
        if name in (x, y):
            continue
        values = sorted(points[name].dropna().unique())
        if len(values) == 1:
            # a named choice (a family's reading) stays a name; every other value is a number
            fixed[name] = values[0] if isinstance(values[0], str) else float(values[0])
        else:
            varying[name] = values
    if varying:
        what = "; ".join(f"{n} ({', '.join(_fmt(v) for v in vals)})" for n, vals in varying.items())
        swept = [n for n in params if points[n].nunique() > 1]
        raise AfrInputError(
            f"--x {x} --y {y}: {model} also varies {what}; a surface cannot average over "
            f"it: choose --x and --y among its varying parameters {', '.join(swept)}"
        )

    column = f"{score}_{metric}"
    frame = pd.DataFrame(
        {"x": points[x].astype(float), "y": points[y].astype(float), "value": rows[column].astype(float)}
    )
    table = frame.groupby(["y", "x"])["value"].mean().unstack("x").sort_index().sort_index(axis=1)
    table.index.name, table.columns.name = y, x
    return Surface(table, dataset, model, base, x, y, metric, score, int(rows["rep"].nunique()), fixed)


def surface_title(s: Surface) -> str:
    fixed = ", ".join(f"{k} = {_fmt(v)}" for k, v in s.fixed.items())
    return (
        f"{s.dataset}: {s.model} on {s.base}\n"
        f"mean {_SCORE_LABEL[s.score]} {_METRIC_LABEL[s.metric]} over {s.reps} reps"
        + (f" ({fixed})" if fixed else "")
        + "; red box: best"
    )


def surface_figure(*surfaces: Surface):
    """Annotated heatmaps side by side, one panel per surface (x across, y up), on an Agg canvas;
    each panel's best cell outlined. Two panels make one of the SAT-RF paper's Figures 1-4."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    width = sum(1.1 * s.table.shape[1] + 3.2 for s in surfaces)
    height = max(0.8 * s.table.shape[0] + 2.4 for s in surfaces)
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    for k, s in enumerate(surfaces):
        _draw_panel(fig, fig.add_subplot(1, len(surfaces), k + 1), s)
    return fig


def cell_text(value: float) -> str:
    """A heatmap cell as it is printed: three decimals, four significant digits from 100 up."""
    if not np.isfinite(value):
        return "n/a"
    return f"{value:.3f}" if abs(value) < 100 else f"{value:.4g}"


def as_printed(values: np.ndarray) -> np.ndarray:
    """``values`` rounded to the precision their cells print (NaN kept), so the colours follow the
    printed numbers: cells that read the same get the same colour, and no colour shows a
    difference the numbers do not (a colour scale over 0.41280-0.41310 where every cell reads 0.413
    would paint noise)."""
    return np.array([[float(cell_text(v)) if np.isfinite(v) else np.nan for v in row] for row in values])


def flat_note(s: Surface) -> str | None:
    """'flat: every cell reads 0.413' when every cell of the surface prints the same number, else None."""
    shown = as_printed(s.table.to_numpy(dtype=float))
    finite = shown[np.isfinite(shown)]
    if finite.size and finite.min() == finite.max():
        return f"flat: every cell reads {cell_text(float(finite[0]))}"
    return None


def _draw_panel(fig, ax, s: Surface) -> None:
    from matplotlib.patches import Rectangle

    values = s.table.to_numpy(dtype=float)
    shown = as_printed(values)  # colours at the printed precision (as_printed)
    ny, nx = values.shape
    cmap = "viridis" if s.metric == "r2" else "viridis_r"  # brighter is better for both metrics
    finite = shown[np.isfinite(shown)]
    low, high = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
    label = f"mean {_SCORE_LABEL[s.score]} {_METRIC_LABEL[s.metric]}"
    flat = flat_note(s)
    if flat:  # one printed value: one colour, no scale, and the title says the surface is flat
        image = ax.imshow(
            np.where(np.isfinite(shown), 0.5, np.nan), origin="lower", aspect="auto", cmap=cmap, vmin=0, vmax=1
        )
    else:
        image = ax.imshow(shown, origin="lower", aspect="auto", cmap=cmap, vmin=low, vmax=high)
        levels = np.unique(finite)
        ticks = levels if len(levels) <= 6 else np.unique([float(cell_text(v)) for v in np.linspace(low, high, 5)])
        bar = fig.colorbar(image, ax=ax, label=label, ticks=ticks)
        bar.ax.set_yticklabels([cell_text(v) for v in ticks])
    ax.set_xticks(range(nx), [_fmt(v) for v in s.table.columns])
    ax.set_yticks(range(ny), [_fmt(v) for v in s.table.index])
    ax.set_xlabel(s.x)
    ax.set_ylabel(s.y)
    ax.set_title(
        surface_title(s) + (f"\n{flat}; the red box marks the best unrounded mean" if flat else ""), fontsize=10
    )
    for i in range(ny):
        for j in range(nx):
            v = shown[i, j]
            rel = 0.5 if high == low or not np.isfinite(v) else (v - low) / (high - low)
            bright = rel > 0.6 if s.metric == "r2" else rel < 0.4
            ax.text(
                j,
                i,
                cell_text(values[i, j]),
                ha="center",
                va="center",
                fontsize=8,
                color="black" if bright else "white",
            )
    if np.isfinite(values).any():
        bx, by, _ = s.best()
        j, i = list(s.table.columns).index(bx), list(s.table.index).index(by)
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2))


@dataclass(frozen=True)
class WeightCurves:
    """Trained weights w_t and the mean (over the test rows) softmax attention over t, one row
    per value of the swept design parameter, on one repetition's refit (the 80 % / 20 % split)."""

    dataset: str
    model: str
    base: str
    rep: int
    sweep: str
    values: tuple[float, ...]
    fixed: dict[str, float]
    weights: np.ndarray  # (len(values), T)
    attention: np.ndarray  # (len(values), T)


def weight_curves(
    exp, model_id: str, dataset: str, rep: int, sweep: str, fixed: dict[str, float], base_id: str | None = None
) -> WeightCurves:
    """Refit one repetition as ``afr run`` does (split, scaling, ensemble seed) and train ``model_id``
    at every grid value of ``sweep`` with the other parameters at ``fixed`` (required where the
    model's grid has several values). The family must expose ``softmax_attention(feats)`` and a
    ``w_`` fitted attribute (e.g. agboost)."""
    from afr_cli.engine.experiment_data import load_one
    from afr_cli.engine.protocol import refit_final_stage
    from afr_cli.ensembles.leaf_statistics import LeafStatistics
    from afr_cli.models import get_family
    from afr_cli.solvers.solve import solve

    models = {m.id: m for m in exp.models if not m.best_of}
    if model_id not in models:
        raise AfrInputError(f"--model: {model_id!r} is not a model of {exp.source}; allowed: {', '.join(models)}")
    model = models[model_id]
    family = get_family(model.family)
    if not hasattr(family, "softmax_attention"):
        raise AfrInputError(f"--model: {model_id} ({family.name}) has no softmax attention over trees to plot")
    if sweep not in family.design_names():
        raise AfrInputError(
            f"--sweep: {sweep!r} is not a design parameter of {family.name}; "
            f"allowed: {', '.join(family.design_names()) or 'none'}"
        )
    values = {}
    for name, grid in model.grid.items():
        if name == sweep:
            continue
        if name in fixed:
            values[name] = family.param(name).check(fixed[name], f"--at {name}")
        elif len(grid) == 1:
            values[name] = grid[0]
        else:
            raise AfrInputError(
                f"--at: {model_id} has several values of {name} ({', '.join(_fmt(v) for v in grid)}); "
                f"choose one with --at {name}=VALUE"
            )
    unknown = sorted(set(fixed) - set(model.grid))
    if unknown:
        raise AfrInputError(f"--at: {unknown[0]!r} is not a parameter of {model_id}; allowed: {', '.join(model.grid)}")
    bases = {b.id: b for b in exp.bases}
    base = bases.get(base_id or exp.bases[0].id)
    if base is None:
        raise AfrInputError(f"--base: {base_id!r} is not a base of {exp.source}; allowed: {', '.join(bases)}")
    if dataset not in exp.datasets:
        raise AfrInputError(f"--dataset: {dataset!r} is not in {exp.source}; allowed: {', '.join(exp.datasets)}")
    if not 0 <= rep < exp.protocol.reps:
        raise AfrInputError(f"--rep: {rep} is not allowed; an integer in [0, {exp.protocol.reps - 1}]")

    X, y = load_one(exp, dataset)
    stage = refit_final_stage(exp, dataset, base, rep, X, y)
    stats = LeafStatistics(stage.ensemble, stage.X_train, stage.y_train)
    train_rows, test_rows = stats.rows(), stats.rows(stage.X_test)
    mixing = {k: v for k, v in values.items() if k not in family.design_names()}
    weights, attention = [], []
    for value in model.grid[sweep]:
        design = {**{k: v for k, v in values.items() if k in family.design_names()}, sweep: value}
        feats = family.features(train_rows, design)
        problem = family.training_problem(feats, stage.y_train, mixing)
        theta = None if problem is None else solve(problem, loss=model.loss, solver=model.solver).theta
        weights.append(family.fitted_attributes(feats, mixing, theta)["w_"])
        attention.append(family.softmax_attention(family.features(test_rows, design)).mean(axis=0))
    return WeightCurves(
        dataset, model_id, base.id, rep, sweep, tuple(model.grid[sweep]), mixing, np.array(weights), np.array(attention)
    )


def weights_figure(c: WeightCurves):
    """Two panels over the iterations t = 1..T: trained w_t, and the mean softmax attention D_t,
    one line per value of the swept parameter; a bare Agg figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4), layout="constrained")
    FigureCanvasAgg(fig)
    t = np.arange(1, c.weights.shape[1] + 1)
    fixed = ", ".join(f"{k} = {_fmt(v)}" for k, v in c.fixed.items())
    for k, (data, label) in enumerate(
        ((c.weights, "trained weight w_t"), (c.attention, "mean softmax attention over the test rows"))
    ):
        ax = fig.add_subplot(1, 2, k + 1)
        for value, row in zip(c.values, data):
            ax.plot(t, row, label=f"{c.sweep} = {_fmt(value)}", linewidth=1.2)
        ax.axhline(1.0 / len(t), color="grey", linestyle=":", linewidth=1, label="1/T")
        ax.set_xlabel("iteration t")
        ax.set_ylabel(label)
        ax.legend(fontsize=8)
    fig.suptitle(
        f"{c.dataset}: {c.model} on {c.base}, repetition {c.rep}" + (f" ({fixed})" if fixed else ""), fontsize=10
    )
    return fig
