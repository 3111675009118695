"""The numbers of afr_cli/papers/larf/page.md's prose ("The misses, and one explanation tested"), from
the stores: each line names the README passage it feeds. Ours is the mean test R² over the stated
repetitions; the paper's is its printed cell (LARF Tables 3 and 5, SAT-RF Table 9 = LARF Table 10).
Run:  PYTHONPATH=. python results/larf/readme_numbers.py
"""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from afr_cli.claims.columns import ColumnRef, published_column
from afr_cli.stats import paired_ttest
from afr_cli.store import load_results

SMALL = ("Friedman3", "Sparse", "Regression")


@lru_cache(maxsize=None)
def stored(store: str) -> pd.DataFrame:
    """A store's selected rows, read once."""
    return load_results(f"results/{store}")


def ours(store: str, model: str, reps: int | None = None) -> pd.DataFrame:
    """Per (dataset, rep) test R² of one model (selected rows), on repetitions 0..reps-1 or all."""
    r = stored(store)
    r = r[r.model == model]
    return r[r.rep < reps] if reps else r


def mean(store: str, model: str, reps: int | None = None) -> pd.Series:
    return ours(store, model, reps).groupby("dataset").r2.mean()


def paper(spec: str, base: str, model: str) -> pd.Series:
    """The paper's printed R² of one column, by dataset."""
    return published_column(ColumnRef(spec, base, model), "r2")


def line(label: str, values: dict) -> None:
    print(f"{label}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in values.items()))


def main() -> None:
    wa_ert, p_wa_ert, p_ert = mean("larf_ert", "em-w-arf", 10), paper("larf:5", "ERT", "em-w-arf"), paper("larf:5", "ERT", "ert")
    abrf_ert = mean("larf_ert", "eps-abrf", 10)
    print("ERT epsM-w-ARF, reps 0-9 (ours / paper / paper's plain ERT / our eps-ABRF):")
    for d in ("Friedman1", "Friedman2", "Friedman3", "Airfoil"):
        print(f"  {d}: {wa_ert[d]:.3f} / {p_wa_ert[d]:.3f} / {p_ert[d]:.3f} / {abrf_ert[d]:.3f}")
    print(f"  mean over 11 datasets of ours - paper: {(wa_ert - p_wa_ert).mean():+.3f}")
    wl, p_wl = mean("larf_rf", "em-w-larf", 10), paper("larf:3", "RF", "em-w-larf")
    line("RF epsM-w-LARF, reps 0-9, larger sets (ours)", {d: wl[d] for d in ("Concrete", "Airfoil", "Friedman2", "Yacht")})
    line("  paper", {d: p_wl[d] for d in ("Concrete", "Airfoil", "Friedman2", "Yacht")})
    line("RF epsM-w-LARF, reps 0-9, small sets (ours)", {d: wl[d] for d in SMALL})
    line("  gap to paper", {d: wl[d] - p_wl[d] for d in SMALL})
    chosen = ours("larf_rf", "em-w-larf", 10)
    small = chosen[chosen.dataset.isin(SMALL)]
    print("  tau0 chosen on the small sets, reps 0-9:", small["params"].map(lambda p: p.get("tau0")).value_counts().to_dict())
    sd10 = small.groupby("dataset").r2.std()
    sd100 = ours("larf_rf", "em-w-larf").groupby("dataset").r2.std()
    line("  sd over reps 0-9", {d: sd10[d] for d in SMALL})
    line("  standard error of a 10-rep mean", {d: sd10[d] / 10 ** 0.5 for d in SMALL})
    line("  sd over all reps", {d: sd100[d] for d in SMALL})
    f3 = small[small.dataset == "Friedman3"].set_index("rep")
    r0 = f3.loc[0]
    print(f"  Friedman3 rep 0: tau0 {r0['params'].get('tau0')}, CV R2 {r0['cv_score']:.2f}, test R2 {r0['r2']:.2f}, "
          f"lowers the 10-rep mean by {(f3.r2.drop(0).mean() - f3.r2.mean()):.2f}; median of reps 0-9 {f3.r2.median():.3f}")
    all100 = mean("larf_rf", "em-w-larf")
    line("  all reps", {d: all100[d] for d in SMALL})
    line("  gap to paper", {d: all100[d] - p_wl[d] for d in SMALL})
    p_l = paper("larf:3", "RF", "em-larf")
    print("Leave-self-out, reps 0-9 (ours -> leave-self-out / paper):")
    for model in ("em-w-larf", "em-larf"):
        base, loo, pub = mean("larf_rf", model, 10), mean("larf_leave_self_out", f"{model}-loo", 10), (p_wl if model == "em-w-larf" else p_l)
        line(f"  {model}", {d: f"{base[d]:.3f} -> {loo[d]:.3f} / {pub[d]:.3f}" for d in SMALL})
    print("Leave-self-out, every repetition both stores hold, paired:")
    for model in ("em-w-larf", "em-larf"):
        loo_rows = ours("larf_leave_self_out", f"{model}-loo")
        keys = loo_rows[["dataset", "rep"]]
        base = ours("larf_rf", model).merge(keys, on=["dataset", "rep"])
        b, l = base.groupby("dataset").r2.mean(), loo_rows.groupby("dataset").r2.mean()
        test = paired_ttest(b[list(SMALL)].to_numpy(), l[list(SMALL)].to_numpy())
        line(f"  {model} ({loo_rows.rep.nunique()} reps)", {d: f"{b[d]:.3f} -> {l[d]:.3f}" for d in SMALL})
        print(f"    paired t-test over the 3 datasets: p = {test.p:.2g}")


if __name__ == "__main__":
    main()
