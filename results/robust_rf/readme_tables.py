"""The tables of afr_cli/papers/robust_rf/page.md, sections 2 and 3, from the committed stores.

Table I side by side (base RF: ours under inner-CV and best-test selection beside the paper's
cells), and robust − RF over the 18 (gamma, eta) cells per forest and selection (Demšar's paired
t-test, better / tied / worse at the printed precision), for Boston and Diabetes; and the win
counts of the 11-dataset run (beyond the paper, 10 repetitions).
Run:  PYTHONPATH=. python results/robust_rf/readme_tables.py [--reps 100]
"""

from __future__ import annotations

import argparse
from collections import Counter
from functools import lru_cache

import pandas as pd

from afr_cli.papers import published_table
from afr_cli.store import load_grid, load_results
from afr_cli.tables.compare import compare_models
from afr_cli.tables.selection import results_in_view

SELECTIONS = (("inner-CV", "stored"), ("best-test", "best-test"))
FORESTS = (("RF (depth 4)", "RF"), ("RF-msl1", "RF-msl1"))


@lru_cache(maxsize=None)
def view(store: str, selection: str, reps: int) -> pd.DataFrame:
    """A store's rows under a selection, loaded once per (store, selection, reps); callers only filter it."""
    return results_in_view(load_results(store), load_grid(store), selection, reps, "rmse")


def comparisons(store: str, models: list[str], reps: int) -> dict[tuple[str, str], dict]:
    """RF against each model, per (forest, selection name), forests first: {model: BaseComparison}."""
    return {(forest, name): {m: compare_models(v[v.base == base], "rf", m, "rmse").bases[0] for m in models}
            for forest, base in FORESTS for name, v in ((n, view(store, sel, reps)) for n, sel in SELECTIONS)}


def counts(record) -> str:
    return f"{len(record.wins)} / {len(record.ties)} / {len(record.losses)}"


def table_one(reps: int) -> str:
    paper = published_table("robust_rf:I")
    paper = paper[paper.metric == "rmse"]
    views = {name: view("results/robust_rf_boston", sel, reps) for name, sel in SELECTIONS}
    mean = {name: v[v.base == "RF"].groupby(["model", "train_fraction", "noise_eta"]).rmse.mean()
            for name, v in views.items()}

    def printed(model: str, gamma: float, eta: float) -> str:
        cell = paper[(paper.model == model) & (paper.train_fraction.round(6) == round(gamma * 100, 6))
                     & (paper.noise_eta == eta)]
        return cell.value_str.iloc[0] if len(cell) else "—"

    lines = ["| γ % | η | RF ours | RF paper | α=0.2 inner-CV | α=0.2 best-test | α=0.2 paper "
             "| α=0.05 inner-CV | α=0.05 best-test | α=0.05 paper |", "|" + "---|" * 10]
    for eta in (0.0, 0.5):
        for gamma in sorted(views["inner-CV"].train_fraction.unique()):
            row = [f"{gamma * 100:g}", f"{eta:g}", f"{mean['inner-CV'][('rf', gamma, eta)]:.3f}", printed("rf", gamma, eta)]
            for alpha, ours in (("0.2", "robust-rf-a0.2"), ("0.05", "robust-rf-a0.05")):
                row += [f"{mean['inner-CV'][(ours, gamma, eta)]:.3f}", f"{mean['best-test'][(ours, gamma, eta)]:.3f}",
                        printed(f"robust-rf-a{alpha}", gamma, eta)]
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def gains(store: str, models: list[str], reps: int) -> str:
    head = "| forest | selection | " + " | ".join(f"{m} − RF | better / tied / worse" for m in models) + " |"
    lines = [head, "|" + "---|" * (2 + 2 * len(models))]
    for (forest, name), by_model in comparisons(store, models, reps).items():
        row = [forest, name]
        for c in by_model.values():
            row += [f"{c.ttest.mean_diff:+.3f} (p = {c.ttest.p:.2g})", counts(c.record)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def gain_by_cell(reps: int) -> str:
    """Robust (alpha = 0.2) − RF per (gamma, eta) on Boston's depth-4 forest: does the gain grow
    with less data and with noise, as the paper says?"""
    means = {}
    for name, sel in SELECTIONS:
        v = view("results/robust_rf_boston", sel, reps)
        m = v[v.base == "RF"].groupby(["model", "noise_eta", "train_fraction"]).rmse.mean()
        means[name] = m["robust-rf-a0.2"] - m["rf"]
    gammas = sorted(means["inner-CV"].index.get_level_values("train_fraction").unique())
    lines = ["| selection | η | " + " | ".join(f"{g * 100:g} %" for g in gammas) + " | mean |",
             "|" + "---|" * (len(gammas) + 3)]
    for name in means:
        for eta in (0.0, 0.5):
            cells = means[name][eta]
            lines.append(f"| {name} | {eta:g} | " + " | ".join(f"{cells[g]:+.3f}" for g in gammas)
                         + f" | {cells.mean():+.3f} |")
    return "\n".join(lines)


def all_datasets(reps: int) -> str:
    """The 11-dataset run (results/robust_rf_all): cells where each robust model beats RF, per
    forest and selection, and per dataset (alpha = 0.2, inner CV, both forests)."""
    models = ["robust-rf-a0.2", "robust-rf-a0.05", "robust-rf-train-a0.2"]
    table = comparisons("results/robust_rf_all", models, reps)
    lines = ["| forest | selection | " + " | ".join(f"{m}: better / tied / worse" for m in models) + " |",
             "|" + "---|" * (2 + len(models))]
    lines += ["| " + " | ".join([forest, name] + [counts(c.record) for c in by_model.values()]) + " |"
              for (forest, name), by_model in table.items()]
    first = next(iter(table.values()))["robust-rf-a0.2"].per_dataset
    datasets = sorted({cell.split(" [")[0] for cell in first["dataset"]})
    wins = {forest: Counter(cell.split(" [")[0] for cell in table[(forest, "inner-CV")]["robust-rf-a0.2"].record.wins)
            for forest, _ in FORESTS}
    lines += ["", "| dataset | " + " | ".join(f"{f}: cells of 18 where α=0.2 beats RF (inner CV)" for f, _ in FORESTS) + " |",
              "|" + "---|" * (1 + len(FORESTS))]
    lines += [f"| {d} | " + " | ".join(str(wins[f][d]) for f, _ in FORESTS) + " |" for d in datasets]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    reps = parser.parse_args().reps
    print(f"Table I (Boston, base RF, {reps} repetitions):\n\n{table_one(reps)}\n")
    print(f"Boston, robust − RF over the 18 cells:\n\n"
          f"{gains('results/robust_rf_boston', ['robust-rf-a0.2', 'robust-rf-a0.05'], reps)}\n")
    print(f"Boston, robust (alpha = 0.2) − RF per cell, base RF:\n\n{gain_by_cell(reps)}\n")
    print(f"Diabetes, robust − RF over the 18 cells:\n\n{gains('results/robust_rf_diabetes', ['robust-rf-a0.002'], reps)}\n")
    all_reps = min(reps, 10)  # the 11-dataset store holds 10
    print(f"All 11 datasets, {all_reps} repetitions, robust − RF over 198 cells:\n\n{all_datasets(all_reps)}")


if __name__ == "__main__":
    main()
