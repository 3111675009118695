"""Generated blocks of machine measurements: each ``bench:<kind>`` block is rendered from the
measurement records of that kind (``results/bench/<kind>/*.json``, afr_cli/benchmarks/records.py),
written by the command that measured (``afr bench KIND ... --record``, ``afr bench time KEY --record
-- COMMAND``). ``afr report`` never measures: it only renders what was recorded, so a page's timings
change when a record does, and ``afr report --check`` fails when a block no longer matches them.

Every block ends with where its numbers come from: the records' commands, dates and machines
(a record transcribed from a page that predates records says so).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from afr_cli.benchmarks.records import RECORDS_DIR, TRANSCRIBED, read_records


def _table(headers: list[str], rows: list[list[str]], align: list[str] | None = None) -> str:
    marks = align or ["---"] * len(headers)
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(marks) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def provenance(records: list[dict], kind: str) -> str:
    """One line per distinct (command, date, machine, source): where a block's numbers come from."""
    lines, seen = [], set()
    for r in records:
        cores = r["machine"].get("cores")
        what = "transcribed (measured before records existed; as the page quoted it)" \
            if r["source"] == TRANSCRIBED else "measured"
        note = r.get("note") or ""
        line = f"`{r['command']}`, {r['date']}, {cores} cores; {what}" + (f". {note[:1].upper()}{note[1:]}" if note else "")
        if line not in seen:
            seen.add(line)
            lines.append(f"- {line}")
    return (f"From `results/{RECORDS_DIR}/{kind}/` (rerun a command with `--record` to replace its record):\n\n"
            + "\n".join(lines))


def _sci(x: float, spec: str = "+.0e") -> str:
    """Scientific notation without the exponent's leading zero (-4e-9, not -4e-09)."""
    mantissa, _, exponent = format(x, spec).partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else mantissa


def _ratio(x: float) -> str:
    return f"{x:.2f}x"


def floor_block(records: list[dict]) -> str:
    """``afr bench floor``: per (config, dataset) today's CPU seconds against the shared-work path's."""
    rows = []
    for r in records:
        x = r["result"]
        stem = Path(x["config"]).stem
        rows.append([f"{stem}, {x['dataset']}", str(x["units"]), f"{x['today']['cpu_s']:.2f}", f"{x['new']['cpu_s']:.2f}",
                     _ratio(x["ratio"]), "yes" if x["identical"] else f"no (largest move {_sci(x['largest_move'], '.1e')})"])
    return _table(["config, dataset", "units", "today CPU s", "shared CPU s", "ratio", "rows identical"], rows,
                  ["---", "---:", "---:", "---:", "---:", "---"])


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
        rows.append([f"{Path(x['config']).stem} ({old})", f"{x['solvers'][old]['cpu_s']:.1f}",
                     f"{x['solvers']['AUTO']['cpu_s']:.1f}", _ratio(x["ratio"]), _sci(x['max_abs_dr2_between'], ".1e"),
                     _sci(max(store.values()), ".1e") if store else "—"])
    return _table(["config (old solver)", "old CPU s", "AUTO CPU s", "ratio", "largest \\|ΔR²\\| AUTO vs old",
                   "vs committed store"], rows, ["---", "---:", "---:", "---:", "---:", "---:"])


def _ms(entry: dict | None) -> str:
    if not entry:
        return ""
    if entry.get("shown"):
        return entry["shown"]
    return "failed" if entry.get("ms") is None else f"{entry['ms']:,.1f} ({_sci(entry['gap'])})"


def qp_block(records: list[dict]) -> str:
    """``afr bench qp``: per shape, every solver's median ms (relative objective gap to the reference);
    then the naive path against AUTO and the warm-start sweep of the same run."""
    parts = []
    for r in records:
        x = r["result"]
        solvers = list(dict.fromkeys(k for row in x["shapes"].values() for k in row if k not in ("reference", "weights")))
        rows = [[name] + [_ms(row.get(s)) for s in solvers] for name, row in x["shapes"].items()]
        nv, ws = x["naive"], x["warm_start"]
        parts.append(_table(["shape (weights)"] + solvers, rows) + "\n\n"
                     f"ms (relative objective gap), median of {x['repeats']}, {x['dataset']}'s training split "
                     f"(n = {x['n']:,}, T = {x['trees']}). The naive path (a fresh n-form cvxpy + ECOS problem per "
                     f"solve) took {nv['fresh_ms']:,.0f} ms against AUTO's {nv['auto_ms']:.1f} ms on the first shape: "
                     f"**ratio {nv['ratio']:,.0f}x**, objective gap {_sci(nv['objective_gap'])}. Warm starts along "
                     f"{ws['shape']}'s {ws['points']}-point eps x gamma sweep: {ws['cold_ms']:.0f} ms cold, "
                     f"{ws['warm_ms']:.0f} ms warm-started (ratio {ws['ratio']:.2f}).")
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
            + _table(["path", "s", "peak MB"],
                     [["matrices, batch (one sparse product B h per chunk)", f"{x['matrix_ms'] / 1000:.1f}", _mb(mem['matrix'])],
                      ["matrices, per-row loop", f"{x['naive_ms'] / 1000:.1f}", _mb(mem['naive_first_1000_rows'], " (first 1,000 rows)")],
                      ["scikit-learn `predict`", f"{x['sklearn_ms'] / 1000:.1f}", _mb(mem['sklearn'])],
                      [f"soft machine, tau = {x['soft_tau']}", f"{x['soft_ms'] / 1000:.1f}", _mb(mem['soft'])]])
            + f"\n\nThe per-row loop is **{x['naive_over_matrix']:.1f}x** slower than the batch path, and the batch "
            f"path **{x['matrix_over_sklearn']:.1f}x slower than scikit-learn**.")
    return "\n\n".join(parts)


def time_block(records: list[dict]) -> str:
    """``afr bench time``: what each timed command took, wall and CPU."""
    rows = [[f"`{r['command']}`", f"{r['result']['wall_s'] / 60:.1f}" if r["result"].get("wall_s") is not None else "—",
             f"{r['result']['cpu_s'] / 60:.1f}" if r["result"].get("cpu_s") is not None else "—"] for r in records]
    return _table(["command", "wall min", "CPU min"], rows, ["---", "---:", "---:"])


RENDERERS: dict[str, Callable[[list[dict]], str]] = {"floor": floor_block, "unit": unit_block, "qp": qp_block,
                                                      "dm": dm_block, "time": time_block}


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
