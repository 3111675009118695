"""Figures say no more than their numbers (issue 33): a heatmap is coloured at the precision its
cells print, so cells that read the same have one colour, and a surface whose cells all read the
same is drawn flat and called flat."""

from __future__ import annotations

import numpy as np
import pandas as pd

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
