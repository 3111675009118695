"""The export cache (afr_cli/store/cache.py): a decoded export, its holdings and its status are
derived once per content and then read back, equal to a fresh decode; a changed export is read
again, a damaged entry is rebuilt, a cache that cannot be written only costs time."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from afr_cli.store import ResultsStore, UnitRecord
from afr_cli.store import cache as export_cache
from afr_cli.store.discover import stores_for_compare
from afr_cli.store.export import STORE_FILE, ExportedStore, export_store
from afr_cli.store.holdings import store_holdings_of
from afr_cli.store.status import render_status, store_status


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch) -> Path:
    """Every test its own cache folder."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(export_cache.CACHE_ENV, str(folder))
    return folder


def _export(directory: Path, models: tuple[str, ...] = ("rf", "eps-abrf"), reps: int = 2, base: str = "RF") -> Path:
    """A small store written unit by unit (no run), exported, and the store removed: an export alone."""
    store = ResultsStore(directory)
    store.create({"experiment": "cache-test", "config_hash": "h", "runs": [{"reps": reps}]})
    for rep in range(reps):
        results = [
            {
                "model": m,
                "r2": 0.5 + 0.01 * rep + 0.1 * i,
                "mae": 1.0 + rep,
                "rmse": 2.0,
                "params": {"eps": 0.5, "tau": 10} if m != "rf" else {},
                "selection": "inner-cv",
                "cv_score": 0.4,
                "solver_status": {"ECOS:optimal": 2},
                "seconds": 0.25,
            }
            for i, m in enumerate(models)
        ]
        grid = [
            {
                "model": m,
                "point": {"eps": e},
                "cv_r2": 0.3,
                "cv_mae": 1.1,
                "test_r2": 0.4 + e,
                "test_mae": 1.0,
                "test_rmse": 2.0,
            }
            for m in models
            if m != "rf"
            for e in (0.0, 0.5)
        ]
        for dataset in ("Friedman1", "Diabetes"):
            store.write_unit(UnitRecord(dataset, base, rep, 7 + rep, 30, 10, 0.5, 1.25, results, grid, cpu_seconds=1.0))
    export_store(directory)
    (directory / STORE_FILE).unlink()
    return directory


def _entries(folder: Path, kind: str) -> list[Path]:
    return sorted(p for p in (folder / kind).glob("*/*") if not p.name.endswith(".tmp"))


def _uncached(directory: Path, table: str, monkeypatch) -> pd.DataFrame:
    with monkeypatch.context() as m:
        m.setenv(export_cache.CACHE_ENV, "off")
        return ExportedStore(directory).frame(table)


def test_a_decoded_frame_is_read_back_from_the_cache_equal_to_a_fresh_decode(tmp_path, cache_dir, monkeypatch):
    directory = _export(tmp_path / "s")
    first = {t: ExportedStore(directory).frame(t) for t in ("units", "results", "grid")}
    assert len(_entries(cache_dir, "frames")) == 3

    def no_decoding(*args, **kwargs):
        raise AssertionError("the export was decoded again")

    with monkeypatch.context() as m:
        m.setattr(ExportedStore, "_rows_from", no_decoding)
        again = {t: ExportedStore(directory).frame(t) for t in first}
    for table, frame in first.items():
        assert_frame_equal(again[table], frame, check_exact=True)
        assert_frame_equal(again[table], _uncached(directory, table, monkeypatch), check_exact=True)
    assert list(again["results"]["params"]) == list(_uncached(directory, "results", monkeypatch)["params"])


def test_a_changed_export_is_read_again_not_served_from_the_cache(tmp_path, cache_dir):
    directory = _export(tmp_path / "s")
    before = ExportedStore(directory).frame("results")
    holdings = store_holdings_of(directory)
    status = store_status(directory)
    _export(tmp_path / "other", models=("rf", "sat-rf-y"), reps=3)
    for name in ("manifest.json", "results.csv.xz", "units.csv.xz", "grid.csv.xz"):  # the export replaced in place
        os.replace(tmp_path / "other" / "export" / name, directory / "export" / name)
    after = ExportedStore(directory).frame("results")
    assert len(after) == 12 and len(before) == 8
    assert set(after["model"]) == {"rf", "sat-rf-y"}
    assert store_holdings_of(directory).pairs == {("rf", "RF"), ("sat-rf-y", "RF")} != holdings.pairs
    assert store_holdings_of(directory).reps == (0, 1, 2)
    assert store_status(directory).units == 6 != status.units


def test_holdings_choose_the_stores_to_compare_without_reading_a_table(tmp_path, monkeypatch):
    root = tmp_path / "results"
    _export(root / "abrf", models=("rf", "eps-abrf"))
    _export(root / "ert", models=("rf", "eps-abrf"), base="ERT")
    _export(root / "satrf", models=("rf", "sat-rf-y"))
    assert stores_for_compare("rf", "eps-abrf", root) == [root / "abrf", root / "ert"]

    def no_table(*args, **kwargs):
        raise AssertionError("a table was read to choose the stores")

    monkeypatch.setattr(ExportedStore, "frame", no_table)
    monkeypatch.setattr(ExportedStore, "rows", no_table)
    assert stores_for_compare("rf", "eps-abrf", root) == [root / "abrf", root / "ert"]
    assert stores_for_compare("rf", "sat-rf-y", root) == [root / "satrf"]
    holdings = store_holdings_of(root / "ert")
    assert (holdings.models, holdings.bases, holdings.datasets, holdings.reps) == (
        ("eps-abrf", "rf"),
        ("ERT",),
        ("Diabetes", "Friedman1"),
        (0, 1),
    )


