"""Every bad input of the corpus below, run as a real ``afr`` subprocess: exit 2, one line on stderr
starting with 'error:', no traceback, and no file changed (the directory's listing and every
file's bytes compared before and after). Reading a read-only store must simply work.

Read-only directories are made with a read-only bind mount in a private mount namespace
(``unshare -m``) when running as root, who ignores permission bits; otherwise by chmod."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from afr_forkserver import Invocation, run_afr_forked

pytestmark = pytest.mark.slow

TINY = {
    "name": "corpus",
    "seed": 3,
    "protocol": {"reps": 1, "inner_folds": 2},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 3, "min_samples_leaf": 5}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "a", "family": "eps-abrf", "grid": {"eps": [0.0, 1.0], "tau": [1.0, 10.0]}},
    ],
}


def _config(tmp: Path, **changes) -> Path:
    path = tmp / "c.yaml"
    path.write_text(yaml.safe_dump({**TINY, **changes}))
    return path


def _store(directory: Path) -> Path:
    """A small valid store: one unit with results and grid rows of models rf and a (base RF)."""
    from afr_cli.store import ResultsStore, UnitRecord

    store = ResultsStore(directory)
    store.create({"experiment": "corpus", "config_hash": "x"})
    rows = [
        {
            "model": m,
            "r2": 0.5,
            "mae": 1.0,
            "rmse": 1.0,
            "params": {},
            "selection": "inner-cv",
            "cv_score": 0.4,
            "solver_status": {},
            "seconds": 0.1,
        }
        for m in ("rf", "a")
    ]
    grid = [
        {
            "model": "a",
            "point": {"eps": e, "tau": t},
            "cv_r2": 0.4,
            "cv_mae": 1.0,
            "test_r2": 0.5 + e / 10,
            "test_mae": 1.0,
            "test_rmse": 1.0,
        }
        for e in (0.0, 1.0)
        for t in (1.0, 10.0)
    ]
    store.write_unit(UnitRecord("Friedman1", "RF", 0, 0, 80, 20, 0.1, 0.2, rows, grid))
    # one file, no -wal/-shm beside it, as a committed store is
    import sqlite3

    conn = sqlite3.connect(store.path)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    return directory


def _garbage(directory: Path, content: bytes | None = None, truncate: bool = False) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "store.sqlite"
    if truncate:
        _store(directory)
        path.write_bytes(path.read_bytes()[:1500])
    else:
        path.write_bytes(content if content is not None else os.urandom(4096))
    return directory


TABLE = ("table", "--results", "s")
STATUS = ("status", "s")
PLOT = (
    "plot",
    "surface",
    "--results",
    "s",
    "--dataset",
    "Friedman1",
    "--model",
    "a",
    "--x",
    "tau",
    "--y",
    "eps",
    "--out",
    "p.png",
)


def _run(tmp: Path) -> tuple[str, ...]:
    return ("run", str(_config(tmp)), "--out", "s", "--jobs", "1", "-q")


@dataclass
class Case:
    """A bad input: ``setup(tmp)`` builds the files and returns the arguments of afr."""

    name: str
    setup: Callable[[Path], tuple[str, ...]]
    needles: tuple[str, ...] = ()
    read_only: str | None = None  # a directory (relative to tmp) made read-only during the run


def _non_utf8(tmp: Path) -> Path:
    (tmp / "c.yaml").write_bytes(b"name: x\n" + bytes(range(128, 256)) * 2)
    return tmp / "c.yaml"


CASES = [
    Case("config-not-utf8-validate", lambda t: ("validate", str(_non_utf8(t))), ("c.yaml", "UTF-8")),
    Case("config-not-utf8-run", lambda t: ("run", str(_non_utf8(t)), "--out", "s"), ("c.yaml", "UTF-8")),
    Case(
        "config-unknown-solver",
        lambda t: ("run", str(_config(t, solver="GUROBIX")), "--out", "s"),
        ("solver", "GUROBIX", "allowed"),
    ),
    Case("table-reps-zero", lambda t: (_store(t / "s") and ()) or (*TABLE, "--reps", "0"), ("--reps",)),
    Case(
        "table-compare-none-holds-both",
        lambda t: (_store(t / "results" / "x") and ()) or ("table", "--compare", "rf", "zzz"),
        ("holding zzz: none",),
    ),
    Case("plot-out-unwritable", lambda t: (_store(t / "s") and ()) or (*PLOT[:-1], "/proc/afr-none/p.png"), ("--out",)),
    Case("status-no-store", lambda t: ("status", "nothing-here"), ("nothing-here",)),
    # damaged stores (random bytes, truncated, empty), a read-only --out, --fresh on a store with results
    *(
        Case(f"random-bytes-store-{cmd}", lambda t, a=args: (_garbage(t / "s") and ()) or a(t), ("s",))
        for cmd, args in (
            ("table", lambda t: TABLE),
            ("status", lambda t: STATUS),
            ("plot", lambda t: PLOT),
            ("run", _run),
        )
    ),
    *(
        Case(f"truncated-store-{cmd}", lambda t, a=args: (_garbage(t / "s", truncate=True) and ()) or a(t), ("s",))
        for cmd, args in (("table", lambda t: TABLE), ("status", lambda t: STATUS))
    ),
    *(
        Case(f"empty-store-{cmd}", lambda t, a=args: (_garbage(t / "s", b"") and ()) or a(t), ("s",))
        for cmd, args in (("table", lambda t: TABLE), ("status", lambda t: STATUS), ("run", _run))
    ),
    Case(
        "read-only-out",
        lambda t: (t / "ro").mkdir() or ("run", str(_config(t)), "--out", "ro/s", "-q"),
        ("ro", "read-only"),
        read_only="ro",
    ),
    Case(
        "fresh-on-a-store-with-results",
        lambda t: (_store(t / "s") and ()) or ("run", str(_config(t)), "--out", "s", "--fresh", "-q"),
        ("--fresh",),
    ),
]


def _snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path below root: a file's bytes, None for a directory."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def _can_make_read_only() -> str | None:
    """Why read-only directories cannot be made here, or None."""
    if os.geteuid() != 0:
        return None
    if shutil.which("unshare") is None:
        return "running as root without unshare(1): no way to make a read-only directory"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return None if probe.returncode == 0 else "running as root and unshare -m is not permitted here"


def run_read_only(prepared: list[tuple[Path, tuple[str, ...], str]]) -> list[subprocess.CompletedProcess]:
    """Run afr for each (directory, arguments, read-only subdirectory), one after the other, each
    in its directory (as a user would) with that subdirectory read-only: a read-only bind mount
    for root (chmod does not stop root), file modes otherwise. The commands are children of one
    fork server (tests/afr_forkserver.py), for root started inside a mount namespace holding every
    read-only mount: each is its own process there, as an ``afr`` started inside it is."""
    env = {**os.environ, "MPLBACKEND": "Agg"}
    invocations = [Invocation(args, tmp, env) for tmp, args, _ in prepared]
    targets = [str(tmp / read_only) for tmp, _, read_only in prepared]
    if os.geteuid() == 0:
        script = (
            'while [ "$1" != -- ]; do mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" || exit 1; '
            'shift; done; shift; exec "$@"'
        )
        return run_afr_forked(invocations, jobs=1, under=("unshare", "-m", "sh", "-c", script, "sh", *targets, "--"))
    for target in targets:
        os.chmod(target, 0o555)
    try:
        return run_afr_forked(invocations, jobs=1)
    finally:
        for target in targets:
            os.chmod(target, 0o755)


READ_CASES = [  # reading a read-only store must simply work (plot writes p.png beside the store)
    Case(
        f"read-only-store-{cmd}",
        lambda t, a=args: (_store(t / "s") and ()) or a,
        read_only="s",
    )
    for cmd, args in (("table", TABLE), ("status", STATUS), ("plot", PLOT))
]


@dataclass
class Outcome:
    proc: subprocess.CompletedProcess | None
    before: dict[str, bytes | None]
    after: dict[str, bytes | None]
    skip: str | None = None


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, Outcome]:
    """Every case run once: set up one after the other, then the ``afr`` processes two at a time
    (each in its own directory, so they cannot interfere), then the files compared. A case with a
    read-only directory runs after them, one at a time (in one mount namespace holding their
    read-only mounts when root); every one a child of a server that imported afr once
    (tests/afr_forkserver.py)."""
    cannot = _can_make_read_only()
    prepared = []
    for case in CASES + READ_CASES:
        tmp = tmp_path_factory.mktemp(case.name)
        args = case.setup(tmp)
        watched = tmp / case.read_only if case.name.startswith("read-only-store") else tmp
        prepared.append((case, tmp, args, watched, _snapshot(watched)))
    forked = [item for item in prepared if not item[0].read_only]
    read_only = [item for item in prepared if item[0].read_only]

    env = {**os.environ, "MPLBACKEND": "Agg"}
    procs = run_afr_forked([Invocation(tuple(args), tmp, env) for _, tmp, args, _, _ in forked], jobs=2)
    found = {
        case.name: Outcome(proc, before, _snapshot(watched))
        for (case, _, _, watched, before), proc in zip(forked, procs)
    }
    if cannot:
        return found | {case.name: Outcome(None, before, before, skip=cannot) for case, *_, before in read_only}
    procs = run_read_only([(tmp, tuple(args), case.read_only) for case, tmp, args, _, _ in read_only])
    return found | {
        case.name: Outcome(proc, before, _snapshot(watched))
        for (case, _, _, watched, before), proc in zip(read_only, procs)
    }


def _param(case: Case):
    return pytest.param(case, id=case.name)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing(case: Case, outcomes: dict[str, Outcome]):
    outcome = outcomes[case.name]
    if outcome.skip:
        pytest.skip(outcome.skip)
    proc = outcome.proc
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for needle in case.needles:
        assert needle in lines[0], (needle, lines[0])
    assert outcome.after == outcome.before, "a bad input must leave every file as it was"


@pytest.mark.parametrize("case", [_param(c) for c in READ_CASES])
def test_a_read_only_store_can_be_read(case: Case, outcomes: dict[str, Outcome]):
    outcome = outcomes[case.name]
    if outcome.skip:
        pytest.skip(outcome.skip)
    assert outcome.proc.returncode == 0 and "Traceback" not in outcome.proc.stderr, outcome.proc.stderr
    assert outcome.after == outcome.before, "reading a store must not change it"
