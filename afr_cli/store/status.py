"""What a results store holds: which (dataset, base, repetition) units, what they cost, how the
solves went. ``afr status`` prints it, so a long run's progress and its solver fallbacks are one
command away, and a reader of a committed store can see what its tables rest on."""

from __future__ import annotations

import os
import platform
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

import pandas as pd
from tabulate import tabulate

from afr_cli.core.durations import format_duration
from afr_cli.store.cache import cached, content_key, source_of
from afr_cli.store.export import ExportedStore, decoder_fingerprint
from afr_cli.store.holdings import incomplete_repetitions
from afr_cli.store.reader import ResultsReader, open_existing
from afr_cli.store.schema import varying_axes


@dataclass
class StoreStatus:
    directory: Path
    manifest: dict
    reps: pd.DataFrame  # index dataset, columns base: how many repetitions are stored
    gaps: list[str] = field(default_factory=list)  # (dataset, base) whose stored reps are not 0..n-1
    compute_minutes: float = 0.0
    solves: Counter = field(default_factory=Counter)  # "SOLVER:status", "fallbacks", "failed"
    source: str = "store"  # "store" (store.sqlite) or "export" (the committed export, no store here)
    progress: str | None = None  # the latest run's progress toward its target, while incomplete
    units: int = 0
    axes: tuple[str, ...] = ()  # protocol axes the store varies (training fraction, noise level)
    axis_points: int = 1  # their combinations per (dataset, base); reps counts each one's repetitions
    cpu_minutes: float = 0.0  # recorded process time, summed over the units that record it
    cpu_units: int = 0  # units recording their process time (stores made before record none)
    forest_seconds_per_unit: float | None = None  # mean recorded seconds of a unit's forest step (None: no unit)
    progress_pending: bool = False  # the latest run has not reached its target (progress is then live)
    elapsed: str | None = None  # the latest run's elapsed time, its start to its last stored unit
    incomplete: dict[int, tuple[int, int]] = field(default_factory=dict)  # rep -> (held, target) left out
    ran_on: dict[str, int] = field(default_factory=dict)  # units by where they ran (host, batch job); {}: not recorded

    @property
    def solved(self) -> int:
        return sum(n for key, n in self.solves.items() if ":" in key)

    def seconds_per_unit(self) -> tuple[float, str] | None:
        """The mean compute of a stored unit and what it is measured in: ``CPU`` (recorded
        process time, over the units that record it) where any unit records it, else ``wall``
        (wall seconds, which overstate CPU on a loaded machine); None when no unit is stored."""
        if self.cpu_units:
            return 60 * self.cpu_minutes / self.cpu_units, "CPU"
        if self.units:
            return 60 * self.compute_minutes / self.units, "wall"
        return None

    def recorded_compute(self) -> tuple[float, str]:
        """The store's compute in minutes, and what it is: ``CPU`` (recorded process time, scaled
        from the units that record it to all of them) or ``wall`` (a store made before CPU was
        recorded: wall minutes, which overstate CPU on a loaded machine)."""
        per_unit = self.seconds_per_unit()
        if per_unit is None:
            return 0.0, "wall"
        return per_unit[0] * self.units / 60, per_unit[1]

    @property
    def mean_reps(self) -> float:
        """Repetitions per (dataset, base, axis point), averaged: what compute scales with."""
        cells = int((self.reps > 0).to_numpy().sum()) * self.axis_points if self.units else 0
        return self.units / cells if cells else 0.0


def store_status(directory: str | Path) -> StoreStatus:
    """Coverage, compute time and solver outcomes of one store (a one-line error if there is none).
    A committed export's status is derived once per content and then read from the export cache
    (``afr_cli.store.cache``; its key is the bytes of the manifest, units and results files); only
    an unfinished run's progress, which depends on the clock and on its process, is computed live."""
    store = open_existing(directory)
    if not isinstance(store, ExportedStore):
        return _derived_status(store, directory)
    store.meta()  # a damaged manifest is the error it always was, before any table is read
    key = content_key(
        "status", store.meta_bytes(), store.table_bytes("units"), store.table_bytes("results"), _status_code()
    )
    status = cached("status", key, lambda: _derived_status(store, "."))
    progress = status.progress
    if status.progress_pending:  # the latest run stopped short of its target: say where it stands now
        progress = run_progress(status.manifest, store.frame("units"))
    return replace(status, directory=Path(directory), progress=progress)


