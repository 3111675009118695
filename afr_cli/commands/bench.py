"""``afr bench``: speed measured as ratios against a naive path timed in the same run. With
``--record`` a benchmark also writes its result as a measurement record
(``results/bench/<kind>/<key>.json``, afr_cli/store/bench_records.py) that ``afr report`` renders into
the pages' ``bench:<kind>`` blocks; ``afr bench time`` measures any command the same way."""

from __future__ import annotations

import json
import os
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

import typer

from afr_cli.commands.options import TREES_HELP, at_least, reps_option, trees_option
from afr_cli.errors import AfrInputError

FORMATS = ("table", "json")
RECORD_HELP = "also write the result to results/bench/<kind>/<key>.json, which afr report renders into the pages"
NOTE_HELP = "with --record: what a reader of the numbers should know about the run (e.g. the machine's load)"
RECORDS_ROOT = Path("results")  # the records go under the project's results root, as the stores do

HELP = "Benchmarks: ratios against a naive path measured in the same run."
# `afr bench time KEY -- COMMAND...`: the words after -- are the command, not bench's options
TIME_CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True}


THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")  # they change CPU seconds


def _command_line() -> str:
    """The user's ``afr bench ...`` command as typed, without ``--record`` (what a record quotes),
    after the BLAS thread settings it ran under, when set."""
    env = [f"{k}={shlex.quote(os.environ[k])}" for k in THREAD_VARS if k in os.environ]
    args, skip = [], False
    for a in sys.argv[1:]:  # without --record, and without --note TEXT (the record keeps the note apart)
        if skip or a == "--record":
            skip = False
            continue
        if a == "--note":
            skip = True
            continue
        if not a.startswith("--note="):
            args.append(a)
    return " ".join([*env, "afr", shlex.join(args)])


def _record(kind: str, key: tuple, result: dict, command: str | None = None, note: str | None = None) -> None:
    """Write the measurement record named by the parts of ``key`` (of ``command``; default: this
    ``afr bench`` command) and say where; ``note``: what a reader of the numbers should know about
    the run (the machine's load, say)."""
    from afr_cli.store.bench_records import record_key, write_record

    path = write_record(RECORDS_ROOT, kind, record_key(*key), command or _command_line(), result, note=note or None)
    typer.echo(f"recorded: {path} (afr report renders it into the pages' bench:{kind} block)", err=True)


def _check_threshold(threshold: float) -> None:
    """--threshold of the store comparisons (regenerated, baseline): a number >= 0 (NaN refused)."""
    if not threshold >= 0:
        raise AfrInputError(f"--threshold: {threshold!r} is not allowed; a number >= 0")


def _emit(result: dict, fmt: str, lines: list[str]) -> None:
    """Print a benchmark's result (``fmt`` was checked by ``_checked`` before the run)."""
    typer.echo(json.dumps(result, indent=2) if fmt == "json" else "\n".join(lines))


def worker_counts(workers: str, example: str) -> tuple[int, ...]:
    """``--workers`` as counts (comma-separated, each at least 1), or its one-line error."""
    try:
        counts = tuple(int(w) for w in workers.split(","))
    except ValueError:
        counts = ()
    if not counts or min(counts) < 1:
        raise AfrInputError(f"--workers: {workers!r} is not allowed; comma-separated counts >= 1, e.g. {example}")
    return counts


def chosen_datasets(datasets: str, known: list[str]) -> list[str]:
    """``--datasets`` (comma-separated) as names, each one of ``known``, or its one-line error
    naming the first unknown one and what is allowed (in ``known``'s order)."""
    chosen = [d.strip() for d in datasets.split(",") if d.strip()]
    unknown = [d for d in chosen if d not in known]
    if not chosen or unknown:
        raise AfrInputError(f"--datasets: {(unknown or [datasets])[0]!r} is not allowed; allowed: {', '.join(known)}")
    return chosen


