"""Friedman test and Nemenyi critical-difference diagrams (Demšar 2006) over a table's models,
for ours and for the paper's own numbers, beside the paired tests of ``compare.md``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from afr_cli.papers.knowledge import param_rows
from afr_cli.stats import FriedmanResult, friedman_nemenyi
from afr_cli.tables.format import METRIC_NAMES, METRICS, grid
from afr_cli.tables.paper_compare import base_group, paper_comparison


def table_metric(comparison: pd.DataFrame) -> str:
    """The metric a table's ranking is on: R² when it prints R², else its first error metric."""
    metrics = [m for m in METRICS if m in set(comparison["metric"])]
    return metrics[0]


def friedman_tables(results: pd.DataFrame, spec: str) -> list[tuple[str, str, FriedmanResult, FriedmanResult]]:
    """Per base group of a published table with at least three model columns: (group, metric,
    ours, paper), each a Friedman test over the datasets where every column has a value of ours."""
    comparison = paper_comparison(results, spec)
    comparison = comparison[~comparison["metric"].isin(param_rows())]
    metric = table_metric(comparison)
    part = comparison[comparison["metric"] == metric].assign(group=lambda f: f["model"].map(base_group))
    out = []
    for group, cells in part.groupby("group", sort=False):
        ours = cells.pivot(index="dataset", columns="model", values="ours")
        paper = cells.pivot(index="dataset", columns="model", values="published")
        columns = list(pd.unique(cells["model"]))
        ours, paper = ours[columns].dropna(), paper[columns]
        if len(columns) < 3 or len(ours) < 2:
            continue
        paper = paper.loc[ours.index]
        higher = metric == "r2"
        out.append((group, metric, friedman_nemenyi(ours, higher), friedman_nemenyi(paper, higher)))
    return out


def cd_figure(result: FriedmanResult, title: str):
    """A critical-difference diagram: mean ranks on an axis (1 = best, left), each model's name on
    a leader line, a bar over each group of models within one CD, and the CD itself above."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    k = len(result.models)
    order = sorted(range(k), key=lambda i: result.mean_ranks[i])
    half = (k + 1) // 2
    fig = Figure(figsize=(7.0, 1.6 + 0.3 * half))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.02, 0.02, 0.96, 0.8))
    ax.set_xlim(0.5, k + 0.5)
    ax.set_ylim(-(half + 1.5), 2.0)
    ax.axis("off")
    ax.hlines(0, 1, k, color="black", linewidth=1)
    for r in range(1, k + 1):
        ax.vlines(r, 0, 0.25, color="black", linewidth=1)
        ax.text(r, 0.4, str(r), ha="center", va="bottom", fontsize=8)
    ax.hlines(1.4, 1, 1 + result.cd, color="black", linewidth=1.5)
    ax.text(1 + result.cd / 2, 1.55, f"CD = {result.cd:.2f}", ha="center", va="bottom", fontsize=8)
    for slot, i in enumerate(order):
        rank = result.mean_ranks[i]
        left = slot < half
        depth = -(slot + 1) if left else -(k - slot)
        end = 0.5 if left else k + 0.5
        ax.plot([rank, rank, end], [0, depth, depth], color="black", linewidth=0.8)
        ax.text(end + (0.05 if left else -0.05), depth, f"{result.models[i]} ({rank:.2f})",
                ha="left" if left else "right", va="bottom", fontsize=8)
    for level, clique in enumerate(result.cliques()):
        ranks = [result.mean_ranks[result.models.index(m)] for m in clique]
        ax.hlines(-0.3 - 0.25 * level, min(ranks) - 0.03, max(ranks) + 0.03, color="tab:red", linewidth=2.5)
    fig.suptitle(title, fontsize=9)
    return fig


def save_svg(fig, path: Path) -> None:
    """An SVG with no date and fixed ids, so an unchanged diagram is byte-identical when redrawn."""
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": "afr", "svg.fonttype": "path"}):
        fig.savefig(path, format="svg", metadata={"Date": None})


def _describe(r: FriedmanResult) -> str:
    return (f"χ² = {r.chi2:.2f}, p = {r.p:.3g}; Iman-Davenport F = {r.iman_davenport_f:.2f}, "
            f"p = {r.iman_davenport_p:.3g}; CD = {r.cd:.2f}")


def cd_name(spec: str, group: str, side: str) -> str:
    """File name of one CD diagram: cd-<paper>-<table>[-<base>]-<ours|paper>.svg."""
    return "-".join(filter(None, ("cd", spec.replace(":", "-"), group, side))) + ".svg"


def write_friedman(results: pd.DataFrame, specs, out: Path) -> list[Path]:
    """friedman.md and one CD diagram per (table, base group, ours/paper) into ``out``."""
    blocks, written = [], []
    for spec in specs:
        for group, metric, ours, paper in friedman_tables(results, spec):
            where = f"{spec}{f', {group}' if group else ''}, {METRIC_NAMES.get(metric, metric)}"
            rows = [[m, f"{ours.mean_ranks[i]:.2f}", f"{paper.mean_ranks[paper.models.index(m)]:.2f}"]
                    for i, m in sorted(enumerate(ours.models), key=lambda t: ours.mean_ranks[t[0]])]
            images = []
            for side, result in (("ours", ours), ("paper", paper)):
                path = out / cd_name(spec, group, side)
                save_svg(cd_figure(result, f"{where}: {side}, {result.n} datasets"), path)
                written.append(path)
                images.append(f"![{side}]({path.name})")
            notes = [f"ours: {_describe(ours)}", f"paper: {_describe(paper)}",
                     "groups within one CD (no significant difference, Nemenyi, α = 0.05): ours "
                     + ("; ".join(", ".join(c) for c in ours.cliques()) or "none")
                     + " | paper " + ("; ".join(", ".join(c) for c in paper.cliques()) or "none"),
                     " ".join(images)]
            blocks.append("\n\n".join([f"## {where} ({ours.n} datasets)",
                                       grid(["model", "mean rank (ours)", "mean rank (paper)"], rows, "md"),
                                       *notes]))
    if not blocks:
        return written
    head = ("# Friedman test and Nemenyi critical differences (Demšar 2006) over each table's models\n\n"
            "Mean rank over the datasets (1 = best); the Friedman test asks whether the models differ at all, "
            "Nemenyi's critical difference which pairs do (α = 0.05).")
    path = out / "friedman.md"
    path.write_text("\n\n".join([head, *blocks]) + "\n")
    return [path, *written]
