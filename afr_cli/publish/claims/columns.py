"""The numbers a claim is about: a column of a published table, and the same column of ours.

A claim names columns as the paper prints them: (table, base, model). The paper's side is
that table's cells; ours is the mean of the matching model of ours per dataset (the table's
model aliases and tree-count columns resolved as for ``afr table --paper``), over the
repetitions both columns of a comparison hold, so the two means of a dataset are paired.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from afr_cli.catalogue.knowledge import unit_axes
from afr_cli.catalogue.published import published_table
from afr_cli.errors import AfrInputError
from afr_cli.tables.paper_compare import model_aliases, name_plain_forests, our_key


@dataclass(frozen=True)
class ColumnRef:
    """One printed column: ``paper:table``, base and model as the paper names them."""

    spec: str
    base: str
    model: str

    def label(self) -> str:
        return f"{self.model} ({self.base}, {self.spec})"

    def ours(self) -> tuple[str, str]:
        """Our (base, model) for this column."""
        return our_key(self.base, model_aliases(self.spec).get(self.model, self.model))


def column_ref(raw, paper_id: str, table: str | None, where: str) -> ColumnRef:
    """``[BASE, MODEL]`` (in the claim's table) or ``{table, base, model}``."""
    if isinstance(raw, (list, tuple)) and len(raw) == 2:
        if table is None:
            raise AfrInputError(f"{where}: a column given as [base, model] needs the claim's table")
        return ColumnRef(f"{paper_id}:{table}", str(raw[0]), str(raw[1]))
    if isinstance(raw, dict) and {"base", "model"} <= set(raw):
        return ColumnRef(f"{paper_id}:{raw.get('table', table)}", str(raw["base"]), str(raw["model"]))
    raise AfrInputError(f"{where}: {raw!r} is not a column; allowed: [base, model] or {{table, base, model}}")


def _axis_label(dataset: str, values: dict) -> str:
    return f"{dataset} [{', '.join(f'{k}={v:g}' for k, v in values.items())}]" if values else dataset


def published_column(ref: ColumnRef, metric: str) -> pd.Series:
    """The paper's printed values of a column, by dataset (with unit axes in the label)."""
    table = published_table(ref.spec)
    cells = table[(table["base"] == ref.base) & (table["model"] == ref.model) & (table["metric"] == metric)]
    axes = [a for a in unit_axes() if a in cells.columns]
    labels = [_axis_label(r["dataset"], {a: r[a] for a in axes}) for r in cells.to_dict("records")]
    return pd.Series(cells["value"].to_numpy(dtype=float), index=labels, name=ref.label())


def _our_rows(results: pd.DataFrame, ref: ColumnRef) -> pd.DataFrame:
    """Our rows of the column, labelled as the paper's cells: with the unit axes its table prints."""
    base, model = ref.ours()
    rows = results[(results["base"] == base) & (results["model"] == model)]
    scales = unit_axes()
    printed = published_table(ref.spec).columns
    axes = [a for a in scales if a in rows.columns and a in printed]
    labels = [
        _axis_label(d, {a: v / scales[a] for a, v in zip(axes, vals)})
        for d, *vals in rows[["dataset", *axes]].itertuples(index=False)
    ]
    return rows.assign(label=labels)


def our_columns(results: pd.DataFrame, refs: list[ColumnRef], metric: str, paired: bool = True) -> pd.DataFrame:
    """Our per-dataset means of each column (datasets × columns); with ``paired`` only over the
    (dataset, repetition) every column holds, so a comparison stays on the same splits."""
    results = name_plain_forests(results)
    parts = [_our_rows(results, ref)[["label", "rep", metric]].rename(columns={metric: ref.label()}) for ref in refs]
    if paired:
        merged = parts[0]
        for part in parts[1:]:
            merged = merged.merge(part, on=["label", "rep"], how="inner")
        means = merged.groupby("label")[[ref.label() for ref in refs]].mean()
    else:
        means = pd.concat([p.groupby("label")[p.columns[-1]].mean() for p in parts], axis=1)
    means = means.dropna()
    return means


def shared_reps(results: pd.DataFrame, refs: list[ColumnRef], metric: str) -> tuple[int, int]:
    """Fewest and most repetitions behind a dataset's means of these columns (paired)."""
    results = name_plain_forests(results)
    parts = [_our_rows(results, ref)[["label", "rep"]] for ref in refs]
    merged = parts[0]
    for part in parts[1:]:
        merged = merged.merge(part, on=["label", "rep"], how="inner")
    counts = merged.groupby("label")["rep"].nunique()
    return (int(counts.min()), int(counts.max())) if len(counts) else (0, 0)
