"""Tests of the dataset registry, fetch/verify of UCI files, load_dataset and `afr datasets`."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from afr_cli.cli import app
from afr_cli.data import (
    DATASETS,
    canonical_name,
    dataset_available,
    fetch_all,
    get_spec,
    load_dataset,
    verify_all,
)
from afr_cli.errors import AfrInputError

MIRROR = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
_VENV_AFR = Path(sys.executable).parent / "afr"
AFR = str(_VENV_AFR) if _VENV_AFR.exists() else shutil.which("afr") or "afr"

EXPECTED = {  # name: (m, n, source) as in the papers
    "Diabetes": (10, 442, "sklearn"),
    "Friedman1": (10, 100, "synthetic"),
    "Friedman2": (4, 100, "synthetic"),
    "Friedman3": (4, 100, "synthetic"),
    "Regression": (100, 100, "synthetic"),
    "Sparse": (10, 100, "synthetic"),
    "Wine": (11, 1599, "uci"),
    "Boston": (13, 506, "uci"),
    "Concrete": (8, 1030, "uci"),
    "Yacht": (6, 308, "uci"),
    "Airfoil": (5, 1503, "uci"),
}
UCI = [name for name, (_, _, source) in EXPECTED.items() if source == "uci"]
BUILTIN = [name for name in EXPECTED if name not in UCI]
SYNTHETIC = [name for name, (_, _, source) in EXPECTED.items() if source == "synthetic"]
TARGET_MEANS = {"Wine": 5.6360, "Boston": 22.5328, "Concrete": 35.8178, "Yacht": 10.4954, "Airfoil": 124.8359}

needs_mirror = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"dataset mirror {MIRROR} is absent")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty private cache; no mirror configured."""
    path = tmp_path / "cache"
    monkeypatch.setenv("AFR_DATA_CACHE", str(path))
    monkeypatch.delenv("AFR_DATA_MIRROR", raising=False)
    return path


@pytest.fixture
def fetched(cache: Path) -> Path:
    """A cache holding all five UCI files, copied from the mirror."""
    if not MIRROR.is_dir():
        pytest.skip(f"dataset mirror {MIRROR} is absent")
    fetch_all(source_dir=MIRROR)
    return cache


def run_afr(*args: str) -> subprocess.CompletedProcess:
    """Run the installed `afr` console script (its main() maps AfrInputError to exit 2)."""
    return subprocess.run([AFR, *args], capture_output=True, text=True, timeout=60)


def test_registry_matches_the_papers() -> None:
    assert list(DATASETS) == list(EXPECTED)
    for name, (m, n, source) in EXPECTED.items():
        spec = DATASETS[name]
        assert (spec.m, spec.n, spec.source) == (m, n, source)
        assert spec.licence and spec.citation
        assert (spec.file is not None) == (source == "uci")
    assert "Black" in get_spec("boston").note


@pytest.mark.parametrize(
    "typed, name",
    [
        ("friedman1", "Friedman1"),
        ("Friedman 1", "Friedman1"),
        ("friedman_2", "Friedman2"),
        ("FRIEDMAN-3", "Friedman3"),
        ("wine", "Wine"),
        (" Air foil ", "Airfoil"),
    ],
)
def test_names_are_matched_loosely(typed: str, name: str) -> None:
    assert canonical_name(typed) == name
    assert get_spec(typed).name == name


def test_unknown_name_lists_the_allowed_names() -> None:
    with pytest.raises(AfrInputError, match="unknown dataset 'mnist'.*Diabetes.*Airfoil"):
        get_spec("mnist")
    with pytest.raises(AfrInputError, match="unknown dataset"):
        load_dataset("mnist")


@pytest.mark.parametrize("name", BUILTIN)
def test_builtin_sets_load_with_registry_shape(name: str, cache: Path) -> None:
    m, n, _ = EXPECTED[name]
    X, y = load_dataset(name)
    assert X.shape == (n, m) and y.shape == (n,)
    assert X.dtype == np.float64 and y.dtype == np.float64
    assert dataset_available(name)


@pytest.mark.parametrize("name", SYNTHETIC)
def test_synthetic_draw_is_fixed_by_the_seed(name: str) -> None:
    X0, y0 = load_dataset(name)
    X0b, y0b = load_dataset(name, data_seed=0)
    X1, y1 = load_dataset(name, data_seed=1)
    assert np.array_equal(X0, X0b) and np.array_equal(y0, y0b)
    assert not np.array_equal(X0, X1) and not np.array_equal(y0, y1)


def test_noise_none_keeps_the_generators_defaults() -> None:
    from sklearn.datasets import make_friedman2, make_sparse_uncorrelated

    X, y = load_dataset("Friedman2", 1, "none")
    X0, y0 = make_friedman2(n_samples=100, random_state=1)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    assert not np.array_equal(load_dataset("Friedman2", 1)[1], y0)  # documented noise differs
    Xs, ys = make_sparse_uncorrelated(n_samples=100, n_features=10, random_state=1)
    np.testing.assert_array_equal(load_dataset("Sparse", 1, "none")[1], ys)  # no noise parameter to drop
    with pytest.raises(AfrInputError, match="noise 'loud'"):
        load_dataset("Friedman2", 1, "loud")


@pytest.mark.parametrize("seed", [-1, 2**32, 1.5, True, "0"])
def test_bad_data_seed_is_rejected(seed: object) -> None:
    with pytest.raises(AfrInputError, match="data_seed"):
        load_dataset("Friedman1", data_seed=seed)  # type: ignore[arg-type]


