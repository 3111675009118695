"""``afr reproduce``: plan, run and publish what paper folders need.

A target is a paper (its id, or its folder anywhere) or a single config file. The plan lists,
per experiment, what its store already holds, how many units are missing and the compute they
are projected to take, from measured seconds per unit (``afr_cli.reproduction.plan_costs``): those its store
records, else those of the committed store of the same experiment, per dataset and base.
Running computes the missing units of every experiment through the runner (resumably: a rerun
computes only what is still missing) under one progress bar, then draws the papers' outputs
(figures, extra tables: ``outputs`` in their data files) and rebuilds the reports, claims,
pages and site from the stores. Experiments whose units fit the same forests (same data, splits,
seeding, scaling and base) run together, each forest fitted once per (repetition, fold)
(``unit_groups.fuse_tasks``); the plan says which, and the CPU that saves.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from afr_cli.catalogue.knowledge import ExperimentSpec, OutputSpec, Paper, add_paper_folder, paper, papers
from afr_cli.config.experiment import Experiment, load_experiment
from afr_cli.core.durations import format_duration
from afr_cli.engine.runner import RunOptions, missing_units, run_experiments
from afr_cli.engine.shared_work import Speedups
from afr_cli.engine.tasks import fuse_tasks, unit_tasks
from afr_cli.errors import AfrInputError
from afr_cli.publish.context import ReportContext
from afr_cli.publish.frames import chosen_reports
from afr_cli.publish.markdown import table
from afr_cli.reporting.build import write_all
from afr_cli.reproduction.checks import check_paper
from afr_cli.reproduction.plan_costs import (
    Projection,
    committed_costs,
    estimated_costs,
    family_costs,
    project,
    unit_costs,
)
from afr_cli.store import has_results, open_existing
from afr_cli.store.status import store_status

TIMES_BEGIN = "<!-- BEGIN GENERATED: reproduce-times (afr reproduce --all; do not edit by hand) -->"
TIMES_END = "<!-- END GENERATED: reproduce-times -->"


@dataclass
class Target:
    """What one TARGET names: a paper, or one config of no paper (``paper`` None)."""

    paper: Paper | None
    experiments: tuple[ExperimentSpec, ...]

    @property
    def name(self) -> str:
        return self.paper.id if self.paper else str(self.experiments[0].config)


@dataclass
class PlannedExperiment:
    """One experiment of the plan: its config as it will run, where its store is, what the store
    holds and lacks, and the compute projected for what it lacks."""

    owner: str  # the paper id (or the config path of a bare config target)
    spec: ExperimentSpec
    exp: Experiment | None  # None: none of the chosen datasets is in this experiment
    stored: int = 0
    missing: list[tuple] = field(default_factory=list)
    seconds_per_unit: float | None = None  # mean recorded compute of the stored units
    measured_in: str = "CPU"  # what seconds_per_unit is: "CPU" (process time) or "wall" (stores before CPU)
    forest_seconds_per_unit: float | None = None  # mean recorded seconds of the forest step of a stored unit
    projection: Projection | None = None  # the missing units priced per (dataset, base); None: nothing measured

    @property
    def projected_seconds(self) -> float | None:
        if not self.missing:
            return 0.0
        return None if self.projection is None else self.projection.seconds


def resolve_targets(names: list[str], every: bool) -> list[Target]:
    """Each TARGET as a paper id, a paper folder (a directory holding paper.yaml, added to the
    known papers) or a config file; ``every`` adds every known paper. A one-line error names a
    target that is none of these, or a paper whose folder would fail the report build
    (``reproduce_checks.check_paper``: its published cells, reports, claims, studies)."""
    targets = [Target(p, p.experiments) for p in papers()] if every else []
    for name in names:
        path = Path(name)
        if path.is_dir():
            found = add_paper_folder(path)
        elif path.is_file():
            targets.append(Target(None, (ExperimentSpec(path, 0),)))
            continue
        else:
            try:
                found = paper(name)
            except AfrInputError:
                known = ", ".join(p.id for p in papers())
                raise AfrInputError(
                    f"{name}: not a paper id, a paper folder or a config file; "
                    f"allowed: {known}, a folder holding paper.yaml, a config .yaml"
                ) from None
        if not any(t.paper is not None and t.paper.id == found.id for t in targets):
            targets.append(Target(found, found.experiments))
    if not targets:
        raise AfrInputError("no target: name a paper id, a paper folder or a config file, or give --all")
    for target in targets:
        if target.paper is not None:
            check_paper(target.paper)
    return targets


def _overrides(spec: ExperimentSpec, reps: int | None, datasets: list[str] | None) -> list[str]:
    out = list(spec.sets)
    count = reps or spec.reps
    if count:
        out.append(f"protocol.reps={count}")
    chosen = datasets if datasets is not None else list(spec.datasets)
    if chosen:
        out.append("datasets=[" + ", ".join(f"'{d}'" for d in chosen) + "]")
    return out


def plan_experiment(
    owner: str,
    spec: ExperimentSpec,
    root: Path,
    reps: int | None,
    datasets: list[str] | None,
    probe: bool = False,
) -> PlannedExperiment:
    """One experiment's entry of the plan: loaded as it will run (its store under ``root``), and
    what its store (or committed export) holds and lacks. Reads only. ``probe``: an experiment
    nothing of which is measured is priced by one unit computed now (``afr reproduce --plan``);
    a run that follows measures its units anyway, so it prices by the cost model alone."""
    store_dir = root / spec.store()
    exp = load_experiment(spec.config, _overrides(spec, reps, None), store_dir)
    if datasets is not None:
        chosen = [d for d in exp.datasets if d in datasets]
        if not chosen:
            return PlannedExperiment(owner, spec, None)
        exp = load_experiment(spec.config, _overrides(spec, reps, chosen), store_dir)
    held = open_existing(store_dir) if has_results(store_dir) else None
    done, todo = missing_units(exp, held)
    planned = PlannedExperiment(owner, spec, exp, len(done), todo)
    if held is not None:
        status = store_status(store_dir)
        per_unit = status.seconds_per_unit()
        if per_unit is not None:
            planned.seconds_per_unit, planned.measured_in = per_unit
        planned.forest_seconds_per_unit = status.forest_seconds_per_unit
    if todo:
        own = unit_costs(store_dir, "its store") if held is not None else None
        committed = committed_costs(spec.store(), store_dir)
        measured = [m for m in (own, committed) if m is not None]
        if not measured:  # nothing of this experiment measured: its families' committed costs, else a probe
            family = family_costs(exp)
            whole = family is not None and len(family.per_cell) == len(exp.datasets) * len(exp.bases)
            estimated = None if whole else estimated_costs(exp, todo, probe=probe)
            measured = [m for m in (family, estimated) if m is not None]
        planned.projection = project([(d, exp.bases[b].id) for d, b, _, _ in todo], measured)
        if planned.forest_seconds_per_unit is None and committed is not None:
            planned.forest_seconds_per_unit = committed.forest
    return planned


def plan(
    targets: list[Target],
    root: Path,
    reps: int | None = None,
    datasets: list[str] | None = None,
    probe: bool = False,
) -> list[PlannedExperiment]:
    """The plan of every target's experiments (each store once, in the targets' order); ``probe``:
    as ``plan_experiment``'s."""
    if datasets is not None:
        _check_datasets(targets, datasets)
    out, seen = [], set()
    for target in targets:
        for spec in target.experiments:
            key = (str(spec.config), spec.store())
            if key in seen:
                continue
            seen.add(key)
            out.append(plan_experiment(target.name, spec, root, reps, datasets, probe))
    return out


