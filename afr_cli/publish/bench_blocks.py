"""Generated blocks of machine measurements: each ``bench:<kind>`` block is rendered from the
measurement records of that kind (``results/bench/<kind>/*.json``, afr_cli/store/bench_records.py),
written by the command that measured (``afr bench KIND ... --record``, ``afr bench time KEY --record
-- COMMAND``). ``afr report`` never measures: it only renders what was recorded, so a page's timings
change when a record does, and ``afr report --check`` fails when a block no longer matches them.

Every block ends with where its numbers come from: the records' commands, dates and machines
(a record transcribed from a page that predates records says so).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from afr_cli.publish.markdown import short_exponent, table
from afr_cli.store.bench_records import RECORDS_DIR, TRANSCRIBED, read_records


def load_words(result: dict) -> str:
    """'; load average 5.2 before, 6.1 after' (nothing for a record made before it was kept)."""
    load = result.get("load_average")
    return f"; load average {load[0]:.1f} before, {load[1]:.1f} after" if load else ""


def interactive_rows(result: dict, quoted: bool) -> list[list[str]]:
    """One row per command of an ``afr bench interactive`` result: command (in backticks when
    ``quoted``, for a page), CPU s, wall s, ratio to the reference and whether within the target."""
    return [
        [
            f"`{r['command']}`" if quoted else r["command"],
            f"{r['cpu_s']:.2f}",
            f"{r['wall_s']:.2f}",
            f"{r['ratio']:.2f}x",
            "yes" if r["within_target"] else "no",
        ]
        for r in result["commands"]
    ]


def interactive_block(records: list[dict]) -> str:
    """The pages' ``bench:interactive`` block: per record, each command's CPU against the reference's."""
    parts = []
    for record in records:
        x = record["result"]
        ref = x["reference"]
        rows = interactive_rows(x, quoted=True)
        rows.append([f"`{ref['command']}` (reference)", f"{ref['cpu_s']:.2f}", f"{ref['wall_s']:.2f}", "1.00x", ""])
        parts.append(
            f"CPU seconds (user + system) of each whole process, median of {x['runs']} runs after "
            f"one warm-up, on the committed stores{load_words(x)}; the target is at most "
            f"{x['target_ratio']:g}x the reference:\n\n"
            + table(
                ["command", "CPU s", "wall s", "x reference", f"within {x['target_ratio']:g}x"],
                rows,
                ["---", "---:", "---:", "---:", "---"],
            )
        )
    return "\n\n".join(parts)


def sequential_block(records: list[dict]) -> str:
    """The ``bench:sequential`` block: the sequential decision rule replayed on the committed stores
    (where it stops, whether its verdict differs from the one on every repetition, the units saved)
    and its wrong-decision rate on synthetic pairs of known difference."""
    parts = []
    for record in records:
        x = record["result"]
        rep, synth = x["replay"], x["synthetic"]
        saved = "no pair" if rep["units_saved_share"] is None else f"{100 * rep['units_saved_share']:.0f} %"
        rows = [
            [
                f"{p['pair']}",
                ", ".join(c.split(":", 1)[1] for c in p["claims"]),
                str(p["stop_at"]),
                ", ".join(f"{base}: {v}" for base, v in p["early"].items()),
                ", ".join(p["final"].values()),
                "**yes**" if p["differs"] else "no",
            ]
            for p in rep["pairs"]
        ]
        synth_rows = [
            [
                f"{s['true_difference']:g} ({s['in_ropes']:g} × ROPE)",
                str(s["trials"]),
                f"{100 * s['wrong_rate']:.0f} %",
                f"{100 * s['undecided_at_max']:.0f} %",
                f"{s['mean_reps']:.0f}",
                ", ".join(f"{k} {v}" for k, v in s["verdicts"].items()),
            ]
            for s in synth["shifts"]
        ]
        parts.append(
            f"The sequential rule (batches of {x['batch']} repetitions, stop when decided at P ≥ {x['threshold']:g} "
            f"on every base, else at {x['max_reps']}) replayed over the {rep['n_pairs']} model pairs the papers' "
            f"claims compare on the committed stores: it stops early on {rep['stopped_early']}, its verdict there "
            f"differs from the one on all {x['max_reps']} repetitions on {rep['differs']}, and it saves {saved} of "
            f"the units.\n\n"
            + table(["pair (B vs A)", "claims", "stops at", "verdict there", "verdict on all", "differs"], rows)
            + f"\n\nOn synthetic pairs ({synth['datasets']} datasets, ρ = {synth['rho']:g}, dataset means spread "
            f"{synth['spread']:g} around the true difference, repetition noise {synth['noise']:g}, ROPE "
            f"±{synth['rope']:g}, seed {synth['seed']}): a decision is wrong when it names a verdict the truth "
            f'contradicts (at the ROPE itself only "A better").\n\n'
            + table(
                ["true B − A", "trials", "wrong", "undecided at the maximum", "mean repetitions", "verdicts"],
                synth_rows,
            )
        )
    return "\n\n".join(parts)


