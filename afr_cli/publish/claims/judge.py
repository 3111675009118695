"""Verdicts on the papers' claims, computed from the published tables and our stores.

Each claim of a paper's data file names a test; the same test runs on the paper's own table
(is the claim consistent with what the paper prints?) and on ours (every stored repetition,
and the paper's own repetitions 0..reps-1 beside it). The verdict:

- **reproduces**: our numbers pass the claim's test;
- **partly**: the claimed direction holds but not its size: a count below the claim's but at
  least half the paper's own count, a t-test whose mean has the claimed sign but whose
  significance differs from the claim, a negligible difference with the claimed sign that the
  ROPE does not call equivalent, most (not all) of the listed equalities, some of a figure's optima;
- **does not**: neither;
- **cannot: the paper is inconsistent**: the paper's own table fails the claim's test;
- **not run**: no store of ours holds the claim's models yet;
- **not checked**: nothing the paper or we measured can test the claim (the ledger says why).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from afr_cli.analysis.bayesian import signed_rank_test
from afr_cli.analysis.rope import DEFAULT_ROPE
from afr_cli.analysis.stats import paired_ttest
from afr_cli.catalogue.published import load_ttests
from afr_cli.errors import AfrInputError
from afr_cli.publish.claims.columns import ColumnRef, column_ref, our_columns, published_column, shared_reps
from afr_cli.tables.compare import WinRecord
from afr_cli.tables.format import METRIC_NAMES, format_value

REPRODUCES, PARTLY, DOES_NOT, CANNOT, NOT_RUN, NOT_CHECKED = (
    "reproduces",
    "partly",
    "does not",
    "cannot: the paper is inconsistent",
    "not run",
    "not checked",
)
VERDICTS = (REPRODUCES, PARTLY, DOES_NOT, CANNOT, NOT_RUN, NOT_CHECKED)
ALPHA = 0.05
# The ROPE reading: B − A practically equivalent, or better, when the Bayesian signed-rank
# test over the per-dataset means puts this much posterior mass inside (above) ±DEFAULT_ROPE R².
ROPE_LEVEL = 0.95
LOOSE = "loose"  # ``significant: loose``: the paper says "significantly" but runs no test
# Tests on a store of ours alone (a figure's claim: the paper prints no numbers to test): the
# claim names the store, and the paper's side is the claim as stated.
STORE_TESTS = ("surface_peak", "figure_wins")
TESTS = ("wins", "best", "ttest", "negligible", "equal", "gain_contrast", *STORE_TESTS, "not_checked")


@dataclass(frozen=True)
class Outcome:
    """One side's result of a claim's test: passed, partly passed, and the number as text."""

    passed: bool
    partial: bool
    text: str
    count: float | None = None


@dataclass(frozen=True)
class Verdict:
    """A claim with the paper's number, ours on every repetition and on the paper's, and the verdict."""

    paper_id: str
    claim: dict
    test: str
    paper: Outcome | None
    ours: Outcome | None
    ours_paper_reps: Outcome | None
    reps: str
    verdict: str
    verdict_paper_reps: str = ""
    # the claim read the other way (a t-test's with the ROPE, a negligible difference's by the
    # p-value): its label, our outcome on every repetition and the verdict it gives; "" for none
    other_reading: str = ""
    ours_other: Outcome | None = None
    verdict_other: str = ""
    # the smallest count of repetitions from which the verdict is the one on every stored repetition
    # and stays it (afr_cli/publish/claims/settle.py): a count, "does not settle", or "" (not judged so)
    settles: str = ""

    @property
    def id(self) -> str:
        return str(self.claim["id"])


def _metric(claim: dict) -> str:
    return str(claim.get("metric", "r2"))


def _sign(metric: str) -> int:
    return 1 if metric == "r2" else -1


def _need(claim: dict, n: int) -> int:
    at_least = claim.get("at_least", "most")
    if at_least == "most":
        return n // 2 + 1
    if at_least == "all":
        return n
    return int(at_least)


def describe_test(claim: dict) -> str:
    """The claim's test in words, e.g. 'sat-rf-y better than rf (RF) on ≥ 9 datasets'."""
    test, metric = claim["test"], METRIC_NAMES.get(_metric(claim), _metric(claim))
    at_least = claim.get("at_least", "most")
    need = {"most": "most", "all": "all"}.get(at_least, f"≥ {at_least}")
    if claim.get("at_most") is not None:
        need = f"{at_least} to {claim['at_most']}"
    if test == "wins":
        a, b = claim["a"], claim["b"]
        ties = ", a tie counting" if claim.get("ties") == "pass" else ""
        where = "datasets"
        if claim.get("cells_above"):
            where = "cells with " + " and ".join(f"{k} > {v:g}" for k, v in claim["cells_above"].items())
        return f"{_name(b)} better than {_name(a)} on {need} {where} ({metric}, printed precision{ties})"
    if test == "best":
        kind = "strictly best" if claim.get("strict", True) else "best or tied for best"
        return (
            f"{claim['model']} {kind} of {', '.join(claim['models'])} ({claim['base']}) on {need} datasets "
            f"({metric}, printed precision)"
        )
    if test == "ttest":
        if claim.get("significant") == LOOSE:
            return (
                f"{_name(claim['b'])} − {_name(claim['a'])} > 0 (the paper's table: the sign, as it runs no test; "
                f"ours: significant at {ALPHA:g}, Demšar's paired t-test over the datasets, {metric})"
            )
        significance = "significant" if claim.get("significant") else "not significant"
        return (
            f"{_name(claim['b'])} − {_name(claim['a'])} > 0 and {significance} at {ALPHA:g} "
            f"(Demšar's paired t-test over the datasets, {metric})"
        )
    if test == "negligible":
        return (
            f"{_name(claim['b'])} − {_name(claim['a'])} > 0 and practically equivalent: P(inside ±{DEFAULT_ROPE:g}) "
            f"≥ {ROPE_LEVEL:g} (Bayesian signed-rank test over the datasets, {metric})"
        )
    if test == "equal":
        return f"{_name(claim['a'])} = {_name(claim['b'])} at the printed precision on {', '.join(claim['datasets'])}"
    if test == "figure_wins":
        return (
            f"{claim['b']} better than {claim['a']} ({claim['base']}) on {need} (training fraction, noise) "
            f"cells of {claim['store']} ({metric}, 3 decimals)"
        )
    if test == "gain_contrast":
        high, low = claim["levels"]
        return (
            f"gain of {_name(claim['b'])} over {_name(claim['a'])} larger at {claim['axis']} = {high:g} than at "
            f"{low:g} (mean over the paired cells, {metric}; each pair shares split and forest)"
        )
    if test == "not_checked":
        return "none: " + str(claim.get("reason", "")).strip()
    expect = "; ".join(f"{k} {_expect_text(v)}" for k, v in claim["expect"].items())
    return f"mean test R² of {claim['model']} on {claim['dataset']} peaks at {expect}"