def _check_datasets(targets: list[Target], datasets: list[str]) -> None:
    """--datasets names only datasets some targeted experiment has."""
    known: dict[str, None] = {}
    for target in targets:
        for spec in target.experiments:
            known.update(dict.fromkeys(load_experiment(spec.config, list(spec.sets)).datasets))
    unknown = [d for d in datasets if d not in known]
    if unknown:
        raise AfrInputError(
            f"--datasets: {unknown[0]!r} is in none of the targets' experiments; allowed: {', '.join(known)}"
        )


def _source(p: PlannedExperiment) -> str:
    """What a projection rests on: recorded process time or wall time (stores made before CPU), of
    its own store or of the committed store of the same experiment."""
    return p.projection.label() if p.projection is not None else "nothing measured"


def cpu_minutes(seconds: float) -> str:
    """CPU seconds as minutes: one decimal from a minute up, two below it (``0.03 CPU-min``), and
    ``< 0.01`` for less than that, so a small projection never reads as zero."""
    minutes = seconds / 60
    if minutes >= 1 or minutes == 0:
        return f"{minutes:.1f} CPU-min"
    return f"{minutes:.2f} CPU-min" if minutes >= 0.005 else "< 0.01 CPU-min"


def render_plan(planned: list[PlannedExperiment], root: Path, workers: int) -> str:
    """The plan as a table: per experiment its store, units stored and missing, and the compute
    projected for the missing ones; then the totals and the least wall time on ``workers``."""
    from tabulate import tabulate

    rows = []
    for p in planned:
        label = p.spec.label or p.spec.config.stem
        if p.exp is None:
            rows.append([p.owner, label, str(root / p.spec.store()), "", "", "skipped: none of --datasets"])
            continue
        projected = p.projected_seconds
        rows.append(
            [
                p.owner,
                label,
                str(p.exp.results),
                p.stored,
                len(p.missing),
                "-"
                if not p.missing
                else (
                    "unknown: nothing measured to time it"
                    if projected is None
                    else f"{cpu_minutes(projected)} ({_source(p)})"
                ),
            ]
        )
    missing = sum(len(p.missing) for p in planned)
    known = [p.projected_seconds for p in planned if p.projected_seconds is not None]
    unknown = sum(1 for p in planned if p.projected_seconds is None)
    stored = sum(p.stored for p in planned)
    head = f"{len(planned)} experiment{'s' * (len(planned) != 1)}: {stored} units stored, {missing} missing; "
    if not missing:
        total = head + "nothing to compute"
    else:
        total = (
            head + f"projected {cpu_minutes(sum(known))} "
            f"({format_duration(sum(known) / max(1, workers), 'seconds')} wall at best on "
            f"{workers} worker{'s' * (workers != 1)}, the units alone: starting the workers and writing the "
            "tables, figures and pages come on top, seconds to minutes by paper)"
            + (f", plus {unknown} experiment(s) with nothing measured to time" if unknown else "")
        )
    listing = tabulate(
        rows, headers=["paper", "experiment", "store", "stored", "missing", "projected compute"], tablefmt="simple"
    )
    return "\n".join([listing, total, *render_sharing(shared_forests(planned))])