@lru_cache(maxsize=1)
def _status_code() -> bytes:
    """The code a cached status depends on: this module and the export's decoder."""
    return source_of("afr_cli.store.status", "afr_cli.store.schema", "afr_cli.store.holdings") + decoder_fingerprint()


def _derived_status(store: ResultsReader, directory: str | Path) -> StoreStatus:
    """The status of ``store`` computed from its tables."""
    units = store.frame("units")
    results = store.frame("results")
    axes = varying_axes(units)
    cell = ["dataset", "base", *axes]
    per_point = units.groupby(cell).size() if len(units) else pd.Series(dtype=int)
    # repetitions per (dataset, base): the fewest any of its axis points holds
    reps = per_point.groupby(["dataset", "base"]).min().unstack("base", fill_value=0) if len(units) else pd.DataFrame()
    points = int(per_point.groupby(["dataset", "base"]).size().max()) if len(units) else 1
    gaps = []
    for key, stored in units.groupby(cell)["rep"]:
        expected = set(range(int(stored.max()) + 1))
        missing = sorted(expected - set(stored))
        if missing:
            where = " / ".join(f"{a}={v:g}" if a in axes else str(v) for a, v in zip(cell, key))
            gaps.append(f"{where}: {len(stored)} repetitions up to {stored.max()}, missing {_ranges(missing)}")
    solves = Counter()
    # A best-of row repeats its components' solves: count each solve once.
    own = results[~results["params"].map(lambda p: "component" in p)] if len(results) else results
    for status in own.get("solver_status", []):
        solves.update(status)
    manifest = store.manifest()
    cpu = units["cpu_seconds"].dropna() if "cpu_seconds" in units else pd.Series(dtype=float)
    progress = run_progress(manifest, units)
    return StoreStatus(
        Path(directory),
        manifest,
        reps,
        gaps,
        float(units["seconds"].sum()) / 60 if len(units) else 0.0,
        solves,
        store.source,
        progress,
        len(units),
        tuple(axes),
        points,
        float(cpu.sum()) / 60,
        len(cpu),
        float(units["forest_seconds"].mean()) if len(units) else None,
        progress is not None,
        _latest_elapsed(manifest, units),
        incomplete_repetitions(manifest, units),
        units["ran_on"].dropna().value_counts().sort_index().to_dict() if "ran_on" in units else {},
    )


def _latest_elapsed(manifest: dict, units: pd.DataFrame) -> str | None:
    """The latest run's elapsed (wall-clock) time, from its start to the last unit it stored, with
    its units and workers: what a reader compares with the units' summed compute."""
    runs = manifest.get("runs") or []
    started = runs[-1].get("started_at") if runs else None
    if not started or not len(units) or "finished_at" not in units:
        return None
    finished = pd.to_datetime(units["finished_at"], utc=True, errors="coerce")
    mine = finished[finished >= pd.Timestamp(started)]
    if not len(mine):
        return None
    seconds = (mine.max() - pd.Timestamp(started)).total_seconds()
    workers = (runs[-1].get("target") or {}).get("workers")
    on = f" on {workers} worker{'s' * (workers != 1)}" if workers else ""
    return f"{format_duration(seconds, 'seconds')} elapsed for its {len(mine)} unit{'s' * (len(mine) != 1)}{on}"


def run_progress(manifest: dict, units: pd.DataFrame, now: datetime | None = None) -> str | None:
    """The latest run's progress toward the target it recorded at its start (``runner.run_target``):
    units stored of the target, whether its process still runs, and an ETA from the rate at which
    it has stored units (or, before its first unit, from the mean recorded unit time per worker).
    None when the run reached its target or recorded none (a store from before targets)."""
    runs = manifest.get("runs") or []
    target = runs[-1].get("target") if runs else None
    if not target:
        return None
    mine = (
        units[
            units["dataset"].isin(target["datasets"])
            & units["base"].isin(target["bases"])
            & (units["rep"] < target["reps"])
        ]
        if len(units)
        else units
    )
    done, total = len(mine), int(target["units"])
    if done >= total:
        return None
    now = now or datetime.now(UTC)
    started = datetime.fromisoformat(runs[-1]["started_at"])
    state = _process_state(target)
    line = (
        f"  latest run (started {started:%Y-%m-%d %H:%M} UTC, {target['workers']} workers, {state}): "
        f"{done} of {total} units ({100 * done / total:.0f} %)"
    )
    left = total - done
    finished = pd.to_datetime(units["finished_at"], utc=True) if len(units) else pd.Series(dtype=object)
    this_run = int((finished >= pd.Timestamp(started)).sum())
    if this_run:
        elapsed = ((now if state.startswith("running") else finished.max()) - started).total_seconds()
        eta = left * elapsed / this_run
        how = f"at this run's rate ({this_run} units in {elapsed / 60:.1f} min)"
    elif len(units):
        eta = left * float(units["seconds"].mean()) / max(1, int(target["workers"]))
        how = f"from the mean unit time ({units['seconds'].mean():.1f} s) over {target['workers']} workers"
    else:
        return line + "; no unit finished yet, no ETA"
    when = "remaining" if state.startswith("running") else "left to compute if resumed"
    return f"{line}; ETA {format_duration(eta)} {when}, {how}"