def _checked(fmt: str, solver: str, n: int, trees: int) -> str:
    """Validate the common options before any work; the solver's canonical name."""
    from afr_cli.solvers.solve import SOLVERS

    if fmt not in FORMATS:
        raise AfrInputError(f"--format: {fmt!r} is not allowed; allowed: {', '.join(FORMATS)}")
    if solver.upper() not in SOLVERS:
        raise AfrInputError(f"--solver: {solver!r} is not allowed; allowed: {', '.join(SOLVERS)}")
    if n < 20 or trees < 1:
        raise AfrInputError(f"--n {n} / --trees {trees}: not allowed; n must be >= 20 and trees >= 1")
    return solver.upper()


def _qp_lines(r: dict) -> list[str]:
    """The qp benchmark as text: one table of ms (gap) per shape and solver."""
    from tabulate import tabulate

    solvers = list(dict.fromkeys(k for row in r["shapes"].values() for k in row if k not in ("reference", "weights")))

    def cell(entry: dict | None) -> str:
        if not entry:
            return ""
        return "failed" if entry["ms"] is None else f"{entry['ms']:.2f} ({entry['gap']:+.0e})"

    rows = [
        [name, row["weights"], row["reference"]] + [cell(row.get(s)) for s in solvers]
        for name, row in r["shapes"].items()
    ]
    nv, ws = r["naive"], r["warm_start"]
    return [
        f"{r['dataset']}, n = {r['n']}, T = {r['trees']}: ms, median of {r['repeats']} "
        "(relative objective gap to the reference)",
        tabulate(rows, headers=["shape", "weights", "reference"] + solvers),
        "",
        f"naive fresh n-form cvxpy + ECOS {nv['fresh_ms']:.1f} ms vs AUTO {nv['auto_ms']:.2f} ms: "
        f"ratio {nv['ratio']:.0f}x, objective gap {nv['objective_gap']:+.0e}",
        f"warm starts along {ws['shape']}'s eps x gamma sweep ({ws['points']} points): cold "
        f"{ws['cold_ms']:.1f} ms, warm {ws['warm_ms']:.1f} ms (ratio {ws['ratio']:.2f}, max gap {ws['max_gap']:.0e})",
    ]


def qp(
    dataset: str = typer.Option("Airfoil", help="dataset whose 80 % training split the shapes use"),
    n: int = typer.Option(0, help="rows kept (0 = the whole training split)"),
    trees: int = typer.Option(100, "--trees", help="T (the 1,000-tree shape uses 10 T)"),
    repeats: int = typer.Option(3, help="timed repeats (median)"),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
) -> None:
    """Every solver on the real shapes: ms and objective gap to tight ECOS; AUTO vs the naive path; warm starts."""
    from afr_cli.benchmarks.qp import run
    from afr_cli.data import DATASETS

    _checked(fmt, "AUTO", n or 20, trees)
    if dataset not in DATASETS:
        raise AfrInputError(f"--dataset: {dataset!r} is not allowed; allowed: {', '.join(DATASETS)}")
    r = run(dataset, trees, n or None, repeats)
    _emit(r, fmt, _qp_lines(r))
    if record:
        _record("qp", (dataset, f"T{trees}"), r)


def satrf(
    n: int = typer.Option(800, help="training rows (n/2 validation rows)"),
    trees: int = typer.Option(100, "--trees", help="T"),
    solver: str = typer.Option("AUTO", "--solver", help="AUTO (fast path), ECOS, CLARABEL, OSQP or SCS"),
    fmt: str = typer.Option("table", "--format", help="table or json"),
) -> None:
    """One SAT-RF-y fold, the 5 x 5 eps x gamma grid: shared tensors vs rebuilt at every point."""
    from afr_cli.benchmarks.satrf import run

    r = run(n, trees, solver=_checked(fmt, solver, n, trees))
    lines = [
        f"SAT-RF-y fold, {r['points']} grid points (eps x gamma), T = {r['T']}, n = {r['n']}, solver {r['solver']}",
        f"naive (tensors rebuilt at every point): {r['naive_ms']:.1f} ms",
        f"shared (tensors built once per row set): {r['shared_ms']:.1f} ms",
        f"ratio: {r['ratio']:.1f}x (predictions differ by at most {r['max_abs_diff']:.1e})",
    ]
    _emit(r, fmt, lines)


