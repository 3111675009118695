"""Figures say no more than their numbers: a heatmap is coloured at the precision its
cells print, so cells that read the same have one colour, and a surface whose cells all read the
same is drawn flat and called flat."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from afr_cli.figures.plots import Surface, as_printed, flat_note, surface_figure


def _surface(values) -> Surface:
    values = np.asarray(values, dtype=float)
    table = pd.DataFrame(values, index=[0.0, 0.5, 1.0][: values.shape[0]], columns=[0.1, 1.0, 10.0][: values.shape[1]])
    return Surface(table, "Wine", "sat-rf-yx-tau-eps", "ERT", "tau", "eps", "r2", "test", 100)


def _cell_colours(fig) -> np.ndarray:
    image = fig.axes[0].images[0]
    return image.to_rgba(image.get_array())


def test_cells_that_print_the_same_number_get_the_same_colour():
    # 0.4131 and 0.4134 both print 0.413; 0.4146 prints 0.415: two colours, not three
    s = _surface([[0.4131, 0.4134, 0.4146], [0.4146, 0.4131, 0.4134]])
    assert as_printed(s.table.to_numpy())[0].tolist() == [0.413, 0.413, 0.415]
    fig = surface_figure(s)
    colours = _cell_colours(fig)
    assert (colours[0, 0] == colours[0, 1]).all() and (colours[0, 0] == colours[1, 1]).all()
    assert not (colours[0, 0] == colours[0, 2]).all()
    bar = fig.axes[1]  # the colour bar's ticks are the printed values, not finer ones
    assert [t.get_text() for t in bar.get_yticklabels()] == ["0.413", "0.415"]
    assert flat_note(s) is None


def test_a_surface_whose_cells_all_print_the_same_is_flat_and_says_so():
    # the committed Wine surface's case: means 0.41280-0.41310, every cell reads 0.413
    s = _surface([[0.41280, 0.41290, 0.41300], [0.41305, 0.41310, 0.41295]])
    assert flat_note(s) == "flat: every cell reads 0.413"
    fig = surface_figure(s)
    colours = _cell_colours(fig).reshape(-1, 4)
    assert (colours == colours[0]).all()  # one colour
    assert len(fig.axes) == 1  # no colour scale for a single value
    assert "flat: every cell reads 0.413" in fig.axes[0].get_title()
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts.count("0.413") == 6


def _ranked(models, ranks, differ, cd=1.84):
    """A CD diagram's input with these mean ranks; Wilcoxon–Holm finds the ``differ`` pairs apart."""
    from itertools import combinations

    from afr_cli.analysis.posthoc import PairwiseTests
    from afr_cli.analysis.stats import FriedmanResult
    from afr_cli.tables.friedman import RankedSide

    pairs = tuple(combinations(models, 2))
    p_holm = tuple(0.01 if pair in differ else 0.5 for pair in pairs)
    friedman = FriedmanResult(tuple(models), tuple(ranks), 11, 30.0, 1e-5, 20.0, 1e-8, cd, 0.05)
    return RankedSide(pd.DataFrame(), friedman, PairwiseTests(tuple(models), pairs, p_holm, p_holm, 0.05))


# LARF's Tables 3 (the paper's side) and 6 (ours): the old layout set a name near rank 1 across the
# leader lines and bars there ("em-w-larf (1.14)" over its own line and the clique bars starting at it)
CD_CASES = {
    "larf:3 paper": _ranked(
        ["em-w-larf", "em-larf", "em-w-arf", "em-arf", "rf"],
        [1.14, 2.14, 3.05, 4.27, 4.41],
        {("em-w-larf", "em-w-arf"), ("em-w-larf", "em-arf"), ("em-w-larf", "rf"), ("em-larf", "rf")},
    ),
    "larf:6 ours": _ranked(
        ["em-w-larf", "em-larf", "em-w-arf", "em-arf", "ert"],
        [1.45, 1.91, 3.09, 4.00, 4.55],
        {("em-w-larf", "em-w-arf"), ("em-w-larf", "em-arf"), ("em-w-larf", "ert"), ("em-larf", "em-arf")}
        | {("em-larf", "ert")},
    ),
}