def _process_state(target: dict) -> str:
    """'running (pid N)' when the run's process is alive on this host, else 'stopped' (or that
    it runs on another host, which cannot be checked from here)."""
    if target.get("host") != platform.node():
        return f"on host {target.get('host')}, pid {target.get('pid')}"
    try:
        os.kill(int(target["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        command = target.get("command")
        return f"stopped; to resume, run: {command}" if command else "stopped; re-run the same command to resume"
    return f"running, pid {target['pid']}"


def incomplete_text(partial: dict[int, tuple[int, int]]) -> str:
    """'rep 15 holds 3 of 5 units', or for several 'reps 30-99 hold 40 of 140 units'."""
    reps = sorted(partial)
    held, wanted = sum(h for h, _ in partial.values()), sum(n for _, n in partial.values())
    if len(reps) == 1:
        return f"rep {reps[0]} holds {held} of {wanted} units"
    return f"reps {_ranges(reps)} hold {held} of {wanted} units"


def _ranges(values: list[int]) -> str:
    """[1, 2, 3, 7] -> '1-3, 7'."""
    out, run = [], [values[0]]
    for value in values[1:]:
        if value == run[-1] + 1:
            run.append(value)
        else:
            out.append(run)
            run = [value]
    out.append(run)
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else f"{r[0]}" for r in out)


def render_status(status: StoreStatus, detail: bool = False) -> str:
    """A few lines per store; the per-dataset table when coverage is uneven or ``detail`` asks."""
    m = status.manifest
    commit = str(m.get("git_commit") or "unknown")[:7]
    where = f"{status.directory}" + (" (export)" if status.source == "export" else "")
    lines = [
        f"{where}: experiment {m.get('experiment', '?')} ({m.get('config_source', '?')}, "
        f"config {m.get('config_hash', '?')}, code {commit})"
    ]
    runs = m.get("runs", [])
    if len(runs) > 1:
        commits = list(dict.fromkeys(str(r.get("git_commit") or "unknown")[:7] for r in runs))
        modified = sum(bool(r.get("code_modified")) for r in runs)
        lines.append(
            f"  {len(runs)} runs, code {', '.join(commits)}"
            + (f"; {modified} with uncommitted changes to afr_cli" if modified else "")
        )
    if status.progress:
        lines.append(status.progress)
    if not status.units:
        return "\n".join(lines + ["  no units stored yet"])
    counts = status.reps.to_numpy()
    low, high = int(counts.min()), int(counts.max())
    same = "every" if low == high else "uneven:"
    span = (
        f"{low} repetitions on {same} (dataset, base)"
        if low == high
        else f"{same} {low} to {high} repetitions per (dataset, base)"
    )
    if status.axes:
        span += f" at each of {status.axis_points} ({', '.join(status.axes)}) points"
    n_data, n_bases = len(status.reps.index), len(status.reps.columns)
    lines.append(
        f"  {status.units} units: {n_data} dataset{'s' * (n_data != 1)} x {n_bases} base{'s' * (n_bases != 1)}, {span}"
    )
    if status.ran_on:
        lines.append("  " + ran_on_line(status.ran_on, status.units))
    lines.append("  " + _compute_line(status))
    if status.incomplete:
        them = "it" if len(status.incomplete) == 1 else "them"
        lines.append(
            f"  incomplete: {incomplete_text(status.incomplete)} (an interrupted run); the tables leave "
            f"{them} out until a run completes {them}"
        )
    stopped = m.get("stopped")
    if isinstance(stopped, dict) and stopped.get("reason"):
        later = " (later runs have extended the store beyond it)" if high > int(stopped.get("reps") or 0) else ""
        lines.append(f"  until decided: {stopped['reason']}{later}")
    if status.solves:
        by_solver = ", ".join(f"{k} {n}" for k, n in sorted(status.solves.items()) if ":" in k)
        fell_back, failed = status.solves.get("fallbacks", 0), status.solves.get("failed", 0)
        share = f" ({100 * fell_back / status.solved:.2f} % of the solves)" if status.solved else ""
        lines.append(
            f"  solves: {by_solver}; fallbacks {fell_back}{share}; failed {failed}"
            + (f"\n  {FALLBACK_MEANING}" if fell_back else "")
        )
    lines += [f"  gap: {g}" for g in status.gaps]
    if detail or low != high or status.gaps:
        table = status.reps.reset_index()
        lines.append(
            "  " + tabulate(table.values.tolist(), headers=list(table.columns), tablefmt="simple").replace("\n", "\n  ")
        )
    return "\n".join(lines)


FALLBACK_MEANING = (
    "(a fallback: the first solver's answer failed afr's feasibility or optimality check, or it "
    "stopped, and another solver answered the same problem; failed: no solver did; docs/design.md, Solvers)"
)


def _compute_line(status: StoreStatus) -> str:
    """The store's compute, CPU apart from wall: the units' recorded process time, the wall time
    their own clocks sum to (units run side by side, so more than any run's elapsed time), and
    the latest run's elapsed time."""
    wall = f"{format_duration(60 * status.compute_minutes, 'seconds')} of unit wall time summed over the units"
    if status.cpu_units:
        cpu = f"{format_duration(60 * status.cpu_minutes, 'seconds')} of CPU (process time)"
        if status.cpu_units < status.units:
            cpu += f" (recorded on {status.cpu_units} of the {status.units} units)"
        text = f"compute: {cpu}; {wall}"
    else:
        text = f"compute: {wall} (no unit records its CPU time)"
    if status.elapsed:
        text += f"; latest run: {status.elapsed}"
    return text


def ran_on_line(ran_on: dict[str, int], units: int, shown: int = 8) -> str:
    """Where the stored units ran (host, and batch job on a cluster), most units first; past
    ``shown`` places, the rest counted together."""
    places = sorted(ran_on.items(), key=lambda item: (-item[1], item[0]))
    named = "; ".join(f"{where}: {n} unit{'s' * (n != 1)}" for where, n in places[:shown])
    rest = places[shown:]
    if rest:
        named += f"; {len(rest)} more places: {sum(n for _, n in rest)} units"
    unrecorded = units - sum(ran_on.values())
    tail = f"; {unrecorded} stored before places were recorded" if unrecorded else ""
    return f"ran on: {named}{tail}"


def render_totals(statuses: list[StoreStatus], workers: int, at: int | None = None) -> str:
    """The stores' compute summed, and the least wall time it means on ``workers`` processes; with
    ``at``, every store's compute scaled to ``at`` repetitions per (dataset, base) (compute grows
    in proportion to repetitions: each unit is one repetition's forest and solves)."""
    units = sum(s.units for s in statuses)
    minutes = sum(s.compute_minutes for s in statuses)
    lines = [
        f"all {len(statuses)} stores: {units} units, {minutes:.1f} min of unit wall time "
        f"({format_duration(60 * minutes / workers)} wall at best on {workers} workers)"
    ]
    if at is not None:
        scaled = sum(s.compute_minutes * at / s.mean_reps for s in statuses if s.mean_reps)
        lines.append(
            f"at {at} repetitions each: {scaled:.1f} min of unit wall time "
            f"({format_duration(60 * scaled / workers)} wall at best on {workers} workers)"
        )
    if any(s.cpu_units for s in statuses):
        lines.append(_cpu_totals(statuses, workers, at))
    return "\n".join(lines)


def _cpu_totals(statuses: list[StoreStatus], workers: int, at: int | None) -> str:
    """The compute of every store in CPU-min: its units at their recorded process time where the
    store records it, else at their wall time (labelled), scaled to ``at`` repetitions if given."""
    minutes, by_cpu = 0.0, 0
    for s in statuses:
        if not s.units or (at is not None and not s.mean_reps):
            continue
        recorded, measured = s.recorded_compute()
        by_cpu += measured == "CPU"
        minutes += recorded * (at / s.mean_reps if at is not None else 1)
    scope = f"at {at} repetitions each" if at is not None else "as stored"
    return (
        f"CPU {scope}: {minutes:.1f} CPU-min ({format_duration(60 * minutes / workers)} wall at best on {workers} "
        f"workers), from recorded CPU for {by_cpu} store(s), from wall time for {len(statuses) - by_cpu}"
    )
