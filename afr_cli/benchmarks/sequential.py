"""The decision rule's error when a comparison stops as soon as it is decided.

The sequential rule: add repetitions in batches of ``BATCH`` (10), apply the decision rule
(afr_cli/analysis/decision.py) after each batch, and stop when it names a winner or practical
equivalence at P >= 0.95 on every base compared, or at the maximum (100). Two measurements:

- **replay on the committed stores**: every model pair that a paper's claim compares (its two
  columns, on the claim's base; the claims of afr_cli/papers/*/paper.yaml), where the stores hold
  100 repetitions of every dataset for both; the rule replayed on repetitions 0..9, 0..19, …: where
  it stops, whether its verdict there differs from the verdict on all 100, and the share of
  units (dataset × repetition pairs) it saves;
- **synthetic pairs with a known difference**: 11 datasets whose differences B − A have a
  population mean of 0, half the ROPE, the ROPE and twice it (dataset means spread around it,
  repetitions correlated as repeated splits are, ρ = 0.2); the rate at which the sequential rule
  ends on a wrong decision. The truth is "equivalent" at 0 and half the ROPE and "B better" at
  twice it; at the ROPE itself both are defensible, so only "A better" counts as wrong there.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from afr_cli.analysis.decision import A_BETTER, B_BETTER, DECIDED, EQUIVALENT, decide_paired
from afr_cli.analysis.rope import DEFAULT_ROPE

BATCH = 10
MAX_REPS = 100
SYNTHETIC_DATASETS = 11
SYNTHETIC_RHO = 0.2
SYNTHETIC_SPREAD = 0.005  # sd of the dataset means around the population mean (R²)
SYNTHETIC_NOISE = 0.03  # sd of one repetition's difference (R²)
SYNTHETIC_SHIFTS = (0.0, 0.5, 1.0, 2.0)  # the true population mean, in ROPEs
PAIR_TESTS = ("wins", "ttest", "negligible", "figure_wins")
WORKERS = 2  # processes the pairs and trials are spread over (the machine's cores)


def claim_pairs(root: Path) -> list[dict]:
    """Each distinct (results, base, A, B, metric) a paper's claim compares, with the claims naming it."""
    from afr_cli.catalogue.knowledge import papers
    from afr_cli.publish.claims.columns import column_ref
    from afr_cli.publish.context import ReportContext

    ctx = ReportContext(root)
    reports = ctx.reports_by_name()
    pairs: dict[tuple, dict] = {}
    for paper in papers():
        for claim in paper.claims:
            test = claim.get("test")
            if test not in PAIR_TESTS:
                continue
            metric = str(claim.get("metric", "r2"))
            if test == "figure_wins":
                source, a, b = f"store:{claim['store']}", (claim["base"], claim["a"]), (claim["base"], claim["b"])
            else:
                if claim.get("report") not in reports:
                    continue
                where = f"{paper.id}: {claim.get('id')}"
                a = column_ref(claim["a"], paper.id, claim.get("table"), where).ours()
                b = column_ref(claim["b"], paper.id, claim.get("table"), where).ours()
                source = f"report:{claim['report']}"
            key = (source, a, b, metric)
            pairs.setdefault(key, {"source": source, "a": a, "b": b, "metric": metric, "claims": []})
            pairs[key]["claims"].append(f"{paper.id}:{claim['id']}")
    return list(pairs.values())


def _pair_rows(ctx, pair: dict) -> tuple[pd.DataFrame, str, str] | None:
    """The two models' rows (renamed MODEL:BASE when their bases differ) and the specs to compare,
    or None when the stores do not hold 100 repetitions of every dataset for both."""
    from afr_cli.tables.paper_compare import name_plain_forests

    kind, _, name = pair["source"].partition(":")
    if kind == "store":
        frames = ctx.store(name)
        results = frames.results if frames is not None else None
    else:
        results = ctx.report_frames(ctx.reports_by_name()[name])
    if results is None:
        return None
    results = name_plain_forests(results)
    (base_a, model_a), (base_b, model_b) = pair["a"], pair["b"]
    rows = results[
        ((results["base"] == base_a) & (results["model"] == model_a))
        | ((results["base"] == base_b) & (results["model"] == model_b))
    ]
    if rows.empty:
        return None
    a, b = (model_a, model_b) if base_a == base_b else (f"{model_a}:{base_a}", f"{model_b}:{base_b}")
    cells = [c for c in ("dataset", "train_fraction", "noise_eta") if c in rows.columns]
    counts = rows.groupby([*cells, "base", "model"])["rep"].nunique()
    if len(counts) == 0 or int(counts.min()) < MAX_REPS:
        return None
    return rows[rows["rep"] < MAX_REPS], a, b


