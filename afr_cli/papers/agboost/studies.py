"""Studies of the AGBoost paper (its page.md, "Which GBM the paper ran"): the GBM settings of
configs/agboost_gbm_baselines.yaml against the paper's GBM columns alone (Table II's GBM with DT
learners, Table III's with ERT learners), under raw and standardised features
(results/agboost_gbm_baselines/none and /standard, 10 rep-index splits). Cheap: read from the
stores on every ``afr report``.

A cell agrees *as printed* by the one agreement rule (``stats.matches_printed``: ours, the mean
over the stored repetitions, rounded half-up to the printed decimals, equals the printed number).
"""

from __future__ import annotations

import pandas as pd

from afr_cli.analysis.stats import matches_printed
from afr_cli.catalogue.published import published_table
from afr_cli.config.experiment import load_experiment
from afr_cli.core.paths import PROJECT_ROOT
from afr_cli.publish.context import ReportContext
from afr_cli.publish.store_words import holdings, holdings_text  # noqa: F401 (a show)

CONFIG = PROJECT_ROOT / "configs" / "agboost_gbm_baselines.yaml"
STORE = "agboost_gbm_baselines"
SCALINGS = (("none", "raw"), ("standard", "standardised"))
TABLE_OF = {"gbm-dt": ("II", "DT"), "gbm-ert": ("III", "ERT")}  # learner kind -> (table, its base column)
METRICS = ("r2", "mae")


def _printed(table: str, base: str) -> pd.DataFrame:
    """The paper's printed GBM cells of one table (R² and MAE), as printed strings."""
    pub = published_table(f"agboost:{table}")
    return pub[(pub.base == base) & (pub.model == "gbm") & pub.metric.isin(METRICS)]


def _means(ctx: ReportContext, scaling: str) -> pd.DataFrame:
    r = ctx.stored(f"{STORE}/{scaling}").results
    return r[r.model == "gbm"].groupby(["base", "dataset"])[list(METRICS)].mean()


def _setting(params: dict) -> str:
    return (
        f"{params['n_estimators']} iterations, lr {params['learning_rate']:g}, depth {params['max_depth']}, "
        f"{params['min_samples_leaf']} rows per leaf"
    )


def gbm_cells(ctx: ReportContext) -> pd.DataFrame:
    """One row per (candidate setting, printed GBM cell, scaling): ours, the printed value, and
    whether it agrees as printed."""
    rows = []
    for scaling, _ in SCALINGS:
        means = _means(ctx, scaling)
        for base in load_experiment(CONFIG).bases:
            table, column = TABLE_OF[base.kind]
            for cell in _printed(table, column).itertuples():
                ours = float(means.loc[(base.id, cell.dataset), cell.metric])
                rows.append(
                    {
                        "candidate": base.id,
                        "learners": column,
                        "setting": _setting(base.params),
                        "table": table,
                        "scaling": scaling,
                        "dataset": cell.dataset,
                        "metric": cell.metric,
                        "printed": cell.value_str,
                        "ours": ours,
                        "as_printed": matches_printed(cell.value_str, ours),
                    }
                )
    return pd.DataFrame(rows)


def settings_table(cells: pd.DataFrame) -> pd.DataFrame:
    """Per candidate: the printed cells its column reproduces under each scaling, and its R² distance
    to the paper's (raw features; mean and largest over the datasets)."""
    rows = []
    for _candidate, c in cells.groupby("candidate", sort=False):
        first = c.iloc[0]
        row = {"GBM setting": f"{first.setting} ({first.learners} learners; Table {first.table})"}
        for scaling, label in SCALINGS:
            s = c[c.scaling == scaling]
            row[f"as printed, {label}"] = f"{int(s.as_printed.sum())} of {len(s)}"
        r2 = c[(c.scaling == SCALINGS[0][0]) & (c.metric == "r2")]
        gap = (r2.ours - r2.printed.astype(float)).abs()
        row["mean \\|ΔR²\\|"] = f"{gap.mean():.3f}"
        worst = r2.loc[gap.idxmax()]
        row["largest \\|ΔR²\\|"] = f"{gap.max():.3f} ({worst.dataset}: {worst.ours:.3f} against {worst.printed})"
        rows.append(row)
    return pd.DataFrame(rows)


