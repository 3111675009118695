"""The generated block of what the export format's choices saved or cost in bytes (rounding the
grid's test scores, leaving out the inner-CV scores and the per-solve logs, xz over SQLite),
rendered from the measurement records of kind ``formats`` (``results/bench/formats/*.json``).

Those sizes were measured once, when each choice was made, and are kept as *transcribed* records
(afr_cli/store/bench_records.py) with the command and date that made them; re-measuring one means
exporting a store both ways, and a new record replaces the old one. The sizes of the exports as
they are today are a different block (``sizes:exports``, project_blocks.py), computed afresh.
"""

from __future__ import annotations

from pathlib import Path

from afr_cli.publish.markdown import table
from afr_cli.store.bench_records import RECORDS_DIR, read_records

FORMATS_KIND = "formats"
FORMATS_BLOCK = "sizes:formats"


def formats_block(records: list[dict]) -> str:
    """One row per measured choice: what was compared, the size before and after, the change."""
    rows = [[cell or "—" for cell in row] for record in records for row in record["result"]["rows"]]
    sources = [
        f"- `{r['command']}`, {r['date']}; {r['source']}" + (f": {r['note']}" if r.get("note") else "") for r in records
    ]
    return (
        table(["export format choice", "before", "after", "change"], rows, ["---", "---:", "---:", "---"])
        + f"\n\nFrom `results/{RECORDS_DIR}/{FORMATS_KIND}/`, one record per measurement "
        "(the command that measured it, its date, and whether the record was measured or transcribed):\n\n"
        + "\n".join(sources)
    )


def format_blocks(root: Path) -> dict[str, str]:
    """The block, by name, when ``root`` holds any ``formats`` record."""
    records = read_records(root, FORMATS_KIND)
    return {FORMATS_BLOCK: formats_block(records)} if records else {}