@dataclass
class SharedForests:
    """Experiments of the plan whose missing units fit the same forests (``fuse_tasks``): the
    stores of one kind of fused task, how many such tasks, the units reading a forest another
    experiment's unit fits, and the seconds those units' forest steps took when stored."""

    stores: list[str]
    tasks: int = 0
    readers: int = 0
    saved_seconds: float = 0.0
    unknown: int = 0  # reading units of experiments with nothing stored to time


def _label(p: PlannedExperiment) -> str:
    return p.spec.label or p.spec.config.stem


def shared_forests(planned: list[PlannedExperiment], speedups: Speedups = Speedups()) -> list[SharedForests]:
    """Which planned experiments share forests, and the compute that saves, projected from the
    stored units: each unit of a fused task beyond the first part's reads the forests instead of
    fitting them, which saves its experiment's mean recorded forest-step seconds (fit, leaf
    statistics and training-row tensors; wall seconds, so an upper bound on the CPU saved).
    One entry per set of stores fused together."""
    todo = [p for p in planned if p.exp is not None and p.missing]
    if not speedups.fuse or len(todo) < 2:
        return []
    tasks = fuse_tasks([p.exp for p in todo], [unit_tasks(p.exp, p.missing, speedups) for p in todo], speedups)
    groups: dict[tuple[int, ...], SharedForests] = {}
    for task in tasks:
        members = tuple(dict.fromkeys(i for i, _ in task.parts))
        if len(members) < 2:
            continue
        group = groups.setdefault(members, SharedForests([todo[i].spec.store() for i in members]))
        group.tasks += 1
        for i, part in task.parts[1:]:
            group.readers += len(part.members)
            per_unit = todo[i].forest_seconds_per_unit
            if per_unit is None:
                group.unknown += len(part.members)
            else:
                group.saved_seconds += per_unit * len(part.members)
    return list(groups.values())