def best_dt(ctx: ReportContext) -> pd.DataFrame:
    """The DT-learner setting that reproduces most of Table II's GBM column, per dataset and metric
    under both scalings, and how many units of the two stores give the same R²."""
    cells = gbm_cells(ctx)
    dt = cells[cells.learners == "DT"]
    best = dt[dt.scaling == SCALINGS[0][0]].groupby("candidate").as_printed.sum().idxmax()
    raw, std = (ctx.stored(f"{STORE}/{s}").results for s, _ in SCALINGS)
    both = raw.merge(std, on=["dataset", "base", "model", "rep"], suffixes=("_raw", "_std"))
    same = int((both.r2_raw == both.r2_std).sum())
    out = dt[dt.candidate == best].assign(
        units_same=same, units=len(both), largest_unit_move=float((both.r2_raw - both.r2_std).abs().max())
    )
    return out.reset_index(drop=True)


def best_dt_text(cells: pd.DataFrame) -> str:
    """The page's sentences on the best DT setting: where it matches, how far the rest are, and
    what the scaling changes."""
    first = cells.iloc[0]
    raw, std = (cells[cells.scaling == s] for s, _ in SCALINGS)
    hit = raw[raw.as_printed].groupby("dataset", sort=False).metric.apply(set)
    both = [d for d, m in hit.items() if set(METRICS) <= m]
    r2_only = [d for d, m in hit.items() if m == {"r2"}]
    r2 = raw[raw.metric == "r2"].assign(gap=lambda f: f.ours - f.printed.astype(float))
    rest = r2[~r2.dataset.isin(hit.index)]
    worst = rest.loc[rest.gap.abs().idxmax()]
    others = rest[rest.dataset != worst.dataset].gap.abs().max()
    only_raw = raw.merge(std, on=["dataset", "metric"], suffixes=("", "_std"))
    only_raw = only_raw[only_raw.as_printed & ~only_raw.as_printed_std]
    extra = ", ".join(f"{r.dataset}'s {'MAE' if r.metric == 'mae' else 'R²'}" for r in only_raw.itertuples())
    return (
        f"With {first.setting}, {', '.join(both)} match both metrics"
        + (f" and {', '.join(r2_only)} its R²" if r2_only else "")
        + f"; the other datasets stay within {others:.3f} R², {worst.dataset} excepted "
        f"({abs(worst.gap):.3f} {'low' if worst.gap < 0 else 'high'}). Raw and standardised features give "
        f"the same trees except for float thresholds ({first.units_same} of {first.units} units identical; the "
        f"rest differ by at most {first.largest_unit_move:.3f} R²)"
        + (
            f"; raw ones match {len(only_raw)} cell{'s' if len(only_raw) > 1 else ''} more ({extra})."
            if len(only_raw)
            else "."
        )
    )


ERT_CONFIG = PROJECT_ROOT / "configs" / "agboost_ert.yaml"  # the AGBoost (ERT) run: which GBM depth it uses


def ert_depths(ctx: ReportContext) -> pd.DataFrame:
    """The ERT-learner candidates of ``gbm_cells`` (Table III's GBM column), with the depth the
    AGBoost (ERT) config runs."""
    cells = gbm_cells(ctx)
    used = next(b for b in load_experiment(ERT_CONFIG).bases if b.kind == "gbm-ert").params["max_depth"]
    ert = cells[cells.learners == "ERT"].copy()
    ert["depth"] = ert.candidate.map({b.id: b.params["max_depth"] for b in load_experiment(CONFIG).bases})
    return ert.assign(config_depth=used).reset_index(drop=True)