def _name(raw) -> str:
    if isinstance(raw, dict):
        return f"{raw['model']} ({raw['base']}, T{raw.get('table', '')})"
    return f"{raw[1]} ({raw[0]})"


def _expect_text(rule: dict) -> str:
    if "in" in rule:
        return "in {" + ", ".join(f"{v:g}" for v in rule["in"]) + "}"
    return f"< {rule['below']:g}"


# ---------------------------------------------------------------- the tests, on one side


def _frame(refs: list[ColumnRef], metric: str, results: pd.DataFrame | None, paired: bool = True) -> pd.DataFrame:
    """Datasets × columns: the paper's printed values (results None) or our means."""
    if results is None:
        return pd.concat([published_column(r, metric) for r in refs], axis=1).dropna()
    return our_columns(results, refs, metric, paired)


def _count_outcome(count: int, n: int, claim: dict, paper_count: float | None, detail: str) -> Outcome:
    need = _need(claim, n)
    at_most = claim.get("at_most")
    passed = count >= need and (at_most is None or count <= int(at_most))
    partial = (
        not passed and at_most is None and paper_count is not None and count > 0 and count >= math.ceil(paper_count / 2)
    )
    return Outcome(passed, partial, f"{count} of {n}" + (f" ({detail})" if detail else ""), count)