def larf(
    n: int = typer.Option(800, help="training rows (n/2 validation rows)"),
    trees: int = typer.Option(100, "--trees", help="T"),
    solver: str = typer.Option("AUTO", "--solver", help="AUTO (fast path), ECOS, CLARABEL, OSQP or SCS"),
    max_m: int = typer.Option(20, "--max-m", help="M runs over 1..max_m", callback=at_least(1)),
    fmt: str = typer.Option("table", "--format", help="table or json"),
) -> None:
    """One LARF fold, 5 tau0 x M x 4 variants: vectorised leaf attention vs a per-row loop; peak memory."""
    from afr_cli.benchmarks.larf import run

    name = _checked(fmt, solver, n, trees)
    r = run(n, trees, solver=name, Ms=range(1, max_m + 1))
    lines = [
        f"LARF fold: {r['grid_points']} grid points ({r['qp_solves']} distinct QPs), T = {trees}, n = {n}, "
        f"solver {name}",
        f"first level, per-row loop: {r['naive_first_level_ms']:.0f} ms",
        f"first level, vectorised:   {r['vectorised_first_level_ms']:.0f} ms "
        f"(max |diff| {r['first_level_max_abs_diff']:.1e})",
        f"ratio (first level): {r['ratio_first_level']:.1f}x",
        f"whole grid on shared features: {r['shared_ms']:.0f} ms, of which solver {r['solver_ms']:.0f} ms",
        f"peak memory: {r['peak_mb']:.0f} MB (tracemalloc), {r['maxrss_delta_mb']:.0f} MB (max RSS growth)",
    ]
    _emit(r, fmt, lines)


def dm(
    n: int = typer.Option(100_000, help="rows to predict"),
    trees: int = typer.Option(100, "--trees", help="T"),
    train: int = typer.Option(2000, "--train", help="rows the forest is fit on", callback=at_least(20)),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
) -> None:
    """Decision-Machine batch prediction (sparse matmul) vs scikit-learn and a per-row loop; peak memory."""
    from afr_cli.benchmarks.dm import run
    from afr_cli.solvers.solve import DEFAULT_SOLVER

    _checked(fmt, DEFAULT_SOLVER, n, trees)
    r = run(n, trees, train)
    mem = r["peak_mb"]
    lines = [
        f"RF of {r['T']} trees fit on {r['train']} rows ({r['leaves']} leaves, {r['internal_nodes']} internal "
        f"nodes, {r['B_nonzeros']} nonzeros in B); predicting n = {r['n']} rows",
        f"matrices, batch (sparse matmul): {r['matrix_ms']:.0f} ms  (peak {mem['matrix']:.0f} MB)",
        f"scikit-learn predict:            {r['sklearn_ms']:.0f} ms  (peak {mem['sklearn']:.0f} MB)",
        f"matrices, per-row loop:          {r['naive_ms']:.0f} ms  "
        f"(peak {mem['naive_first_1000_rows']:.0f} MB on 1000 rows)",
        f"soft machine, tau = {r['soft_tau']}:        {r['soft_ms']:.0f} ms  (peak {mem['soft']:.0f} MB)",
        f"ratios: per-row loop / batch = {r['naive_over_matrix']:.1f}x; "
        f"batch / scikit-learn = {r['matrix_over_sklearn']:.2f}x",
        f"predictions identical (batch, loop, scikit-learn): {r['agree']}",
    ]
    _emit(r, fmt, lines)
    if record:
        _record("dm", (f"T{trees}", f"n{n}"), r)


