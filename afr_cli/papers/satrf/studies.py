"""Studies of the SAT-RF paper's eps-ABRF (its Table 9): under the papers' identified protocol on
their repetitions 0-9 (results/abrf_rf, results/abrf_ert), and under the independent protocol: seeds
derived from (seed, dataset, rep), the documented noise, 100 repetitions (results/abrf_rf_derived,
results/abrf_ert_derived); and eps-ABRF against the untrained Softmax model under both, as the
reports' compare.md compute it; the best points of Figures 2-4's surfaces (results/satrf_surfaces);
and how heavy-tailed the derived protocol's Friedman 3 is; the SAT-RF models and eps-ABRF under the
text reading and the authors' code reading beside the printed RF cells (results/satrf_code_reading).
Cheap: read from the stores on every ``afr report``.

Expensive: ``synthetic_draws`` runs configs/synthetic_draws.yaml (plain RF, 20 repetitions) for
eight data seeds in a scratch folder, only under ``afr report --studies``, which writes
results/abrf_derived/synthetic_draws.csv; every other ``afr report`` renders from that file.

Ours is the mean test R² over every stored repetition; the paper's is its printed cell: RF and ERT
from the LARF paper's Tables 3 and 5, eps-ABRF from the SAT-RF paper's Table 9; best-test is the
grid point with the best mean test R² (afr_cli/tables/selection.py).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd

from afr_cli.analysis.bayesian import DEFAULT_ROPE
from afr_cli.analysis.stats import holm_adjust
from afr_cli.config.experiment import load_experiment
from afr_cli.core.paths import PROJECT_ROOT
from afr_cli.engine.runner import RunOptions, run_experiment
from afr_cli.figures.plots import surface_table
from afr_cli.publish.cell_classes import reading_agreement_counts, two_readings_text
from afr_cli.publish.claims.columns import ColumnRef, published_column
from afr_cli.publish.claims.judge import ALPHA
from afr_cli.publish.context import ReportContext
from afr_cli.publish.frames import StoreMissing, report_table
from afr_cli.publish.page_words import how_many, in_brackets, listing, repetitions_label, significance_words
from afr_cli.publish.store_words import holdings, holdings_text  # noqa: F401 (a show)
from afr_cli.publish.studies import render_frame
from afr_cli.store.reader import load_results
from afr_cli.tables.agreement import R2_TOL, agreement
from afr_cli.tables.compare import compare_models
from afr_cli.tables.paper_compare import printed_cells
from afr_cli.tables.selection import results_in_view

DATASETS = (
    "Diabetes",
    "Friedman1",
    "Friedman2",
    "Friedman3",
    "Regression",
    "Sparse",
    "Wine",
    "Boston",
    "Concrete",
    "Yacht",
    "Airfoil",
)
UCI = ("Airfoil", "Yacht", "Concrete", "Wine", "Boston")
BASES = (("RF", "rf", "abrf_rf_derived", "larf:3"), ("ERT", "ert", "abrf_ert_derived", "larf:5"))
IDENTIFIED = (("RF", "rf", "abrf_rf", "larf:3"), ("ERT", "ert", "abrf_ert", "larf:5"))
PAPERS_REPS = 10  # the papers' own repetitions 0-9, the identified protocol's


def _published(spec: str, base: str, model: str) -> pd.Series:
    """The paper's printed R² of one column, by dataset."""
    return published_column(ColumnRef(spec, base, model), "r2")


def _means(ctx: ReportContext, store: str, selection: str, reps: int | None = None) -> pd.DataFrame:
    frames = ctx.stored(store)
    view = results_in_view(frames.results, frames.grid, selection, reps)
    return view.groupby(["dataset", "model"]).r2.mean().unstack("model")


def _columns(ctx: ReportContext, bases=BASES, reps: int | None = None) -> dict[str, tuple[pd.Series, pd.Series]]:
    """Per shown column: (ours by dataset, the paper's by dataset), over repetitions 0..reps-1
    (every stored one when None)."""
    cols = {}
    for base, forest, store, spec in bases:
        stored, best = _means(ctx, store, "stored", reps), _means(ctx, store, "best-test", reps)
        paper_forest, paper_abrf = _published(spec, base, forest), _published("satrf:9", base, "eps-abrf")
        cols[base] = (stored[forest], paper_forest)
        cols[f"eps-ABRF ({base})"] = (stored["eps-abrf"], paper_abrf)
        cols[f"eps-ABRF best-test ({base})"] = (best["eps-abrf"], paper_abrf)
    return cols


