"""CI regression guard: a reduced protocol's numbers against committed golden numbers and the papers.

Two checks, both printed as one diff table, and both two-sided: a number that moves beyond
tolerance in either direction fails, so a leak that inflates scores fails CI as surely as a bug
that lowers them (an intended change is committed with ``afr regress --update``):
- golden: every (dataset, base, model, metric) mean of the reduced run must lie within the
  metric's tolerance of the committed golden value;
- published: the plain forests' R^2 on every dataset of the run must lie within a tolerance of
  the papers' baseline columns, which the papers' identified protocol (configs/regress.yaml)
  reproduces to the third decimal; where the papers' data file documents a known gap (Boston),
  the forest must stay at that expected value instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from afr_cli.errors import AfrInputError

GOLDEN_COLUMNS = ["dataset", "base", "model", "metric", "mean"]
# Allowed move against golden, either way: absolute for R^2, relative for the error metrics.
TOLERANCES = {"r2": ("abs", 0.01), "mae": ("rel", 0.02), "rmse": ("rel", 0.02)}
BASELINE_TOLERANCE = 0.005
# An expected value (a documented gap) is a deterministic number of ours: held tighter.
EXPECTED_TOLERANCE = 0.002
FAILING = ("REGRESSED", "MOVED UP", "MISSING")


@dataclass
class RegressReport:
    table: pd.DataFrame

    @property
    def failed(self) -> bool:
        return bool(self.table.status.isin(FAILING).any())


def _worse_by(metric: str, ours: float, reference: float) -> float:
    """How much worse ours is than the reference, in the tolerance's units (< 0: better)."""
    kind, _ = TOLERANCES[metric]
    worse = (reference - ours) if metric == "r2" else (ours - reference)
    return worse / abs(reference) if kind == "rel" and reference else worse


def golden_rows(summary: pd.DataFrame, golden: pd.DataFrame) -> list[dict]:
    """Compare a run's long summary with the golden one, cell by cell."""
    merged = golden.merge(summary, on=["dataset", "base", "model", "metric"], how="left", suffixes=("_golden", ""))
    rows = []
    for r in merged.itertuples():
        kind, tol = TOLERANCES[r.metric]
        if pd.isna(r.mean):
            status, worse = "MISSING", np.nan
        else:
            worse = _worse_by(r.metric, r.mean, r.mean_golden)
            status = "REGRESSED" if worse > tol + 1e-12 else ("MOVED UP" if worse < -tol - 1e-12 else "ok")
        rows.append(
            {
                "check": "golden",
                "dataset": r.dataset,
                "base": r.base,
                "model": r.model,
                "metric": r.metric,
                "reference": r.mean_golden,
                "ours": r.mean,
                "diff": r.mean - r.mean_golden,
                "tolerance": f"{tol:g}{' rel' if kind == 'rel' else ''}",
                "status": status,
            }
        )
    return rows


def baseline_rows(summary: pd.DataFrame, forest_model: str, base_kinds: dict[str, str]) -> list[dict]:
    """Plain-forest R^2 against the papers' baseline columns (every dataset they report), or
    against the expected value where the papers' data file documents a known gap."""
    from afr_cli.catalogue.knowledge import baseline_sources, expected_baselines
    from afr_cli.catalogue.published import published_table

    sources, expected = baseline_sources(), expected_baselines()
    rows = []
    ours = summary[(summary.model == forest_model) & (summary.metric == "r2")]
    for r in ours.itertuples():
        key = (r.base, base_kinds.get(r.base))
        if key not in sources:  # a base id the papers print, but another ensemble behind it
            continue
        spec, paper_model = sources[key]
        if (*key, r.dataset) in expected:
            check, ref, tol = f"expected gap to {spec}", expected[(*key, r.dataset)], EXPECTED_TOLERANCE
        else:
            pub = published_table(spec)
            hit = pub[(pub.dataset == r.dataset) & (pub.model == paper_model) & (pub.metric == "r2")]
            if hit.empty:
                continue
            check, ref, tol = f"published {spec}", float(hit.value.iloc[0]), BASELINE_TOLERANCE
        diff = r.mean - ref
        status = "ok" if abs(diff) <= tol + 1e-12 else ("REGRESSED" if diff < 0 else "MOVED UP")
        rows.append(
            {
                "check": check,
                "dataset": r.dataset,
                "base": r.base,
                "model": r.model,
                "metric": "r2",
                "reference": ref,
                "ours": r.mean,
                "diff": diff,
                "tolerance": f"{tol:g}",
                "status": status,
            }
        )
    return rows


def read_golden(path: Path) -> pd.DataFrame:
    """The committed golden numbers; a missing file is an input error saying how to create it."""
    if not path.is_file():
        raise AfrInputError(f"{path}: no golden results; create them with `afr regress --update`")
    golden = pd.read_csv(path)
    missing = set(GOLDEN_COLUMNS) - set(golden.columns)
    if missing:
        raise AfrInputError(f"{path}: missing columns {sorted(missing)}; expected {','.join(GOLDEN_COLUMNS)}")
    return golden[GOLDEN_COLUMNS]


def compare(
    summary: pd.DataFrame, golden: pd.DataFrame, forest_model: str, base_kinds: dict[str, str]
) -> RegressReport:
    """Every golden value and every plain-model baseline checked against this run's summary;
    ``base_kinds`` maps each base id to its ensemble kind (which published column applies)."""
    rows = golden_rows(summary, golden) + baseline_rows(summary, forest_model, base_kinds)
    return RegressReport(pd.DataFrame(rows))
