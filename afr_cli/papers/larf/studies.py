"""Studies of the LARF paper (its page.md, "The misses, and one explanation tested").

Cheap, read from the stores on every ``afr report``: ours is the mean test R² over the stated
repetitions of the selected rows; the paper's is its printed cell (LARF Tables 3 and 5, SAT-RF
Table 9 = LARF Table 10).

Expensive: ``which_optimum`` refits epsM-w-LARF eight times (two grid points x four solvers) and
runs only under ``afr report --studies``, which writes results/larf/which_optimum.csv; every other
``afr report`` renders its block from that committed file.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from sklearn.metrics import r2_score
from sklearn.preprocessing import StandardScaler

from afr_cli.analysis.stats import friedman_from_ranks, paired_ttest
from afr_cli.catalogue.printed_tests import recompute_published_ttests
from afr_cli.config.experiment import load_experiment
from afr_cli.core.paths import PROJECT_ROOT
from afr_cli.data import load_dataset
from afr_cli.engine.protocol import UnitSeeds
from afr_cli.models import LARF
from afr_cli.publish.cell_classes import CLASSES, classify_paper, reading_agreement_counts, two_readings_text
from afr_cli.publish.claims.columns import ColumnRef, published_column
from afr_cli.publish.context import ReportContext
from afr_cli.publish.frames import StoreMissing, compute_words, report_table
from afr_cli.publish.page_words import how_many, listing
from afr_cli.publish.store_words import holdings, holdings_text  # noqa: F401 (a show)
from afr_cli.publish.studies import render_frame
from afr_cli.tables.agreement import MISS, R2_TOL, agreement
from afr_cli.tables.friedman import friedman_tables

SMALL = ("Friedman3", "Sparse", "Regression")
LARGE = ("Concrete", "Airfoil", "Friedman2", "Yacht")
PAPER_REPS = 10
CODE_STORE = "larf_code_reading"  # the four epsM- models under the authors' code reading


def _ours(ctx: ReportContext, store: str, model: str, reps: int | None = None) -> pd.DataFrame:
    """Per (dataset, rep) rows of one model (selected rows), on repetitions 0..reps-1 or all."""
    r = ctx.stored(store).results
    r = r[r.model == model]
    return r[r.rep < reps] if reps else r


def _mean(ctx: ReportContext, store: str, model: str, reps: int | None = None) -> pd.Series:
    return _ours(ctx, store, model, reps).groupby("dataset").r2.mean()


def _paper(spec: str, base: str, model: str) -> pd.Series:
    """The paper's printed R² of one column, by dataset."""
    return published_column(ColumnRef(spec, base, model), "r2")


def ert_excess(ctx: ReportContext) -> pd.DataFrame:
    """ERT epsM-w-ARF on repetitions 0-9 where the paper's value sits at its plain ERT: ours, the
    paper's, its plain ERT and our eps-ABRF on the same forests; the last row the mean over the
    11 datasets of ours − paper."""
    ours, paper = _mean(ctx, "larf_ert", "em-w-arf", PAPER_REPS), _paper("larf:5", "ERT", "em-w-arf")
    ert, abrf = _paper("larf:5", "ERT", "ert"), _mean(ctx, "larf_ert", "eps-abrf", PAPER_REPS)
    rows = [
        {
            "dataset": d,
            "ours": ours[d],
            "paper": paper[d],
            "ours − paper": ours[d] - paper[d],
            "paper's plain ERT": ert[d],
            "our eps-ABRF": abrf[d],
        }
        for d in ("Friedman1", "Friedman2", "Friedman3", "Airfoil")
    ]
    rows.append(
        {
            "dataset": "mean over the 11 datasets",
            "ours": None,
            "paper": None,
            "ours − paper": float((ours - paper).mean()),
            "paper's plain ERT": None,
            "our eps-ABRF": None,
        }
    )
    return pd.DataFrame(rows)


def larger_sets(ctx: ReportContext) -> pd.DataFrame:
    """RF epsM-w-LARF on the larger sets, repetitions 0-9, beside the paper."""
    ours, paper = _mean(ctx, "larf_rf", "em-w-larf", PAPER_REPS), _paper("larf:3", "RF", "em-w-larf")
    held = [d for d in LARGE if d in ours.index]  # a scratch root may hold only some of them
    if not held:
        raise StoreMissing(f"{ctx.root / 'larf_rf'}: none of {', '.join(LARGE)}")
    return pd.DataFrame([{"dataset": d, "ours": ours[d], "paper": paper[d]} for d in held])