def replay_pair(rows: pd.DataFrame, a: str, b: str, metric: str, rope: float = DEFAULT_ROPE) -> dict:
    """The sequential rule on one pair: where it stops, its verdicts there and on all repetitions."""
    from afr_cli.tables.compare_decision import decide_models

    final = {base: d.verdict for base, d in decide_models(rows, a, b, metric, rope).items()}
    stop, early, probabilities = MAX_REPS, dict(final), {}
    for n in range(BATCH, MAX_REPS, BATCH):
        decisions = decide_models(rows, a, b, metric, rope, n)
        if all(d.verdict in DECIDED for d in decisions.values()):
            stop = n
            early = {base: d.verdict for base, d in decisions.items()}
            probabilities = {base: d.probability for base, d in decisions.items()}
            break
    return {
        "stop_at": stop,
        "early": early,
        "final": final,
        "early_probability": probabilities,
        "differs": early != final,
    }


def _replay_job(job: tuple) -> dict:
    """One pair's replay in a worker: (rows, a, b, metric, rope) -> :func:`replay_pair`'s result."""
    rows, a, b, metric, rope = job
    return replay_pair(rows, a, b, metric, rope)


def replay(root: Path, rope: float = DEFAULT_ROPE, workers: int = WORKERS) -> dict:
    """The replay over every claim pair held at 100 repetitions (module docstring), the pairs
    spread over ``workers`` processes."""
    from afr_cli.publish.context import ReportContext

    ctx = ReportContext(root)
    jobs, labels, skipped = [], [], []
    for pair in claim_pairs(root):
        held = _pair_rows(ctx, pair)
        label = f"{pair['b'][1]} ({pair['b'][0]}) vs {pair['a'][1]} ({pair['a'][0]}), {pair['metric']}"
        if held is None:
            skipped.append(label)
            continue
        rows, a, b = held
        jobs.append((rows, a, b, pair["metric"], rope))
        labels.append((label, pair))
    results = _mapped(_replay_job, jobs, workers)
    out = [
        {"pair": label, "source": pair["source"], "claims": pair["claims"], **result}
        for (label, pair), result in zip(labels, results)
    ]
    stops = [p["stop_at"] for p in out]
    return {
        "pairs": out,
        "skipped_below_100_reps": skipped,
        "n_pairs": len(out),
        "differs": sum(p["differs"] for p in out),
        "stopped_early": sum(s < MAX_REPS for s in stops),
        "units_saved_share": (1.0 - sum(stops) / (MAX_REPS * len(stops))) if stops else None,
    }


def _synthetic_rows(shift: float, rng: np.random.Generator) -> list[np.ndarray]:
    """Per dataset, MAX_REPS differences B − A with population mean ``shift`` (module docstring)."""
    means = shift + rng.normal(0.0, SYNTHETIC_SPREAD, SYNTHETIC_DATASETS)
    shared = rng.normal(0.0, 1.0, SYNTHETIC_DATASETS)[:, None]
    own = rng.normal(0.0, 1.0, (SYNTHETIC_DATASETS, MAX_REPS))
    noise = SYNTHETIC_NOISE * (np.sqrt(SYNTHETIC_RHO) * shared + np.sqrt(1.0 - SYNTHETIC_RHO) * own)
    return list(means[:, None] + noise)


def _wrong(verdict: str, shift_ropes: float) -> bool:
    if verdict not in DECIDED:
        return False
    if shift_ropes < 1.0:
        return verdict != EQUIVALENT
    if shift_ropes == 1.0:
        return verdict == A_BETTER
    return verdict != B_BETTER


def _synthetic_job(job: tuple) -> tuple[str, int]:
    """One synthetic trial in a worker: (shift, rope, seed) -> (final verdict, repetitions used)."""
    shift, rope, seed = job
    data = _synthetic_rows(shift, np.random.default_rng(seed))
    for n in range(BATCH, MAX_REPS + 1, BATCH):
        d = decide_paired([r[:n] for r in data], SYNTHETIC_RHO, rope)
        if d.decided or n == MAX_REPS:
            return d.verdict, n
    raise AssertionError("unreachable: the last batch returns")