def identified_protocol(ctx: ReportContext) -> pd.DataFrame:
    """``derived_protocol``'s table for the papers' identified protocol, on their repetitions 0-9."""
    return _ours_beside_paper(_columns(ctx, IDENTIFIED, PAPERS_REPS))


def derived_protocol(ctx: ReportContext) -> pd.DataFrame:
    """Per dataset: ours / paper / difference for RF, ERT and eps-ABRF on each, and eps-ABRF chosen
    on the test set (difference to the paper in brackets)."""
    return _ours_beside_paper(_columns(ctx))


def _ours_beside_paper(cols: dict[str, tuple[pd.Series, pd.Series]]) -> pd.DataFrame:
    rows = []
    for d in DATASETS:
        row = {"dataset": d}
        for key in ("RF", "ERT", "eps-ABRF (RF)", "eps-ABRF (ERT)"):
            ours, paper = cols[key][0][d], cols[key][1][d]
            row[key] = f"{ours:.3f} / {paper:.3f} / {ours - paper:+.3f}"
        for key in ("eps-ABRF best-test (RF)", "eps-ABRF best-test (ERT)"):
            ours, paper = cols[key][0][d], cols[key][1][d]
            row[key] = f"{ours:.3f} ({ours - paper:+.3f})"
        rows.append(row)
    return pd.DataFrame(rows)


def derived_gains(ctx: ReportContext) -> pd.DataFrame:
    """eps-ABRF − its forest on the UCI sets, ours beside the paper's, per forest; and how much
    choosing eps-ABRF's grid point on the test set raises it (range over the 11 datasets)."""
    cols = _columns(ctx)
    rows = []
    for base in ("RF", "ERT"):
        ours = cols[f"eps-ABRF ({base})"][0] - cols[base][0]
        paper = cols[f"eps-ABRF ({base})"][1] - cols[base][1]
        raise_by = cols[f"eps-ABRF best-test ({base})"][0] - cols[f"eps-ABRF ({base})"][0]
        row = {"forest": base}
        for d in UCI:
            row[d] = f"{ours[d]:+.3f} ({paper[d]:+.3f})"
        row["best-test − inner-CV (11 sets)"] = (
            f"{raise_by.min():+.3f} to {raise_by.max():+.3f} (largest on {raise_by.idxmax()})"
        )
        rows.append(row)
    return pd.DataFrame(rows)


def identified_gains(ctx: ReportContext) -> pd.DataFrame:
    """eps-ABRF − its forest per dataset under the papers' identified protocol, on their repetitions
    0-9, ours beside the paper's (RF from LARF Table 3 and ERT from Table 5 against SAT-RF Table 9)."""
    cols = _columns(ctx, IDENTIFIED, PAPERS_REPS)
    rows = []
    for d in DATASETS:
        row = {"dataset": d}
        for base in ("RF", "ERT"):
            ours = cols[f"eps-ABRF ({base})"][0][d] - cols[base][0][d]
            paper = cols[f"eps-ABRF ({base})"][1][d] - cols[base][1][d]
            row[f"eps-ABRF − {base}: ours (paper)"] = f"{ours:+.3f} ({paper:+.3f})"
        rows.append(row)
    return pd.DataFrame(rows)


def _ours_and_paper(cell: str) -> tuple[float, float]:
    """A gains cell ``+0.050 (+0.036)``: ours and the paper's, as printed."""
    ours, paper = cell.rstrip(")").split(" (")
    return float(ours), float(paper)


def _gain_words(gains: dict[str, float]) -> str:
    """Where a printed gain is above zero, below it, and level (a cell that prints as zero)."""
    up = [d for d, g in gains.items() if g > 0]
    down = [d for d, g in gains.items() if g < 0]
    level = [d for d, g in gains.items() if g == 0]
    return (
        f"gains on {how_many(len(up), len(gains))} datasets{in_brackets(up)}, loses on {len(down)}"
        f"{in_brackets(down)}" + (f" and is level on {listing(level)}" if level else "")
    )


def identified_gains_shown(frame: pd.DataFrame) -> str:
    """The identified protocol's gains table, then where ours gains and loses, read from its cells."""
    lines = []
    for column in frame.columns[1:]:
        gains = {d: _ours_and_paper(c)[0] for d, c in zip(frame.dataset, frame[column])}
        lines.append(f"- {column.split(':')[0]}: ours {_gain_words(gains)}.")
    return render_frame(frame, 3) + "\n\n" + "\n".join(lines)