def provenance(records: list[dict], kind: str) -> str:
    """One line per distinct (command, date, machine, source): where a block's numbers come from."""
    lines, seen = [], set()
    for r in records:
        cores = r["machine"].get("cores")
        what = (
            "transcribed (measured before records existed; as the page quoted it)"
            if r["source"] == TRANSCRIBED
            else "measured"
        )
        note = r.get("note") or ""
        line = f"`{r['command']}`, {r['date']}, {cores} cores; {what}" + (
            f". {note[:1].upper()}{note[1:]}" if note else ""
        )
        if line not in seen:
            seen.add(line)
            lines.append(f"- {line}")
    transcribed = {r["source"] == TRANSCRIBED for r in records}
    how = {
        frozenset({False}): "rerun a command with `--record` to replace its record",
        frozenset({True}): "numbers measured before records existed, as the pages quoted them",
        frozenset({True, False}): "rerun a measured record's command with `--record` to replace it; the "
        "transcribed ones were measured before records existed",
    }[frozenset(transcribed)]
    return f"From `results/{RECORDS_DIR}/{kind}/` ({how}):\n\n" + "\n".join(lines)


def _ratio(x: float) -> str:
    return f"{x:.2f}x"


def floor_block(records: list[dict]) -> str:
    """``afr bench floor``: per (config, dataset) today's CPU seconds against the shared-work path's."""
    rows = []
    for r in records:
        x = r["result"]
        stem = Path(x["config"]).stem
        rows.append(
            [
                f"{stem}, {x['dataset']}",
                str(x["units"]),
                f"{x['today']['cpu_s']:.2f}",
                f"{x['new']['cpu_s']:.2f}",
                _ratio(x["ratio"]),
                "yes" if x["identical"] else f"no (largest move {short_exponent(x['largest_move'], '.1e')})",
            ]
        )
    return table(
        ["config, dataset", "units", "today CPU s", "shared CPU s", "ratio", "rows identical"],
        rows,
        ["---", "---:", "---:", "---:", "---:", "---"],
    )


def unit_block(records: list[dict]) -> str:
    """``afr bench unit``: per config, the old solver's CPU seconds against AUTO's on one unit, and how
    far the R² moved between them and against the committed store."""
    rows = []
    for r in records:
        x = r["result"]
        if "row" in x:  # transcribed: the cells as the page quoted them
            rows.append(list(x["row"]))
            continue
        old = next(s for s in x["solvers"] if s != "AUTO")
        store = x.get("max_abs_dr2_vs_store") or {}
        rows.append(
            [
                f"{Path(x['config']).stem} ({old})",
                f"{x['solvers'][old]['cpu_s']:.1f}",
                f"{x['solvers']['AUTO']['cpu_s']:.1f}",
                _ratio(x["ratio"]),
                short_exponent(x["max_abs_dr2_between"], ".1e"),
                short_exponent(max(store.values()), ".1e") if store else "—",
            ]
        )
    return table(
        [
            "config (old solver)",
            "old CPU s",
            "AUTO CPU s",
            "ratio",
            "largest \\|ΔR²\\| AUTO vs old",
            "vs committed store",
        ],
        rows,
        ["---", "---:", "---:", "---:", "---:", "---:"],
    )