def test_a_cached_status_prints_as_the_tables_do(tmp_path, monkeypatch):
    directory = _export(tmp_path / "s")
    cached = [render_status(store_status(directory), detail=True) for _ in range(2)]
    with monkeypatch.context() as m:
        m.setenv(export_cache.CACHE_ENV, "off")
        fresh = render_status(store_status(directory), detail=True)
    assert cached == [fresh, fresh]
    assert store_status(directory).directory == directory


@pytest.mark.parametrize("damage", ["truncated", "flipped", "not a pickle", "empty"])
def test_a_damaged_entry_is_rebuilt_never_an_error(tmp_path, cache_dir, monkeypatch, damage):
    directory = _export(tmp_path / "s")
    expected = ExportedStore(directory).frame("results")
    (entry,) = _entries(cache_dir, "frames")
    data = entry.read_bytes()
    if damage == "truncated":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "flipped":
        entry.write_bytes(data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:])
    elif damage == "not a pickle":  # a well-formed entry whose payload does not unpickle
        payload = b"not a pickle"
        entry.unlink()
        export_cache.write_entry("frames", entry.name, payload)
    else:
        entry.write_bytes(b"")
    assert_frame_equal(ExportedStore(directory).frame("results"), expected, check_exact=True)
    assert pickle.loads(export_cache.read_entry("frames", entry.name)).equals(expected)  # rebuilt


def test_a_cache_that_cannot_be_written_only_costs_time(tmp_path, cache_dir, monkeypatch):
    directory = _export(tmp_path / "s")
    expected = _uncached(directory, "results", monkeypatch)

    def refused(*args, **kwargs):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(export_cache.os, "replace", refused)
        assert_frame_equal(ExportedStore(directory).frame("results"), expected, check_exact=True)
    assert _entries(cache_dir, "frames") == []
    assert list(cache_dir.rglob("*.tmp")) == []  # the temporary file went with the failed write
    cache_dir.rmdir() if not any(cache_dir.iterdir()) else None
    cache_dir.parent.joinpath("blocker").write_text("")
    monkeypatch.setenv(export_cache.CACHE_ENV, str(cache_dir.parent / "blocker" / "cache"))  # under a file
    assert_frame_equal(ExportedStore(directory).frame("results"), expected, check_exact=True)


def test_the_cache_trims_its_least_recently_used_entries(tmp_path, cache_dir):
    for i in range(4):
        assert export_cache.write_entry("frames", f"{i:02d}" + "0" * 62, bytes(100))
        os.utime(_entries(cache_dir, "frames")[-1], (1000 + i, 1000 + i))
    export_cache.read_entry("frames", "00" + "0" * 62)  # used now: kept
    size = _entries(cache_dir, "frames")[0].stat().st_size
    export_cache.trim(cache_dir, limit=3 * size)
    kept = [p.name[:2] for p in _entries(cache_dir, "frames")]
    assert kept == ["00", "02", "03"]


def test_a_write_lists_the_folder_only_when_its_count_passes_the_limit(tmp_path, cache_dir, monkeypatch):
    """A process scans the cache folder at its first write and then only when what it knows the
    folder holds passes the limit, where the scan trims it to 80 % of it: many writes cost a few
    listings, not one each, and the folder still ends within the limit."""
    scans = []
    real_trim = export_cache.trim

    def counted(root, limit=export_cache.LIMIT_BYTES, down_to=None):
        scans.append(root)
        return real_trim(root, limit, down_to)

    monkeypatch.setattr(export_cache, "trim", counted)
    monkeypatch.setattr(export_cache, "_known_bytes", {})
    entry = len(export_cache._MAGIC) + 65 + 100  # header, digest line, payload
    monkeypatch.setattr(export_cache, "LIMIT_BYTES", 10 * entry)
    for i in range(10):
        assert export_cache.write_entry("frames", f"{i:02d}" + "0" * 62, bytes(100))
    assert len(scans) == 1  # the first write only: ten entries fit
    for i in range(10, 25):
        assert export_cache.write_entry("frames", f"{i:02d}" + "0" * 62, bytes(100))
    # past the limit a scan trims down to 8 entries, so the next two writes need none
    assert 2 <= len(scans) <= 7, len(scans)
    assert sum(p.stat().st_size for p in _entries(cache_dir, "frames")) <= 10 * entry
    assert "24" in [p.name[:2] for p in _entries(cache_dir, "frames")]  # the newest kept


def test_keys_change_with_any_part_and_with_how_parts_are_split():
    key = export_cache.content_key("frame", b"ab", b"c")
    assert key == export_cache.content_key("frame", b"ab", b"c")
    assert key != export_cache.content_key("frame", b"a", b"bc")
    assert key != export_cache.content_key("frame", b"ab", b"d")


@pytest.mark.slow
def test_afr_table_after_an_export_changed_prints_the_new_export(tmp_path, cache_dir):
    from afr_forkserver import Invocation, run_afr_forked

    directory = _export(tmp_path / "s")
    _export(tmp_path / "other", models=("rf", "sat-rf-y"), reps=3)
    env = {**os.environ, export_cache.CACHE_ENV: str(cache_dir)}
    table = Invocation(("table", "--results", str(directory), "--format", "csv"), tmp_path, env)
    before = run_afr_forked([table, table], jobs=1)  # the second from the cache
    assert [p.returncode for p in before] == [0, 0] and before[0].stdout == before[1].stdout
    assert "eps-abrf" in before[0].stdout and "sat-rf-y" not in before[0].stdout
    for name in ("manifest.json", "results.csv.xz", "units.csv.xz", "grid.csv.xz"):
        os.replace(tmp_path / "other" / "export" / name, directory / "export" / name)
    (after,) = run_afr_forked([table], jobs=1)
    assert after.returncode == 0, after.stderr
    assert "sat-rf-y" in after.stdout and "eps-abrf" not in after.stdout
