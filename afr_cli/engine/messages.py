"""What ``afr run`` tells the user when there is nothing to run, and when it is interrupted:
what the store holds and the next command to type (its table, more repetitions, a new store,
or the same command again to resume).

Every command it prints is the user's own command line (``RunOptions.command``, rebuilt from the
parsed options by ``afr_cli.commands.options.given_command``), with at most one option changed
(``--reps``, ``--out``), so that the line, typed as printed, does what it says."""

from __future__ import annotations

import shlex
from collections import Counter
from pathlib import Path

from afr_cli.config.experiment import Experiment


def shell_line(words: list[str]) -> str:
    """The words as one line the shell splits back into the same words."""
    return " ".join(shlex.quote(w) for w in words)


def with_option(command: list[str], option: str, value: str | None) -> list[str]:
    """``command`` with ``option`` set to ``value`` where it stands (appended when absent); a
    ``value`` of None removes the option and its value."""
    out, i, placed = [], 0, False
    while i < len(command):
        if command[i] == option and i + 1 < len(command):
            if value is not None and not placed:
                out += [option, value]
                placed = True
            i += 2
            continue
        out.append(command[i])
        i += 1
    if value is not None and not placed:
        out += [option, value]
    return out


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
            f"  more repetitions: {shell_line(with_option(command, '--reps', str(more)))}  "
            "(computes only the new ones)",
            f"  a new store:      {shell_line(with_option(command, '--out', 'DIR'))}",
        ]
    )


def interrupted_message(store_dir: Path, stored: int, target: int, command: list[str] | None) -> str:
    """One line after Ctrl-C: how many units are stored and the exact command that resumes."""
    again = shell_line(command) if command else "the same `afr run` command"
    return f"{store_dir}: {stored} of {target} units stored; this command resumes with the missing ones: {again}"


def failed_message(message: str, command: list[str] | None) -> str:
    """A failed run's one line, ending with the exact command that resumes once the cause is fixed."""
    return f"{message}: {shell_line(command)}" if command else message