def _ms(entry: dict | None) -> str:
    if not entry:
        return ""
    if entry.get("shown"):
        return entry["shown"]
    return "failed" if entry.get("ms") is None else f"{entry['ms']:,.1f} ({short_exponent(entry['gap'])})"


def qp_block(records: list[dict]) -> str:
    """``afr bench qp``: per shape, every solver's median ms (relative objective gap to the reference);
    then the naive path against AUTO and the warm-start sweep of the same run."""
    parts = []
    for r in records:
        x = r["result"]
        solvers = list(
            dict.fromkeys(k for row in x["shapes"].values() for k in row if k not in ("reference", "weights"))
        )
        rows = [[name] + [_ms(row.get(s)) for s in solvers] for name, row in x["shapes"].items()]
        nv, ws = x["naive"], x["warm_start"]
        parts.append(
            table(["shape (weights)"] + solvers, rows) + "\n\n"
            f"ms (relative objective gap), median of {x['repeats']}, {x['dataset']}'s training split "
            f"(n = {x['n']:,}, T = {x['trees']}). The naive path (a fresh n-form cvxpy + ECOS problem per "
            f"solve) took {nv['fresh_ms']:,.0f} ms against AUTO's {nv['auto_ms']:.1f} ms on the first shape: "
            f"**ratio {nv['ratio']:,.0f}x**, objective gap {short_exponent(nv['objective_gap'])}. Warm starts along "
            f"{ws['shape']}'s {ws['points']}-point eps x gamma sweep: {ws['cold_ms']:.0f} ms cold, "
            f"{ws['warm_ms']:.0f} ms warm-started (ratio {ws['ratio']:.2f})."
        )
    return "\n\n".join(parts)


def _mb(value: float | None, what: str = "") -> str:
    return "—" if value is None else f"{value:.0f}{what}"


def dm_block(records: list[dict]) -> str:
    """``afr bench dm``: Decision-Machine batch prediction against scikit-learn and a per-row loop."""
    parts = []
    for r in records:
        x, mem = r["result"], r["result"]["peak_mb"]
        parts.append(
            f"A RF of {x['T']} trees fit on {x['train']:,} Friedman 1 rows ({x['leaves']:,} leaves, "
            f"{x['internal_nodes']:,} internal nodes, {x['B_nonzeros']:,} nonzeros in B), predicting "
            f"n = {x['n']:,} rows; predictions identical on all three paths: {'yes' if x['agree'] else 'no'}.\n\n"
            + table(
                ["path", "s", "peak MB"],
                [
                    [
                        "matrices, batch (one sparse product B h per chunk)",
                        f"{x['matrix_ms'] / 1000:.1f}",
                        _mb(mem["matrix"]),
                    ],
                    [
                        "matrices, per-row loop",
                        f"{x['naive_ms'] / 1000:.1f}",
                        _mb(mem["naive_first_1000_rows"], " (first 1,000 rows)"),
                    ],
                    ["scikit-learn `predict`", f"{x['sklearn_ms'] / 1000:.1f}", _mb(mem["sklearn"])],
                    [f"soft machine, tau = {x['soft_tau']}", f"{x['soft_ms'] / 1000:.1f}", _mb(mem["soft"])],
                ],
            )
            + f"\n\nThe per-row loop is **{x['naive_over_matrix']:.1f}x** slower than the batch path, and the batch "
            f"path **{x['matrix_over_sklearn']:.1f}x slower than scikit-learn**."
        )
    return "\n\n".join(parts)


def time_block(records: list[dict]) -> str:
    """``afr bench time``: what each timed command took, wall and CPU."""
    rows = [
        [
            f"`{r['command']}`",
            f"{r['result']['wall_s'] / 60:.1f}" if r["result"].get("wall_s") is not None else "—",
            f"{r['result']['cpu_s'] / 60:.1f}" if r["result"].get("cpu_s") is not None else "—",
        ]
        for r in records
    ]
    return table(["command", "wall min", "CPU min"], rows, ["---", "---:", "---:"])


