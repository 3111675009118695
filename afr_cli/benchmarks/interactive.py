"""``afr bench interactive``: the CPU of the commands a researcher runs dozens of times an hour
(``afr table --compare``, ``afr status``, ``afr table --results``) on the committed stores, each
as a whole process (user + system time of the child, from the operating system's accounting),
against the CPU of ``python -c "import pandas"`` on the same machine in the same run: each
should cost at most ``TARGET_RATIO`` times that, after one warm-up command. The warm-up
fills the export cache (afr_cli/store/cache.py): the decoded exports and, above all, each
command's whole answer (afr_cli/commands/answer_memo.py), which the counted runs replay without
importing pandas, numpy or SciPy while nothing they read has changed. So the counted runs measure
a researcher's repeated command; the first one after an edit to afr or to an export computes.

The commands run in turn, round after round (one command, then the next, then the reference),
so that a drift of the machine's speed falls on all of them alike; each figure is the median of
its rounds. Their output is thrown away: only the cost is measured.
"""

from __future__ import annotations

import os
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

from afr_cli.errors import AfrInputError
from afr_cli.publish.bench_blocks import interactive_rows, load_words

COMMANDS = (("table", "--compare", "eps-abrf", "sat-rf"), ("status",), ("table", "--results", "results/satrf_rf"))
NEEDS = ("results/satrf_rf", "results/satrf_ert")  # committed stores the commands read
REFERENCE = ("-c", "import pandas")
TARGET_RATIO = 2.0


def afr_command() -> list[str]:
    """How to start ``afr`` as a user does: the console script beside this interpreter, or the
    module when there is none."""
    script = Path(sys.executable).parent / "afr"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "afr_cli.cli"]


def _cost(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """CPU seconds (user + system) and wall seconds of one run of ``argv``, and its exit code."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    code = subprocess.call(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, code


def measure(commands: list[tuple[str, list[str]]], runs: int, cwd: Path, warmup: int = 1) -> list[dict]:
    """Each (label, argv) run ``warmup`` times uncounted, then ``runs`` counted rounds in turn:
    per command its label, median CPU and wall seconds and every counted run's CPU. A command
    that fails (a nonzero exit) is an error: its cost would not be the command's."""
    counted: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in commands}
    for round_ in range(warmup + runs):
        for label, argv in commands:
            cpu, wall, code = _cost(argv, cwd)
            if code != 0:
                raise AfrInputError(
                    f"{label}: exited with {code} in {cwd}; allowed: commands that succeed "
                    f"(run afr bench interactive from the project root)"
                )
            if round_ >= warmup:
                counted[label].append((cpu, wall))
    return [
        {
            "command": label,
            "cpu_s": round(statistics.median(c for c, _ in counted[label]), 3),
            "wall_s": round(statistics.median(w for _, w in counted[label]), 3),
            "cpu_runs": [round(c, 3) for c, _ in counted[label]],
        }
        for label, _ in commands
    ]


def run(runs: int = 5, cwd: Path = Path(".")) -> dict:
    """The three commands and the reference, measured (module docstring); each command's ratio
    to the reference's median CPU and whether it is within TARGET_RATIO."""
    missing = [n for n in NEEDS if not (Path(cwd) / n).is_dir()]
    if missing:
        raise AfrInputError(
            f"{Path(cwd) / missing[0]}: no committed store here; allowed: run afr bench "
            f"interactive from the project root (its results/ holds the committed exports)"
        )
    afr = afr_command()
    commands = [("afr " + shlex.join(args), [*afr, *args]) for args in COMMANDS]
    reference = ("python " + shlex.join(REFERENCE), [sys.executable, *REFERENCE])
    load_before = _load_average()
    rows = measure([*commands, reference], runs, Path(cwd))
    ref = rows.pop()
    for row in rows:
        row["ratio"] = round(row["cpu_s"] / ref["cpu_s"], 2)
        row["within_target"] = row["ratio"] <= TARGET_RATIO
    return {
        "runs": runs,
        "warmup": 1,
        "reference": ref,
        "target_ratio": TARGET_RATIO,
        "commands": rows,
        "load_average": [load_before, _load_average()],
    }


def _load_average() -> float:
    """The machine's one-minute load average: on a shared machine the CPU of a process grows with
    it (caches and BLAS threads contend), so a record says how loaded the machine was."""
    return round(os.getloadavg()[0], 2)


def lines(result: dict) -> list[str]:
    """The result as text: one row per command, then the reference."""
    from tabulate import tabulate

    ref = result["reference"]
    rows = interactive_rows(result, quoted=False)
    return [
        f"CPU s (user + system) of each whole process, median of {result['runs']} runs after one warm-up; "
        f"reference `{ref['command']}`: {ref['cpu_s']:.2f} CPU s{load_words(result)}",
        tabulate(rows, headers=["command", "CPU s", "wall s", "x reference", f"within {result['target_ratio']:g}x"]),
    ]