def _boxes(fig):
    """Every text's box and every drawn line segment's box (thickness included), in display pixels."""
    from matplotlib.transforms import Bbox

    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    ax = fig.axes[0]
    texts = [(t.get_text(), t.get_window_extent(renderer)) for t in [*ax.texts, *fig.texts] if t.get_text()]
    segments = [(line.get_xydata(), line.get_linewidth()) for line in ax.lines]
    segments += [(s, c.get_linewidth()[0]) for c in ax.collections for s in c.get_segments()]
    lines = []
    for points, width in segments:
        half = width * fig.dpi / 72 / 2
        display = ax.transData.transform(points)
        for (x0, y0), (x1, y1) in zip(display[:-1], display[1:]):
            box = [[min(x0, x1) - half, min(y0, y1) - half], [max(x0, x1) + half, max(y0, y1) + half]]
            lines.append(((x0, y0, x1, y1), Bbox(box)))
    return texts, lines, fig.bbox


@pytest.mark.parametrize("case", list(CD_CASES))
def test_a_cd_diagrams_labels_touch_no_line_no_bar_no_other_label_and_stay_inside(case):
    from afr_cli.tables.friedman import cd_figure

    side = CD_CASES[case]
    assert side.friedman.cliques() and side.pairwise.cliques()  # there are bars to collide with
    texts, lines, frame = _boxes(cd_figure(side, f"{case}, 11 datasets"))
    assert len(texts) >= len(side.friedman.models) + 2
    for name, box in texts:
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, name
        for where, line in lines:
            assert not box.overlaps(line), f"{name!r} is drawn over the line or bar at {where}"
    for k, (a, box_a) in enumerate(texts):
        for b, box_b in texts[k + 1 :]:
            assert not box_a.overlaps(box_b), f"{a!r} overlaps {b!r}"


def test_curves_that_coincide_stay_visible_and_the_title_says_where():
    from afr_cli.figures.curves import coincide, curve_figure, curve_table

    # robust-rf-a0.2 and robust-rf-a0.05 as on Boston: equal at 15 % to three decimals, apart at 25 %
    means = {"rf": (4.763, 4.459), "robust-rf-a0.2": (4.7751, 4.376), "robust-rf-a0.05": (4.7749, 4.397)}
    rows = [
        {"dataset": "Boston", "base": "RF", "model": m, "rep": r, "train_fraction": f, "noise_eta": 0.0}
        | {"rmse": v + (0.01 if r else -0.01), "selection": "inner-cv"}
        for m, values in means.items()
        for f, v in zip((0.15, 0.25), values)
        for r in range(2)
    ]
    curves = curve_table(pd.DataFrame(rows), "Boston", list(means), "rmse", 0.0)
    assert coincide(curves) == ["robust-rf-a0.2 and robust-rf-a0.05 coincide at 15 %"]
    fig = curve_figure(curves)
    ax = fig.axes[0]
    assert "robust-rf-a0.2 and robust-rf-a0.05 coincide at 15 %" in ax.get_title()
    first, second, third = ax.get_lines()
    looks = [
        (line.get_linestyle(), line.get_linewidth(), line.get_markersize(), line.get_zorder())
        for line in ax.get_lines()
    ]
    assert len(set(looks)) == 3  # no two lines drawn alike
    # where two coincide, the later one lies on top, thinner, its marker inside the earlier's hollow one
    assert third.get_zorder() > second.get_zorder() and third.get_linewidth() < second.get_linewidth()
    assert second.get_markerfacecolor() == "none" and third.get_markersize() < second.get_markersize()


def test_curves_equal_everywhere_are_said_to_coincide_at_every_fraction_in_a_title_that_fits():
    from afr_cli.figures.curves import coincide, curve_figure, curve_table

    fractions = (0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95)
    rows = [
        {"dataset": "Boston", "base": "RF-msl1", "model": m, "rep": 0, "train_fraction": f, "noise_eta": 0.5}
        | {"rmse": 6.0 - f + (0.3 if m == "rf" else 0.0), "selection": "inner-cv"}
        for m in ("rf", "robust-rf-a0.2", "robust-rf-a0.05")
        for f in fractions
    ]
    curves = curve_table(pd.DataFrame(rows), "Boston", ["rf", "robust-rf-a0.2", "robust-rf-a0.05"], "rmse", 0.5)
    assert coincide(curves) == ["robust-rf-a0.2 and robust-rf-a0.05 coincide at every training fraction"]
    fig = curve_figure(curves)
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    title = fig.axes[0].title.get_window_extent(renderer)
    assert fig.bbox.x0 <= title.x0 and title.x1 <= fig.bbox.x1  # not clipped at the figure's edge