def trees_block(records: list[dict]) -> str:
    """``afr bench trees``: per ensemble, fit and apply CPU seconds of scikit-learn's trees against the
    fast path's, their ratios, and whether the bytes came out the same."""
    parts = []
    for r in records:
        x = r["result"]
        rows = [
            [
                label,
                f"{e['sklearn']['fit']:.3f} / {e['fast']['fit']:.3f}",
                _ratio(e["fit_ratio"]),
                f"{e['sklearn']['apply']:.4f} / {e['fast']['apply']:.4f}",
                _ratio(e["apply_ratio"]),
                "yes" if e["identical"] else "no",
            ]
            for label, e in x["ensembles"].items()
        ]
        parts.append(
            f"{x['dataset']}'s training split of repetition {x.get('rep', 0)} (n = {x['n_train']:,}), applied to "
            f"it and the {x['n_test']:,} test rows; CPU seconds summed over {x['repeats']} alternating rounds:\n\n"
            + table(
                [
                    "ensemble",
                    "fit: sklearn / fast (CPU s)",
                    "ratio",
                    "apply: sklearn / fast (CPU s)",
                    "ratio",
                    "identical",
                ],
                rows,
            )
        )
    return "\n\n".join(parts)


def fusion_block(records: list[dict]) -> str:
    """``afr bench fusion``: per dataset, path and worker count, CPU seconds against today's path,
    forest fits and reuses, hit rate, peak memory and whether the rows came out the same."""
    rows = []
    for r in records:
        x = r["result"]
        label = ", ".join(x["datasets"])
        for row in x["rows"]:
            rows.append(
                [
                    f"{label} ({row['units']})",
                    row["path"],
                    str(row["workers"]),
                    str(row["tasks"]),
                    f"{row['cpu_s']:.2f}",
                    _ratio(row["ratio"]),
                    str(row["fits"]),
                    str(row["reuses"]),
                    f"{row['hit_rate']:.0%}",
                    f"{row['peak_rss_mib']:.0f}",
                    "yes" if row["identical"] else "no",
                ]
            )
    bounds = sorted({r["result"]["cache_mb"] for r in records})
    return (
        table(
            [
                "dataset (units)",
                "path",
                "workers",
                "tasks",
                "CPU s",
                "ratio",
                "forest fits",
                "reused",
                "hit rate",
                "peak RSS MiB",
                "rows identical",
            ],
            rows,
            ["---", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---"],
        )
        + f"\n\nRatio = today's CPU / the path's at the same workers; the cache path's forest cache held at most "
        f"{' or '.join(f'{b:,}' for b in bounds)} MiB per worker."
    )


def _cells(headers: list[str], keys: list[str], records: list[dict]) -> str:
    """A table of transcribed cells: one row per entry of each record's ``rows``, as the page quoted them."""
    rows = [[str(row.get(k, "—")) for k in keys] for r in records for row in r["result"]["rows"]]
    return table(headers, rows)


def trees_units_block(records: list[dict]) -> str:
    """``afr bench floor --trees fast|sklearn`` on whole units: each path's ratio against today's, as quoted."""
    return _cells(
        ["config", "ratio, fast trees", "ratio, scikit-learn's trees", "CPU s, today -> fast"],
        ["config", "fast", "sklearn", "cpu"],
        records,
    )


def regen_block(records: list[dict]) -> str:
    """The stores regenerated under AUTO: per store the repetitions and compute, then and now, and how far
    ``afr diff OLD NEW`` found its cells moved on the repetitions both hold."""
    return _cells(
        [
            "store",
            "repetitions (before -> now)",
            "compute now",
            "compute before",
            "cells compared",
            "cells above 1e-4",
            "largest \\|ΔR²\\| (where)",
            "every other cell below",
        ],
        ["store", "reps", "compute", "before", "cells", "above", "largest", "others"],
        records,
    )


def grid_cell(moved: int, rows: int, flips: int) -> str:
    """Grid points moved of those compared, and those that only round the other way at the export's digits."""
    return f"{moved} of {rows}" + (f" ({flips} rounded the other way)" if flips else "")


def regenerated_block(records: list[dict]) -> str:
    """``afr bench regenerated``: each regenerated store against the committed one, how far its selected
    rows and grid points moved, and its recorded CPU beside the old wall time; a total row per record."""
    rows = []
    for r in records:
        x, threshold = r["result"], short_exponent(r["result"]["threshold"], "g")
        for s in x["stores"]:
            largest = "0" if not s["largest"] else f"{short_exponent(s['largest'], '.2g')} ({s['largest_where']})"
            rows.append(
                [
                    s["store"],
                    f"{s['units_common']} of {s['units_new']}",
                    str(s["cells"]),
                    str(s["cells_above"]),
                    largest,
                    str(s["params_changed"]),
                    str(s["solver_status_changed"]),
                    grid_cell(s["grid_moved"], s["grid_rows"], s.get("grid_rounding_flips", 0)),
                    f"{s['cpu_min_new']:.1f}",
                    f"{s['wall_min_old']:.1f}",
                ]
            )
        rows.append(
            [
                f"**all {len(x['stores'])} stores**",
                f"{sum(s['units_common'] for s in x['stores'])}",
                f"{sum(s['cells'] for s in x['stores'])}",
                f"**{x['cells_above']}**",
                "",
                f"{sum(s['params_changed'] for s in x['stores'])}",
                f"{sum(s['solver_status_changed'] for s in x['stores'])}",
                grid_cell(
                    *(sum(s.get(k, 0) for s in x["stores"]) for k in ("grid_moved", "grid_rows", "grid_rounding_flips"))
                ),
                f"**{x['cpu_min_new']:.1f}**",
                f"{sum(s['wall_min_old'] for s in x['stores']):.1f}",
            ]
        )
    return table(
        [
            "store",
            "units compared",
            "cells",
            f"cells moved above {threshold}",
            "largest change (where)",
            "other selections",
            "other solver outcomes",
            "grid points moved",
            "CPU-min now (recorded)",
            "min before (wall)",
        ],
        rows,
        ["---", "---:", "---:", "---:", "---", "---:", "---:", "---:", "---:", "---:"],
    )


KINDS = ("features", "problem", "solve", "predict")  # a model step's kinds (afr bench steps)


def steps_by_family(result: dict) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """A result's projected CPU-min as (forest and other steps by name, {family: {kind: CPU-min}})."""
    plain: dict[str, float] = {}
    families: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(KINDS, 0.0))
    for s in result["steps"]:
        kind, _, family = s["step"].partition(": ")
        if family and kind in KINDS:
            families[family][kind] += s["projected_cpu_min"]
        else:
            plain[s["step"]] = plain.get(s["step"], 0.0) + s["projected_cpu_min"]
    return plain, dict(families)


