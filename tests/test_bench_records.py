"""Measurement records: ``afr bench ... --record`` writes results/bench/<kind>/<key>.json and
``afr report`` renders the pages' bench:<kind> blocks from the records, never by measuring; a page
whose block differs from its records is stale for ``afr report --check``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml
from conftest import assert_one_line_error, run_afr

from afr_cli.publish.bench_blocks import bench_blocks
from afr_cli.publish.pages import BEGIN, END, blocks_in, with_blocks
from afr_cli.store.bench_records import TRANSCRIBED, read_records, record_key, write_record

REPO = Path(__file__).resolve().parents[1]

FLOOR = {
    "config": "configs/x.yaml",
    "dataset": "Yacht",
    "rep": 0,
    "units": 2,
    "tasks": 1,
    "today": {"cpu_s": 3.0, "wall_s": 4.0},
    "new": {"cpu_s": 2.0, "wall_s": 3.0},
    "ratio": 1.5,
    "largest_move": 0.0,
    "identical": True,
}


def test_a_record_holds_command_date_machine_and_result_and_renders_into_its_block(tmp_path):
    path = write_record(
        tmp_path, "floor", record_key("x", "Yacht", "rep0"), "afr bench floor configs/x.yaml --dataset Yacht", FLOOR
    )
    assert path == tmp_path / "bench" / "floor" / "x-Yacht-rep0.json"
    record = json.loads(path.read_text())
    assert record["command"].startswith("afr bench floor") and record["date"].endswith("UTC")
    assert record["machine"]["cores"] == os.cpu_count() and record["source"] == "measured"
    blocks = bench_blocks(tmp_path)
    assert "| x, Yacht | 2 | 3.00 | 2.00 | 1.50x | yes |" in blocks["bench:floor"]
    assert "`afr bench floor configs/x.yaml --dataset Yacht`" in blocks["bench:floor"]
    assert "(rerun a command with `--record` to replace its record)" in blocks["bench:floor"]
    assert blocks["bench:floor:x-Yacht-rep0"].startswith("| config, dataset |")
    # a second measurement is one more row; replacing a record changes its row only
    write_record(
        tmp_path,
        "floor",
        "y-Wine-rep0",
        "afr bench floor configs/y.yaml --dataset Wine",
        {**FLOOR, "config": "configs/y.yaml", "dataset": "Wine", "identical": False, "largest_move": 2e-9},
    )
    assert "| y, Wine | 2 | 3.00 | 2.00 | 1.50x | no (largest move 2.0e-9) |" in bench_blocks(tmp_path)["bench:floor"]
    assert [r["key"] for r in read_records(tmp_path, "floor")] == ["x-Yacht-rep0", "y-Wine-rep0"]


def test_a_transcribed_record_says_so_and_a_stale_block_is_seen(tmp_path):
    write_record(
        tmp_path,
        "time",
        "suite",
        "make test",
        {"wall_s": 228.0, "cpu_s": None},
        date="2026-11-23 21:22 UTC",
        source=TRANSCRIBED,
        host={"cores": 2},
        note="as quoted",
    )
    body = bench_blocks(tmp_path)["bench:time"]
    assert "| `make test` | 3.8 | — |" in body and "transcribed" in body and "2026-11-23 21:22 UTC, 2 cores" in body
    assert "measured before records existed" in body and "--record` to replace" not in body  # no rerun offered
    page = f"{BEGIN.format(name='bench:time')}\nold\n{END.format(name='bench:time')}\n"
    assert blocks_in(with_blocks(page, bench_blocks(tmp_path)))["bench:time"] == body
    write_record(tmp_path, "time", "suite2", "make test", {"wall_s": 200.0, "cpu_s": 190.0})
    assert "rerun a measured record's command with `--record`" in bench_blocks(tmp_path)["bench:time"]  # mixed


def test_the_committed_records_render_every_bench_block_the_pages_hold():
    blocks = bench_blocks(REPO / "results")
    for page in (REPO / "docs" / "speed.md", REPO / "docs" / "testing.md", REPO / "results" / "bench" / "README.md"):
        held = {name: body for name, body in blocks_in(page.read_text()).items() if name.startswith("bench:")}
        assert held, page
        assert all(blocks[name] == body for name, body in held.items()), page


def test_transcribed_narrative_measurements_render_as_tables_of_the_cells_quoted(tmp_path):
    """The regeneration under AUTO, profiles, whole-unit tree timings and scratch reruns were quoted in
    prose before records existed: their records hold the cells as quoted and render them unchanged."""
    cells = {
        "regen": {
            "store": "s",
            "reps": "20 -> 100",
            "compute": "6.0 min",
            "before": "~10 min",
            "cells": "33",
            "above": "0",
            "largest": "1.5e-6 (Friedman 3)",
            "others": "—",
        },
        "profile": {"what": "a unit", "total": "30.6 s", "parts": "features 19.3 s"},
        "trees_units": {"config": "c.yaml", "fast": "1.59x", "sklearn": "1.00x", "cpu": "0.40 -> 0.25"},
        "rerun": {"stores": "x (Yacht)", "rows": "24", "moved": "nothing"},
    }
    for kind, row in cells.items():
        write_record(
            tmp_path,
            kind,
            "k",
            "afr run x.yaml",
            {"rows": [row]},
            date="2026-11-23",
            source=TRANSCRIBED,
            host={"cores": 2},
        )
    blocks = bench_blocks(tmp_path)
    for kind, row in cells.items():
        assert "| " + " | ".join(row.values()) + " |" in blocks[f"bench:{kind}"], kind
        assert "`afr run x.yaml`, 2026-11-23, 2 cores; transcribed" in blocks[f"bench:{kind}"]
    assert "| store | repetitions (before -> now) |" in blocks["bench:regen"]


def test_afr_bench_record_writes_the_record_under_results(tmp_path):
    cfg = {
        "name": "trees",
        "protocol": {"reps": 1, "seeding": "rep-index"},
        "datasets": ["Friedman1"],
        "bases": [{"id": f"RF@{n}", "kind": "rf", "n_estimators": n} for n in (5, 10)],
        "models": [{"id": "forest", "family": "forest"}],
    }
    (tmp_path / "trees.yaml").write_text(yaml.safe_dump(cfg))
    proc = run_afr("bench", "floor", "trees.yaml", "--dataset", "Friedman1", "--record", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (record,) = read_records(tmp_path / "results", "floor")
    assert record["command"].endswith("afr bench floor trees.yaml --dataset Friedman1")
    assert record["result"]["units"] == 2 and "recorded: results/bench/floor/trees-Friedman1-rep0.json" in proc.stderr


def test_afr_bench_time_measures_a_command_and_records_it(tmp_path):
    proc = run_afr("bench", "time", "hello", "--record", "--", "python3", "-c", "print(1)", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (record,) = read_records(tmp_path / "results", "time")
    assert record["command"] == "python3 -c 'print(1)'" and record["result"]["wall_s"] >= 0
    failed = run_afr("bench", "time", "boom", "--record", "--", "python3", "-c", "raise SystemExit(3)", cwd=tmp_path)
    assert failed.returncode == 3 and "nothing recorded" in failed.stderr
    assert not (tmp_path / "results" / "bench" / "time" / "boom.json").exists()
    assert_one_line_error(run_afr("bench", "time", "x", cwd=tmp_path), "COMMAND", "after --")
