"""Run shell steps one after another, time each, and write the wall times as a Markdown table.

``make reproduce`` uses it: every step is one resumable experiment (or the tables), so a rerun
after an interruption skips what is stored and the table says how long this invocation took.
Usage: ``python -m afr_cli.timed_steps --write results/README.md "NAME=COMMAND" ...``
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

BEGIN, END = "<!-- reproduce-times: written by `make reproduce` -->", "<!-- /reproduce-times -->"


def parse_step(text: str) -> tuple[str, str]:
    """'NAME=COMMAND' -> (NAME, COMMAND)."""
    name, sep, command = text.partition("=")
    if not sep or not name.strip() or not command.strip():
        raise SystemExit(f"error: step {text!r}: expected NAME=COMMAND")
    return name.strip(), command.strip()


def run_steps(steps: list[tuple[str, str]], echo=print) -> list[dict]:
    """Run each step (stopping at the first failure); name, command, seconds and exit code of each."""
    done = []
    for name, command in steps:
        echo(f"== {name}: {command}")
        t0 = time.perf_counter()
        code = subprocess.run(command, shell=True).returncode
        done.append({"name": name, "command": command, "seconds": time.perf_counter() - t0, "exit": code})
        if code:
            break
    return done


def table(done: list[dict], planned: int) -> str:
    """The Markdown section: one row per step, the total, and what ran where."""
    def fmt(s: float) -> str:
        return f"{s / 60:.1f} min" if s >= 60 else f"{s:.0f} s"

    lines = [BEGIN, "", f"`make reproduce`, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC on "
             f"{platform.node()} ({_cores()} cores); wall time of this invocation (a resumed step only "
             "runs what its store lacks):", "", "| step | wall time | exit | command |", "|---|---:|---:|---|"]
    lines += [f"| {d['name']} | {fmt(d['seconds'])} | {d['exit']} | `{d['command']}` |" for d in done]
    lines.append(f"| **total** | **{fmt(sum(d['seconds'] for d in done))}** | | |")
    if len(done) < planned:
        lines.append(f"\nStopped after a failing step: {planned - len(done)} step(s) not run.")
    return "\n".join(lines + ["", END])


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def write_section(path: Path, section: str) -> None:
    """Replace the marked section of ``path`` (or append it; the file is created if missing)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + section + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + "## Reproduction wall time\n\n" + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Run the NAME=COMMAND steps until one fails, print their wall times (and with ``--write``
    record them in a Markdown file); the exit code of the failing step, else 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="Markdown file whose timing section is (re)written")
    parser.add_argument("steps", nargs="+", help="NAME=COMMAND")
    args = parser.parse_args(argv)
    steps = [parse_step(s) for s in args.steps]
    done = run_steps(steps)
    section = table(done, len(steps))
    print(section)
    if args.write:
        write_section(args.write, section)
    return max(d["exit"] for d in done)


if __name__ == "__main__":
    sys.exit(main())