def synthetic(trials: int, rope: float = DEFAULT_ROPE, seed: int = 0, workers: int = WORKERS) -> dict:
    """The sequential rule on ``trials`` synthetic pairs per true difference (module docstring);
    trial ``t`` of shift ``k`` draws its data from seed ``seed + 1000·k + t``."""
    jobs = [
        (shift_ropes * rope, rope, seed + 1000 * k + t)
        for k, shift_ropes in enumerate(SYNTHETIC_SHIFTS)
        for t in range(trials)
    ]
    done = _mapped(_synthetic_job, jobs, workers)
    rows = []
    for k, shift_ropes in enumerate(SYNTHETIC_SHIFTS):
        verdicts = [v for v, _ in done[k * trials : (k + 1) * trials]]
        stops = [n for _, n in done[k * trials : (k + 1) * trials]]
        counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
        rows.append(
            {
                "true_difference": shift_ropes * rope,
                "in_ropes": shift_ropes,
                "trials": trials,
                "verdicts": counts,
                "wrong_rate": sum(_wrong(v, shift_ropes) for v in verdicts) / trials,
                "undecided_at_max": sum(v not in DECIDED for v in verdicts) / trials,
                "mean_reps": float(np.mean(stops)),
            }
        )
    return {
        "datasets": SYNTHETIC_DATASETS,
        "rho": SYNTHETIC_RHO,
        "spread": SYNTHETIC_SPREAD,
        "noise": SYNTHETIC_NOISE,
        "rope": rope,
        "seed": seed,
        "shifts": rows,
    }


def _mapped(function, jobs: list, workers: int) -> list:
    """``function`` over ``jobs`` in order, in ``workers`` processes (in this one for 1)."""
    if workers <= 1 or len(jobs) <= 1:
        return [function(job) for job in jobs]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(function, jobs))


def _cpu() -> float:
    """CPU seconds of this process and of its finished workers."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def run(root: Path, trials: int, rope: float = DEFAULT_ROPE, workers: int = WORKERS) -> dict:
    """Both measurements, with the CPU seconds each took (this process and its workers)."""
    c0 = _cpu()
    stores = replay(root, rope, workers)
    c1 = _cpu()
    made = synthetic(trials, rope, workers=workers)
    c2 = _cpu()
    return {
        "batch": BATCH,
        "max_reps": MAX_REPS,
        "threshold": 0.95,
        "replay": stores,
        "synthetic": made,
        "cpu_s": {"replay": round(c1 - c0, 1), "synthetic": round(c2 - c1, 1)},
    }


def lines(r: dict) -> list[str]:
    """The two tables as text."""
    from tabulate import tabulate

    rep = r["replay"]
    saved = "—" if rep["units_saved_share"] is None else f"{rep['units_saved_share']:.1%}"
    pair_rows = [
        [
            p["pair"],
            p["stop_at"],
            ", ".join(f"{k}: {v}" for k, v in p["early"].items()),
            ", ".join(p["final"].values()),
            "yes" if p["differs"] else "no",
        ]
        for p in rep["pairs"]
    ]
    synth_rows = [
        [
            f"{s['true_difference']:g} ({s['in_ropes']:g} ROPE)",
            s["trials"],
            f"{s['wrong_rate']:.1%}",
            f"{s['undecided_at_max']:.1%}",
            f"{s['mean_reps']:.0f}",
            ", ".join(f"{k} {v}" for k, v in s["verdicts"].items()),
        ]
        for s in r["synthetic"]["shifts"]
    ]
    return [
        f"replay on the committed stores: {rep['n_pairs']} claim pairs at {r['max_reps']} repetitions, batches of "
        f"{r['batch']}; stopped early on {rep['stopped_early']}; early verdict differs from the one on all "
        f"{r['max_reps']} on {rep['differs']}; units saved {saved}",
        tabulate(pair_rows, headers=["pair (B vs A)", "stops at", "verdict there", "verdict on all", "differs"]),
        "",
        "synthetic pairs with a known population difference:",
        tabulate(synth_rows, headers=["true B − A", "trials", "wrong", "undecided at max", "mean reps", "verdicts"]),
    ]