def render_sharing(groups: list[SharedForests]) -> list[str]:
    """One line per set of stores fused (each shared forest fitted once), and how it is projected."""
    lines = []
    for g in groups:
        unknown = f" (+{g.unknown} units with nothing stored to time)" if g.unknown else ""
        lines.append(
            f"shared forests: {' + '.join(g.stores)}: {g.tasks} fused task{'s' * (g.tasks != 1)}, "
            f"{g.readers} units read forests another experiment fits, saving about "
            f"{cpu_minutes(g.saved_seconds)}{unknown}"
        )
    if groups:
        lines.append(
            "(saving: each reading unit's store's mean recorded forest-step seconds, i.e. fit, leaf "
            "statistics and row tensors; wall seconds, so an upper bound)"
        )
    return lines


def run_plan(planned: list[PlannedExperiment], options: RunOptions, echo=print) -> list[tuple[str, float]]:
    """Compute every planned experiment's missing units under one progress bar (its ETA over all
    of them): all in one run, units fitting the same forests together (``options.speedups.fuse``),
    else one experiment after another; returns (what ran, wall seconds)."""
    from tqdm import tqdm

    todo = [p for p in planned if p.exp is not None and p.missing]
    total = sum(len(p.missing) for p in todo)
    times = []
    runs = [todo] if options.speedups.fuse and len(todo) > 1 else [[p] for p in todo]
    with tqdm(
        total=total,
        unit="unit",
        disable=not options.progress or not total,
        file=sys.stderr,
        dynamic_ncols=True,
        bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} units [{elapsed}<{remaining}, {rate_fmt}]",
    ) as bar:
        for together in runs:
            started = time.perf_counter()
            run_experiments(
                [p.exp for p in together],
                RunOptions(
                    jobs=options.jobs,
                    backend=options.backend,
                    scheduler=options.scheduler,
                    progress=options.progress,
                    export=True,
                    bar=bar,
                    speedups=options.speedups,
                    resume=options.resume,
                ),
                echo=bar.write if options.progress else echo,
            )
            names = "; ".join(f"{p.owner}: {_label(p)} ({p.exp.results})" for p in together)
            times.append((names if len(together) == 1 else f"fused: {names}", time.perf_counter() - started))
    return times


def _fill(text: str, root: Path, reps: int | None) -> str:
    return text.replace("{root}", str(root)).replace("{reps}", str(reps))


def draw_outputs(
    targets: list[Target], root: Path, reps: int | None, echo=print, datasets: list[str] | None = None
) -> list[str]:
    """Run every target paper's ``outputs`` (each an ``afr`` command in a process of its own);
    standard output goes whole to the entry's ``stdout`` file. Returns one line per failed entry
    (the others still run). With ``datasets`` (``--datasets``), an entry drawn for another dataset
    (its commands' ``--dataset``) is skipped, and says so: that run computed nothing for it; so is
    an entry reading a store (``--results``) the root does not hold (a partial target)."""
    failed = []
    for target in targets:
        for i, output in enumerate(target.paper.outputs if target.paper else ()):
            where = f"{target.paper.data_file}: outputs[{i}]"
            others = sorted(set(_datasets_drawn(output)) - set(datasets)) if datasets is not None else []
            if others:
                echo(f"skipped {where}: it draws {', '.join(others)}, not among --datasets")
                continue
            absent = [s for s in _stores_read(output, root, reps or output.reps) if not has_results(s)]
            if absent:  # a partial target made another of the paper's stores only
                echo(
                    f"skipped {where}: {root} lacks the store{'s' * (len(absent) > 1)} it reads, "
                    f"{', '.join(map(str, absent))}"
                )
                continue
            problem = _draw(output, root, reps or output.reps)
            if problem:
                failed.append(f"{where}: {problem}")
                echo(f"failed: {where}: {problem}")
            else:
                echo(
                    f"drew {where}"
                    + (f" -> {_fill(output.stdout, root, reps or output.reps)}" if output.stdout else "")
                )
    return failed