def steps_block(records: list[dict]) -> str:
    """``afr bench steps``: the projected CPU-min of a whole reproduction by step, the model steps per
    family (features, problem, solve, predict), largest first, with each row's share."""
    rows = []
    for r in records:
        x = r["result"]
        total = x["projected_cpu_min"]
        plain, families = steps_by_family(x)
        entries = [(name, {"total": v}) for name, v in plain.items()]
        entries += [(f"family {name}", {**kinds, "total": sum(kinds.values())}) for name, kinds in families.items()]
        entries.sort(key=lambda e: -e[1]["total"])
        for name, v in entries:
            rows.append(
                [
                    name,
                    *(f"{v[k]:.1f}" if k in v else "" for k in KINDS),
                    f"{v['total']:.1f}",
                    f"{v['total'] / total:.0%}" if total else "—",
                ]
            )
        rows.append(
            [
                f"**all ({x['units']} units of repetitions 0..{x['reps'] - 1}, scaled)**",
                *(f"{sum(f[k] for f in families.values()):.1f}" for k in KINDS),
                f"**{total:.1f}**",
                "100%",
            ]
        )
    return table(
        ["step", "features", "problem", "solve", "predict", "CPU-min projected", "share"],
        rows,
        ["---", "---:", "---:", "---:", "---:", "---:", "---:"],
    )


