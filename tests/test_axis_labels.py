"""One form for a unit axis everywhere : our tables label a training fraction as the
robust-RF paper's Table I prints it (15, in %), as the published cells and the claims do, not as
the store holds it (0.15)."""

from __future__ import annotations

import pandas as pd

from afr_cli.tables.paper_compare import printed_cells
from afr_cli.tables.summary import with_axes_in_dataset


def test_our_rows_are_labelled_as_the_papers_cells():
    ours = pd.DataFrame(
        {
            "dataset": ["Boston"] * 4,
            "model": ["rf"] * 4,
            "train_fraction": [0.15, 0.15, 0.55, 0.95],
            "noise_eta": [0.0, 0.5, 0.0, 0.5],
        }
    )
    labels = list(with_axes_in_dataset(ours)["dataset"])
    assert labels == [
        "Boston [train_fraction=15, noise_eta=0]",
        "Boston [train_fraction=15, noise_eta=0.5]",
        "Boston [train_fraction=55, noise_eta=0]",
        "Boston [train_fraction=95, noise_eta=0.5]",
    ]
    published = {dataset for dataset, _, _ in printed_cells("robust_rf:I")}
    assert set(labels) <= published  # the same words as the paper's table on the same page