def _stores_read(output: OutputSpec, root: Path, reps: int | None) -> list[Path]:
    """The stores an output's commands read (``--results``), as filled in for ``root``."""
    return [
        Path(_fill(command[i + 1], root, reps))
        for command in output.commands
        for i, arg in enumerate(command[:-1])
        if arg == "--results"
    ]


def _datasets_drawn(output: OutputSpec) -> list[str]:
    """The datasets an output's commands name with ``--dataset``."""
    return [command[i + 1] for command in output.commands for i, arg in enumerate(command[:-1]) if arg == "--dataset"]


def _draw(output: OutputSpec, root: Path, reps: int | None) -> str | None:
    """Run one output's commands; None when all succeeded, else what went wrong."""
    texts = []
    for command in output.commands:
        args = [_fill(a, root, reps) for a in command]
        proc = subprocess.run([sys.executable, "-m", "afr_cli.cli", *args], capture_output=True, text=True)
        if proc.returncode:
            last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            return f"`afr {' '.join(args)}` exited {proc.returncode}: {last}"
        texts.append(proc.stdout)
    if output.stdout:
        path = Path(_fill(output.stdout, root, reps))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("\n".join(texts), encoding="utf-8")
        os.replace(tmp, path)
    return None


def build_reports(root: Path, html: bool = True) -> list[Path]:
    """The report build: every report whose stores ``root`` holds (each other one of a store
    there is skipped in one line naming the stores it lacks: a partial target), claims ledger,
    page, each experiment of the root that no paper names (``afr reproduce mine.yaml``: its
    summary, report and page) and (with ``html``) the site under ``root``, then each report's
    extra repetition views (``also_reps``)."""
    ctx = ReportContext(root)  # one context for every view: each store read once
    written = write_all(root, None, None, html, ctx=ctx)
    views: dict[int, list[str]] = {}
    for report in chosen_reports(None, root, echo=lambda line: None, known=ctx.reports_by_name()):  # said above
        for n in report.also_reps:
            views.setdefault(n, []).append(report.name)
    for n, names in sorted(views.items()):
        written += write_all(root, names, n, ctx=ctx)
    return written


def times_section(times: list[tuple[str, float]], workers: int, command: str) -> str:
    """The wall time of each step of this invocation (``command``), as a generated Markdown block."""
    lines = [
        TIMES_BEGIN,
        "",
        f"`{command}`, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on "
        f"{platform.node()} ({workers} worker{'s' * (workers != 1)}); wall time of this invocation (a "
        "resumed experiment only runs what its store lacks):",
        "",
    ]
    rows = [[name, format_duration(seconds, "seconds")] for name, seconds in times]
    rows.append(["**total**", f"**{format_duration(sum(s for _, s in times), 'seconds')}**"])
    return "\n".join(lines + [table(["step", "wall time"], rows, ["---", "---:"]), "", TIMES_END])


def times_table(times: list[tuple[str, float]], workers: int) -> str:
    """The wall time of each step of this invocation as the terminal shows it: a plain table and
    its total (the README's generated block, ``times_section``, holds the same figures)."""
    from tabulate import tabulate

    rows = [[name, format_duration(seconds, "seconds")] for name, seconds in times]
    rows.append(["total", format_duration(sum(s for _, s in times), "seconds")])
    listing = tabulate(rows, headers=["step", "wall time"], tablefmt="simple", colalign=("left", "right"))
    return (
        f"wall time of this invocation on {workers} worker{'s' * (workers != 1)} (a resumed experiment "
        f"only runs what its store lacks):\n{listing}"
    )


def write_times(path: Path, section: str) -> None:
    """Replace the generated timing block of ``path`` (appended under a heading when missing)."""
    text = path.read_text(encoding="utf-8")
    if TIMES_BEGIN in text and TIMES_END in text:
        head, rest = text.split(TIMES_BEGIN, 1)
        text = head + section + rest.split(TIMES_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## Reproduction wall time\n\n" + section + "\n"
    path.write_text(text, encoding="utf-8")