def larger_sets_shown(frame: pd.DataFrame) -> str:
    """The larger sets' table and what it shows: on how many ours is within the agreement
    tolerance of the paper's R² (a gap is ours − the paper's)."""
    near = [r.dataset for r in frame.itertuples() if abs(r.ours - r.paper) <= R2_TOL]
    far = [r.dataset for r in frame.itertuples() if r.dataset not in near]
    return (
        render_frame(frame, 3) + f"\n\nOurs is within {R2_TOL:g} of the paper's R² (the agreement tolerance) on "
        f"{how_many(len(near), len(frame))} of these datasets" + (f"; not on {listing(far)}" if far else "") + "."
    )


SMALL_FORMATS = {"gap 0-9": "+.3f", "gap, all": "+.3f"}


def small_sets_shown(frame: pd.DataFrame) -> str:
    """The small sets' table and whether more repetitions close the gap: on how many sets the mean
    over every stored repetition is still below the paper's number (the "gap, all" column)."""
    below = [d for d, gap in zip(frame.dataset, frame["gap, all"]) if gap < 0]
    reps = sorted(set(int(r) for r in frame.reps))
    held = f"{reps[0]}" if len(reps) == 1 else f"{reps[0]} to {reps[-1]}"
    return (
        render_frame(frame, 3, SMALL_FORMATS) + f"\n\nOver every stored repetition ({held} per set) our mean stays "
        f'below the paper\'s number on {how_many(len(below), len(frame))} sets (the "gap, all" column)'
        + (f": {listing(below)}" if 0 < len(below) < len(frame) else "")
        + "."
    )


def small_sets(ctx: ReportContext) -> pd.DataFrame:
    """RF epsM-w-LARF on the 80-row synthetic sets: the mean on repetitions 0-9 and its gap to the
    paper, the split-to-split standard deviation there and the standard error of a 10-repetition
    mean, then the same over every stored repetition."""
    chosen = _ours(ctx, "larf_rf", "em-w-larf", PAPER_REPS)
    every = _ours(ctx, "larf_rf", "em-w-larf")
    paper = _paper("larf:3", "RF", "em-w-larf")
    rows = []
    held = [d for d in SMALL if d in set(every.dataset)]  # a scratch root may hold only some of them
    if not held:
        raise StoreMissing(f"{ctx.root / 'larf_rf'}: none of {', '.join(SMALL)}")
    for d in held:
        ten, all_reps = chosen[chosen.dataset == d].r2, every[every.dataset == d].r2
        rows.append(
            {
                "dataset": d,
                "ours 0-9": ten.mean(),
                "paper": paper[d],
                "gap 0-9": ten.mean() - paper[d],
                "sd 0-9": ten.std(),
                "SE of the 0-9 mean": ten.std() / PAPER_REPS**0.5,
                "reps": int(all_reps.size),
                "ours, all": all_reps.mean(),
                "sd, all": all_reps.std(),
                "gap, all": all_reps.mean() - paper[d],
            }
        )
    return pd.DataFrame(rows)


def small_sets_tau0(ctx: ReportContext) -> pd.DataFrame:
    """The tau0 the inner CV chose for epsM-w-LARF on the small sets, repetitions 0-9: how often;
    and Friedman 3's repetition 0 (its choice, CV and test R², how much it lowers the 10-repetition
    mean, and the median of repetitions 0-9)."""
    chosen = _ours(ctx, "larf_rf", "em-w-larf", PAPER_REPS)
    small = chosen[chosen.dataset.isin(SMALL)]
    counts = small["params"].map(lambda p: p.get("tau0")).value_counts()
    rows = [
        {"what": f"(dataset, rep) pairs choosing tau0 = {tau0:g}", "value": str(int(n))} for tau0, n in counts.items()
    ]
    f3 = small[small.dataset == "Friedman3"].set_index("rep")
    r0 = f3.loc[0]
    rows += [
        {"what": "Friedman 3, rep 0: tau0 chosen", "value": f"{r0['params'].get('tau0'):g}"},
        {"what": "Friedman 3, rep 0: CV R²", "value": f"{r0['cv_score']:.2f}"},
        {"what": "Friedman 3, rep 0: test R²", "value": f"{r0['r2']:.2f}"},
        {
            "what": "Friedman 3: how much rep 0 lowers the 0-9 mean",
            "value": f"{f3.r2.drop(0).mean() - f3.r2.mean():.2f}",
        },
        {"what": "Friedman 3: median of reps 0-9", "value": f"{f3.r2.median():.3f}"},
    ]
    return pd.DataFrame(rows)


