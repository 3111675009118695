"""The README says how long ``make test`` takes and what to run while developing:
the figure is the committed measurement record's generated block, so it cannot drift from the record."""

from __future__ import annotations

from pathlib import Path

from afr_cli.publish.bench_blocks import bench_blocks
from afr_cli.publish.pages import blocks_in
from afr_cli.store.bench_records import read_records

REPO = Path(__file__).resolve().parents[1]


def test_the_readme_quotes_the_committed_make_test_record():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (record,) = [r for r in read_records(REPO / "results", "time") if r["command"] == "make test"]
    held = blocks_in(readme)[f"bench:time:{record['key']}"]
    assert held == bench_blocks(REPO / "results")[f"bench:time:{record['key']}"]
    assert f"| `make test` | {record['result']['wall_s'] / 60:.1f} |" in held


def test_the_readme_says_what_to_run_while_developing():
    setup = (REPO / "README.md").read_text(encoding="utf-8").split("## Set-up", 1)[1].split("\n## ", 1)[0]
    assert "make test-fast" in setup and "python -m pytest -q tests/" in setup