def unit(
    config: str = typer.Argument(..., help="experiment YAML"),
    dataset: str = typer.Option(..., help="the unit's dataset"),
    against: str = typer.Option(..., help="solver to compare AUTO with: ECOS, CLARABEL, OSQP or SCS"),
    rep: int = typer.Option(0, help="the unit's repetition"),
    store: str = typer.Option(None, help="a store of this config: its rows and compute to compare with"),
    reps: int = reps_option("extrapolate the store's compute to this many repetitions"),
    overrides: list[str] = typer.Option(None, "--set", help="override a config key"),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
) -> None:
    """One unit under AUTO and another solver: CPU seconds, ratio, |dR2| (between them and vs a store)."""
    from afr_cli.benchmarks.unit import run
    from afr_cli.solvers.solve import SOLVERS

    _checked(fmt, against, 20, 1)
    if against.upper() == "AUTO":
        raise AfrInputError(f"--against: {against!r} is not allowed; allowed: {', '.join(SOLVERS[1:])}")
    r = run(config, dataset, against, rep, overrides, store, reps)
    s = r["solvers"]
    lines = [
        f"{r['config']}, {r['dataset']}, rep {r['rep']}: AUTO {s['AUTO']['cpu_s']:.1f} CPU s, "
        f"{against.upper()} {s[against.upper()]['cpu_s']:.1f} CPU s, ratio {r['ratio']:.2f}x; "
        f"largest |dR2| between them {r['max_abs_dr2_between']:.1e}"
    ]
    if store:
        lines.append(
            f"against {store} (this unit {r['store_unit_s']:.1f} s; {r['store_total_min']:.0f} min "
            f"at {r['reps']} reps, AUTO extrapolated {r['extrapolated_auto_cpu_min']:.0f} CPU min): "
            "largest |dR2| per model " + ", ".join(f"{m} {v:.1e}" for m, v in r["max_abs_dr2_vs_store"].items())
        )
    _emit(r, fmt, lines)
    if record:
        _record("unit", (Path(config).stem, dataset, f"rep{rep}", against.upper()), r)


def floor(
    config: str = typer.Argument(..., help="experiment YAML"),
    dataset: str = typer.Option(..., help="the units' dataset"),
    rep: int = typer.Option(0, help="the units' repetition", callback=at_least(0)),
    overrides: list[str] = typer.Option(None, "--set", help="override a config key"),
    trees: str = trees_option(help=TREES_HELP + " on the new path (today's: sklearn)"),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
) -> None:
    """Shared work (solve memo, prefix forests, shared noise, fast trees) against today's path on
    one (dataset, rep): CPU seconds of each, the ratio, and whether the rows are identical."""
    from afr_cli.benchmarks.floor import run
    from afr_cli.config.experiment import load_experiment
    from afr_cli.engine.shared_work import speedups_for

    speedups = speedups_for(trees)
    _checked(fmt, "AUTO", 20, 1)
    exp = load_experiment(config, list(overrides or []))
    if dataset not in exp.datasets:
        raise AfrInputError(f"--dataset: {dataset!r} is not allowed; allowed: {', '.join(exp.datasets)}")
    r = run(config, dataset, rep, overrides, speedups)
    lines = [
        f"{r['config']}, {r['dataset']}, rep {r['rep']}: {r['units']} units ({r['tasks']} tasks on the new path)",
        f"today (no memo, no prefix forests, no shared noise, scikit-learn's own trees): "
        f"{r['today']['cpu_s']:.2f} CPU s ({r['today']['wall_s']:.2f} s wall)",
        f"shared work, {r['trees']} trees: {r['new']['cpu_s']:.2f} CPU s ({r['new']['wall_s']:.2f} s wall)",
        f"ratio {r['ratio']:.2f}x; rows identical: {r['identical']} (largest score move {r['largest_move']:.1e})",
    ]
    _emit(r, fmt, lines)
    if record:
        _record("floor", (Path(config).stem, dataset, f"rep{rep}", *(overrides or [])), r)


def trees_bench(
    dataset: str = typer.Option(
        "Concrete", help="dataset whose 80 % training split the ensembles are fitted on (Concrete: n = 824)"
    ),
    repeats: int = typer.Option(3, help="rounds, each fitting and applying once on each path", callback=at_least(1)),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
) -> None:
    """The fast tree path against scikit-learn's own: fit and apply CPU seconds, ratios, identical bytes."""
    from tabulate import tabulate

    from afr_cli.benchmarks.trees import run
    from afr_cli.data import DATASETS

    _checked(fmt, "AUTO", 20, 1)
    if dataset not in DATASETS:
        raise AfrInputError(f"--dataset: {dataset!r} is not allowed; allowed: {', '.join(DATASETS)}")
    r = run(dataset, repeats)
    rows = [
        [
            label,
            e["sklearn"]["fit"],
            e["fast"]["fit"],
            f"{e['fit_ratio']:.2f}x",
            e["sklearn"]["apply"],
            e["fast"]["apply"],
            f"{e['apply_ratio']:.2f}x",
            e["identical"],
        ]
        for label, e in r["ensembles"].items()
    ]
    lines = [
        f"{r['dataset']}: fit on {r['n_train']} training rows, apply to them and {r['n_test']} test rows; "
        f"CPU s summed over {r['repeats']} rounds",
        tabulate(
            rows,
            headers=[
                "ensemble",
                "fit sklearn",
                "fit fast",
                "ratio",
                "apply sklearn",
                "apply fast",
                "ratio",
                "identical",
            ],
            floatfmt=".3f",
        ),
    ]
    _emit(r, fmt, lines)
    if record:
        _record("trees", (dataset,), r)