def leave_self_out(ctx: ReportContext) -> pd.DataFrame:
    """Leaving a training row out of its own leaves, on repetitions 0-9: ours → leave-self-out beside
    the paper, per model and small dataset."""
    rows = []
    for model, spec_model in (("em-w-larf", "em-w-larf"), ("em-larf", "em-larf")):
        base = _mean(ctx, "larf_rf", model, PAPER_REPS)
        loo = _mean(ctx, "larf_leave_self_out", f"{model}-loo", PAPER_REPS)
        paper = _paper("larf:3", "RF", spec_model)
        rows += [
            {"model": model, "dataset": d, "ours": base[d], "leave-self-out": loo[d], "paper": paper[d]} for d in SMALL
        ]
    return pd.DataFrame(rows)


def leave_self_out_paired(ctx: ReportContext) -> pd.DataFrame:
    """Every repetition both stores hold, paired split by split: ours → leave-self-out per small
    dataset, and the paired t-test over the three datasets."""
    rows = []
    for model in ("em-w-larf", "em-larf"):
        loo_rows = _ours(ctx, "larf_leave_self_out", f"{model}-loo")
        base = _ours(ctx, "larf_rf", model).merge(loo_rows[["dataset", "rep"]], on=["dataset", "rep"])
        b, loo = base.groupby("dataset").r2.mean(), loo_rows.groupby("dataset").r2.mean()
        test = paired_ttest(b[list(SMALL)].to_numpy(), loo[list(SMALL)].to_numpy())
        rows.append(
            {
                "model": model,
                "reps": int(loo_rows.rep.nunique()),
                **{d: f"{b[d]:.3f} → {loo[d]:.3f}" for d in SMALL},
                "paired t-test p (3 datasets)": test.p,
            }
        )
    return pd.DataFrame(rows)


def leave_self_out_summary(ctx: ReportContext) -> pd.DataFrame:
    """epsM-w-LARF per small dataset: ours and leave-self-out on repetitions 0-9 beside the paper,
    and the mean paired gain of leaving the row out over every repetition both stores hold."""
    model = "em-w-larf"
    first = leave_self_out(ctx)
    first = first[first.model == model].set_index("dataset")
    loo_rows = _ours(ctx, "larf_leave_self_out", f"{model}-loo")
    paired = _ours(ctx, "larf_rf", model).merge(loo_rows, on=["dataset", "rep"], suffixes=("", "_loo"))
    gain = (paired.r2_loo - paired.r2).groupby(paired.dataset).mean()
    return pd.DataFrame(
        [
            {
                "dataset": d,
                "ours": first.loc[d, "ours"],
                "leave-self-out": first.loc[d, "leave-self-out"],
                "paper": first.loc[d, "paper"],
                "paired gain": gain[d],
                "reps": int(loo_rows.rep.nunique()),
            }
            for d in SMALL
        ]
    )


def leave_self_out_text(summary: pd.DataFrame) -> str:
    """The page's bullet: where leaving the row out closes at least half of epsM-w-LARF's gap to the
    paper on repetitions 0-9, and the paired gain over every repetition, largest first."""
    closes = (summary["paper"] - summary["leave-self-out"]).abs() <= (summary["paper"] - summary["ours"]).abs() / 2

    def cell(r) -> str:
        return f"{r.dataset} ({r.ours:.3f} to {r['leave-self-out']:.3f}, paper {r.paper:.3f})"

    closed = " and ".join(cell(r) for _, r in summary[closes].iterrows()) or "no dataset"
    open_ = ", ".join(cell(r) for _, r in summary[~closes].iterrows())
    gains = ", ".join(
        f"{r.dataset} {r['paired gain']:+.3f}"
        for _, r in summary.sort_values("paired gain", ascending=False).iterrows()
    )
    return (
        f"- If each training row is left out of its own leaves' attention, something the paper does not "
        f"specify, at least half of epsM-w-LARF's gap to the paper on its splits 0-9 closes on {closed}"
        + (f"; not on {open_}" if open_ else "")
        + f". Over {summary.reps.iloc[0]} paired repetitions "
        f"the mean gain of leaving the row out is: {gains}."
    )


