"""What ``afr run`` tells the user when there is nothing to run, and when it is interrupted:
what the store holds and the next command to type (its table, more repetitions, a new store,
or the same command again to resume)."""

from __future__ import annotations

import shlex
from collections import Counter
from pathlib import Path

from afr_cli.config.experiment import Experiment


def rerun_command(config: Path | str, datasets: str | None, sets: list[str], out: Path | None) -> list[str]:
    """The user's ``afr run`` command without --reps, --fresh and the scheduling options: the
    part that names the experiment and its store, to which a suggestion adds --reps or --out."""
    cmd = ["afr", "run", str(config)]
    if datasets:
        cmd += ["--datasets", datasets]
    for item in sets:
        cmd += ["--set", item]
    if out is not None:
        cmd += ["--out", str(out)]
    return cmd


def _shell(words: list[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)


def _without_out(cmd: list[str]) -> list[str]:
    if "--out" in cmd:
        i = cmd.index("--out")
        return cmd[:i] + cmd[i + 2 :]
    return cmd


def stored_repetitions(exp: Experiment, done: set[tuple[str, str, int]]) -> str:
    """'20 repetitions on every dataset and base', or each (dataset, base)'s count when uneven."""
    counts = Counter((d, b) for d, b, _ in done if d in exp.datasets and b in {x.id for x in exp.bases})
    per_cell = {(d, b.id): counts[(d, b.id)] for d in exp.datasets for b in exp.bases}
    values = set(per_cell.values())
    if len(values) == 1:
        return f"{values.pop()} repetitions on every dataset and base"
    return "repetitions per dataset and base: " + ", ".join(f"{d}/{b} {n}" for (d, b), n in per_cell.items())


def complete_message(exp: Experiment, store_dir: Path, done: set[tuple[str, str, int]], command: list[str]) -> str:
    """Nothing to run: the experiment is complete; how to see it, extend it or run it elsewhere."""
    most = max((r for d, b, r in done if d in exp.datasets), default=exp.protocol.reps - 1) + 1
    more = max(2 * most, most + 1)
    return "\n".join(
        [
            f"{exp.name}: complete, nothing to run; the store holds {stored_repetitions(exp, done)} "
            f"({len(exp.datasets)} datasets x {len(exp.bases)} bases) in {store_dir}",
            f"  its table:        afr table --results {shlex.quote(str(store_dir))}",
            f"  more repetitions: {_shell(command + ['--reps', str(more)])}  (computes only the new ones)",
            f"  a new store:      {_shell(_without_out(command) + ['--out', 'DIR'])}",
        ]
    )


def interrupted_message(store_dir: Path, stored: int, target: int, command: list[str] | None) -> str:
    """One line after Ctrl-C: how many units are stored and that the same command resumes."""
    again = _shell(command) if command else "the same `afr run` command"
    return (
        f"{store_dir}: {stored} of {target} units stored; re-running the same command "
        f"({again}) resumes with the missing ones"
    )