def fusion(
    configs: list[str] = typer.Argument(
        None, help="experiment YAMLs (default: the RF group, abrf_rf satrf_rf larf_rf dm_soft larf_leave_self_out)"
    ),
    datasets: str = typer.Option("Friedman3", "--datasets", help="comma-separated datasets"),
    reps: int = reps_option("repetitions 0..reps-1", default=1),
    workers: str = typer.Option("1,2", "--workers", help="comma-separated worker counts"),
    cache_mb: int = typer.Option(
        512, "--cache-mb", help="each worker's forest cache bound (cache path)", callback=at_least(1)
    ),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
) -> None:
    """Each distinct forest fitted once across experiments, fused into one task or read from a
    per-worker cache, against each experiment alone: CPU, ratio, fits, hit rate, peak memory."""
    from tabulate import tabulate

    from afr_cli.benchmarks.fusion import RF_GROUP, run
    from afr_cli.config.experiment import load_experiment

    _checked(fmt, "AUTO", 20, 1)
    counts = worker_counts(workers, "1,2")
    known = {d for c in (configs or RF_GROUP) for d in load_experiment(c).datasets}
    chosen = chosen_datasets(datasets, sorted(known))
    r = run(list(configs or RF_GROUP), chosen, reps, counts, cache_mb)
    rows = [
        [
            x["path"],
            x["workers"],
            x["tasks"],
            f"{x['cpu_s']:.2f}",
            f"{x['wall_s']:.2f}",
            f"{x['ratio']:.2f}x",
            x["fits"],
            x["reuses"],
            f"{x['hit_rate']:.0%}",
            x["peak_rss_mib"],
            x["cache_peak_mib"],
            x["identical"],
        ]
        for x in r["rows"]
    ]
    lines = [
        f"{', '.join(r['configs'])} on {', '.join(r['datasets'])}, reps 0..{r['reps'] - 1}: "
        f"{r['rows'][0]['units']} units; ratio = today's CPU / the path's, at the same workers",
        tabulate(
            rows,
            headers=[
                "path",
                "workers",
                "tasks",
                "CPU s",
                "wall s",
                "ratio",
                "forest fits",
                "reuses",
                "hit rate",
                "peak RSS MiB",
                "cache MiB",
                "rows identical",
            ],
        ),
    ]
    _emit(r, fmt, lines)
    if record:
        _record("fusion", (*chosen, f"reps{reps}", *(Path(c).stem for c in configs or [])), r)


def steps(
    reps: int = reps_option("repetitions 0..reps-1 of every experiment", default=1),
    datasets: str = typer.Option("", "--datasets", help="comma-separated datasets (default: all)"),
    papers: list[str] = typer.Argument(None, help="paper ids or folders (default: every paper)"),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
    note: str = typer.Option("", "--note", help=NOTE_HELP),
) -> None:
    """Where afr reproduce's CPU goes: the first repetitions of every experiment, fused as afr
    reproduce fuses them, each step's process time (forest fit, leaf statistics, each family's
    features, problems, solves, predictions) scaled to the papers' repetitions."""
    from tabulate import tabulate

    from afr_cli.benchmarks.steps import run

    _checked(fmt, "AUTO", 20, 1)
    chosen = [d.strip() for d in datasets.split(",") if d.strip()] or None
    r = run(reps, chosen, list(papers or []))
    rows = [
        [x["step"], f"{x['sampled_cpu_s']:.2f}", f"{x['projected_cpu_min']:.1f}", f"{x['share']:.1%}"]
        for x in r["steps"]
    ]
    lines = [
        f"{len(r['experiments'])} experiments, repetitions 0..{reps - 1}: {r['units']} units, "
        f"{r['sampled_cpu_s']:.1f} CPU s measured; projected to the papers' repetitions "
        f"{r['projected_cpu_min']:.1f} CPU-min",
        tabulate(rows, headers=["step", "CPU s measured", "CPU-min projected", "share"]),
    ]
    _emit(r, fmt, lines)
    if record:
        _record("steps", (f"reps{reps}", *(chosen or []), *(papers or [])), r, note=note)