DATASET, REP = "Regression", 34
POINTS = ({"tau0": 100.0, "M": 1}, {"tau0": 1.0, "M": 20})  # chosen under OSQP, under AUTO
SOLVERS = ("OSQP", "auto", "CLARABEL", "ECOS")


def which_optimum(ctx: ReportContext) -> pd.DataFrame:
    """Expensive (eight QP fits): on Regression, RF, repetition 34 (the repetition ``afr diff`` found
    moved most), the unit's own split, scaling and forest, epsM-w-LARF refit on its 80 training rows
    at the two grid points the old (OSQP) and new (AUTO) stores selected; per solver: the
    objective, the weights' norm and the test R² (the AUTO and OSQP rows equal the stores' cells)."""
    exp = load_experiment(PROJECT_ROOT / "configs" / "larf_rf.yaml")
    base = exp.bases[0]
    X, y = load_dataset(DATASET, exp.data_seed, exp.synthetic_noise)
    seeds = UnitSeeds(exp, DATASET, base, REP)
    train, test = seeds.split_rows(len(y))
    scaler = StandardScaler().fit(X[train])
    X_train, X_test = scaler.transform(X[train]), scaler.transform(X[test])
    rows = []
    for point in POINTS:
        for solver in SOLVERS:
            model = LARF(
                variant="em-w-larf",
                base=base.kind,
                random_state=seeds.forest(-1),
                solver=solver,
                **point,
                **{k: v for k, v in base.params.items() if v is not None},
            ).fit(X_train, y[train])
            result = model.solve_result_
            rows.append(
                {
                    "tau0": point["tau0"],
                    "M": point["M"],
                    "solver asked": solver,
                    "solver used": f"{result.solver}: {result.status}",
                    "training rows": len(train),
                    "objective": float(result.objective),
                    "|weights|": float(np.linalg.norm(result.theta)),
                    "weights": int(result.theta.size),
                    "test R²": float(r2_score(y[test], model.predict(X_test))),
                }
            )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- numbers the page's prose quotes

ALPHA = 0.05  # the papers' significance level
MAIN_STORES = (("larf_rf", "RF"), ("larf_ert", "ERT"))


def compute_per_base(ctx: ReportContext) -> pd.DataFrame:
    """The compute (minutes, as ``afr status`` sums it: recorded CPU, or wall for a store made before
    CPU was recorded) each base's LARF store records."""
    return pd.DataFrame(
        [
            {
                "base": base,
                "store": ctx.shown_store(store),
                **dict(zip(("minutes", "measured"), ctx.status(store).recorded_compute())),
            }
            for store, base in MAIN_STORES
        ]
    )


def compute_per_base_text(frame: pd.DataFrame) -> str:
    minutes = " and ".join(compute_words(m, k) for m, k in zip(frame.minutes, frame.measured))
    return (
        f"- Under auto the LARF stores record {minutes} "
        f"({', '.join(frame.base)}; `afr status {' '.join(frame.store)}`)."
    )


def holm_family(ctx: ReportContext) -> pd.DataFrame:
    """``results/larf/compare.md``'s paired tests over all repetitions: each row's t-test p and its
    p Holm-adjusted over the whole table (one family)."""
    table = report_table(ctx.root / "larf" / "compare.md")
    holm = next(c for c in table.columns if c.startswith("p (Holm"))
    return pd.DataFrame(
        {
            "comparison": table["B − A"],
            "base": table["base"],
            "p": table["p (t-test)"].astype(float),
            "p_holm": table[holm].astype(float),
        }
    )


def holm_family_text(frame: pd.DataFrame) -> str:
    """The page's sentence: how many rows are significant alone and after Holm, which survive, and
    what becomes of LARF over eps-ABRF."""
    alone, adjusted = frame[frame.p < ALPHA], frame[frame.p_holm < ALPHA]
    survive = ", ".join(f"{r.comparison} ({r.base})" for r in adjusted.itertuples())
    abrf = frame[frame.comparison == "larf − eps-abrf"]
    before = " and ".join(f"{p:.3g}" for p in abrf.p)
    after = " and ".join(f"{p:.2g}" for p in abrf.p_holm)
    return (
        f"Taken as one family, `compare.md` also shows each p-value Holm-adjusted over its {len(frame)} "
        f"rows: {len(alone)} rows have p < {ALPHA:g} alone, {len(adjusted)} after the "
        f"adjustment ({survive}); LARF over eps-ABRF (p = {before}) becomes {after}."
    )


