"""Friedman test and critical-difference diagrams (Demšar 2006) over a table's models, for ours
and for the paper's own numbers, beside the paired tests of ``compare.md``.

One tie rule on both sides: before ranking, every score is rounded half-up to the
decimals the paper prints on that dataset's row of the table (the most decimals among the row's
cells, so a trailing zero the paper dropped does not coarsen the row). The paper's side is its
printed numbers, which the rounding leaves as they are; ours, rounded alike, tie where the paper
could not have told them apart, and floating-point noise between models that are numerically the
same (AGBoost's non-param and GBM on Airfoil) no longer ranks one above the other. Equal scores
share their mean rank and χ² carries the tie correction (``afr_cli.analysis.stats.friedman_nemenyi``).

Two post-hoc tests at one alpha mark which models differ (``afr_cli.analysis.posthoc``): Nemenyi's critical
difference, drawn as a bar of that length above the axis, and pairwise Wilcoxon–Holm tests; each
diagram draws both sets of cliques, Nemenyi's in red and Wilcoxon–Holm's in blue.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path

import pandas as pd

from afr_cli.analysis.posthoc import PairwiseTests, wilcoxon_holm
from afr_cli.analysis.stats import FriedmanResult, friedman_nemenyi
from afr_cli.catalogue.knowledge import ALPHA, param_rows
from afr_cli.tables.format import METRIC_NAMES, METRICS, grid
from afr_cli.tables.paper_compare import base_group, paper_comparison, printed_cells

TIE_RULE = (
    "ties: every score, ours and the paper's, rounded half-up to the decimals the paper prints on "
    "that dataset's row before ranking; equal scores share their mean rank, χ² corrected for ties"
)


@dataclass(frozen=True)
class RankedSide:
    """One side (ours or the paper's) of a Friedman block: the datasets × models scores at the
    printed precision, the Friedman test with Nemenyi's CD, and the pairwise Wilcoxon–Holm tests."""

    scores: pd.DataFrame
    friedman: FriedmanResult
    pairwise: PairwiseTests


@dataclass(frozen=True)
class FriedmanBlock:
    """A base group of a published table: its ranking metric and both sides, over the same datasets."""

    group: str
    metric: str
    ours: RankedSide
    paper: RankedSide


def table_metric(comparison: pd.DataFrame) -> str:
    """The metric a table's ranking is on: R² when it prints R², else its first error metric."""
    metrics = [m for m in METRICS if m in set(comparison["metric"])]
    return metrics[0]


def _decimals(printed: str) -> int | None:
    """Decimals of a printed number; None when the cell is not a number."""
    try:
        exponent = Decimal(printed.strip()).as_tuple().exponent
    except (InvalidOperation, AttributeError):
        return None
    return max(0, -exponent) if isinstance(exponent, int) else None


def round_half_up(value: float, decimals: int) -> float:
    """``value`` rounded half-up at ``decimals`` on its shortest decimal spelling (as the agreement
    rule reads a printed cell), so equal printed numbers come out as equal floats."""
    if value != value:  # NaN stays NaN
        return value
    return float(Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


def at_printed_precision(scores: pd.DataFrame, decimals: dict[str, int]) -> pd.DataFrame:
    """Each row (dataset) of ``scores`` rounded half-up to ``decimals[dataset]``; a row without
    printed decimals is left as it is."""
    out = scores.astype(float).copy()
    for dataset in out.index:
        if dataset in decimals:
            out.loc[dataset] = [round_half_up(v, decimals[dataset]) for v in out.loc[dataset]]
    return out


def row_decimals(spec: str, datasets, models, metric: str) -> dict[str, int]:
    """Per dataset, the most decimals the paper prints among ``models``' cells of ``metric``."""
    printed = printed_cells(spec)
    out = {}
    for dataset in datasets:
        found = [d for m in models if (d := _decimals(printed.get((dataset, m, metric), ""))) is not None]
        if found:
            out[dataset] = max(found)
    return out


def _side(scores: pd.DataFrame, higher: bool, alpha: float) -> RankedSide:
    friedman = friedman_nemenyi(scores, higher, alpha)
    return RankedSide(scores, friedman, wilcoxon_holm(scores.loc[:, list(friedman.models)], friedman.mean_ranks, alpha))


def friedman_blocks(results: pd.DataFrame, spec: str, alpha: float = ALPHA) -> list[FriedmanBlock]:
    """Per base group of a published table with at least three model columns, both sides ranked
    by the one tie rule (module docstring) over the datasets where every column has a value of ours."""
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
        decimals = row_decimals(spec, ours.index, columns, metric)
        higher = metric == "r2"
        out.append(
            FriedmanBlock(
                group,
                metric,
                _side(at_printed_precision(ours, decimals), higher, alpha),
                _side(at_printed_precision(paper, decimals), higher, alpha),
            )
        )
    return out


def friedman_tables(
    results: pd.DataFrame, spec: str, alpha: float = ALPHA
) -> list[tuple[str, str, FriedmanResult, FriedmanResult]]:
    """(group, metric, ours, paper) Friedman results of ``friedman_blocks``."""
    return [(b.group, b.metric, b.ours.friedman, b.paper.friedman) for b in friedman_blocks(results, spec, alpha)]


NEMENYI_COLOUR, WILCOXON_COLOUR = "tab:red", "tab:blue"
CD_FONT = 8  # points, every label of a CD diagram
_ROW, _BAR_STEP, _GAP = 0.2, 0.09, 0.08  # inches: label rows, clique bars, space around the labels
CD_BAR_Y = 0.42  # inches above the rank axis: the bar as long as Nemenyi's critical difference


def _text_width(text: str, size: float = CD_FONT) -> float:
    """Width in inches of ``text`` set in matplotlib's default font at ``size`` points."""
    from matplotlib.textpath import TextPath

    return TextPath((0, 0), text, size=size).get_extents().width / 72


def cd_figure(side: RankedSide, title: str):
    """A critical-difference diagram: mean ranks on an axis (1 = best, left), Nemenyi's critical
    difference drawn as a bar of its length above it, under it one bar per clique (red: within one
    CD; blue: no pair different by Wilcoxon–Holm), and each model's name on a leader line.

    Laid out in inches so that no label touches a bar or another label: the names sit in the
    margins left and right of the axis (where no clique bar reaches), each on its own row below the
    lowest clique bar, and the colour legend has a line of its own under them."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    result = side.friedman
    k = len(result.models)
    order = sorted(range(k), key=lambda i: result.mean_ranks[i])
    half = (k + 1) // 2
    bars = [(c, NEMENYI_COLOUR) for c in result.cliques()] + [(c, WILCOXON_COLOUR) for c in side.pairwise.cliques()]
    labels = [f"{result.models[i]} ({result.mean_ranks[i]:.2f})" for i in order]
    left_w = max(_text_width(s) for s in labels[:half]) + 2 * _GAP + 0.15
    right_w = max((_text_width(s) for s in labels[half:]), default=0.0) + 2 * _GAP + 0.15
    key = "bars under the axis: groups with no significant difference (red: Nemenyi, blue: Wilcoxon–Holm)"
    axis_w = max(3.6, 0.75 * (k - 1), _text_width(key, CD_FONT - 1) + 2 * _GAP - left_w - right_w)
    per_rank = axis_w / max(k - 1, 1)  # inches per unit of rank
    width = left_w + axis_w + right_w
    top = 0.95  # title, the CD bar and the tick numbers above the axis
    lowest_bar = 0.12 + _BAR_STEP * max(len(bars) - 1, 0)
    first_row = lowest_bar + _GAP + _ROW
    rows = max(half, k - half)
    legend = first_row + _ROW * rows + 0.05
    bottom = legend + 0.2
    fig = Figure(figsize=(width, top + bottom))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.axis("off")
    # data coordinates: x in ranks, y in inches above the axis line, the figure exactly
    ax.set_xlim(1 - left_w / per_rank, k + right_w / per_rank)
    ax.set_ylim(-bottom, top)
    ax.hlines(0, 1, k, color="black", linewidth=1)
    for r in range(1, k + 1):
        ax.vlines(r, 0, 0.06, color="black", linewidth=1)
        ax.text(r, 0.09, str(r), ha="center", va="bottom", fontsize=CD_FONT)
    ax.hlines(CD_BAR_Y, 1, 1 + result.cd, color="black", linewidth=1.5)
    ax.vlines([1, 1 + result.cd], CD_BAR_Y - 0.04, CD_BAR_Y + 0.04, color="black", linewidth=1.5)
    ax.text(
        1 + result.cd / 2,
        CD_BAR_Y + 0.07,
        f"CD = {result.cd:.2f} (Nemenyi, α = {result.alpha:g})",
        ha="center",
        va="bottom",
        fontsize=CD_FONT,
    )
    pad = _GAP / per_rank
    for slot, i in enumerate(order):
        rank = result.mean_ranks[i]
        left = slot < half
        depth = -(first_row + _ROW * (slot if left else k - 1 - slot))
        end = 1 - pad if left else k + pad
        ax.plot([rank, rank, end], [0, depth, depth], color="black", linewidth=0.8)
        ax.text(
            end - pad / 2 if left else end + pad / 2,
            depth,
            labels[slot],
            ha="right" if left else "left",
            va="center",
            fontsize=CD_FONT,
        )
    for level, (clique, colour) in enumerate(bars):
        ranks = [result.mean_ranks[result.models.index(m)] for m in clique]
        ax.hlines(-0.12 - _BAR_STEP * level, min(ranks) - 0.03, max(ranks) + 0.03, color=colour, linewidth=2.5)
    ax.text(
        ax.get_xlim()[0] + _GAP / per_rank,
        -legend,
        key,
        ha="left",
        va="top",
        fontsize=CD_FONT - 1,
    )
    ax.text((ax.get_xlim()[0] + ax.get_xlim()[1]) / 2, top - 0.08, title, ha="center", va="top", fontsize=CD_FONT + 1)
    return fig


def save_svg(fig, path: Path) -> bool:
    """An SVG with no date and fixed ids, so an unchanged diagram is byte-identical when redrawn;
    written only when its bytes differ from the file there (True when written)."""
    import io

    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "afr", "svg.fonttype": "path"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return _write_if_changed(path, buffer.getvalue())


def _write_if_changed(path: Path, data: bytes) -> bool:
    """Write ``data`` unless ``path`` holds exactly it (afr report with nothing changed writes nothing)."""
    if path.is_file() and path.read_bytes() == data:
        return False
    path.write_bytes(data)
    return True


def _describe(r: FriedmanResult) -> str:
    return (
        f"χ² = {r.chi2:.2f}, p = {r.p:.3g}; Iman-Davenport F = {r.iman_davenport_f:.2f}, "
        f"p = {r.iman_davenport_p:.3g}; CD = {r.cd:.2f}"
    )


def _groups(cliques: list[tuple[str, ...]]) -> str:
    return "; ".join(", ".join(c) for c in cliques) or "none"


def cd_name(spec: str, group: str, side: str) -> str:
    """File name of one CD diagram: cd-<paper>-<table>[-<base>]-<ours|paper>.svg."""
    return "-".join(filter(None, ("cd", spec.replace(":", "-"), group, side))) + ".svg"


def friedman_notes(block: FriedmanBlock) -> list[str]:
    """The lines under a block's rank table: both tests, the tie rule beside them, both post-hoc groupings."""
    ours, paper = block.ours, block.paper
    alpha = ours.friedman.alpha
    return [
        f"ours: {_describe(ours.friedman)}",
        f"paper: {_describe(paper.friedman)}",
        TIE_RULE,
        f"groups within one CD (no significant difference, Nemenyi, α = {alpha:g}): ours "
        f"{_groups(ours.friedman.cliques())} | paper {_groups(paper.friedman.cliques())}",
        f"groups no two of which differ (Wilcoxon signed-rank per pair, Holm-adjusted, α = {alpha:g}): ours "
        f"{_groups(ours.pairwise.cliques())} | paper {_groups(paper.pairwise.cliques())}",
    ]


def write_friedman(results: pd.DataFrame, specs, out: Path, alpha: float = ALPHA) -> list[Path]:
    """friedman.md and one CD diagram per (table, base group, ours/paper) into ``out``, the
    post-hoc tests at ``alpha``."""
    blocks, written = [], []
    for spec in specs:
        for block in friedman_blocks(results, spec, alpha):
            ours, paper = block.ours.friedman, block.paper.friedman
            where = f"{spec}{f', {block.group}' if block.group else ''}, {METRIC_NAMES.get(block.metric, block.metric)}"
            rows = [
                [m, f"{ours.mean_ranks[i]:.2f}", f"{paper.mean_ranks[paper.models.index(m)]:.2f}"]
                for i, m in sorted(enumerate(ours.models), key=lambda t: ours.mean_ranks[t[0]])
            ]
            images = []
            for side, ranked in (("ours", block.ours), ("paper", block.paper)):
                path = out / cd_name(spec, block.group, side)
                if save_svg(cd_figure(ranked, f"{where}: {side}, {ranked.friedman.n} datasets"), path):
                    written.append(path)
                images.append(f"![{side}]({path.name})")
            blocks.append(
                "\n\n".join(
                    [
                        f"## {where} ({ours.n} datasets)",
                        grid(["model", "mean rank (ours)", "mean rank (paper)"], rows, "md"),
                        *friedman_notes(block),
                        " ".join(images),
                    ]
                )
            )
    if not blocks:
        return written
    head = (
        "# Friedman test, Nemenyi critical differences and Wilcoxon–Holm cliques (Demšar 2006) over each "
        "table's models\n\n"
        "Mean rank over the datasets (1 = best); the Friedman test asks whether the models differ at all; "
        f"the post-hoc tests which pairs do (α = {alpha:g}): Nemenyi's critical difference on the mean ranks, "
        "and the Wilcoxon signed-rank test of each pair over the datasets, Holm-adjusted over the pairs. "
        "The diagrams draw the CD as a bar above the axis and each group of models no two of which differ as "
        "a bar under it (red: Nemenyi, blue: Wilcoxon–Holm)."
    )
    path = out / "friedman.md"
    changed = _write_if_changed(path, ("\n\n".join([head, *blocks]) + "\n").encode("utf-8"))
    return [path, *written] if changed else written