def derived_gains_shown(frame: pd.DataFrame) -> str:
    """The derived protocol's UCI gains table, then on how many sets ours has the paper's sign and
    lies within R2_TOL of the paper's gain, read from its cells."""
    lines = []
    for row in frame.itertuples(index=False):
        cells = {d: _ours_and_paper(getattr(row, d)) for d in UCI}
        near = [d for d, (o, p) in cells.items() if abs(o - p) <= R2_TOL]
        signed = [d for d, (o, p) in cells.items() if (o > 0) - (o < 0) == (p > 0) - (p < 0)]
        far = [d for d in cells if d not in near]
        other_sign = [d for d in cells if d not in signed]
        lines.append(
            f"- {row.forest}: ours is within {R2_TOL:g} of the paper's gain on {how_many(len(near), len(cells))} "
            f"UCI sets{in_brackets(far, 'not on ')} and has its sign on {how_many(len(signed), len(cells))}"
            f"{in_brackets(other_sign, 'not on ')}."
        )
    return render_frame(frame, 3) + "\n\n" + "\n".join(lines)


def softmax_comparisons(ctx: ReportContext) -> pd.DataFrame:
    """eps-ABRF against the untrained Softmax model (eps = 0, tau = 1) over the datasets, per
    protocol and forest, on every stored repetition: the rows of the reports' compare.md (mean of
    B − A, Demšar's t-test with p Holm-adjusted over the two forests, Wilcoxon, wins)."""
    rows = []
    for protocol, bases in (("identified", IDENTIFIED), ("derived", BASES)):
        results = pd.concat([ctx.stored(store).results for _, _, store, _ in bases], ignore_index=True)
        comparison = compare_models(results, "softmax", "eps-abrf")
        holm = holm_adjust([c.ttest.p for c in comparison.bases])
        for c, p_holm in zip(comparison.bases, holm):
            rows.append(
                {
                    "protocol": protocol,
                    "forest": c.base,
                    "eps-ABRF − Softmax": f"{c.ttest.mean_diff:+.4f}",
                    "p (t-test)": f"{c.ttest.p:.3g}",
                    "p (Holm, 2 forests)": f"{p_holm:.3g}",
                    "p (Wilcoxon)": f"{c.wilcoxon[1]:.3g}",
                    "better/tie/worse": f"{len(c.record.wins)}/{len(c.record.ties)}/{len(c.record.losses)}",
                }
            )
    return pd.DataFrame(rows)


def softmax_verdicts_text(frame: pd.DataFrame) -> str:
    """What ``softmax_comparisons`` says, in words computed from its rows: per protocol the sign of
    eps-ABRF − Softmax on each forest and whether it is significant at ALPHA alone and after Holm's
    adjustment over the two forests, then whether the derived protocol's gain is smaller."""
    diff = "eps-ABRF − Softmax"
    lines = []
    for protocol, rows in frame.groupby("protocol", sort=False):
        words = [
            f"{_signed(float(r[diff]))} on the {r['forest']} ({significance_words(float(r['p (t-test)']))} alone, "
            f"{significance_words(float(r['p (Holm, 2 forests)']))} after Holm's adjustment)"
            for _, r in rows.iterrows()
        ]
        lines.append(f"Under the {protocol} protocol eps-ABRF − Softmax is {listing(words)}.")
    by = frame.pivot(index="forest", columns="protocol", values=diff).astype(float)
    if {"identified", "derived"} <= set(by.columns):
        smaller = [f for f in by.index if by.loc[f, "derived"] < by.loc[f, "identified"]]
        lines.append(
            f"The derived protocol's gain is smaller than the identified one's on "
            f"{how_many(len(smaller), len(by))} forests{in_brackets(smaller)}."
        )
    return " ".join(lines) + f" (Significance at the {ALPHA:g} level.)"


FIGURES = ("Friedman1", "Boston", "Wine")  # Figures 2-4 (Figure 1, Sparse, is judged as claims)
PANELS = (("sat-rf-yx-tau-eps", "tau", "eps"), ("sat-rf-yx-kappa-gamma", "kappa", "gamma"))


def figure_peaks(ctx: ReportContext) -> pd.DataFrame:
    """Per dataset of Figures 2-4, each panel's best grid point and its mean test R² over every
    stored repetition (the point ``afr reproduce satrf`` marks in the figure)."""
    grid = ctx.stored("satrf_surfaces").grid
    rows = []
    for dataset in FIGURES:
        row = {"dataset": dataset}
        for model, x, y in PANELS:
            surface = surface_table(grid, dataset, model, x, y)
            bx, by, value = surface.best()
            row[f"best ({x}, {y})"] = f"{x} = {bx:g}, {y} = {by:g} ({value:.3f})"
        rows.append(row)
    return pd.DataFrame(rows)