def table9_ties(ctx: ReportContext) -> pd.DataFrame:
    """Every Friedman test of the paper's reports (each table, ours and the paper's side), with the
    correction for ties (as ``friedman.md`` shows it) and without it: whether the verdict at the
    papers' level changes with the correction, and whether Nemenyi finds any pair apart."""
    rows = []
    for report in (r for r in ctx.reports_by_name().values() if r.paper == "larf" and r.friedman):
        results = ctx.report_frames(report)
        if results is None:
            continue
        for spec in report.friedman:
            for group, metric, ours, paper in friedman_tables(results, spec):
                for side, test in (("ours", ours), ("paper", paper)):
                    _, p_plain, _, p_f_plain = friedman_from_ranks(test.mean_ranks, test.n)
                    rows.append(
                        {
                            "table": spec,
                            "group": group,
                            "metric": metric,
                            "side": side,
                            "p": test.p,
                            "p without the correction": p_plain,
                            "Iman-Davenport p": test.iman_davenport_p,
                            "Iman-Davenport p without the correction": p_f_plain,
                            "alpha": test.alpha,
                            "models": len(test.models),
                            "Nemenyi pairs apart": int(
                                sum(
                                    abs(a - b) > test.cd
                                    for k, a in enumerate(test.mean_ranks)
                                    for b in test.mean_ranks[k + 1 :]
                                )
                            ),
                        }
                    )
    return pd.DataFrame(rows)


def table9_ties_text(frame: pd.DataFrame) -> str:
    """The paper's Table 9 with and without the tie correction, and how many other verdicts the
    correction moves across the papers' level: counted, not typed."""
    if frame.empty:
        return "No store of the LARF reports is under this root: no Friedman test to show."
    crossed = (frame["p"] < frame["alpha"]) != (frame["p without the correction"] < frame["alpha"])
    nine = frame[(frame["table"] == "larf:9") & (frame["side"] == "paper")]
    parts = []
    if not nine.empty:
        r = nine.iloc[0]
        significant = r["p"] < r["alpha"]
        parts.append(
            f"On the paper's own Table 9 the {r['models']} tree counts "
            f"{'differ significantly' if significant else 'do not differ significantly'}, p = {r['p']:.2g} "
            f"(was {r['p without the correction']:.3g} without the correction; Iman-Davenport p = "
            f"{r['Iman-Davenport p']:.2g}, was {r['Iman-Davenport p without the correction']:.2g})."
        )
        if significant:
            parts.append(
                'That sits less easily with the paper\'s "R² insignificantly increases with the number of trees".'
            )
        apart = int(r["Nemenyi pairs apart"])
        parts.append(
            "Nemenyi finds no pair apart there."
            if apart == 0
            else f"Nemenyi finds {apart} pair{'s' * (apart != 1)} apart there."
        )
    others = frame[crossed & ~((frame["table"] == "larf:9") & (frame["side"] == "paper"))]
    total = len(frame) - len(nine)
    if others.empty:
        parts.append(
            f"Each of the other {total} Friedman verdicts (the tables' groups, ours and the paper's) stays on the same "
            "side of the papers' significance level with the correction as without it."
        )
    else:
        moved = listing([f"{r.table}{' ' + r.group if r.group else ''} ({r.side})" for r in others.itertuples()])
        parts.append(
            f"Of the other {total} Friedman verdicts, the correction moves {len(others)} across the level: {moved}."
        )
    return " ".join(parts)


def larf_vs_abrf(ctx: ReportContext) -> pd.DataFrame:
    """LARF − eps-ABRF per base: the paper's printed p and its effect (recomputed from its Table 10),
    LARF's column of the paper above ours on repetitions 0-9 (mean gap, cells within the agreement
    tolerance), and our paired t-test on repetitions 0-9 and on every repetition."""
    printed = recompute_published_ttests()
    printed = printed[(printed.paper == "larf") & (printed.table == "10")].set_index("base")
    rows = []
    for store, base in MAIN_STORES:
        ours10 = _mean(ctx, store, "larf", PAPER_REPS)
        paper = _paper("larf:10", base, "larf")
        gap = paper - ours10
        ten = paired_ttest(ours10, _mean(ctx, store, "eps-abrf", PAPER_REPS)[ours10.index])
        every_larf = _mean(ctx, store, "larf")
        every = paired_ttest(every_larf, _mean(ctx, store, "eps-abrf")[every_larf.index])
        rows.append(
            {
                "base": base,
                "paper p": printed.loc[base, "published_p"],
                "paper effect": printed.loc[base, "recomputed_mean"],
                "paper − ours, 0-9": float(gap.mean()),
                "cells within tolerance": int((gap.abs() <= R2_TOL).sum()),
                "cells": int(gap.size),
                "gain 0-9": ten.mean_diff,
                "p 0-9": ten.p,
                "gain, all": every.mean_diff,
                "p, all": every.p,
            }
        )
    return pd.DataFrame(rows)