def _cells_above(frame: pd.DataFrame, claim: dict) -> pd.DataFrame:
    """The rows (cells) of ``frame`` whose axis values exceed the claim's ``cells_above``
    thresholds ('Boston [train_fraction=15, noise_eta=0.5]' has noise_eta 0.5); all rows without it."""
    above = claim.get("cells_above") or {}
    if not above:
        return frame
    keep = [
        label for label in frame.index if all(_axis_value(str(label), axis) > float(v) for axis, v in above.items())
    ]
    return frame.loc[keep]


def _axis_value(label: str, axis: str) -> float:
    return _drop_axis(label, axis)[1]


def _wins(claim, refs, results, paper_count):
    metric = _metric(claim)
    frame = _cells_above(_frame(refs, metric, results), claim)
    a, b = (r.label() for r in refs)
    record = WinRecord.count(frame.rename_axis("dataset").reset_index(), a, b, metric)
    count = len(record.wins) + (len(record.ties) if claim.get("ties") == "pass" else 0)
    n = len(record.wins) + len(record.ties) + len(record.losses)
    detail = "; ".join(
        f"{label} {', '.join(names)}" for label, names in (("ties:", record.ties), ("worse on", record.losses)) if names
    )
    return _count_outcome(count, n, claim, paper_count, detail)


def _best(claim, refs, results, paper_count):
    metric = _metric(claim)
    frame = _frame(refs, metric, results, paired=False)
    target = next(r.label() for r in refs if r.model == claim["model"])
    strict = claim.get("strict", True)
    count, beaten = 0, []
    for dataset, row in frame.iterrows():
        shown = {c: float(format_value(v, metric)) for c, v in row.items()}
        top = max(shown.values()) if metric == "r2" else min(shown.values())
        tops = [c for c, v in shown.items() if v == top]
        if target in tops and (not strict or len(tops) == 1):
            count += 1
        else:
            beaten.append(str(dataset))
    detail = f"not on {', '.join(beaten)}" if beaten and len(beaten) <= 5 else ""
    return _count_outcome(count, len(frame), claim, paper_count, detail)


def _ttest(claim, refs, results, paper_count):
    metric = _metric(claim)
    frame = _frame(refs, metric, results)
    a, b = (r.label() for r in refs)
    t = paired_ttest(frame[b], frame[a])
    direction = _sign(metric) * t.mean_diff > 0
    significant = t.p < ALPHA
    if claim.get("significant") == LOOSE:  # the paper runs no test: its own table is read for the sign
        passed = direction and (results is None or significant)
    else:
        passed = direction and significant == bool(claim.get("significant"))
    text = f"{t.mean_diff:+.4f}, p = {t.p:.2g}, CI [{t.ci_low:+.4f}, {t.ci_high:+.4f}], n = {t.n}"
    return Outcome(passed, direction and not passed, text, t.mean_diff)


def _rope_probabilities(claim, refs, results) -> tuple[float, float, float, int]:
    """The mean of B − A (signed so that positive is B better) and the Bayesian signed-rank
    posterior P(B better), P(equivalent) over the per-dataset means, with the datasets' count."""
    metric = _metric(claim)
    frame = _frame(refs, metric, results)
    a, b = (r.label() for r in refs)
    diff = _sign(metric) * (frame[b] - frame[a])
    probs = signed_rank_test(diff.to_numpy(), DEFAULT_ROPE).probabilities
    return float(diff.mean()), probs.right, probs.rope, len(diff)


def _negligible(claim, refs, results, paper_count):
    """A negligible difference with the claimed sign ("R² insignificantly increases"): B − A > 0 on
    the mean and P(inside the ROPE) ≥ ROPE_LEVEL; partly when only one of the two holds."""
    mean, _, equal, n = _rope_probabilities(claim, refs, results)
    direction, equivalent = mean > 0, equal >= ROPE_LEVEL
    text = f"{mean:+.4f}, P(equivalent, ±{DEFAULT_ROPE:g}) = {equal:.3f}, n = {n}"
    return Outcome(direction and equivalent, direction != equivalent, text, mean)


def _rope_better(claim, refs, results, paper_count):
    """A claimed improvement read with the ROPE: P(B better by more than the ROPE) ≥ ROPE_LEVEL;
    partly when only the mean has the claimed sign."""
    mean, better, _, n = _rope_probabilities(claim, refs, results)
    passed = mean > 0 and better >= ROPE_LEVEL
    return Outcome(
        passed, mean > 0 and not passed, f"{mean:+.4f}, P(B better, ±{DEFAULT_ROPE:g}) = {better:.3f}, n = {n}", mean
    )