def rerun_block(records: list[dict]) -> str:
    """A scratch rerun of committed stores' units under a new path, compared with their exports: how
    many rows and how far they moved."""
    return _cells(["stores (datasets)", "rows compared", "moved"], ["stores", "rows", "moved"], records)


def profile_block(records: list[dict]) -> str:
    """Profiles: where one unit's (or one step's) time goes, as measured."""
    return _cells(["what was profiled", "total", "where the time goes"], ["what", "total", "parts"], records)


def dask_block(records: list[dict]) -> str:
    """``afr bench dask``: per record, a task's CPU by where it ran (paired with the loky worker's)
    and a whole run's units per minute by Dask workers, with whether its rows equal --jobs 1."""
    parts = []
    for record in records:
        x = record["result"]
        cpu, scale = x["unit_cpu"], x["scaling"]
        rounds = f"{cpu['rounds']} round{'s' * (cpu['rounds'] != 1)}"
        cpu_rows = [
            [p["place"], f"{p['median_cpu_s']:.3f}", f"{p['median_thread_cpu_s']:.3f}", _ratio(p["ratio_to_loky"])]
            for p in cpu["places"]
        ]
        run_rows = [
            [
                r["where"],
                str(r["workers"]),
                f"{r['wall_s']:.1f}",
                f"{r['units_per_min']:.1f}",
                "yes" if r["identical"] else "no",
            ]
            for r in scale["rows"]
        ]
        parts.append(
            f"{Path(x['config']).stem} on {', '.join(x['datasets'])}, repetitions 0..{x['reps'] - 1}; "
            f"load average {x['load_average'][0]:.1f} before, {x['load_average'][1]:.1f} after, on "
            f"{x['cores']} cores. CPU seconds per task ({cpu['tasks']} tasks, {rounds}, each task in "
            "every place in turn):\n\n"
            + table(
                ["where the task ran", "CPU s (median)", "its thread's CPU s", "x loky worker (paired median)"],
                cpu_rows,
                ["---", "---:", "---:", "---:"],
            )
            + f"\n\nA whole run of its {scale['units']} units:\n\n"
            + table(
                ["where", "workers", "wall s", "units per minute", "rows equal --jobs 1"],
                run_rows,
                ["---", "---:", "---:", "---:", "---"],
            )
        )
    return "\n\n".join(parts)


def baseline_block(records: list[dict]) -> str:
    """``afr bench baseline``: per record, the code before against today's on the same units run in
    the same hour, store by store (numbers moved, CPU each side, the committed store's CPU on those
    units, both projected to the committed stores' repetitions) with a total row and its sentence."""

    def minutes(x: float | None, digits: int = 2) -> str:
        return "" if x is None else f"{x:.{digits}f}"

    parts = []
    for r in records:
        x = r["result"]
        rows = [
            [
                s["store"],
                str(s["units"]),
                str(s["cells_above"]),
                grid_cell(s["grid_moved"], s["grid_rows"], s["grid_rounding_flips"]),
                minutes(s["cpu_min_before"]),
                minutes(s["cpu_min_after"]),
                f"{s['cpu_min_after'] / s['cpu_min_before']:.2f}" if s["cpu_min_before"] else "",
                minutes(s["cpu_min_committed_same_units"]),
                minutes(s["projected_before"], 1),
                minutes(s["projected_after"], 1),
            ]
            for s in x["stores"]
        ]
        same_units = [s["cpu_min_committed_same_units"] for s in x["stores"]]
        rows.append(
            [
                f"**all {len(x['stores'])} stores**",
                str(sum(s["units"] for s in x["stores"])),
                f"**{x['cells_above']}**",
                grid_cell(
                    x["grid_moved"],
                    sum(s["grid_rows"] for s in x["stores"]),
                    sum(s["grid_rounding_flips"] for s in x["stores"]),
                ),
                minutes(x["cpu_min_before"]),
                minutes(x["cpu_min_after"]),
                minutes(x["ratio"]),
                "" if None in same_units else minutes(sum(same_units)),
                f"**{x['projected_before']:.1f}**",
                f"**{x['projected_after']:.1f}**",
            ]
        )
        committed = (
            ""
            if x["cpu_min_committed"] is None or not x["projected_before"]
            else f". The committed stores record {x['cpu_min_committed']:.1f} CPU-min, made on other days by the "
            f"code before; at the ratio of the two projections "
            f"({x['projected_after'] / x['projected_before']:.3f}) today's code would record "
            f"{x['cpu_min_committed'] * x['projected_after'] / x['projected_before']:.1f} CPU-min on the machine of "
            "those days"
        )
        parts.append(
            f"Record `{r['key']}`:\n\n"
            + table(
                [
                    "store",
                    "units",
                    "cells moved",
                    "grid points moved",
                    "CPU-min before",
                    "CPU-min today's code",
                    "ratio",
                    "committed store, same units",
                    "projected before",
                    "projected today's code",
                ],
                rows,
                ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"],
            )
            + f"\n\nProjected to the repetitions the committed stores hold: {x['projected_before']:.1f} CPU-min "
            f"by the code before and {x['projected_after']:.1f} by today's code, run in the same hour"
            f"{committed}."
        )
    return "\n\n".join(parts)