def larf_vs_abrf_text(frame: pd.DataFrame) -> str:
    rf = frame.set_index("base").loc["RF"]
    papers_p = " / ".join(str(p) for p in frame["paper p"])
    every = " and ".join(f"{r['gain, all']:+.3f} (p = {r['p, all']:.2g})" for _, r in frame.iterrows())
    share = " and ".join(f"{100 * r['gain, all'] / r['paper effect']:.0f} %" for _, r in frame.iterrows())
    ten = ", ".join(f"{r['gain 0-9']:+.4f} {r['base']}" for _, r in frame.iterrows())
    return (
        f"**LARF against eps-ABRF.** The paper's p = {papers_p} rest on a LARF column about "
        f"{rf['paper − ours, 0-9']:.3f} above ours on repetitions 0-9: {rf['cells within tolerance']} of "
        f"{rf['cells']} cells within {R2_TOL:g} on RF, dominated by the three sets above. Our eps-ABRF "
        f"column matches the paper, as shown in the table above. On repetitions 0-9 the gain of LARF over "
        f"eps-ABRF is positive ({ten}) "
        f"but not significant over {rf['cells']} datasets; on every repetition, where the small sets' bad "
        f"splits weigh less, it is {every}: significant, with {share} of the paper's effect, and p-values "
        f"above the paper's printed {' and '.join(str(p) for p in frame['paper p'])}."
    )


# ---------------------------------------------------------------- the stores before and after AUTO

BEFORE_AUTO = "larf/before_auto.csv.xz"  # the selected rows of the three stores as committed under OSQP (b8ff686^)
LEAF_ATTENTION = ("larf", "em-larf", "em-w-larf")  # the models whose training objective can reach zero
MOVE_TOL = 1e-4  # a move above this is beyond solver tolerance (the papers print 3-4 decimals)


def _where(row: pd.Series) -> str:
    return f"{row.dataset} {row.model}"


def _largest_mean(cells: pd.DataFrame) -> str:
    """The cell whose mean moved most, signed, with where; "—" without cells (a store on the small sets only)."""
    if cells.empty:
        return "—"
    worst = cells.loc[cells.abs_mean.idxmax()]
    return f"{worst['mean']:+.2g} ({_where(worst)})"


def regen_under_auto(ctx: ReportContext) -> pd.DataFrame:
    """``afr diff`` of each LARF store as committed under OSQP (``results/larf/before_auto.csv.xz``,
    its selected rows kept when the stores were regenerated under AUTO) against the store today, on
    the repetitions both hold: per store the cells above 1e-4, the largest per-repetition move, the
    largest cell-mean move on the small sets and elsewhere, the range of repetitions in which a
    leaf-attention cell on a small set selected another grid point, and the other cells whose mean
    moved above 1e-4."""
    from afr_cli.store.diff import diff_frames

    before = pd.read_csv(ctx.root / BEFORE_AUTO, keep_default_na=False, na_values=[""])
    before["params"] = before["params"].map(json.loads)  # JSON, as the stores' exports hold them
    rows = []
    for store, old in before.groupby("store", sort=False):
        cells = diff_frames(
            old.drop(columns="store"), ctx.stored(store).results, old_name=BEFORE_AUTO, new_name=store
        ).cells
        cells = cells.assign(abs_mean=cells["mean"].abs())
        small, other = cells[cells.dataset.isin(SMALL)], cells[~cells.dataset.isin(SMALL)]
        leaf = small[small.model.isin(LEAF_ATTENTION)]
        worst = cells.loc[cells.max_abs.idxmax()]
        moved = other[other.abs_mean > MOVE_TOL].sort_values("abs_mean", ascending=False)
        rows.append(
            {
                "store": store,
                "reps": int(cells.reps.max()),
                "cells": len(cells),
                "cells above 1e-4": int((cells.max_abs > MOVE_TOL).sum()),
                "largest |ΔR²| in a repetition": f"{worst.max_abs:.2g} ({_where(worst)})",
                "largest |cell-mean ΔR²|, small sets": _largest_mean(small),
                "reps with other params, leaf attention on small sets": (
                    f"{int(leaf.params_changed.min())}-{int(leaf.params_changed.max())}"
                )
                if len(leaf)
                else "—",
                "largest |cell-mean ΔR²|, other sets": _largest_mean(other),
                "other cells with |mean ΔR²| > 1e-4": ", ".join(_where(r) for _, r in moved.iterrows()) or "none",
            }
        )
    return pd.DataFrame(rows)


