"""B against A over datasets, as the papers compare a proposed model with a baseline: per base
the per-dataset means, Demšar's paired t-test (the papers' own test, the headline), Wilcoxon,
their effect sizes, the win/tie/loss count, Holm's adjustment over the bases compared, the
Bayesian signed-rank test with a ROPE across datasets and, per dataset, the Bayesian correlated
t-test over the shared repetitions (Benavoli et al. 2017)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict

import pandas as pd

from afr_cli.analysis.bayesian import DEFAULT_ROPE, CorrelatedTTestResult, correlated_ttest, signed_rank_test
from afr_cli.analysis.stats import effect_sizes, holm_adjust, paired_ttest, wilcoxon_test
from afr_cli.core.names import hint
from afr_cli.errors import AfrInputError
from afr_cli.store import varying_axes
from afr_cli.tables.compare_evidence import direction, mc_text
from afr_cli.tables.compare_memo import memoized
from afr_cli.tables.comparison import TEST_COLUMNS as TEST_COLUMNS  # re-exported: afr_cli.tables names it here
from afr_cli.tables.comparison import BaseComparison, ModelComparison, WinRecord
from afr_cli.tables.format import (
    CSV_FLOAT,
    METRIC_NAMES,
    base_key,
    check_format,
    dataset_key,
    document,
    format_diff,
    format_value,
    grid,
    model_key,
)
from afr_cli.tables.pairing import Dropped, paired_repetitions
from afr_cli.tables.stores import check_same_splits
from afr_cli.tables.summary import summary_long, with_axes_in_dataset

# Axes whose levels share one split and one forest (the noise is added to the test features only):
# cells that differ only in these are not independent, so the tests over cells pool them.
SHARED_SPLIT_AXES = ("noise_eta",)

FEW_DATASETS = 5  # below this an across-dataset test has little power (the per-dataset view then)


def comparison_dict(comparison: ModelComparison) -> dict:
    """Every number of ``comparison``, for ``--format json``: per base the per-dataset means
    and correlated t-tests, and the across-dataset tests (t-test with raw and Holm p, effect
    sizes, Wilcoxon, Bayesian signed-rank). Every difference is B − A ("difference": "b - a"),
    the correlated t-test's mean and interval too (computed A − B on error metrics, so that its
    right side is B better, and turned back here); its probabilities are named by model. An
    undefined number (NaN) is null, an infinite one the string "inf" or "-inf". A base where
    repetitions were dropped (a score undefined) says so under "dropped"."""
    holm = comparison.holm_p()
    bases = []
    for c, p_holm in zip(comparison.bases, holm):
        datasets = []
        for row in c.per_dataset.to_dict("records"):
            bayes = c.per_dataset_bayes.get(row["dataset"])
            datasets.append(
                {
                    "dataset": row["dataset"],
                    "a": row[comparison.a],
                    "b": row[comparison.b],
                    "b_minus_a": row[f"{comparison.b} − {comparison.a}"],
                    "correlated_ttest": None if bayes is None else _bayes_dict(bayes, comparison.metric),
                }
            )
        dropped = {"dropped": c.dropped.as_dict()} if c.dropped.total else {}
        bases.append(
            {
                "base": c.base,
                "reps": list(c.reps),
                "datasets": datasets,
                "ttest": {**asdict(c.ttest), "p_holm": p_holm, "holm_family": len(comparison.bases)},
                "effect_sizes": asdict(c.effects),
                "wilcoxon": {"statistic": c.wilcoxon[0], "p": c.wilcoxon[1]},
                "record": {
                    "wins": list(c.record.wins),
                    "ties": list(c.record.ties),
                    "losses": list(c.record.losses),
                },
                "signed_rank": {
                    "n": c.signed_rank.n,
                    "rope": c.signed_rank.rope_width,
                    "samples": c.signed_rank.samples,
                    "seed": c.signed_rank.seed,
                    "p_a_better": c.signed_rank.probabilities.left,
                    "p_equivalent": c.signed_rank.probabilities.rope,
                    "p_b_better": c.signed_rank.probabilities.right,
                },
                "low_power": c.ttest.n < FEW_DATASETS,
                "hierarchical": c.hierarchical.as_dict(METRIC_NAMES.get(comparison.metric, comparison.metric)),
                "effect_intervals": c.intervals.as_dict(),
                **dropped,
            }
        )
    from afr_cli.tables.compare_answer import answer_sentence, not_applicable, rule_sentence
    from afr_cli.tables.decision import decide_base

    for base, c in zip(bases, comparison.bases):
        base["not_applicable"] = not_applicable(c)
        base["decision"] = decide_base(comparison, c).as_dict()
    return _json_numbers(
        {
            "answer": answer_sentence(comparison),
            "rule": rule_sentence(),
            "a": comparison.a,
            "b": comparison.b,
            "metric": comparison.metric,
            "direction": direction(comparison.metric),
            "rope": comparison.rope,
            "difference": "b - a",
            "bases": bases,
        }
    )


def _bayes_dict(r: CorrelatedTTestResult, metric: str) -> dict:
    """A correlated t-test in the JSON's one direction, B − A: on error metrics it was computed on
    A − B (right = B better), so its mean and interval are turned back; the probabilities keep
    their names (p_b_better is B better either way)."""
    mean, low, high = r.mean, r.ci_low, r.ci_high
    if metric != "r2":
        mean, low, high = -mean, -high, -low
    out = {
        "n": r.n,
        "rho": r.rho,
        "mean": mean,
        "scale": r.scale,
        "df": r.df,
        "rope": r.rope_width,
        "p_a_better": r.probabilities.left,
        "p_equivalent": r.probabilities.rope,
        "p_b_better": r.probabilities.right,
        "ci_low": low,
        "ci_high": high,
    }
    if math.isnan(r.probabilities.rope):
        out["reason"] = "the correlated t-test over repetitions needs at least 2 repetitions"
    return out


def _json_numbers(value):
    """``value`` as JSON can hold it: NaN (undefined) becomes null, ±inf the strings "inf" and
    "-inf" (JSON has neither, and the two must not read alike); numpy scalars become Python's."""
    if isinstance(value, dict):
        return {k: _json_numbers(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_numbers(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        return _json_numbers(value.item())
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def compare_models(
    results: pd.DataFrame, a: str, b: str, metric: str = "r2", rope: float = DEFAULT_ROPE
) -> ModelComparison:
    """Per base holding both models: the per-dataset means of A and B and B − A, with the paired
    t-test, Wilcoxon, effect sizes and the Bayesian signed-rank test (ROPE ±``rope`` in the
    metric's unit) of B − A over the datasets both have, and per dataset the Bayesian correlated
    t-test over the repetitions both hold (ρ = the split's test fraction)."""
    if a == b:
        raise AfrInputError(f"--compare: needs two different models, got {a!r} twice")
    if not (isinstance(rope, (int, float)) and math.isfinite(rope) and rope >= 0):
        raise AfrInputError(f"--rope: {rope!r} is not allowed; a number >= 0 (in the metric's unit)")
    if "train_fraction" in results.columns:  # ρ = n_test / n of each cell's split, kept past the axes
        results = results.assign(test_fraction=(1.0 - results["train_fraction"].astype(float)).round(10))
    results = _with_split_units(results)
    results = with_axes_in_dataset(results)  # one row per (dataset, unit axes) cell
    if ":" in a or ":" in b:
        results = _across_bases(results, a, b)
    known = sorted(results["model"].unique(), key=model_key)
    for model in (a, b):
        if model not in known:
            raise AfrInputError(
                f"--compare: unknown model {model!r}; {hint(model, known)}models in the results: {', '.join(known)}"
            )
    check_same_splits(results, a, b)
    paired, dropped = paired_repetitions(results, a, b, metric, dataset_key)
    long = summary_long(paired)
    long = long[long["metric"] == metric]
    better = 1.0 if metric == "r2" else -1.0  # orient B − A so that "right" is B better
    shared = sorted(set(long.loc[long["model"] == a, "base"]) & set(long.loc[long["model"] == b, "base"]), key=base_key)
    if not shared:
        raise AfrInputError(_nothing_shared(results, a, b))
    bases = []
    for base in shared:
        on_base = long[long["base"] == base].pivot(index="dataset", columns="model", values="mean")
        table = on_base[[a, b]].dropna(how="all")
        table = table.loc[sorted(table.index, key=dataset_key)].reset_index()
        table[f"{b} − {a}"] = table[b] - table[a]
        both, pooled = _test_units(table.dropna(), paired, a, b)
        counts = long.loc[(long["base"] == base) & (long["model"] == a), "n_reps"]
        on_paired = paired[paired["base"] == base]
        bases.append(
            BaseComparison(
                base,
                table,
                memoized(paired_ttest, both[b], both[a]),
                memoized(wilcoxon_test, both[b], both[a]),
                WinRecord.count(table, a, b, metric),
                (int(counts.min()), int(counts.max())),
                memoized(effect_sizes, both[b], both[a]),
                memoized(signed_rank_test, better * (both[b] - both[a]).to_numpy(), rope),
                _per_dataset_bayes(on_paired, a, b, metric, rope),
                pooled,
                dropped.get(base, Dropped()),
                (on_paired, both, a, b, metric, rope),
            )
        )
    return ModelComparison(a, b, metric, bases, rope)


def _nothing_shared(results: pd.DataFrame, a: str, b: str) -> str:
    """Why no base compares A and B: no base holds both, or the bases holding both share no
    dataset, or no repetition of a dataset both hold (each said as it is)."""

    def held(model: str, column: str, base: str | None = None) -> set[str]:
        rows = results[results["model"] == model]
        return set((rows if base is None else rows[rows["base"] == base])[column].astype(str))

    common = sorted(held(a, "base") & held(b, "base"), key=base_key)
    if not common:
        return f"--compare: models {a!r} and {b!r} share no base in the results"
    where = "; ".join(
        f"{base}: {a} on {', '.join(sorted(held(a, 'dataset', base), key=dataset_key))}, "
        f"{b} on {', '.join(sorted(held(b, 'dataset', base), key=dataset_key))}"
        for base in common
    )
    if not any(held(a, "dataset", base) & held(b, "dataset", base) for base in common):
        return (
            f"--compare: models {a!r} and {b!r} share base {', '.join(common)} but no dataset on it ({where}); "
            f"allowed: two models with a dataset in common"
        )
    return (
        f"--compare: models {a!r} and {b!r} share no repetition with a defined score on any dataset of base "
        f"{', '.join(common)}; allowed: two models with a repetition in common"
    )


def _with_split_units(results: pd.DataFrame) -> pd.DataFrame:
    """With a ``split_unit`` column when the cells vary over a SHARED_SPLIT_AXES axis: the dataset
    and the other axes only, so that cells sharing a split and forest share a unit."""
    axes = varying_axes(results)
    if not any(a in SHARED_SPLIT_AXES for a in axes):
        return results
    own = [a for a in axes if a not in SHARED_SPLIT_AXES]
    units = with_axes_in_dataset(results.drop(columns=[a for a in axes if a not in own]))["dataset"]
    return results.assign(split_unit=units.to_numpy())


def _test_units(both: pd.DataFrame, paired: pd.DataFrame, a: str, b: str) -> tuple[pd.DataFrame, str]:
    """The rows the across-dataset tests run on: the cells, or, where cells share a split and forest
    (levels of a SHARED_SPLIT_AXES axis), the mean of each unit's cells, with a sentence saying so."""
    if "split_unit" not in paired.columns or both.empty:
        return both, ""
    unit_of = paired.drop_duplicates("dataset").set_index("dataset")["split_unit"]
    units = both.assign(unit=both["dataset"].map(unit_of)).groupby("unit", sort=False)[[a, b]].mean()
    text = (
        f"the tests pool the {len(both)} cells into {len(units)} units: cells that differ only in "
        f"{', '.join(SHARED_SPLIT_AXES)} "
        f"share their split and forest, so they are not independent (each unit is their mean)"
    )
    return units.reset_index(), text


def _per_dataset_bayes(
    rows: pd.DataFrame, a: str, b: str, metric: str, rope: float
) -> dict[str, CorrelatedTTestResult]:
    """Per dataset: the Bayesian correlated t-test of B − A over the repetitions both models hold
    (oriented so that "right" is B better), ρ = the split's test fraction (0.2 when unrecorded)."""
    better = 1.0 if metric == "r2" else -1.0
    if a not in set(rows["model"]) or b not in set(rows["model"]):
        return {}
    # one pivot for every dataset (a pivot per dataset was most of a 198-cell comparison's time)
    wide = rows.pivot_table(index=["dataset", "rep"], columns="model", values=metric)[[a, b]].dropna()
    by_dataset = dict(iter(wide.groupby(level="dataset", sort=False)))
    rho_of = rows.drop_duplicates("dataset").set_index("dataset")["test_fraction"] if "test_fraction" in rows else None
    out = {}
    for dataset in rows["dataset"].drop_duplicates():
        pair = by_dataset.get(dataset)
        if pair is None or pair.empty:
            continue
        rho = float(rho_of[dataset]) if rho_of is not None else 0.2
        out[str(dataset)] = memoized(correlated_ttest, better * (pair[b] - pair[a]).to_numpy(), rho, rope)
    return out


def _across_bases(results: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """``MODEL:BASE`` on both sides (e.g. larf:RF larf:ERT, LARF Table 7): the two models' rows
    relabelled as models ``a`` and ``b`` on one pseudo-base ``BASE_A vs BASE_B``."""
    sides = []
    for spec in (a, b):
        model, sep, base = spec.partition(":")
        if not sep or not model or not base:
            raise AfrInputError(f"--compare: {spec!r}: give both sides as MODEL:BASE (e.g. larf:RF larf:ERT)")
        bases = sorted(results["base"].unique(), key=base_key)
        if base not in bases:
            raise AfrInputError(
                f"--compare: unknown base {base!r} in {spec!r}; bases in the results: {', '.join(bases)}"
            )
        sides.append(results[(results["model"] == model) & (results["base"] == base)].assign(model=spec))
    label = f"{a.partition(':')[2]} vs {b.partition(':')[2]}"
    return pd.concat(sides, ignore_index=True).assign(base=label)


def _probs(p) -> str:
    return f"{p.left:.3f} / {p.rope:.3f} / {p.right:.3f}"


def _p(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3g}"


def power_note(comparison: ModelComparison) -> str | None:
    """The warning a comparison over fewer than FEW_DATASETS datasets carries, or None."""
    few = [c for c in comparison.bases if 2 <= c.ttest.n < FEW_DATASETS]  # on one: why no test applies, instead
    if not few:
        return None
    where = ", ".join(f"{c.base} (n = {c.ttest.n})" for c in few)
    return (
        f"note: fewer than {FEW_DATASETS} datasets on {where}: an across-dataset test has little power "
        f"there; judge each dataset by its own correlated t-test over the repetitions (the per-dataset "
        f"columns P(A) / P(=) / P(B) and the corrected interval)"
    )


def _hier_cell(c: BaseComparison) -> str:
    """The population mean's event probabilities P(A) / P(=) / P(B) of the hierarchical test."""
    return "—" if c.hierarchical.result is None else _probs(c.hierarchical.result.population)


def render_comparison_lead(comparison: ModelComparison) -> str:
    """The summary `afr table --compare` prints first: the one-sentence answer
    (afr_cli/tables/compare_answer.py), then one row per base with B − A, the t-test's raw and
    Holm-adjusted p, d_z, Wilcoxon p with its rank-biserial correlation, the Bayesian signed-rank
    and the hierarchical probabilities. A base with one dataset has no row (no test over datasets
    applies there): a line says so instead of printing NaN."""
    from afr_cli.tables.compare_answer import answer_sentence, not_applicable, rule_sentence

    a, b = comparison.a, comparison.b
    frame = comparison.tests_frame()
    rows = [
        [
            r["base"],
            str(int(r["n"])),
            f"{r['mean_diff']:+.4f}",
            _p(r["p"]),
            _p(r["p_holm"]),
            _signed(r["cohen_dz"]),
            _p(r["wilcoxon_p"]),
            _signed(r["rank_biserial"]),
            f"{r['p_a_better']:.3f} / {r['p_equivalent']:.3f} / {r['p_b_better']:.3f}",
            _hier_cell(c),
        ]
        for r, c in zip(frame.to_dict("records"), comparison.bases)
        if not not_applicable(c)
    ]
    headers = [
        "base",
        "n",
        f"mean {b} − {a}",
        "p (t-test)",
        "p (Holm)",
        "d_z",
        "p (Wilcoxon)",
        "r (rank-biserial)",
        f"P({a}) / P(=) / P({b})",
        "hierarchical P (population mean)",
    ]
    metric = METRIC_NAMES.get(comparison.metric, comparison.metric)
    lines = [
        answer_sentence(comparison),
        "",
        rule_sentence(),
        "",
        f"{b} against {a} on {metric} ({direction(comparison.metric)}), over the datasets (per base below)",
        "",
    ]
    if rows:
        lines += [grid(headers, rows, "md"), "", _legend(comparison)]
    for c in comparison.bases:
        why = not_applicable(c)
        if why:
            lines += [
                f"base {c.base}: {why['ttest']} (no t-test, Wilcoxon, signed-rank or effect size there): "
                f"its answer is the per-dataset Bayesian correlated t-test below"
            ]
    for note in [power_note(comparison), *dropped_notes(comparison), *evidence_notes(comparison)]:
        if note:
            lines += ["", note]
    return "\n".join(lines) + "\n"


def evidence_notes(comparison: ModelComparison) -> list[str]:
    """Why a base has no hierarchical test, and the warning of an error metric dominated by a few datasets."""
    from afr_cli.tables.compare_evidence import dominance_warning

    metric = METRIC_NAMES.get(comparison.metric, comparison.metric)
    notes = []
    for c in comparison.bases:
        if c.hierarchical.result is None and c.ttest.n >= 2:
            notes.append(f"note: base {c.base}: the hierarchical test does not apply: {c.hierarchical.reason}")
        warning = dominance_warning(comparison.a, comparison.b, metric, c.base, c.intervals, c.per_dataset)
        if warning:
            notes.append(warning)
    return notes


def _hier_legend(comparison: ModelComparison) -> str:
    """What the hierarchical column is: the model, the ROPE (relative on an error metric), the
    sampler and its largest Monte Carlo error."""
    from afr_cli.tables.compare_evidence import COMPARE_BURN_IN, COMPARE_SAMPLES, COMPARE_SEED

    metric = METRIC_NAMES.get(comparison.metric, comparison.metric)
    done = [c.hierarchical for c in comparison.bases if c.hierarchical.result is not None]
    mc = f" (Monte Carlo error of each probability {mc_text(max(h.mc_error() for h in done))})" if done else ""
    rope = (
        f"ROPE ±{100 * comparison.rope:g} % of A's {metric}, on the log ratio of the errors per repetition"
        if comparison.metric != "r2"
        else f"ROPE ±{comparison.rope:g} {metric}"
    )
    return (
        f"Hierarchical P: the Bayesian hierarchical test over datasets × repetitions (Corani et al. 2017, "
        f"ρ = n_test / n), the posterior probability that the population's mean difference lies below / "
        f"inside / above the ROPE, P({comparison.a}) / P(=) / P({comparison.b}), {rope}; "
        f"seeded Gibbs sampler, {COMPARE_SAMPLES} draws after {COMPARE_BURN_IN}, seed {COMPARE_SEED}{mc}."
    )


def dropped_notes(comparison: ModelComparison) -> list[str]:
    """One note per base where repetitions were dropped because a model's score is undefined."""
    metric = METRIC_NAMES.get(comparison.metric, comparison.metric)
    return [
        f"note: base {c.base}: {c.dropped.sentence(comparison.a, comparison.b, metric)}"
        for c in comparison.bases
        if c.dropped.total
    ]


def _legend(comparison: ModelComparison) -> str:
    family = len(comparison.bases)
    holm = (
        f"Holm's step-down adjustment over the {family} bases compared"
        if family > 1
        else "Holm over one test is the raw p"
    )
    return (
        f"Demšar's paired t-test is the papers' own test (the headline); {holm}. Effect sizes: d_z = mean / sd "
        f"of the per-dataset differences, r = matched-pairs rank-biserial correlation of the Wilcoxon test. "
        f"P({comparison.a}) / P(=) / P({comparison.b}): Bayesian signed-rank test (Benavoli et al. 2017), "
        f"ROPE ±{comparison.rope:g} {METRIC_NAMES.get(comparison.metric, comparison.metric)}, prior 0.5 at 0, "
        f"seeded Monte Carlo. " + _hier_legend(comparison)
    )


def render_model_comparison(comparison: ModelComparison, fmt: str = "md") -> str:
    """csv: the tests, one row per base; json: every number (:func:`comparison_dict`);
    md/latex: per base the per-dataset table (with each dataset's correlated t-test) and the tests."""
    if fmt == "json":
        return json.dumps(comparison_dict(comparison), indent=2, ensure_ascii=False) + "\n"
    check_format(fmt)
    if fmt == "csv":
        return comparison.tests_frame().to_csv(index=False, float_format=CSV_FLOAT)
    a, b, metric = comparison.a, comparison.b, comparison.metric
    parts = []
    for c, p_holm in zip(comparison.bases, comparison.holm_p()):
        rows = []
        for row in c.per_dataset.to_dict("records"):
            bayes = c.per_dataset_bayes.get(row["dataset"])
            if bayes is not None and math.isnan(bayes.probabilities.rope):  # one repetition: no test
                bayes_cells = ["n/a: 1 repetition", "n/a"]
            else:
                bayes_cells = (
                    ["", ""]
                    if bayes is None
                    else [
                        _probs(bayes.probabilities),
                        f"[{bayes.ci_low:+.4f}, {bayes.ci_high:+.4f}]"
                        if metric == "r2"
                        else f"[{bayes.ci_low:+.4g}, {bayes.ci_high:+.4g}]",
                    ]
                )
            rows.append(
                [
                    row["dataset"],
                    format_value(row[a], metric),
                    format_value(row[b], metric),
                    format_diff(row[f"{b} − {a}"], row[b], metric),
                    *bayes_cells,
                ]
            )
        notes = [
            *_tests_notes(comparison, c, p_holm),
            c.record.describe(a, b),
            c.reps_text(a, b, metric)
            + "; per dataset, the Bayesian correlated t-test of B − A over them (ρ = n_test / n,"
            f" Nadeau-Bengio): P({a}) / P(=) / P({b}) with ROPE ±{comparison.rope:g} and the corrected 95 % interval"
            + ("" if metric == "r2" else " (oriented so that the interval's sign is B better: A − B on errors)"),
        ]
        title = f"{b} against {a} on {METRIC_NAMES.get(metric, metric)}, base {c.base}"
        headers = ["dataset", a, b, f"{b} − {a}", f"P({a}) / P(=) / P({b})", "corrected 95 % interval"]
        parts.append(document(title, grid(headers, rows, fmt), notes, fmt))
    return "\n".join(parts)


def _tests_notes(comparison: ModelComparison, c: BaseComparison, p_holm: float) -> list[str]:
    """The tests over datasets of one base's block, with the intervals and the hierarchical test;
    on one dataset the sentence saying why none applies (never a NaN)."""
    from afr_cli.tables.compare_answer import not_applicable

    a, b = comparison.a, comparison.b
    why = not_applicable(c)
    hier = _hier_note(comparison, c)
    if why:
        return [f"paired t-test, Wilcoxon, Bayesian signed-rank and effect sizes: not applicable, {why['ttest']}", hier]
    t, sr, eff = c.ttest, c.signed_rank, c.effects
    holm = f" (Holm-adjusted over {len(comparison.bases)} bases: p = {p_holm:.4g})" if len(comparison.bases) > 1 else ""
    return [
        f"paired t-test (Demšar) of {b} − {a} over n = {t.n} {'units' if c.pooled else 'datasets'}: mean "
        f"{t.mean_diff:.4g},"
        f" t = {_g(t.t, '.4g')}, p = {_g(t.p, '.4g')}{holm}, 95 % CI [{t.ci_low:.4g}, {t.ci_high:.4g}];"
        f" effect size d_z = {_g(eff.cohen_dz, '.3g')}",
        f"Wilcoxon signed-rank: statistic {c.wilcoxon[0]:.4g}, p = {c.wilcoxon[1]:.4g};"
        f" rank-biserial r = {eff.rank_biserial:.3g}",
        f"Bayesian signed-rank (ROPE ±{sr.rope_width:g}, {sr.samples} samples, seed {sr.seed}):"
        f" P({a} better) = {sr.probabilities.left:.3f}, P(equivalent) = {sr.probabilities.rope:.3f},"
        f" P({b} better) = {sr.probabilities.right:.3f}",
        _intervals_note(comparison, c),
        hier,
    ]


def _fmt(value: float, metric: str) -> str:
    return f"{value:+.4f}" if metric == "r2" else f"{value:+.4g}"


def _intervals_note(comparison: ModelComparison, c: BaseComparison) -> str:
    """The 95 % intervals of the mean difference, d_z and r with their labels (and the relative
    form of an error metric)."""
    iv = c.intervals
    if iv.effects is None:
        return f"effect intervals: not applicable, {iv.reason}"
    e, m = iv.effects, comparison.metric
    md, dz, r = e.mean_diff, e.cohen_dz, e.rank_biserial
    text = (
        f"intervals (95 %): mean {comparison.b} − {comparison.a} {_fmt(md.estimate, m)} "
        f"[{_fmt(md.low, m)}, {_fmt(md.high, m)}] ({md.method}); "
        f"d_z {_dz(dz.interval)}, {dz.label} (Cohen 1988 for d); "
        f"r {_signed(r.interval.estimate)} [{_signed(r.interval.low)}, {_signed(r.interval.high)}], "
        f"{r.label} (Cohen 1988 for r; {r.interval.method})"
    )
    if iv.log_ratio is not None:
        lr = iv.log_ratio
        text += (
            f"; relative, ln({comparison.b}/{comparison.a}) per dataset: {lr.estimate:+.4f} "
            f"[{lr.low:+.4f}, {lr.high:+.4f}] (ratio {math.exp(lr.estimate):.3f} "
            f"[{math.exp(lr.low):.3f}, {math.exp(lr.high):.3f}])"
        )
    return text


def _g(value: float, spec: str) -> str:
    """``value`` formatted, or 'undefined (no spread among the differences)' for NaN."""
    return "undefined (no spread among the differences)" if math.isnan(value) else format(value, spec)


def _signed(value: float) -> str:
    if math.isnan(value):
        return "undefined"
    return f"{value:+.2f}"


def _dz(i) -> str:
    if math.isinf(i.estimate):
        return f"{'+' if i.estimate > 0 else '-'}inf (every dataset's difference the same), no interval"
    if math.isnan(i.estimate):
        return "undefined (no spread among the differences)"
    return f"{i.estimate:+.2f} [{i.low:+.2f}, {i.high:+.2f}] ({i.method})"


def _hier_note(comparison: ModelComparison, c: BaseComparison) -> str:
    """The hierarchical test of one base in a sentence, or why it does not apply."""
    a, b = comparison.a, comparison.b
    metric = METRIC_NAMES.get(comparison.metric, comparison.metric)
    h = c.hierarchical
    if h.result is None:
        return f"hierarchical Bayesian test over datasets × repetitions: not applicable, {h.reason}"
    r = h.result
    reps = sorted(set(r.repetitions))
    span = f"{reps[0]}" if len(reps) == 1 else f"{reps[0]} to {reps[-1]}"
    if h.relative:
        mean = f"mean ln({b}/{a}) of the population {-r.mean:+.4f} [{-r.ci_high:+.4f}, {-r.ci_low:+.4f}]"
    else:
        mean = (
            f"mean {b} − {a} of the population {_fmt(r.mean, comparison.metric)} "
            f"[{_fmt(r.ci_low, comparison.metric)}, {_fmt(r.ci_high, comparison.metric)}]"
        )
    left = f"; left out (fewer than 2 repetitions): {', '.join(h.left_out)}" if h.left_out else ""
    return (
        f"hierarchical Bayesian test (Corani et al. 2017) over {r.n_datasets} {'units' if c.pooled else 'datasets'}"
        f" × {span} repetitions, ROPE {h.rope_text(metric)}, {r.samples} draws after {r.burn_in} burn-in, "
        f"seed {r.seed}: population mean P({a} better) = {r.population.left:.3f}, P(equivalent) = "
        f"{r.population.rope:.3f}, P({b} better) = {r.population.right:.3f}; the next dataset (posterior "
        f"predictive) {r.predictive.left:.3f} / {r.predictive.rope:.3f} / {r.predictive.right:.3f}; baycomp's "
        f"region shares (draws in which a region holds the most predictive mass) {r.probabilities.left:.3f} / "
        f"{r.probabilities.rope:.3f} / {r.probabilities.right:.3f} (Monte Carlo error {mc_text(h.mc_error())}); "
        f"{mean}{left}"
    )


def render_comparison_overview(comparisons: list[ModelComparison]) -> str:
    """One markdown row per (comparison, base): B − A, its paired t-test p raw and Holm-adjusted
    over every row of the overview (the report's family), d_z, Wilcoxon p and rank-biserial r,
    the Bayesian signed-rank and the hierarchical probabilities and the win/tie/loss count; the overview above the
    per-dataset blocks of a report's compare.md."""
    family = [c for comparison in comparisons for c in comparison.bases]
    holm = holm_adjust([c.ttest.p for c in family])
    rows = []
    position = iter(range(len(family)))
    for comparison in comparisons:
        for c in comparison.bases:
            t, r, eff, sr = c.ttest, c.record, c.effects, c.signed_rank.probabilities
            rows.append(
                [
                    f"{comparison.b} − {comparison.a}",
                    c.base,
                    f"{t.mean_diff:+.4f}",
                    _p(t.p),
                    _p(holm[next(position)]),
                    f"[{t.ci_low:+.4f}, {t.ci_high:+.4f}]",
                    _signed(eff.cohen_dz),
                    _p(c.wilcoxon[1]),
                    _signed(eff.rank_biserial),
                    _probs(sr),
                    _hier_cell(c),
                    f"{len(r.wins)}/{len(r.ties)}/{len(r.losses)}",
                    c.reps_span("–"),
                ]
            )
    headers = [
        "B − A",
        "base",
        "mean",
        "p (t-test)",
        f"p (Holm, {len(family)} tests)",
        "95 % CI",
        "d_z",
        "p (Wilcoxon)",
        "r",
        "P(A) / P(=) / P(B)",
        "hierarchical P(A) / P(=) / P(B), population mean",
        "better/tie/worse",
        "reps",
    ]
    return grid(headers, rows, "md")