def ert_depths_text(cells: pd.DataFrame) -> str:
    """The page's sentence on the ERT depths: how many printed cells the best of them matches under
    each scaling, which has the smallest mean |ΔR²| (raw features), and whether the config uses it."""
    per_scaling = []
    for scaling, label in SCALINGS:
        s = cells[cells.scaling == scaling]
        hits = s.groupby("depth").as_printed.sum()
        per_scaling.append(
            f"at most {int(hits.max())} of the {int(s.groupby('depth').size().max())} cells with {label} features"
        )
    r2 = cells[(cells.scaling == SCALINGS[0][0]) & (cells.metric == "r2")]
    gap = (r2.ours - r2.printed.astype(float)).abs().groupby(r2.depth).mean()
    best, used = int(gap.idxmin()), int(cells.config_depth.iloc[0])
    uses = "uses it" if used == best else f"uses depth {used} (mean |ΔR²| {gap.get(used, float('nan')):.3f})"
    return (
        f"With ERT learners the depths {', '.join(str(int(d)) for d in sorted(gap.index))} match Table III's GBM (ERT) "
        f"column as printed on {' and '.join(per_scaling)}. Depth {best} has the smallest mean |ΔR²| "
        f"({gap[best]:.3f}, raw features); `configs/agboost_ert.yaml` {uses}."
    )


DIABETES_STORE = "agboost_dt"  # Table II (DT learners), the 100 committed repetitions


def diabetes_gap(ctx: ReportContext) -> pd.DataFrame:
    """Diabetes under DT learners: AGBoost's and the GBM's mean R² over the stored repetitions, the
    eps AGBoost's inner CV selects most often, and the paper's printed R² and eps_opt beside them."""
    r = ctx.stored(DIABETES_STORE).results
    d = r[r.dataset == "Diabetes"]
    eps = d[d.model == "agboost"].params.map(lambda p: float(p["eps"]))
    pub = ctx.published_table("agboost:II")
    pub = pub[pub.dataset == "Diabetes"].set_index(["model", "metric"]).value_str
    means = d.groupby("model").r2.mean()
    return pd.DataFrame(
        [
            {
                "reps": int(d.rep.nunique()),
                "agboost": float(means["agboost"]),
                "gbm": float(means["gbm"]),
                "eps_mode": float(eps.mode().iloc[0]),
                "eps_mode_reps": int((eps == eps.mode().iloc[0]).sum()),
                "paper_agboost": pub["agboost", "r2"],
                "paper_gbm": pub["gbm", "r2"],
                "paper_eps": pub["agboost", "eps_opt"],
            }
        ]
    )


def _beats(diff: float) -> str:
    return "beats" if diff > 0 else "does not beat"


def diabetes_gap_text(frame: pd.DataFrame) -> str:
    """The page's sentence on Diabetes: whether AGBoost beats its GBM there, in ours and in the
    paper (from the signs of the differences it prints), and the eps its inner CV selects."""
    f = frame.iloc[0]
    ours, paper = f.agboost - f.gbm, float(f.paper_agboost) - float(f.paper_gbm)
    return (
        f"On Diabetes (DT learners) our AGBoost {_beats(ours)} its GBM, and the paper's {_beats(paper)} its own. "
        f"AGBoost's inner CV selects eps = {f.eps_mode:g} most often ({f.eps_mode_reps} "
        f"of {f.reps} repetitions; the paper's eps_opt there: {f.paper_eps}), and AGBoost's R² is {f.agboost:.3f} "
        f"against the GBM's {f.gbm:.3f} over our {f.reps} repetitions ({ours:+.3f}), where the paper prints "
        f"{f.paper_agboost} against {f.paper_gbm} ({paper:+.3f})."
    )


HELD = (
    "agboost_dt",
    "agboost_ert",
    "agboost_gbm_baselines/none",
    "agboost_gbm_baselines/standard",
)  # the stores this page describes


def stores_held(ctx: ReportContext) -> pd.DataFrame:
    """What each store of the page holds now (``afr status``): the rows of its generated sentence on
    repetitions, datasets and bases, under the root the page is built for (``holdings_text``)."""
    return holdings(ctx, HELD)