# the stores this page describes
HELD = ("larf_rf", "larf_ert", "larf_trees", "larf_leave_self_out", CODE_STORE, "larf_folds", "larf_folds_2")


def stores_held(ctx: ReportContext) -> pd.DataFrame:
    """What each store of the page holds now (``afr status``): the rows of its generated sentence on
    repetitions, datasets and bases, under the root the page is built for (``holdings_text``)."""
    return holdings(ctx, HELD)


# The authors' code reading (configs/larf_code_reading.yaml): the three sets with the largest
# Table 3 misses and Concrete, where the text reading already agrees, as the control.
CODE_SETS = (*SMALL, "Concrete")
# each model with the table that prints its RF column: the four in Table 3, their best in Table 7
CODE_MODELS = (("em-w-arf", "3"), ("em-w-larf", "3"), ("em-arf", "3"), ("em-larf", "3"), ("larf", "7"))
# A referee's run of the authors' own code (leaf-attention-forest at d5a3527, cvxpy's default
# solver) on afr's forests, folds and repetitions 0-9: mean test R² of epsM-w-LARF on RF.
REFEREE = {"Friedman3": 0.643, "Sparse": 0.590, "Regression": 0.452}


def code_reading(ctx: ReportContext) -> pd.DataFrame:
    """Tables 3 and 7 (R², RF) on repetitions 0-9, per dataset and model: the paper, the text
    reading (larf_rf) and the authors' code reading (larf_code_reading), each reading with its
    agreement class against the printed cell (as printed, within tol or miss)."""
    rows = []
    for model, table in CODE_MODELS:
        paper = _paper(f"larf:{table}", "RF", model)
        text = _mean(ctx, "larf_rf", model, PAPER_REPS)
        code = _mean(ctx, CODE_STORE, f"{model}-code", PAPER_REPS)
        for d in CODE_SETS:
            printed = f"{paper[d]:.3f}"  # Tables 3 and 7 print R² to three decimals
            rows.append(
                {
                    "table": table,
                    "model": model,
                    "dataset": d,
                    "paper": paper[d],
                    "text": text[d],
                    "text agrees": agreement(text[d], printed, "r2"),
                    "code": code[d],
                    "code agrees": agreement(code[d], printed, "r2"),
                }
            )
    return pd.DataFrame(rows)


def code_reading_counts(ctx: ReportContext) -> pd.DataFrame:
    """Per reading, how many of the cells of ``code_reading`` agree with the paper (as printed,
    within tolerance, missed)."""
    return reading_agreement_counts(code_reading(ctx), ("text", "code"))


def code_reading_referee(ctx: ReportContext) -> pd.DataFrame:
    """epsM-w-LARF on repetitions 0-9 of the three worst sets: the paper, the text reading, the code
    reading, and the referee's run of the authors' own code on the same splits."""
    frame = code_reading(ctx)
    frame = frame[frame.model == "em-w-larf"].set_index("dataset")
    return pd.DataFrame(
        [
            {
                "dataset": d,
                "paper": frame.loc[d, "paper"],
                "text": frame.loc[d, "text"],
                "code": frame.loc[d, "code"],
                "the authors' code (referee)": REFEREE[d],
                "code − referee": frame.loc[d, "code"] - REFEREE[d],
            }
            for d in SMALL
        ]
    )


def code_reading_text(frame: pd.DataFrame) -> str:
    """The page's sentence on ``code_reading`` (``two_readings_text``)."""
    return two_readings_text(frame)