TAIL_DATASET, TAIL_FIRST = "Friedman3", 20  # the first run of the derived store held 20 repetitions


def friedman3_tail(ctx: ReportContext) -> pd.DataFrame:
    """Plain RF's test R² on Friedman 3 under the derived protocol (results/abrf_rf_derived), over
    splits: its standard deviation, minimum, and mean over the first 20 and over every repetition."""
    r = ctx.stored("abrf_rf_derived").results
    r2 = r[(r.dataset == TAIL_DATASET) & (r.model == "rf")].sort_values("rep").r2
    return pd.DataFrame(
        [
            {
                "reps": len(r2),
                "std": r2.std(),
                "min": r2.min(),
                "mean_first": r2.head(TAIL_FIRST).mean(),
                "first": TAIL_FIRST,
                "mean": r2.mean(),
            }
        ]
    )


DRAW_SEEDS = tuple(range(8))
DRAWS_CONFIG = PROJECT_ROOT / "configs" / "synthetic_draws.yaml"


def synthetic_draws(ctx: ReportContext) -> pd.DataFrame:
    """Expensive (8 runs of plain RF, 3 datasets x 20 repetitions): configs/synthetic_draws.yaml
    for each data seed in ``DRAW_SEEDS``, in a scratch folder; per seed and dataset, RF's mean
    test R²."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="afr-draws-") as scratch:
        for seed in DRAW_SEEDS:
            out = Path(scratch) / f"seed{seed}"
            run_experiment(
                load_experiment(DRAWS_CONFIG, [("data_seed", seed)], results_dir=out),
                RunOptions(jobs=1, progress=False, export=False),
                echo=lambda *_: None,
            )
            means = load_results(out).groupby("dataset").r2.mean()
            rows += [{"data_seed": seed, "dataset": d, "r2": float(v)} for d, v in means.items()]
    return pd.DataFrame(rows)


def draws_text(draws: pd.DataFrame) -> str:
    """The sentence the page quotes: how far plain RF on Friedman 3 moves between data seeds."""
    f3 = draws[draws.dataset == TAIL_DATASET].r2
    return (
        f"Across {draws.data_seed.nunique()} data seeds our RF on Friedman 3 ranges from {f3.min():.2f} to "
        f"{f3.max():.2f} (the study `synthetic_draws`: `configs/synthetic_draws.yaml` with `data_seed` "
        f"{draws.data_seed.min()}..{draws.data_seed.max()}, refit only by `afr report --studies`)."
    )


def friedman3_text(tail: pd.DataFrame) -> str:
    """The sentence the page quotes: how heavy-tailed plain RF's R² on Friedman 3 is over splits."""
    t = tail.iloc[0]
    return (
        f"Within our draw its R² is heavy-tailed over splits (RF: standard deviation {t['std']:.2f}, "
        f"minimum {t['min']:.2f}), so its mean was {t['mean_first']:.2f} over the first {int(t['first'])} "
        f"repetitions and is {t['mean']:.2f} over {int(t['reps'])}."
    )


SCALINGS = (
    ("standard", "standard (ours, as in every reference run)"),
    ("minmax", "min-max to [0, 1]"),
    ("none", "none (raw units)"),
    ("minmax_tau2", "min-max, tau = kappa = 2 (the authors' code's 0.5 factor)"),
)
SOFTMAX_TABLES = range(2, 8)  # Tables 2-7, the ones with a Softmax column


def _agreement_row(report: Path, model: str) -> tuple[int, int, int, float]:
    """(cells, as printed, within tol, mean Δ) of one model's R² column, from a committed report's
    "R²: agreement per column" table (afr report writes the reports before the pages)."""
    if not report.is_file():  # a results root without that store (a scratch --root)
        raise StoreMissing(f"{report}: no such report")
    text = report.read_text(encoding="utf-8")
    section = text.split("R²: agreement per column", 1)[1]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == model:
            return int(cells[1]), int(cells[2]), int(cells[3]), float(cells[4])
    raise ValueError(f"{report}: no agreement row for {model}")