def slurm_block(records: list[dict]) -> str:
    """``afr bench slurm``: per record, afr's own time per unit on a cluster, the jobs it keeps
    busy on the stores' mean unit, and a whole run's units per minute with loky and in SLURM jobs."""
    parts = []
    for record in records:
        x = record["result"]
        store, trip, scale, repro = x["receive_and_store"], x["round_trip"], x["scaling"], x["reproduction"]
        run_rows = [
            [
                r["where"],
                str(r["workers"]),
                f"{r['wall_s']:.1f}",
                f"{r['units_per_min']:.1f}",
                "yes" if r["identical"] else "no",
            ]
            for r in scale["rows"]
        ]
        parts.append(
            f"{Path(x['config']).stem} on {', '.join(x['datasets'])}, repetitions 0..{x['reps'] - 1}; "
            f"load average {x['load_average'][0]:.1f} before, {x['load_average'][1]:.1f} after, on "
            f"{x['cores']} cores. afr's process per unit: receiving and storing it {store['cpu_ms_per_unit']:.1f} ms "
            f"CPU, {store['wall_ms_per_unit']:.1f} ms wall; a task's round trip through the scheduler "
            f"{trip['cpu_ms_per_task']:.1f} ms CPU. The stores' mean unit ({repro['units']} units) costs "
            f"{repro['mean_cpu_s']} s CPU: afr keeps about {x['jobs_kept_busy']} one-core jobs busy. "
            f"A whole run of its {scale['units']} units:\n\n"
            + table(
                ["where", "workers or jobs", "wall s", "units per minute", "rows equal --jobs 1"],
                run_rows,
                ["---", "---:", "---:", "---:", "---"],
            )
        )
    return "\n\n".join(parts)


RENDERERS: dict[str, Callable[[list[dict]], str]] = {
    "floor": floor_block,
    "unit": unit_block,
    "qp": qp_block,
    "dm": dm_block,
    "time": time_block,
    "trees": trees_block,
    "trees_units": trees_units_block,
    "fusion": fusion_block,
    "regen": regen_block,
    "regenerated": regenerated_block,
    "baseline": baseline_block,
    "steps": steps_block,
    "profile": profile_block,
    "rerun": rerun_block,
    "interactive": interactive_block,
    "sequential": sequential_block,
    "dask": dask_block,
    "slurm": slurm_block,
}


def bench_blocks(root: Path) -> dict[str, str]:
    """Every ``bench:<kind>`` block whose kind has records under ``root`` (all its records), and
    ``bench:<kind>:<key>`` for each record alone, by block name (a page holds the ones it quotes)."""
    blocks = {}
    for kind, render in RENDERERS.items():
        records = read_records(root, kind)
        if records:
            blocks[f"bench:{kind}"] = render(records) + "\n\n" + provenance(records, kind)
        for record in records:
            blocks[f"bench:{kind}:{record['key']}"] = render([record]) + "\n\n" + provenance([record], kind)
    return blocks
