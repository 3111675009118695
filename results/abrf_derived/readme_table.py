"""The README's table and numbers for eps-ABRF under the independent (derived-seed) protocol.

Each cell: ours / published / difference in test R², over every stored repetition of
results/abrf_rf_derived and results/abrf_ert_derived; RF and ERT against the LARF paper's Tables 3
and 5, eps-ABRF against the SAT-RF paper's Table 9; best-test: the grid point with the best mean
test R² (difference to the paper in brackets). Then the gains over the forest on the UCI sets,
ours beside the paper's.
Run:  PYTHONPATH=. python results/abrf_derived/readme_table.py
"""

from __future__ import annotations

import pandas as pd

from afr_cli.publish.claims.columns import ColumnRef, published_column
from afr_cli.store import load_grid, load_results
from afr_cli.tables.selection import results_in_view

DATASETS = ("Diabetes", "Friedman1", "Friedman2", "Friedman3", "Regression", "Sparse", "Wine",
            "Boston", "Concrete", "Yacht", "Airfoil")
UCI = ("Airfoil", "Yacht", "Concrete", "Wine", "Boston")
BASES = (("RF", "rf", "abrf_rf_derived", "larf:3"), ("ERT", "ert", "abrf_ert_derived", "larf:5"))


def published(spec: str, base: str, model: str) -> pd.Series:
    """The paper's printed R² of one column, by dataset."""
    return published_column(ColumnRef(spec, base, model), "r2")


def means(store: str, selection: str) -> pd.DataFrame:
    view = results_in_view(load_results(f"results/{store}"), load_grid(f"results/{store}"), selection)
    return view.groupby(["dataset", "model"]).r2.mean().unstack("model")


def main() -> None:
    cols, gains = {}, {}
    for base, forest, store, spec in BASES:
        stored, best = means(store, "stored"), means(store, "best-test")
        paper_forest, paper_abrf = published(spec, base, forest), published("satrf:9", base, "eps-abrf")
        cols[base] = (stored[forest], paper_forest)
        cols[f"eps-ABRF ({base})"] = (stored["eps-abrf"], paper_abrf)
        cols[f"best ({base})"] = (best["eps-abrf"], paper_abrf)
        gains[base] = (stored["eps-abrf"] - stored[forest], paper_abrf - paper_forest)
    head = ["dataset", "RF", "ERT", "eps-ABRF (RF)", "eps-ABRF (ERT)", "eps-ABRF best-test (RF)",
            "eps-ABRF best-test (ERT)"]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for d in DATASETS:
        row = [d]
        for key in ("RF", "ERT", "eps-ABRF (RF)", "eps-ABRF (ERT)"):
            ours, paper = cols[key][0][d], cols[key][1][d]
            row.append(f"{ours:.3f} / {paper:.3f} / {ours - paper:+.3f}")
        for key in ("best (RF)", "best (ERT)"):
            ours, paper = cols[key][0][d], cols[key][1][d]
            row.append(f"{ours:.3f} ({ours - paper:+.3f})")
        print("| " + " | ".join(row) + " |")
    print("\neps-ABRF − forest on the UCI sets, ours (paper):")
    for base in ("RF", "ERT"):
        ours, paper = gains[base]
        print(f"  {base}: " + ", ".join(f"{d} {ours[d]:+.3f} ({paper[d]:+.3f})" for d in UCI))
    raise_by = {b: cols[f"best ({b})"][0] - cols[f"eps-ABRF ({b})"][0] for b in ("RF", "ERT")}
    print("\nbest-test − inner-CV eps-ABRF: " + "; ".join(
        f"{b} {v.min():+.3f} to {v.max():+.3f} (largest on {v.idxmax()})" for b, v in raise_by.items()))


if __name__ == "__main__":
    main()
