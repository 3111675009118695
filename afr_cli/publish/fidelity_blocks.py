"""Generated blocks of docs/reproduction.md's fidelity checks. ``fidelity:rep_count``: one published
baseline cell against our same recipe over 10 and over 100 repetitions (why the published baselines
are 10-repetition means). ``fidelity:raw_features``: the re-runs under raw features (``preprocess.scale: none``): how
far the SAT-RF Softmax cells and three epsM-w-LARF cells move from the papers' numbers when the features
are not standardised, against the same cells standardised (the reference default). It reads only
committed files: the Softmax scaling study's reports (``results/satrf_softmax/<scaling>/``, written
by ``afr report``), the LARF fidelity re-run's export (``results/fidelity/larf_rf_none``), the
reference LARF store's export and the LARF paper's published table, so docs/reproduction.md quotes
these numbers from a block instead of by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from afr_cli.publish.context import ReportContext

RAW_FEATURES_BLOCK = "fidelity:raw_features"
SOFTMAX_STUDY = Path("satrf_softmax")  # under the results root: one folder of reports per scaling
SOFTMAX_TABLES = range(2, 8)  # the SAT-RF paper's Tables 2-7, each with a Softmax R² column
SOFTMAX_SHOWN = (3, ("Regression", "Boston", "Concrete"))  # the cells quoted one by one
REP_COUNT_STORE, REP_COUNT_CELL = (
    Path("satrf_rf"),
    ("satrf", 2, "RF", "Friedman2", "rf"),
)  # paper, table, base, dataset, model
REP_COUNT_BLOCK = "fidelity:rep_count"
LARF_RAW, LARF_STANDARD = Path("fidelity") / "larf_rf_none", Path("larf_rf")
LARF_MODEL, LARF_TABLE, LARF_DATASETS = "em-w-larf", 3, ("Friedman3", "Sparse", "Airfoil")
PAPER_REPS = 10  # the papers' forest columns are means over repetitions 0-9


def _name(dataset: str) -> str:
    return re.sub(r"(Friedman)(\d)", r"\1 \2", dataset)


def _softmax_r2(root: Path, scaling: str) -> pd.DataFrame:
    """The Softmax R² cells of Tables 2-7 in one scaling's committed reports (ours and the paper's)."""
    frames = [
        pd.read_csv(Path(root) / SOFTMAX_STUDY / scaling / f"paper-satrf-{t}.csv").assign(table=t)
        for t in SOFTMAX_TABLES
    ]
    cells = pd.concat(frames)
    return cells[(cells.model == "softmax") & (cells.metric == "r2")]


def _larf_means(ctx: ReportContext, store: Path) -> pd.Series:
    """epsM-w-LARF's mean test R² on RF per dataset over the papers' repetitions, from a store or export."""
    rows = ctx.stored(store).results
    rows = rows[(rows.model == LARF_MODEL) & (rows.base == "RF") & (rows.rep < PAPER_REPS)]
    return rows.groupby("dataset")["r2"].mean()


def rep_count_block(ctx: ReportContext) -> str | None:
    """The plain RF's R² on one dataset over the papers' 10 repetitions and over all stored ones,
    against the printed value; None when the store is missing under the context's root."""
    frames = ctx.store(REP_COUNT_STORE)
    if frames is None:
        return None
    paper, table, base, dataset, model = REP_COUNT_CELL
    rows = frames.results
    rows = rows[(rows.base == base) & (rows.dataset == dataset) & (rows.model == model)]
    published = ctx.published_table(f"{paper}:{table}")
    printed = published[
        (published.base == base)
        & (published.dataset == dataset)
        & (published.model == model)
        & (published.metric == "r2")
    ]["value"].iloc[0]
    return (
        f"With all {rows.rep.nunique()} stored repetitions (`results/{REP_COUNT_STORE.as_posix()}`) the same recipe "
        f"gives e.g. {base} {rows.r2.mean():.3f} on {_name(dataset)}, against the printed {printed:.3f} and "
        f"{rows[rows.rep < PAPER_REPS].r2.mean():.3f} over repetitions 0-{PAPER_REPS - 1}."
    )


def raw_features_block(ctx: ReportContext) -> str | None:
    """Two bullets: the Softmax cells and the LARF cells under raw features, against the paper and
    against standardised features; None when a source is missing under the context's root or lacks a
    dataset the block quotes (a reproduction on a subset of the datasets)."""
    root = ctx.root
    if not (
        all((root / SOFTMAX_STUDY / s / "paper-satrf-2.csv").is_file() for s in ("none", "standard"))
        and ctx.store(LARF_RAW) is not None
        and ctx.store(LARF_STANDARD) is not None
    ):
        return None
    raw, standard = _softmax_r2(root, "none"), _softmax_r2(root, "standard")
    table, datasets = SOFTMAX_SHOWN

    def shown(cells: pd.DataFrame, column: str) -> str:
        picked = cells[cells.table == table].set_index("dataset").loc[list(datasets), column]
        return " / ".join(f"{v:.3f}" for v in picked)

    published = ctx.published_table(f"larf:{LARF_TABLE}")
    published = published[
        (published.base == "RF") & (published.model == LARF_MODEL) & (published.metric == "r2")
    ].set_index("dataset")["value"]
    larf_raw, larf_standard = _larf_means(ctx, LARF_RAW), _larf_means(ctx, LARF_STANDARD)
    shown_cells = [set(cells[cells.table == table].dataset) for cells in (raw, standard)]
    if not all(set(datasets) <= have for have in shown_cells) or not all(
        set(LARF_DATASETS) <= set(means.index) for means in (larf_raw, larf_standard, published)
    ):
        return None  # a root reproduced on other datasets holds nothing this block quotes
    larf = ", ".join(
        f"{_name(d)} {larf_raw[d]:.3f} (paper {published[d]:.3f}, standardised {larf_standard[d]:.3f})"
        for d in LARF_DATASETS
    )
    return (
        f"- SAT-RF Softmax (the committed `results/{SOFTMAX_STUDY.as_posix()}/none` store): Table {table} "
        f"{' / '.join(datasets)} {shown(raw, 'ours')}, against the paper's {shown(raw, 'published')} and "
        f"standardised {shown(standard, 'ours')}. Over all {len(raw)} Softmax R² cells of Tables "
        f"{SOFTMAX_TABLES[0]}-{SOFTMAX_TABLES[-1]} the mean abs Δ is {raw['diff'].abs().mean():.3f}, against "
        f"{standard['diff'].abs().mean():.3f} standardised.\n"
        f"- LARF (`results/{LARF_RAW.as_posix()}`, RF, repetitions 0-{PAPER_REPS - 1}, full grid; standardised: "
        f"`results/{LARF_STANDARD.as_posix()}` on the same repetitions, solved by AUTO): epsM-w-LARF {larf}."
    )


def fidelity_blocks(ctx: ReportContext) -> dict[str, str]:
    """The blocks, by name (one whose sources are missing under the context's root is left out)."""
    blocks = {REP_COUNT_BLOCK: rep_count_block(ctx), RAW_FEATURES_BLOCK: raw_features_block(ctx)}
    return {name: body for name, body in blocks.items() if body is not None}
