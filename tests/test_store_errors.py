"""Stores never crash: a damaged store.sqlite (random bytes, truncated, empty) read by table, status,
run or plot, and read-only stores and --out directories, each as a real ``afr`` subprocess.

A damaged store or a write where nothing may be written is one line on stderr naming the file,
exit 2, no traceback, and the directory's listing and every file's bytes unchanged. A read-only
store still serves every read command.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml
from afr_forkserver import Invocation, run_afr_forked
from conftest import afr_bin, assert_one_line_error, run_afr

from afr_cli.config.experiment import load_experiment
from afr_cli.engine.runner import RunOptions, run_experiment

pytestmark = pytest.mark.slow

CONFIG = {
    "name": "errors-test",
    "seed": 3,
    "protocol": {"reps": 2, "inner_folds": 2},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 5, "min_samples_leaf": 5}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0, 0.5, 1], "tau": [1, 10]}},
    ],
}


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path below ``root`` with its bytes (None for a directory)."""
    return {str(p.relative_to(root)): (None if p.is_dir() else p.read_bytes()) for p in sorted(root.rglob("*"))}


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cfg") / "errors.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    return path


@pytest.fixture(scope="module")
def good_store(config, tmp_path_factory) -> Path:
    """A real store of two repetitions (no export: the store alone is under test)."""
    out = tmp_path_factory.mktemp("good")
    run_experiment(load_experiment(config, [], out), RunOptions(jobs=1, progress=False), echo=lambda *a: None)
    shutil.rmtree(out / "export")
    for leftover in out.glob("store.sqlite-*"):
        leftover.unlink()
    return out


def _damage(kind: str, good: Path, directory: Path) -> Path:
    directory.mkdir()
    path = directory / "store.sqlite"
    data = (good / "store.sqlite").read_bytes()
    if kind == "random":
        path.write_bytes(np.random.default_rng(0).bytes(len(data)))
    elif kind == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:
        path.write_bytes(b"")
    return path


def _commands(directory: Path, config: Path, elsewhere: Path) -> dict[str, list[str]]:
    return {
        "table": ["table", "--results", str(directory)],
        "status": ["status", str(directory)],
        "run": ["run", str(config), "--out", str(directory), "--jobs", "1", "-q"],
        "plot": [
            "plot",
            "surface",
            "--results",
            str(directory),
            "--dataset",
            "Friedman1",
            "--model",
            "eps-abrf",
            "--x",
            "tau",
            "--y",
            "eps",
            "--out",
            str(elsewhere / "surface.png"),
        ],
    }


@pytest.mark.parametrize("kind", ["random", "truncated", "empty"])
def test_a_damaged_store_is_one_line_and_nothing_is_written(kind, good_store, config, tmp_path):
    path = _damage(kind, good_store, tmp_path / "store")
    elsewhere = tmp_path / "figures"
    elsewhere.mkdir()
    before = snapshot(tmp_path)
    for name, args in _commands(tmp_path / "store", config, elsewhere).items():
        proc = run_afr(*args)
        assert_one_line_error(proc, str(path))
        assert snapshot(tmp_path) == before, (kind, name)
    assert path.stat().st_size == len(before["store/store.sqlite"])  # an empty file stays empty