@needs_mirror
def test_uci_sets_load_after_fetch_from_mirror(fetched: Path) -> None:
    assert all(r.ok for r in verify_all())
    for name in UCI:
        m, n, _ = EXPECTED[name]
        X, y = load_dataset(name)
        assert X.shape == (n, m) and y.shape == (n,)
        assert X.dtype == np.float64 and y.dtype == np.float64
        assert y.mean() == pytest.approx(TARGET_MEANS[name], abs=1e-4)
        assert dataset_available(name)


@needs_mirror
def test_verified_file_is_not_copied_again(fetched: Path) -> None:
    path = fetched / get_spec("wine").file.name
    stamp = path.stat().st_mtime_ns
    [result] = fetch_all(["wine"], source_dir=MIRROR)
    assert result.action == "present"
    assert path.stat().st_mtime_ns == stamp


def test_missing_uci_file_without_mirror_asks_for_fetch(cache: Path) -> None:
    assert not dataset_available("Wine")
    with pytest.raises(AfrInputError, match=r"winequality-red\.csv.*afr datasets fetch"):
        load_dataset("Wine")
    assert [r.status for r in verify_all()] == ["missing"] * len(UCI)


@needs_mirror
def test_missing_uci_file_is_fetched_from_the_mirror_env(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AFR_DATA_MIRROR", str(MIRROR))
    X, _ = load_dataset("yacht")
    assert X.shape == (308, 6)
    assert (cache / "yacht_hydrodynamics.data").is_file()


@needs_mirror
def test_corrupted_cache_file_is_reported_and_refused(fetched: Path) -> None:
    path = fetched / "housing.data"
    data = bytearray(path.read_bytes())
    data[100] = ord("9") if data[100] != ord("9") else ord("8")  # same size, different bytes
    path.write_bytes(bytes(data))

    bad = [r for r in verify_all() if not r.ok]
    assert [(r.file, r.status) for r in bad] == [("housing.data", "bad")]
    assert not dataset_available("boston")
    with pytest.raises(AfrInputError, match=r"housing\.data.*sha256.*refusing to load Boston"):
        load_dataset("Boston")

    proc = run_afr("datasets", "verify")
    assert proc.returncode == 2
    assert "housing.data" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1

    [result] = fetch_all(["boston"], source_dir=MIRROR)
    assert result.action == "replaced"
    assert load_dataset("Boston")[0].shape == (506, 13)


@needs_mirror
@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_bad_mirror_file_is_never_cached(damage: str, cache: Path, tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    data = (MIRROR / "yacht_hydrodynamics.data").read_bytes()
    data = data[: len(data) // 2] if damage == "truncate" else data.replace(b"0.0", b"0.1", 1)
    (mirror / "yacht_hydrodynamics.data").write_bytes(data)

    with pytest.raises(AfrInputError) as err:
        fetch_all(["Yacht"], source_dir=mirror)
    message = str(err.value)
    assert "yacht_hydrodynamics.data" in message
    assert get_spec("yacht").file.sha256 in message
    assert hashlib.sha256(data).hexdigest() in message and "\n" not in message
    assert not cache.exists() or list(cache.iterdir()) == []


def test_fetch_from_a_missing_directory_fails(cache: Path, tmp_path: Path) -> None:
    with pytest.raises(AfrInputError, match="--from"):
        fetch_all(source_dir=tmp_path / "nowhere")


def test_list_csv_has_header_and_eleven_rows(cache: Path) -> None:
    result = CliRunner().invoke(app, ["datasets", "list", "--format", "csv"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0] == "name,m,n,source,available"
    assert len(lines) == 12
    rows = {line.split(",")[0]: line.split(",") for line in lines[1:]}
    assert list(rows) == list(EXPECTED)
    assert rows["Regression"] == ["Regression", "100", "100", "synthetic", "true"]
    assert rows["Wine"][-1] == "false"  # empty cache


def test_list_table_and_info(cache: Path) -> None:
    runner = CliRunner()
    table = runner.invoke(app, ["datasets", "list"])
    assert table.exit_code == 0 and "licence" in table.output and "CC BY 4.0" in table.output
    info = runner.invoke(app, ["datasets", "info", "concrete"])
    assert info.exit_code == 0
    assert "10.24432/C5PK67" in info.output and "Concrete_Data.xls" in info.output
    assert "missing" in info.output


@pytest.mark.slow
@needs_mirror
def test_cli_fetch_verify_and_errors(cache: Path) -> None:
    missing = run_afr("datasets", "verify")
    assert missing.returncode == 2
    assert all(get_spec(name).file.name in missing.stderr for name in UCI)

    fetch = run_afr("datasets", "fetch", "--from", str(MIRROR))
    assert fetch.returncode == 0, fetch.stderr
    assert len(fetch.stdout.strip().splitlines()) == len(UCI)
    assert "fetched from" in fetch.stdout

    again = run_afr("datasets", "fetch", "--from", str(MIRROR), "wine", "diabetes")
    assert again.returncode == 0 and "already present" in again.stdout

    assert run_afr("datasets", "verify").returncode == 0

    unknown = run_afr("datasets", "info", "mnist")
    assert unknown.returncode == 2
    assert unknown.stderr.strip().splitlines() == [unknown.stderr.strip()]
    assert unknown.stderr.startswith("error: unknown dataset 'mnist'")
