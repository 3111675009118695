"""Measurement records: what a benchmark measured, kept as a small committed JSON file so that the
pages quote it from a generated block instead of by hand.

A measurement cannot be recomputed by ``afr report`` (it is a property of the machine and the
moment), so the command that measures writes it: ``afr bench KIND ... --record`` writes
``results/bench/<kind>/<key>.json`` holding the command, the date (UTC), the machine (cores,
platform, Python) and the result, and ``afr report`` renders the pages' ``bench:<kind>`` blocks
from every record of that kind (``afr_cli/publish/bench_blocks.py``); ``afr report --check``
fails when a block differs from its records. Rerunning the command with ``--record`` replaces
its record, and the page follows on the next ``afr report``.

A record whose ``source`` is ``transcribed`` was not measured by writing it: it holds a
measurement that was quoted on a page before records existed, with the command and date that
made it, so that the page renders it like any other (its numbers are as they were quoted).
"""

from __future__ import annotations

import json
import os
import platform
import re
from datetime import UTC, datetime
from pathlib import Path

RECORDS_DIR = "bench"  # under the results root: results/bench/<kind>/<key>.json
MEASURED, TRANSCRIBED = "measured", "transcribed"
_KEY = re.compile(r"[^A-Za-z0-9_.-]+")


def record_key(*parts: object) -> str:
    """A file-name-safe key from the parts that tell one measurement of a kind from another
    (e.g. the config's stem and the dataset)."""
    return "-".join(_KEY.sub("_", str(p)).strip("_") for p in parts if str(p))


def machine() -> dict:
    """The machine a measurement ran on, as far as it matters to reading the numbers."""
    return {"cores": os.cpu_count(), "platform": platform.platform(terse=True), "python": platform.python_version()}


def record_path(root: Path, kind: str, key: str) -> Path:
    """Where the record of one measurement lives under the results root ``root``."""
    return Path(root) / RECORDS_DIR / kind / f"{key}.json"


def write_record(
    root: Path,
    kind: str,
    key: str,
    command: str,
    result: dict,
    *,
    date: str | None = None,
    source: str = MEASURED,
    host: dict | None = None,
    note: str | None = None,
) -> Path:
    """Write (or replace) one measurement's record; returns its path. ``date`` defaults to now (UTC,
    to the minute) and ``host`` to this machine; a ``transcribed`` record gives both as they were."""
    # Keys keep their order (a result's shapes and solvers are listed as measured), so the file is
    # the same bytes for the same record.
    record = {
        "kind": kind,
        "key": key,
        "command": command,
        "date": date or datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": host if host is not None else machine(),
        "source": source,
        "result": result,
    }
    if note:
        record["note"] = note
    path = record_path(root, kind, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_records(root: Path, kind: str) -> list[dict]:
    """Every record of one kind under ``root``, in the order of their keys (file names)."""
    folder = Path(root) / RECORDS_DIR / kind
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