def _read_only_runner(tmp_path: Path):
    """Run afr commands (one after the other) with ``directory`` read-only: a read-only bind mount
    for root (chmod does not stop root), file modes otherwise. Skips where neither is possible.

    For root the commands are children of one fork server started inside the mount namespace
    (tests/afr_forkserver.py): each is its own process there, as an ``afr`` started inside it is,
    without each importing afr afresh."""
    if os.geteuid() != 0:

        def run(directory: Path, *commands: tuple[str, ...]) -> list[subprocess.CompletedProcess]:
            modes = {p: p.stat().st_mode for p in [directory, *directory.rglob("*")]}
            for p in modes:
                p.chmod(modes[p] & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
            try:
                return [run_afr(*args) for args in commands]
            finally:
                for p, mode in modes.items():
                    p.chmod(mode)

        return run
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("running as root without a mount namespace: no way to make a directory read-only here")

    def run(directory: Path, *commands: tuple[str, ...]) -> list[subprocess.CompletedProcess]:
        script = 'mount --bind -o ro "$0" "$0" && exec "$@"'
        under = ("unshare", "-m", "--propagation", "private", "sh", "-c", script, str(directory))
        invocations = [Invocation(tuple(args), Path.cwd(), dict(os.environ)) for args in commands]
        return run_afr_forked(invocations, jobs=1, timeout=600, under=under)

    return run


def test_a_read_only_store_serves_reads_and_refuses_writes_in_one_line(good_store, config, tmp_path):
    run_ro = _read_only_runner(tmp_path)
    ro = tmp_path / "ro"
    shutil.copytree(good_store, ro / "store")
    figures = tmp_path / "figures"
    figures.mkdir()
    commands = _commands(ro / "store", config, figures)
    expected = {name: run_afr(*args) for name, args in commands.items() if name != "run"}
    before = snapshot(ro)
    table, status, plot, nothing_to_do, more, new, plot_into_ro = run_ro(
        ro,
        commands["table"],
        commands["status"],
        commands["plot"],
        commands["run"],  # complete: reads only, succeeds
        (*commands["run"], "--reps", "3"),
        ("run", str(config), "--out", str(ro / "new"), "-q"),
        (*commands["plot"][:-1], str(ro / "p.png")),
    )
    for name, proc in (("table", table), ("status", status)):
        assert proc.returncode == 0 and proc.stdout == expected[name].stdout, (name, proc.stderr)
    assert plot.returncode == 0 and (figures / "surface.png").is_file(), plot.stderr
    assert nothing_to_do.returncode == 0 and "0 to run" in nothing_to_do.stdout, nothing_to_do.stderr
    assert_one_line_error(more, str(ro / "store" / "store.sqlite"), "read-only")
    assert_one_line_error(new, str(ro), "read-only")
    assert_one_line_error(plot_into_ro, "--out", "p.png")
    assert snapshot(ro) == before


def test_fresh_refuses_a_store_with_results_unless_confirmed(good_store, config, tmp_path):
    shutil.copytree(good_store, tmp_path / "s")
    before = snapshot(tmp_path)
    args = ["run", str(config), "--out", str(tmp_path / "s"), "--jobs", "1", "-q", "--fresh"]
    refused = run_afr(*args)  # stdin is not a terminal here: no prompt, a refusal
    assert_one_line_error(refused, str(tmp_path / "s"), "2 units of results", "--yes")
    assert snapshot(tmp_path) == before
    damaged = tmp_path / "d"
    _damage("random", good_store, damaged)
    assert_one_line_error(run_afr("run", str(config), "--out", str(damaged), "--fresh"), "unreadable", "--yes")
    confirmed = run_afr(*args, "--yes")
    assert confirmed.returncode == 0, confirmed.stderr
    from afr_cli.store import ResultsStore

    assert len(ResultsStore(tmp_path / "s").manifest()["runs"]) == 1  # started afresh


def test_user_stores_are_ignored_and_reference_exports_are_not():
    root = Path(__file__).resolve().parents[1]
    paths = [
        "results/my_experiment/export/grid.csv.xz",
        "results/my_experiment/store.sqlite",
        "results/larf_rf/store.sqlite",
        "results/larf_rf/export/grid.csv.xz",
        "results/abrf/compare.md",
    ]
    proc = subprocess.run(["git", "check-ignore", "--no-index", *paths], cwd=root, capture_output=True, text=True)
    if proc.returncode == 128:
        pytest.skip("not a git checkout")
    # Every store.sqlite is ignored; exports are not: `afr run` writes one only for the stores a paper
    # folder declares (or on `afr export`), so a user's store leaves nothing to show (test_reproduce.py).
    assert proc.stdout.split() == paths[1:3]


def test_fresh_asks_in_a_terminal(good_store, config, tmp_path):
    """With stdin a terminal, --fresh asks; 'n' leaves everything as it was."""
    import pty

    shutil.copytree(good_store, tmp_path / "s")
    before = snapshot(tmp_path)
    master, slave = pty.openpty()
    os.write(master, b"n\n")
    proc = subprocess.run(
        [afr_bin(), "run", str(config), "--out", str(tmp_path / "s"), "--fresh", "-q"],
        stdin=slave,
        capture_output=True,
        text=True,
        timeout=300,
    )
    os.close(slave)
    os.close(master)
    assert "delete them and start afresh?" in proc.stderr, proc.stderr
    assert proc.returncode == 2 and "--fresh not confirmed; nothing was changed" in proc.stderr
    assert "Traceback" not in proc.stderr and snapshot(tmp_path) == before
