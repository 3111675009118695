"""Which feature preprocessing reproduces the papers' plain-forest columns as printed?

Trees are invariant to a per-feature affine scaling only up to float rounding (split
thresholds are midpoints of scaled values), so each preprocessing gives slightly different
forests. The study (a YAML file, ``configs/fidelity/preprocessing.yaml``) names the forests
(an experiment config), the candidate preprocessings and the published baseline cells; every
forest is fitted through the protocol's own ``run_unit``, so "standard" here is exactly what
the committed stores hold. Only baselines decide: no attention model takes part.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.stats import binomtest

from afr_cli.analysis.stats import matches_printed
from afr_cli.catalogue.published import load_published
from afr_cli.config.experiment import SCALES, Base, Experiment, load_experiment, read_yaml_file
from afr_cli.core.params import is_integer
from afr_cli.engine.experiment_data import load_experiment_data
from afr_cli.engine.protocol import SCALERS, run_unit
from afr_cli.errors import AfrInputError

FIT_ON = ("train", "whole")  # a scaler fitted on each training part, or on the whole dataset first
METRICS = ("r2", "mae")
_STUDY_KEYS = {"experiment", "reps", "candidates", "cells"}
_CANDIDATE_KEYS = {"name", "scale", "fit_on"}
_CELL_KEYS = {"paper", "tables", "models"}
SIGN_TEST_ALPHA = 0.05  # a clear winner beats every other candidate by a two-sided sign test at this level


@dataclass(frozen=True)
class Candidate:
    """One preprocessing: a scaler (or none) fitted on the training part or the whole dataset."""

    name: str
    scale: str
    fit_on: str = "train"


@dataclass(frozen=True)
class CellSelection:
    """Published cells of one paper: these tables, these plain-forest model ids, each compared
    with our base of the given id (None: the cell's own base column, RF or ERT)."""

    paper: str
    tables: tuple[str, ...]
    models: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class Study:
    experiment: Experiment
    reps: int
    candidates: tuple[Candidate, ...]
    cells: tuple[CellSelection, ...]
    source: str


def load_study(path: str | Path) -> Study:
    """Read and validate a study file; bad input is one AfrInputError naming file and key."""
    path = Path(path)
    src = str(path)
    raw = read_yaml_file(path, "study")
    if not isinstance(raw, dict):
        raise AfrInputError(f"{src}: the top level must be a mapping; allowed keys: {', '.join(sorted(_STUDY_KEYS))}")
    _no_unknown(raw, _STUDY_KEYS, src, "top level")
    for key in ("experiment", "candidates", "cells"):
        if key not in raw:
            raise AfrInputError(f"{src}: {key}: missing")
    exp_path = Path(raw["experiment"])
    if not exp_path.is_absolute() and not exp_path.is_file():
        exp_path = path.parent / exp_path
    experiment = load_experiment(exp_path)
    reps = raw.get("reps", experiment.protocol.reps)
    if not is_integer(reps) or reps < 1:
        raise AfrInputError(f"{src}: reps: {reps!r} is not a positive integer")
    study = Study(experiment, reps, _candidates(raw["candidates"], src), _cell_selections(raw["cells"], src), src)
    if published_cells(study).empty:
        bases = ", ".join(b.id for b in experiment.bases)
        raise AfrInputError(
            f"{src}: cells: no selected cell is on a dataset and base of the experiment "
            f"(bases {bases}); map a paper model to a base id, e.g. {{rf@400: RF@400}}"
        )
    return study


def _no_unknown(node: dict, allowed: set[str], src: str, where: str) -> None:
    unknown = sorted(set(node) - allowed)
    if unknown:
        raise AfrInputError(f"{src}: {where}: unknown key {unknown[0]!r}; allowed: {', '.join(sorted(allowed))}")


def _entries(node, key: str, allowed: set[str], src: str):
    """(where, mapping) for each entry of a non-empty list of mappings with only allowed keys."""
    if not isinstance(node, list) or not node:
        raise AfrInputError(f"{src}: {key}: must be a non-empty list")
    for i, item in enumerate(node):
        where = f"{key}[{i}]"
        if not isinstance(item, dict):
            raise AfrInputError(f"{src}: {where}: must be a mapping with keys {', '.join(sorted(allowed))}")
        _no_unknown(item, allowed, src, where)
        yield where, item


def _candidates(node, src: str) -> tuple[Candidate, ...]:
    out = []
    for where, item in _entries(node, "candidates", _CANDIDATE_KEYS, src):
        name, scale, fit_on = str(item.get("name", "")), item.get("scale"), item.get("fit_on", "train")
        if not name:
            raise AfrInputError(f"{src}: {where}.name: missing")
        if scale not in SCALES:
            raise AfrInputError(f"{src}: {where}.scale: {scale!r} is not allowed; allowed: {', '.join(SCALES)}")
        if fit_on not in FIT_ON:
            raise AfrInputError(f"{src}: {where}.fit_on: {fit_on!r} is not allowed; allowed: {', '.join(FIT_ON)}")
        if name in {c.name for c in out}:
            raise AfrInputError(f"{src}: {where}.name: {name!r} is used twice")
        out.append(Candidate(name, scale, fit_on))
    return tuple(out)


def _cell_selections(node, src: str) -> tuple[CellSelection, ...]:
    out = []
    for where, item in _entries(node, "cells", _CELL_KEYS, src):
        try:
            published = load_published(str(item.get("paper")))
        except AfrInputError as err:
            raise AfrInputError(f"{src}: {where}.paper: {err}") from None
        tables = tuple(str(t) for t in item.get("tables") or ())
        raw_models = item.get("models") or ()
        if isinstance(raw_models, dict):  # paper model id -> our base id
            models = tuple((str(k), str(v)) for k, v in raw_models.items())
        else:
            models = tuple((str(m), None) for m in raw_models)
        names = tuple(m for m, _ in models)
        for key, values, column in (("tables", tables, "table"), ("models", names, "model")):
            known = set(published[column])
            bad = [v for v in values if v not in known] or ([] if values else ["(none)"])
            if bad:
                raise AfrInputError(
                    f"{src}: {where}.{key}: {bad[0]!r} is not in the paper's tables; "
                    f"allowed: {', '.join(sorted(known))}"
                )
        out.append(CellSelection(str(item["paper"]), tables, models))
    return tuple(out)


def published_cells(study: Study) -> pd.DataFrame:
    """The selected printed cells (R2 and MAE): paper, table, base, dataset, model, metric,
    value_str, value, and ``our_base``, the id of the base they are compared with."""
    parts = []
    for sel in study.cells:
        pub = load_published(sel.paper)
        ours = dict(sel.models)
        keep = pub["table"].isin(sel.tables) & pub["model"].isin(ours) & pub["metric"].isin(METRICS)
        part = pub[keep].copy()
        part["our_base"] = [ours[m] or b for m, b in zip(part["model"], part["base"])]
        parts.append(part)
    cells = pd.concat(parts, ignore_index=True)
    known = {b.id for b in study.experiment.bases}
    keep = cells["dataset"].isin(study.experiment.datasets) & cells["our_base"].isin(known)
    return cells[keep].reset_index(drop=True)


def _candidate_unit(
    exp: Experiment, cand: Candidate, dataset: str, base: Base, reps: int, X: np.ndarray, y: np.ndarray
) -> list[dict]:
    """The plain forest's test metrics on repetitions 0..reps-1 under one candidate."""
    if cand.fit_on == "whole" and cand.scale != "none":
        X = SCALERS[cand.scale]().fit_transform(X)
    engine_scale = cand.scale if cand.fit_on == "train" else "none"
    run_exp = dataclasses.replace(exp, scale=engine_scale)
    forest_id = next(m.id for m in exp.models if m.family == "forest")
    rows = []
    for rep in range(reps):
        record = run_unit(run_exp, dataset, base, rep, X, y)
        row = next(r for r in record.results if r["model"] == forest_id)
        rows.append(
            {
                "candidate": cand.name,
                "dataset": dataset,
                "base": base.id,
                "rep": rep,
                **{m: row[m] for m in (*METRICS, "rmse")},
            }
        )
    return rows


def forest_scores(study: Study, jobs: int = -1) -> pd.DataFrame:
    """Per (candidate, dataset, base, rep): the plain forest's R2, MAE and RMSE on the test part."""
    exp = study.experiment
    data = load_experiment_data(exp)[0]
    tasks = [
        delayed(_candidate_unit)(exp, cand, d, base, study.reps, *data[d])
        for cand in study.candidates
        for d in exp.datasets
        for base in exp.bases
    ]
    chunks = Parallel(n_jobs=jobs)(tasks)
    return pd.DataFrame([row for chunk in chunks for row in chunk])


def match_cells(scores: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """One row per (printed cell, candidate): our 10-repetition mean, the difference, and whether
    it equals the printed string once rounded to the printed precision (stats.matches_printed)."""
    means = scores.groupby(["candidate", "base", "dataset"])[list(METRICS)].mean().reset_index()
    long = means.rename(columns={"base": "our_base"}).melt(
        id_vars=["candidate", "our_base", "dataset"], var_name="metric", value_name="ours"
    )
    merged = cells.merge(long, on=["our_base", "dataset", "metric"], how="inner")
    merged["diff"] = merged["ours"] - merged["value"]
    merged["matched"] = [matches_printed(p, o) for p, o in zip(merged["value_str"], merged["ours"])]
    return merged


def distinct_cells(matched: pd.DataFrame) -> pd.DataFrame:
    """Duplicates collapsed: one row per (candidate, base, dataset, metric, printed string).
    Cells printed identically in several tables count once; a quantity printed differently in
    two tables (the papers' own inconsistencies) counts once per distinct printed string."""
    keys = ["candidate", "our_base", "dataset", "metric", "value_str"]
    return matched.drop_duplicates(keys)[keys + ["value", "ours", "diff", "matched"]].reset_index(drop=True)


def counts_by_table(matched: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Cells matched as printed, per (paper, table, metric) and candidate, with totals."""
    label = matched["paper"] + ":" + matched["table"].astype(str) + " " + matched["metric"]
    counts = matched.assign(where=label).pivot_table(
        index="where", columns="candidate", values="matched", aggfunc="sum", sort=False
    )
    size = matched.assign(where=label).groupby("where", sort=False)["matched"].size() // len(order)
    counts = counts[order].astype(int)
    counts.insert(0, "cells", size)
    return counts


def summary_rows(matched: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Per candidate: matched cells (all printed, distinct), per metric, and the mean differences."""
    distinct = distinct_cells(matched)
    rows = []
    for cand in order:
        m, d = matched[matched.candidate == cand], distinct[distinct.candidate == cand]
        r2, mae = m[m.metric == "r2"], m[m.metric == "mae"]
        rows.append(
            {
                "candidate": cand,
                "r2_matched": int(r2.matched.sum()),
                "r2_cells": len(r2),
                "mae_matched": int(mae.matched.sum()),
                "mae_cells": len(mae),
                "all_matched": int(m.matched.sum()),
                "all_cells": len(m),
                "distinct_matched": int(d.matched.sum()),
                "distinct_cells": len(d),
                "r2_mean_abs_diff": float(r2["diff"].abs().mean()),
                "mae_mean_abs_rel_diff": float((mae["diff"].abs() / mae["value"].abs()).mean()),
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Verdict:
    winner: str | None  # the clear winner, or None
    leader: str  # most distinct cells matched (ties: first in the study's order)
    tests: pd.DataFrame  # leader vs each other candidate: discordant cells and sign-test p
    text: str


def decide(matched: pd.DataFrame, order: list[str]) -> Verdict:
    """The leader matches the most distinct printed cells; it is a *clear* winner only if a
    two-sided sign test on the distinct cells where it and another candidate disagree (one
    matches, the other not) rejects equality at SIGN_TEST_ALPHA against every other candidate."""
    distinct = distinct_cells(matched)
    wide = distinct.pivot_table(
        index=["our_base", "dataset", "metric", "value_str"], columns="candidate", values="matched", aggfunc="first"
    )
    totals = {c: int(wide[c].sum()) for c in order}
    leader = max(order, key=lambda c: (totals[c], -order.index(c)))
    rows = []
    for other in order:
        if other == leader:
            continue
        only_leader = int((wide[leader] & ~wide[other]).sum())
        only_other = int((~wide[leader] & wide[other]).sum())
        n = only_leader + only_other
        p = float(binomtest(only_leader, n, 0.5).pvalue) if n else 1.0
        rows.append(
            {"leader": leader, "other": other, "only_leader": only_leader, "only_other": only_other, "p_sign_test": p}
        )
    tests = pd.DataFrame(rows)
    clear = (
        bool(len(tests))
        and bool((tests.p_sign_test < SIGN_TEST_ALPHA).all())
        and bool((tests.only_leader > tests.only_other).all())
    )
    if clear:
        text = (
            f"clear winner: {leader} ({totals[leader]} of {len(wide)} distinct printed cells; "
            f"sign test p < {SIGN_TEST_ALPHA} against every other candidate)"
        )
    else:
        weakest = tests.sort_values("p_sign_test", ascending=False).iloc[0] if len(tests) else None
        vs = (
            f"; against {weakest.other}: {weakest.only_leader} cells only {leader} matches, "
            f"{weakest.only_other} only {weakest.other}, sign test p = {weakest.p_sign_test:.3g}"
            if weakest is not None
            else ""
        )
        text = f"no clear winner: {leader} leads with {totals[leader]} of {len(wide)} distinct printed cells{vs}"
    if len(tests) and (tests.only_other == 0).all():
        text += (
            f"; {leader} matches every printed value that any other candidate matches "
            f"(and {int(tests.only_leader.min())}-{int(tests.only_leader.max())} more)"
        )
    return Verdict(leader if clear else None, leader, tests, text)


def discriminating_cells(matched: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Distinct printed cells on which the candidates do not all agree (matched or not)."""
    distinct = distinct_cells(matched)
    ours = distinct.pivot_table(
        index=["our_base", "dataset", "metric", "value_str"], columns="candidate", values="ours", aggfunc="first"
    )[order]
    hit = distinct.pivot_table(
        index=["our_base", "dataset", "metric", "value_str"], columns="candidate", values="matched", aggfunc="first"
    )[order]
    split = hit.any(axis=1) & ~hit.all(axis=1)
    where = _tables_of(matched)
    out = ours[split].copy()
    for c in order:
        out[c] = [f"{v:.6f}" + (" ✓" if h else "") for v, h in zip(ours[split][c], hit[split][c])]
    out = out.reset_index()
    out.insert(
        4,
        "tables",
        [where.get((b, d, m, v), "") for b, d, m, v in zip(out.our_base, out.dataset, out.metric, out.value_str)],
    )
    return out


def _tables_of(matched: pd.DataFrame) -> dict:
    """(base, dataset, metric, printed string) -> the tables printing it, e.g. 'satrf:2 larf:3'."""
    first = matched.drop_duplicates(["paper", "table", "our_base", "dataset", "metric", "value_str"])
    where: dict = {}
    for r in first.itertuples():
        where.setdefault((r.our_base, r.dataset, r.metric, r.value_str), []).append(f"{r.paper}:{r.table}")
    return {key: " ".join(tables) for key, tables in where.items()}


def _md_table(frame: pd.DataFrame) -> str:
    from tabulate import tabulate

    return tabulate(frame.values.tolist(), headers=list(frame.columns), tablefmt="github", disable_numparse=True)


def write_report(study: Study, scores: pd.DataFrame, out_dir: Path, name: str, command: str) -> list[Path]:
    """``<name>.md`` (counts per table and candidate, totals, the verdict, the cells that tell the
    candidates apart), ``<name>.csv`` (every printed cell x candidate) and ``<name>_scores.csv``
    (every repetition's forest metrics)."""
    order = [c.name for c in study.candidates]
    matched = match_cells(scores, published_cells(study))
    by_table = counts_by_table(matched, order).reset_index().rename(columns={"where": "table / metric"})
    totals = summary_rows(matched, order)
    verdict = decide(matched, order)
    split = discriminating_cells(matched, order)
    fits = {
        c.name: (
            c.scale
            if c.scale == "none"
            else f"{c.scale}, fitted on the {c.fit_on}"
            + (" part" if c.fit_on == "train" else " dataset before splitting")
        )
        for c in study.candidates
    }
    shown_totals = pd.DataFrame(
        {
            "candidate": totals.candidate,
            "preprocessing": totals.candidate.map(fits),
            "R2 as printed": [f"{a} / {b}" for a, b in zip(totals.r2_matched, totals.r2_cells)],
            "MAE as printed": [f"{a} / {b}" for a, b in zip(totals.mae_matched, totals.mae_cells)],
            "all printed cells": [f"{a} / {b}" for a, b in zip(totals.all_matched, totals.all_cells)],
            "distinct printed values": [f"{a} / {b}" for a, b in zip(totals.distinct_matched, totals.distinct_cells)],
            "mean abs diff R2": totals.r2_mean_abs_diff.map(lambda v: f"{v:.5f}"),
            "mean rel abs diff MAE": totals.mae_mean_abs_rel_diff.map(lambda v: f"{100 * v:.3f} %"),
        }
    )
    tests = verdict.tests.assign(p_sign_test=verdict.tests.p_sign_test.map(lambda v: f"{v:.3g}"))
    exp = study.experiment
    lines = [
        f"# Which preprocessing reproduces the papers' baselines? (`{name}`)",
        "",
        f"Generated by `{command}`; do not edit by hand.",
        "",
        f"Plain forests of `{exp.source}` ({', '.join(b.id for b in exp.bases)}; "
        f"seeding `{exp.protocol.seeding}`, repetitions 0-{study.reps - 1}), fitted through the "
        "protocol's own `run_unit` under each candidate; each printed baseline cell is compared with "
        "our mean over the repetitions. *As printed*: our value rounded (half up) to the printed "
        "number of decimals equals the printed string. Every printed cell counts, duplicates "
        "included (the tables repeat the same baselines); *distinct printed values* counts each "
        "(base, dataset, metric, printed string) once, so a value the tables print inconsistently "
        "(paper-tables README, Known problems) counts once per distinct string.",
        "",
        "## Totals",
        "",
        _md_table(shown_totals),
        "",
        "## Verdict",
        "",
        f"**{verdict.text}.** Rule (fixed before the run): the candidate matching the most distinct "
        "printed values wins clearly only if, against every other candidate, a two-sided sign test "
        "on the distinct values exactly one of the two matches gives p < "
        f"{SIGN_TEST_ALPHA}.",
        "",
        _md_table(tests),
        "",
        "## The cells that tell the candidates apart",
        "",
        "Distinct printed values that some candidates match and others do not (our 10-repetition "
        "mean; ✓ = as printed). Every other value is matched by all candidates or by none.",
        "",
        _md_table(split) if len(split) else "(none)",
        "",
        "## Per table",
        "",
        _md_table(by_table.astype(str)),
        "",
    ]
    out_dir.mkdir(parents=True, exist_ok=True)
    md, cells_csv, scores_csv = out_dir / f"{name}.md", out_dir / f"{name}.csv", out_dir / f"{name}_scores.csv"
    md.write_text("\n".join(lines), encoding="utf-8")
    cols = [
        "candidate",
        "paper",
        "table",
        "base",
        "our_base",
        "dataset",
        "model",
        "metric",
        "value_str",
        "ours",
        "diff",
        "matched",
    ]
    matched[cols].to_csv(cells_csv, index=False, float_format="%.6f")
    scores.to_csv(scores_csv, index=False, float_format="%.9f")
    return [md, cells_csv, scores_csv]