def other_reading(claim: dict) -> tuple[str, object] | None:
    """The claim's other reading, shown beside its verdict: a t-test claim read with the ROPE (an
    improvement: P(better) ≥ ROPE_LEVEL; "not significant": practical equivalence), a negligible
    difference read by the p-value; None for other tests and for a metric the ROPE is not on (R² only)."""
    if _metric(claim) != "r2":
        return None
    if claim.get("test") == "negligible":
        return "by the p-value", lambda c, r, res, n: _ttest({**c, "significant": False}, r, res, n)
    if claim.get("test") == "ttest":
        if claim.get("significant") is False:
            return "with the ROPE", _negligible
        return "with the ROPE", _rope_better
    return None


def _equal(claim, refs, results, paper_count):
    metric = _metric(claim)
    frame = _frame(refs, metric, results)
    a, b = (r.label() for r in refs)
    listed = [d for d in claim["datasets"] if d in frame.index]
    same = [d for d in listed if format_value(frame.at[d, a], metric) == format_value(frame.at[d, b], metric)]
    n = len(listed)
    detail = f"equal on {', '.join(same)}" if same else "equal on none"
    return Outcome(n > 0 and len(same) == n, n / 2 < len(same) < n, f"{len(same)} of {n} ({detail})", len(same))


def _gain_contrast(claim, refs, results, paper_count):
    """The gain of B over A (positive = B better) at one level of an axis against another, paired
    by the cells that differ only in that axis (they share the split and the forest): passed when
    the mean paired contrast is positive; partly when it is positive on most pairs but not on mean."""
    metric, axis = _metric(claim), claim["axis"]
    high, low = (float(v) for v in claim["levels"])
    frame = _frame(refs, metric, results)
    a, b = (r.label() for r in refs)
    gain = _sign(metric) * (frame[b] - frame[a])
    pairs = {}
    for label, value in gain.items():
        key, level = _drop_axis(str(label), axis)
        pairs.setdefault(key, {})[level] = float(value)
    both = {k: v for k, v in pairs.items() if high in v and low in v}
    contrast = [v[high] - v[low] for v in both.values()]
    n = len(contrast)
    if n == 0:
        return Outcome(False, False, "no paired cells", None)
    mean_high = sum(v[high] for v in both.values()) / n
    mean_low = sum(v[low] for v in both.values()) / n
    larger = sum(c > 0 for c in contrast)
    mean = sum(contrast) / n
    text = (
        f"gain {mean_high:+.4f} at {axis} = {high:g} against {mean_low:+.4f} at {low:g}; paired contrast "
        f"{mean:+.4f}, larger on {larger} of {n} pairs"
    )
    return Outcome(mean > 0, mean <= 0 and larger > n / 2, text, mean)


def _drop_axis(label: str, axis: str) -> tuple[str, float]:
    """'Boston [train_fraction=15, noise_eta=0.5]' -> ('Boston [train_fraction=15]', 0.5)."""
    head, _, inner = label.partition(" [")
    parts = [p.strip() for p in inner.rstrip("]").split(",") if p.strip()]
    level = next(float(p.split("=", 1)[1]) for p in parts if p.startswith(f"{axis}="))
    rest = [p for p in parts if not p.startswith(f"{axis}=")]
    return (f"{head} [{', '.join(rest)}]" if rest else head), level


SIDE_TESTS = {
    "wins": _wins,
    "best": _best,
    "ttest": _ttest,
    "negligible": _negligible,
    "equal": _equal,
    "gain_contrast": _gain_contrast,
}