def regenerated(
    old: Path = typer.Argument(..., help="the committed results root (its stores or exports)"),
    new: Path = typer.Argument(..., help="the root a regeneration wrote (afr reproduce --all --root DIR)"),
    threshold: float = typer.Option(1e-9, help="count the cells whose largest change exceeds this"),
    key: str = typer.Option("full", help="the record's name"),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
    note: str = typer.Option("", "--note", help=NOTE_HELP),
) -> None:
    """Every store a regeneration wrote against the committed one at the same place: how far each
    selected row's scores and every grid point's test scores moved, other selections, and the new
    units' recorded CPU beside the old wall time. Exit 1 when a cell moved above --threshold."""
    from tabulate import tabulate

    from afr_cli.benchmarks.regenerated import compare_roots
    from afr_cli.publish.bench_blocks import grid_cell

    _checked(fmt, "AUTO", 20, 1)
    _check_threshold(threshold)
    r = compare_roots(old, new, threshold)
    rows = [
        [
            x["store"],
            f"{x['units_common']} of {x['units_new']}",
            x["cells"],
            x["cells_above"],
            f"{x['largest']:.2g}" + (f" ({x['largest_where']})" if x["largest"] else ""),
            x["params_changed"],
            x["solver_status_changed"],
            grid_cell(x["grid_moved"], x["grid_rows"], x["grid_rounding_flips"]),
            f"{x['cpu_min_new']:.1f}",
            f"{x['wall_min_old']:.1f}",
        ]
        for x in r["stores"]
    ]
    lines = [
        f"{r['new']} against {r['old']}: {len(rows)} stores, {r['cells_above']} cell(s) moved above "
        f"{threshold:g}; {r['cpu_min_new']:.1f} CPU-min recorded",
        tabulate(
            rows,
            headers=[
                "store",
                "units compared",
                "cells",
                f"cells above {threshold:g}",
                "largest change",
                "other selections",
                "other solver outcomes",
                "grid points moved",
                "CPU-min now",
                "wall min before",
            ],
        ),
    ]
    _emit(r, fmt, lines)
    if record:
        _record("regenerated", (key,), r, note=note)
    if r["cells_above"]:
        raise typer.Exit(1)


def baseline(
    before: Path = typer.Argument(
        ..., help="a root written by the code before (afr reproduce ... --reps N --root DIR)"
    ),
    after: Path = typer.Argument(..., help="a root of the same units written by today's code, in the same hour"),
    committed: Path = typer.Option(Path("results"), "--committed", help="the committed results root (projection)"),
    threshold: float = typer.Option(1e-9, help="count the cells whose largest change exceeds this"),
    key: str = typer.Option("idle", help="the record's name"),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
    note: str = typer.Option("", "--note", help=NOTE_HELP),
) -> None:
    """The reproduction's CPU, the code before against today's on the same units run in the same
    hour: per store whether any number moved, each side's recorded CPU and their ratio, the
    committed store's CPU on those units, and both sides projected to the repetitions the committed
    stores hold. Exit 1 when a cell moved above --threshold."""

    from afr_cli.benchmarks.baseline import compare_costs

    _checked(fmt, "AUTO", 20, 1)
    _check_threshold(threshold)
    r = compare_costs(before, after, committed, threshold)
    _emit(r, fmt, baseline_lines(r))
    if record:
        _record("baseline", (key,), r, note=note)
    if r["cells_above"]:
        raise typer.Exit(1)