def softmax_scaling(ctx: ReportContext) -> pd.DataFrame:
    """The untrained Softmax model's R² cells of Tables 2-7 (repetitions 0-9) under each feature
    scaling of configs/satrf_softmax_scaling.yaml, by the one agreement rule: the counts the
    reports under results/satrf_softmax/<scaling>/ give, summed over the tables."""
    rows = []
    for scaling, label in SCALINGS:
        counts = [
            _agreement_row(ctx.root / "satrf_softmax" / scaling / f"paper-satrf-{t}.md", "softmax")
            for t in SOFTMAX_TABLES
        ]
        n = sum(c[0] for c in counts)
        rows.append(
            {
                "scaling": label,
                "within 0.02": f"{sum(c[2] for c in counts)}/{n}",
                "as printed": f"{sum(c[1] for c in counts)}/{n}",
                "mean Δ": f"{sum(c[0] * c[3] for c in counts) / n:+.3f}".replace("-", "−"),
            }
        )
    return pd.DataFrame(rows)


SATRF_STORES = ("satrf_rf", "satrf_ert")  # Tables 2-7's stores, the papers' 100 repetitions
VARIANT_PAIRS = (
    ("sat-rf-y", "sat-rf-yx", "-yx against -y"),
    ("sat-rf", "sat-rf-y2", "two-head SAT-RF-y against SAT-RF"),
    ("softmax-y", "sat-rf-y", "SAT-RF-y against its untrained Softmax"),
)


def variant_tests(ctx: ReportContext) -> pd.DataFrame:
    """The paired tests of the page's misses, as compare.md computes them (mean of B − A over the
    datasets, Demšar's t-test, Wilcoxon, better/tie/worse at the printed precision), on every stored
    repetition and on the papers' repetitions 0-9."""
    results = pd.concat([ctx.stored(store).results for store in SATRF_STORES], ignore_index=True)
    rows = []
    for a, b, what in VARIANT_PAIRS:
        for label, view in _rep_views(results):
            for c in compare_models(view, a, b).bases:
                rows.append(
                    {
                        "comparison": f"{what} ({b} − {a})",
                        "forest": c.base,
                        "repetitions": label,
                        "mean": f"{c.ttest.mean_diff:+.4f}",
                        "p (t-test)": f"{c.ttest.p:#.2g}",
                        "p (Wilcoxon)": f"{c.wilcoxon[1]:#.2g}",
                        "better/tie/worse": f"{len(c.record.wins)}/{len(c.record.ties)}/{len(c.record.losses)}",
                    }
                )
    return pd.DataFrame(rows)