def _figure_wins(claim: dict, results: pd.DataFrame, paper_reps: int | None = None) -> Outcome:
    """B better than A on the store's (training fraction, noise) cells, means over the repetitions
    both hold (the first ``paper_reps`` when given), at three decimals as Table I prints RMSE."""
    metric = _metric(claim)
    rows = results[(results["base"] == claim["base"]) & results["model"].isin([claim["a"], claim["b"]])]
    if paper_reps is not None:
        rows = rows[rows["rep"] < paper_reps]
    cells = [c for c in ("dataset", "train_fraction", "noise_eta") if c in rows.columns]
    wide = rows.pivot_table(index=[*cells, "rep"], columns="model", values=metric).dropna()
    means = wide.groupby(level=cells).mean()
    shown = means.round(3)
    better = _sign(metric) * (shown[claim["b"]] - shown[claim["a"]]) > 0
    count, n = int(better.sum()), len(means)
    diff = float((means[claim["b"]] - means[claim["a"]]).mean())
    need = _need(claim, n)
    passed = count >= need
    text = f"{count} of {n} (mean {claim['b']} − {claim['a']} {diff:+.3f} {METRIC_NAMES.get(metric, metric)})"
    return Outcome(passed, not passed and count >= math.ceil(n / 2), text, count)


def _surface_outcome(claim: dict, grid: pd.DataFrame) -> Outcome:
    from afr_cli.figures.plots import surface_table

    surface = surface_table(grid, claim["dataset"], claim["model"], claim["x"], claim["y"], base=claim.get("base"))
    x, y, value = surface.best()
    peak = {claim["x"]: x, claim["y"]: y}
    held = [_holds(peak[k], rule) for k, rule in claim["expect"].items()]
    text = f"peak at {claim['x']} = {x:g}, {claim['y']} = {y:g} (mean test R² {value:.3f}, {surface.reps} reps)"
    return Outcome(all(held), any(held) and not all(held), text)


def _holds(value: float, rule: dict) -> bool:
    if "in" in rule:
        return any(math.isclose(value, float(v)) for v in rule["in"])
    return value < float(rule["below"])


# ---------------------------------------------------------------- one claim


def _refs(claim: dict, paper_id: str, where: str) -> list[ColumnRef]:
    table = str(claim["table"]) if "table" in claim else None
    if claim["test"] == "best":
        return [column_ref([claim["base"], m], paper_id, table, where) for m in claim["models"]]
    return [column_ref(claim["a"], paper_id, table, where), column_ref(claim["b"], paper_id, table, where)]


def printed_test(paper_id: str, claim: dict) -> str | None:
    """The t-test as the paper prints it in its text (ttests.csv), when the claim quotes one."""
    printed = claim.get("printed")
    if not printed:
        return None
    tests = load_ttests()
    row = tests[
        (tests["paper"] == paper_id)
        & (tests["comparison"] == printed["comparison"])
        & (tests["base"] == printed["base"])
    ]
    if row.empty:
        raise AfrInputError(f"claim {claim['id']}: printed: no t-test {printed} in ttests.csv")
    r = row.iloc[0]
    parts = [
        f"{r['mean_diff']}" if r["mean_diff"] else "",
        f"p = {r['p_value']}",
        f"CI [{r['ci_low']}, {r['ci_high']}]" if r["ci_low"] else "",
    ]
    return ", ".join(p for p in parts if p)