def baseline_lines(r: dict) -> list[str]:
    """``afr bench baseline``'s result as text: a headline and one row per store."""
    from tabulate import tabulate

    def minutes(x: float | None) -> str:
        return "—" if x is None else f"{x:.2f}"

    rows = [
        [
            s["store"],
            s["units"],
            s["cells_above"],
            f"{s['grid_moved']} of {s['grid_rows']}",
            minutes(s["cpu_min_before"]),
            minutes(s["cpu_min_after"]),
            f"{s['cpu_min_after'] / s['cpu_min_before']:.2f}" if s["cpu_min_before"] else "—",
            minutes(s["cpu_min_committed_same_units"]),
            f"{s['projected_before']:.1f}",
            f"{s['projected_after']:.1f}",
        ]
        for s in r["stores"]
    ]
    ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}"
    return [
        f"{r['after']} against {r['before']}: {len(rows)} stores, {r['cells_above']} cell(s) and "
        f"{r['grid_moved']} grid point(s) moved; CPU-min {r['cpu_min_before']:.1f} before, "
        f"{r['cpu_min_after']:.1f} after (ratio {ratio}); projected to the committed stores' "
        f"repetitions {r['projected_before']:.1f} before, {r['projected_after']:.1f} after",
        tabulate(
            rows,
            headers=[
                "store",
                "units",
                "cells moved",
                "grid points moved",
                "CPU-min before",
                "CPU-min after",
                "ratio",
                "committed, same units",
                "projected before",
                "projected after",
            ],
        ),
    ]


def interactive(
    runs: int = typer.Option(5, "--runs", help="counted runs of each command, after one warm-up", callback=at_least(1)),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
    note: str = typer.Option("", "--note", help=NOTE_HELP),
) -> None:
    """The CPU of afr table --compare, afr status and afr table --results on the committed
    stores (run from the project root), each as a whole process after one warm-up, against
    python -c "import pandas" measured in the same rounds (the target: at most 2x each)."""
    from afr_cli.benchmarks.interactive import lines, run

    _checked(fmt, "AUTO", 20, 1)
    r = run(runs)
    _emit(r, fmt, lines(r))
    if record:
        _record("interactive", ("committed-stores",), r, note=note)


def time_command(
    ctx: typer.Context,
    key: str = typer.Argument(..., help="the record's name (e.g. suite); the command follows --"),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
) -> None:
    """Run a command (after --) and measure it: wall seconds and the CPU seconds of its processes."""
    command = list(ctx.args)
    if not command:
        raise AfrInputError("COMMAND: missing; allowed: any command after --, e.g. afr bench time suite -- make test")
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    try:
        code = subprocess.call(command)
    except OSError as err:
        raise AfrInputError(f"{command[0]}: cannot run it ({err.strerror}); allowed: a command on PATH") from None
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    typer.echo(f"{shlex.join(command)}: exit {code}, {wall:.1f} s wall, {cpu:.1f} s CPU")
    if code != 0:
        typer.echo(f"error: {shlex.join(command)}: exited with {code}; nothing recorded", err=True)
        raise typer.Exit(code)
    if record:
        _record("time", (key,), {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}, shlex.join(command))


def sequential(
    trials: int = typer.Option(
        20, "--trials", help="synthetic pairs per true difference (0, ROPE/2, ROPE, 2·ROPE)", callback=at_least(1)
    ),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
    note: str = typer.Option("", "--note", help=NOTE_HELP),
) -> None:
    """The decision rule's error when a comparison stops once decided (batches of 10 repetitions,
    P >= 0.95 on every base, at most 100): replayed over every model pair the papers' claims compare
    on the committed 100-repetition stores (how often the early verdict differs from the one on all
    100, the share of units saved), and on synthetic pairs of known difference (the wrong-decision
    rate at 0, half the ROPE, the ROPE and twice it). Run from the project root."""
    from afr_cli.benchmarks.sequential import lines, run

    _checked(fmt, "AUTO", 20, 1)
    r = run(RECORDS_ROOT, trials)
    _emit(r, fmt, lines(r))
    if record:
        _record("sequential", (f"trials{trials}",), r, note=note)