# The inner-fold assignment no paper states: assignment 0 is the stores above (larf_rf for the
# text reading, larf_code_reading for the code's), 1 and 2 configs/larf_folds.yaml.
FOLD_STORES = {"text": ("larf_rf", "larf_folds", "larf_folds_2"), "code": (CODE_STORE, "larf_folds", "larf_folds_2")}
SPREAD_MODELS = (
    ("em-w-arf", "3", "text"),
    ("em-w-larf", "3", "text"),
    ("em-arf", "3", "text"),
    ("em-larf", "3", "text"),
    ("larf", "7", "text"),
    ("em-w-larf", "3", "code"),
    ("em-larf", "3", "code"),
)


def _assignment_means(ctx: ReportContext, model: str, reading: str) -> list[pd.Series]:
    """The model's mean R² on repetitions 0-9 under inner-fold assignments 0, 1 and 2."""
    stored = f"{model}-code" if reading == "code" else model
    return [_mean(ctx, store, stored, PAPER_REPS) for store in FOLD_STORES[reading]]


def fold_spread(ctx: ReportContext) -> pd.DataFrame:
    """Per printed cell of the three worst sets and reading: the mean R² on repetitions 0-9 under
    three inner-fold assignments, their range, the paper, and whether any assignment agrees with
    the printed cell (as printed or within tolerance)."""
    rows = []
    for model, table, reading in SPREAD_MODELS:
        paper = _paper(f"larf:{table}", "RF", model)
        means = _assignment_means(ctx, model, reading)
        for d in SMALL:
            values = [m[d] for m in means]
            rows.append(
                {
                    "model": model,
                    "reading": reading,
                    "dataset": d,
                    "paper": paper[d],
                    "folds 0": values[0],
                    "folds 1": values[1],
                    "folds 2": values[2],
                    "range": max(values) - min(values),
                    "an assignment agrees": "yes"
                    if any(agreement(v, f"{paper[d]:.3f}", "r2") != MISS for v in values)
                    else "no",
                }
            )
    return pd.DataFrame(rows)


def fold_spread_text(frame: pd.DataFrame) -> str:
    """The page's sentence on ``fold_spread``: the largest range and which cells some assignment
    brings within the rule."""
    widest = frame.loc[frame["range"].idxmax()]
    reached = frame[frame["an assignment agrees"] == "yes"]
    cells = listing([f"{r.model} ({r.reading}) on {r.dataset}" for r in reached.itertuples()]) or "none"
    return (
        f"Over the {len(frame)} cells, the three inner-fold assignments move a mean by up to "
        f"{widest['range']:.3f} ({widest.model}, {widest.reading} reading, on {widest.dataset}); "
        f"the median range is {frame['range'].median():.3f}. Some assignment agrees with the paper "
        f"(as printed or within {R2_TOL:g}) on {len(reached)} of them: {cells}."
    )


def cell_classes(ctx: ReportContext) -> pd.DataFrame:
    """Each printed cell of ``code_reading`` with the class every published cell gets
    (afr_cli/publish/cell_classes.py, from the explanations paper.yaml declares): the text reading
    on repetitions 0-9 as printed or within tolerance; another inner-fold assignment of the text
    reading agrees (the spread); the code reading agrees under some assignment; the leave-self-out
    experiment (the tested cause above) agrees; else unexplained."""
    cells = code_reading(ctx)
    classed = classify_paper(ctx.catalogue.paper("larf"), ctx)
    classed = classed[classed["metric"] == "r2"]
    keys = zip(classed["table"], classed["dataset"], classed["model"].str.removesuffix(" (RF)"))
    found = dict(zip(keys, classed["class"]))
    return pd.DataFrame(
        [
            {
                "table": c["table"],
                "model": c["model"],
                "dataset": c["dataset"],
                "paper": c["paper"],
                "class": found[(c["table"], c["dataset"], c["model"])],
            }
            for c in cells.to_dict("records")
        ]
    )


def cell_classes_text(frame: pd.DataFrame) -> str:
    """The page's sentence on ``cell_classes``: the count of each class and the unexplained cells."""
    counts = frame["class"].value_counts()
    parts = listing([f"{int(counts.get(c, 0))} {c}" for c in CLASSES])
    left = frame[frame["class"] == CLASSES[-1]]
    named = listing([f"{r.model} on {r.dataset} (paper {r.paper:.3f})" for r in left.itertuples()]) or "none"
    return f"Of these {len(frame)} printed cells: {parts}. Unexplained: {named}."