def judge(
    paper_id: str, claim: dict, results: pd.DataFrame | None, paper_reps: int, grid: pd.DataFrame | None = None
) -> Verdict:
    """The verdict on one claim (module docstring). ``results``: our rows of the claim's report
    (None: not run); ``grid``: the grid rows of a figure claim's store."""
    where = f"afr_cli/papers/{paper_id}/paper.yaml: claims: {claim.get('id')}"
    test = claim.get("test")
    if test not in TESTS:
        raise AfrInputError(f"{where}: test: {test!r} is not allowed; allowed: {', '.join(TESTS)}")
    if test == "not_checked":
        if not str(claim.get("reason", "")).strip():
            raise AfrInputError(f"{where}: reason: missing; a claim not checked says why")
        return Verdict(paper_id, claim, test, None, None, None, "", NOT_CHECKED)
    if test == "figure_wins":
        if results is None or results[results["model"] == claim["b"]].empty:
            return Verdict(paper_id, claim, test, None, None, None, "", NOT_RUN)
        stated = Outcome(True, False, "as stated (the figures' curves are not printed as numbers)")
        ours, first = _figure_wins(claim, results), _figure_wins(claim, results, paper_reps)
        low, high = (
            int(v) for v in results.groupby(["train_fraction", "noise_eta"])["rep"].nunique().agg(["min", "max"])
        )
        return Verdict(
            paper_id,
            claim,
            test,
            stated,
            ours,
            first,
            f"{low}" if low == high else f"{low}-{high}",
            _verdict(stated, ours),
            _verdict(stated, first),
        )
    if test == "surface_peak":
        if grid is None:
            return Verdict(paper_id, claim, test, None, None, None, "", NOT_RUN)
        ours = _surface_outcome(claim, grid)
        return Verdict(paper_id, claim, test, Outcome(True, False, "as stated"), ours, None, "", _verdict(None, ours))
    refs = _refs(claim, paper_id, where)
    side = SIDE_TESTS[test]
    paper = side(claim, refs, None, None)
    if results is None or our_columns(results, refs, _metric(claim), test != "best").empty:
        return Verdict(paper_id, claim, test, paper, None, None, "", NOT_RUN)
    ours = side(claim, refs, results, paper.count)
    first = results[results["rep"] < paper_reps]
    ours_first = side(claim, refs, first, paper.count)
    low, high = shared_reps(results, refs, _metric(claim))
    reps = f"{low}" if low == high else f"{low}-{high}"
    other = other_reading(claim)
    if other is None:
        return Verdict(
            paper_id, claim, test, paper, ours, ours_first, reps, _verdict(paper, ours), _verdict(paper, ours_first)
        )
    label, other_side = other
    paper_other, ours_other = other_side(claim, refs, None, None), other_side(claim, refs, results, None)
    if claim.get("significant") == LOOSE:  # the paper's side is read for the sign either way
        paper_other = paper
    return Verdict(
        paper_id,
        claim,
        test,
        paper,
        ours,
        ours_first,
        reps,
        _verdict(paper, ours),
        _verdict(paper, ours_first),
        label,
        ours_other,
        _verdict(paper_other, ours_other),
    )


def verdict_on_first(paper_id: str, claim: dict, results: pd.DataFrame, reps: int) -> str:
    """The claim's verdict (read as :func:`judge` reads it) on our repetitions 0..reps−1 alone: the
    same test on the paper's side and on ours, without the other readings (what "settles at" compares)."""
    test = claim.get("test")
    first = results[results["rep"] < reps]
    if test == "figure_wins":
        stated = Outcome(True, False, "as stated")
        if first[first["model"] == claim["b"]].empty:
            return NOT_RUN
        return _verdict(stated, _figure_wins(claim, first))
    refs = _refs(claim, paper_id, f"afr_cli/papers/{paper_id}/paper.yaml: claims: {claim.get('id')}")
    side = SIDE_TESTS[test]
    paper = side(claim, refs, None, None)
    if our_columns(first, refs, _metric(claim), test != "best").empty:
        return NOT_RUN
    return _verdict(paper, side(claim, refs, first, paper.count))


def _verdict(paper: Outcome | None, ours: Outcome) -> str:
    if paper is not None and not paper.passed:
        return CANNOT
    if ours.passed:
        return REPRODUCES
    return PARTLY if ours.partial else DOES_NOT


def reason(v: Verdict) -> str:
    """Why the verdict is what it is, in one sentence built from the numbers."""
    if v.verdict == NOT_CHECKED:
        return str(v.claim["reason"]).strip()
    if v.verdict == NOT_RUN:
        return "no store of ours holds these models yet"
    if v.verdict == CANNOT:
        return f"the paper's own numbers fail the claim's test ({v.paper.text})"
    if v.test == "negligible":
        if v.verdict == REPRODUCES:
            return "the mean difference has the claimed sign and the ROPE calls it practically equivalent"
        if v.verdict == PARTLY:
            return "only one of the two holds: the claimed sign of the mean, practical equivalence under the ROPE"
        return "the mean difference has not the claimed sign, nor does the ROPE call it equivalent"
    if v.test == "ttest":
        if v.verdict == REPRODUCES:
            return "the mean difference has the claimed sign and the claimed significance"
        if v.verdict == PARTLY:
            wanted = "significant" if v.claim.get("significant") else "not significant"
            return (
                f"the mean difference has the claimed sign, but its significance differs from the "
                f"claim's ({wanted} at {ALPHA:g})"
            )
        return "the mean difference does not have the claimed sign"
    if v.verdict == REPRODUCES:
        return "our numbers pass the claim's test"
    if v.verdict == PARTLY:
        return "the claimed direction holds, on fewer datasets (or fewer cases) than the claim says"
    return "our numbers do not show the claimed effect"