def _rep_views(results: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """Every stored repetition, and the papers' repetitions 0-9 beside it when the stores hold more
    (a scratch root of fewer would repeat the same rows), each labelled by the repetitions it holds."""
    views = [("all stored", results)]
    if results.rep.nunique() > PAPERS_REPS:
        papers = results[results.rep < PAPERS_REPS]
        views.append((repetitions_label(papers.rep.unique()), papers))
    return views


def _signed(mean: float) -> str:
    return "positive" if mean > 0 else "negative" if mean < 0 else "zero"


def _test_words(row: pd.Series) -> str:
    p = float(row["p (t-test)"])
    return f"{_signed(float(row['mean']))} on the {row['forest']} ({significance_words(p)}, p = {row['p (t-test)']})"


def variant_verdicts_text(frame: pd.DataFrame) -> str:
    """What ``variant_tests`` says, in words computed from its rows: per comparison the sign of the
    mean difference B − A on each forest and whether Demšar's t-test is significant at ALPHA (only
    when the printed p is below it), on every stored repetition, then whether the papers'
    repetitions 0-9 give the same."""
    lines = []
    for comparison, rows in frame.groupby("comparison", sort=False):
        views = list(dict.fromkeys(rows.repetitions))
        every = rows[rows.repetitions == views[0]]
        line = (
            f"- {comparison}: the mean difference is {listing([_test_words(r) for _, r in every.iterrows()])} "
            f"on every stored repetition"
        )
        for view in views[1:]:
            papers = rows[rows.repetitions == view]
            same = all(
                (_signed(float(a["mean"])), float(a["p (t-test)"]) < ALPHA)
                == (_signed(float(b["mean"])), float(b["p (t-test)"]) < ALPHA)
                for (_, a), (_, b) in zip(every.iterrows(), papers.iterrows())
            )
            line += (
                f"; on repetitions {view} the same signs and significance"
                if same
                else f"; on repetitions {view} it is {listing([_test_words(r) for _, r in papers.iterrows()])}"
            )
        lines.append(line + ".")
    return "\n".join([f"Each comparison in words, significance by Demšar's t-test at the {ALPHA:g} level:", "", *lines])


def yx_over_y_text(frame: pd.DataFrame) -> str:
    """The page's sentence on what -yx adds over -y, counted from ``variant_tests``' -yx against -y
    rows on every stored repetition: the (dataset, forest) pairs where -yx is better, tied (equal
    mean R² at three decimals) and worse, and the sign and significance per forest."""
    rows = frame[(frame.comparison.str.startswith(VARIANT_PAIRS[0][2])) & (frame.repetitions == "all stored")]
    wins, ties, losses = (sum(int(r["better/tie/worse"].split("/")[i]) for _, r in rows.iterrows()) for i in range(3))
    n = wins + ties + losses
    return (
        f"On every stored repetition -yx is better than -y in {how_many(wins, n)} (dataset, forest) pairs, "
        f"has the same mean R² to three decimals in {ties} and is worse in {losses}; the mean difference is "
        f"{listing([_test_words(r) for _, r in rows.iterrows()])} (the first rows of the study `variant_tests` "
        f"below; `compare.md`)."
    )


VARIANTS = ("sat-rf-yx", "sat-rf-x", "sat-rf-y")  # the one-head variants; -yx first


def yx_best(ctx: ReportContext) -> pd.DataFrame:
    """The (dataset, forest) pairs where SAT-RF-yx's mean R² at the printed precision (three
    decimals) is strictly above both other variants', on every stored repetition and on 0-9."""
    results = pd.concat([ctx.stored(store).results for store in SATRF_STORES], ignore_index=True)
    rows = []
    for label, view in _rep_views(results):
        means = (
            view[view.model.isin(VARIANTS)].groupby(["dataset", "base", "model"]).r2.mean().unstack("model").round(3)
        )
        best = means[(means[VARIANTS[0]] > means[VARIANTS[1]]) & (means[VARIANTS[0]] > means[VARIANTS[2]])]
        rows.append(
            {
                "repetitions": label,
                "pairs": len(means),
                "best": [(d, b, *(float(r[v]) for v in VARIANTS)) for (d, b), r in best.iterrows()],
            }
        )
    return pd.DataFrame(rows)


def yx_best_text(frame: pd.DataFrame) -> str:
    """The page's sentence: how often -yx is strictly the best variant, and where."""

    def where(best: list) -> str:
        return "; ".join(f"{d} on the {b}: {yx:.3f} against {x:.3f} (-x) and {y:.3f} (-y)" for d, b, yx, x, y in best)

    every = frame.iloc[0]
    papers = "".join(
        f", and in {len(r.best)} on repetitions {r.repetitions}" + (f" ({where(r.best)})" if r.best else "")
        for r in frame.iloc[1:].itertuples()
    )
    return (
        f"SAT-RF-yx is strictly the best variant in {len(every.best)} of {every.pairs} (dataset, forest) pairs on "
        f"every stored repetition" + (f" ({where(every.best)})" if every.best else "") + papers + "."
    )


def table9_gap(ctx: ReportContext) -> pd.DataFrame:
    """Table 9 on the papers' repetitions 0-9, per forest: how far the paper's SAT-RF column is above
    ours (inner CV, mean over the datasets), and in how many cells our eps-ABRF is within the
    agreement tolerance of the paper's, under inner CV and under best-test."""
    cols = _columns(ctx, IDENTIFIED, PAPERS_REPS)
    rows = []
    for (base, _, _, _), store in zip(IDENTIFIED, SATRF_STORES):
        satrf = _means(ctx, store, "stored", PAPERS_REPS)["sat-rf"]
        row = {
            "forest": base,
            "datasets": len(DATASETS),
            "satrf_gap": float((_published("satrf:9", base, "sat-rf") - satrf).mean()),
        }
        for key, label in ((f"eps-ABRF ({base})", "within"), (f"eps-ABRF best-test ({base})", "within_best")):
            ours, paper = cols[key]
            row[label] = int(((ours - paper).abs() <= R2_TOL).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def table9_gap_text(frame: pd.DataFrame) -> str:
    """The page's bullets on SAT-RF against eps-ABRF: where the paper's advantage sits."""
    rf, ert = frame.iloc[0], frame.iloc[1]
    return (
        f"- The paper's SAT-RF column (Table 9) is on average {rf.satrf_gap:.3f} (RF) and {ert.satrf_gap:.3f} (ERT) "
        f"above ours (inner CV, repetitions 0-9).\n"
        f"- Our eps-ABRF is within {R2_TOL:g} of the paper in {rf.within}/{rf.datasets} (RF) and "
        f"{ert.within}/{ert.datasets} (ERT) cells, and in {rf.within_best}/{rf.datasets} and "
        f"{ert.within_best}/{ert.datasets} under best-test."
    )


COMPARE_REPORT = Path("satrf") / "compare.md"  # the SAT-RF report's paired comparisons, written by afr report
FORESTS = ("rf", "ert")
VARIANTS_AND_ABRF = ("eps-abrf", "sat-rf", "sat-rf-y", "sat-rf-x")


def compare_family(ctx: ReportContext) -> pd.DataFrame:
    """The overview rows of the SAT-RF report's compare.md (one family of paired tests): per row B,
    A, base, the t-test's p raw and Holm-adjusted over the family, and the Bayesian signed-rank
    test's P(=) and P(B)."""
    path = ctx.root / COMPARE_REPORT
    if not path.is_file():
        raise StoreMissing(str(path))
    table = report_table(path)
    holm = next(c for c in table.columns if c.startswith("p (Holm"))
    rows = []
    for row in table.to_dict("records"):
        b, a = row["B − A"].split(" − ")
        _, equal, better = (float(p) for p in row["P(A) / P(=) / P(B)"].split(" / "))
        rows.append(
            {
                "b": b,
                "a": a,
                "base": row["base"],
                "p": float(row["p (t-test)"]),
                "p_holm": float(row[holm]),
                "p_equal": equal,
                "p_b": better,
            }
        )
    return pd.DataFrame(rows)


def compare_family_text(family: pd.DataFrame) -> str:
    """The page's sentences on the family: what Holm's adjustment and the Bayesian test say."""
    gains = family[family.a.isin(FORESTS)]
    alike = family[family.a.isin(VARIANTS_AND_ABRF) & family.b.str.startswith("sat-rf") & (family.base != "RF vs ERT")]
    alone, adjusted = int((family.p < ALPHA).sum()), int((family.p_holm < ALPHA).sum())
    return (
        f"Over the {len(family)} rows of `compare.md`, {alone} have p < {ALPHA:g} alone and "
        f"{adjusted or 'none'} after Holm's adjustment: the SAT-RF gains over RF and ERT (p {gains.p.min():.2g} to "
        f"{gains.p.max():.2g}) become {gains.p_holm.min():.2g}"
        + (f" to {gains.p_holm.max():.2g}" if gains.p_holm.max() != gains.p_holm.min() else "")
        + f". The Bayesian signed-rank test (ROPE ±{DEFAULT_ROPE:g} R²) still gives those gains "
        f"{gains.p_b.min():.2f}-{gains.p_b.max():.2f} probability of being real and practically relevant, and "
        f"calls sat-rf against eps-ABRF and the variants against each other practically equivalent "
        f"(P(=) ≥ {alike.p_equal.min():.2f})."
    )


ERT_TABLES = ("3", "5", "7")  # the SAT-RF paper's ERT tables (-y, -x, -yx), each with a Softmax column


def softmax_ties(ctx: ReportContext) -> pd.DataFrame:
    """Per ERT table of the paper: on how many datasets its printed Softmax R² equals its ERT R²."""
    rows = []
    for table in ERT_TABLES:
        printed = ctx.published_table(f"satrf:{table}")
        wide = printed[printed.metric == "r2"].pivot_table(
            index="dataset", columns="model", values="value_str", aggfunc="first"
        )
        rows.append({"table": table, "equal": int((wide["softmax"] == wide["ert"]).sum()), "datasets": len(wide)})
    return pd.DataFrame(rows)


def softmax_ties_text(ties: pd.DataFrame) -> str:
    """The page's sentence on the pattern min-max scaling explains."""
    low, high = ties.equal.min(), ties.equal.max()
    return (
        f"In the paper's ERT tables ({', '.join(ties.table)}) the printed Softmax column equals the ERT column "
        f"exactly on {low if low == high else f'{low}-{high}'} of the {ties.datasets.max()} datasets."
    )


def sparse_softmax(ctx: ReportContext) -> pd.DataFrame:
    """Sparse's Softmax R² cells of Tables 2-7 (repetitions 0-9): ours − the paper's under each
    scaling, from the reports' committed cells (results/satrf_softmax/<scaling>/paper-satrf-N.csv)."""
    rows = []
    for scaling, _ in SCALINGS:
        for table in SOFTMAX_TABLES:
            path = ctx.root / "satrf_softmax" / scaling / f"paper-satrf-{table}.csv"
            if not path.is_file():
                raise StoreMissing(str(path))
            cells = pd.read_csv(path)
            cell = cells[(cells.dataset == "Sparse") & (cells.model == "softmax") & (cells.metric == "r2")]
            rows.append({"scaling": scaling, "table": table, "diff": float(cell["diff"].iloc[0])})
    return pd.DataFrame(rows)


def sparse_softmax_text(cells: pd.DataFrame) -> str:
    """The page's sentence on Sparse: min-max stays below the paper, standardised features overshoot."""
    diff = cells.groupby("scaling")["diff"]
    low, high = diff.min(), diff.max()
    return (
        f"Sparse stays {-high['minmax']:.2f}-{-low['minmax']:.2f} below under min-max, while standardised features "
        f"overshoot it by {low['standard']:.2f}-{high['standard']:.2f} (Tables 2-7, the study `sparse_softmax`)."
    )


HELD = (
    "satrf_rf",
    "satrf_ert",
    "satrf_surfaces",
    "satrf_softmax/standard",
    "satrf_softmax/minmax",
    "satrf_softmax/none",
    "satrf_softmax/minmax_tau2",
    "abrf_rf",
    "abrf_ert",
    "abrf_rf_derived",
    "abrf_ert_derived",
    "satrf_code_reading",
)  # the stores this page describes


def stores_held(ctx: ReportContext) -> pd.DataFrame:
    """What each store of the page holds now (``afr status``): the rows of its generated sentence on
    repetitions, datasets and bases, under the root the page is built for (``holdings_text``)."""
    return holdings(ctx, HELD)


TEXT_STORE = "satrf_rf"  # the text reading, the committed reference run on the RF
CODE_STORE = "satrf_code_reading"  # the same models under the authors' code reading, ids + "-code"
# The RF columns both stores hold: (table, the published model, our model). Tables 2, 4 and 6 print
# each variant beside its Softmax point; Table 9 SAT-RF (best of three) beside eps-ABRF.
CODE_COLUMNS = (
    ("2", "softmax", "softmax-y"),
    ("2", "sat-rf-y", "sat-rf-y"),
    ("4", "softmax", "softmax-x"),
    ("4", "sat-rf-x", "sat-rf-x"),
    ("6", "softmax", "softmax-yx"),
    ("6", "sat-rf-yx", "sat-rf-yx"),
    ("9", "sat-rf (RF)", "sat-rf"),
    ("9", "eps-abrf (RF)", "eps-abrf"),
)
READINGS = ("text", "code")


def _reading_means(ctx: ReportContext, store: str, suffix: str = "") -> pd.DataFrame:
    """Mean test R² on repetitions 0-9 of the inner-CV (stored) rows, datasets × our model ids
    (the suffix taken off)."""
    frames = ctx.stored(store)
    view = results_in_view(frames.results, frames.grid, "stored", PAPERS_REPS)
    if suffix:
        view = view[view.model.str.endswith(suffix)].assign(model=lambda v: v.model.str[: -len(suffix)])
    return view.groupby(["dataset", "model"]).r2.mean().unstack("model")


def code_reading(ctx: ReportContext) -> pd.DataFrame:
    """Tables 2, 4, 6 and 9 (R², RF) on repetitions 0-9, per column and dataset: the printed cell,
    the text reading (satrf_rf) and the authors' code reading (satrf_code_reading), each reading
    with its agreement class against the printed cell (as printed, within tol or miss)."""
    means = {"text": _reading_means(ctx, TEXT_STORE), "code": _reading_means(ctx, CODE_STORE, "-code")}
    rows = []
    for table, published, ours in CODE_COLUMNS:
        printed = printed_cells(f"satrf:{table}")
        for d in DATASETS:
            shown = printed[(d, published, "r2")]
            row = {"table": table, "model": ours, "dataset": d, "paper": float(shown)}
            for reading in READINGS:
                value = means[reading].loc[d, ours]
                row[reading] = value
                row[f"{reading} agrees"] = agreement(value, shown, "r2")
            rows.append(row)
    return pd.DataFrame(rows)


def code_reading_counts(ctx: ReportContext) -> pd.DataFrame:
    """Per reading, how many of the cells of ``code_reading`` agree with the paper (as printed,
    within tolerance, missed)."""
    return reading_agreement_counts(code_reading(ctx), READINGS)


def code_reading_text(frame: pd.DataFrame) -> str:
    """The page's sentence on ``code_reading`` (``two_readings_text``)."""
    return two_readings_text(frame)
