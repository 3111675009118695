"""Shared test helpers: the installed ``afr`` console script and small fitted forests."""

from __future__ import annotations

import fcntl
import functools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from afr_forkserver import Invocation, run_one

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATASETS = ROOT.parent / "shared" / "datasets"


def afr_bin() -> str:
    return str(Path(sys.executable).parent / "afr")


# AFR_TESTS_REAL_PROCESSES=1: every run_afr starts the console script afresh, as before the fork server
REAL_PROCESSES = os.environ.get("AFR_TESTS_REAL_PROCESSES", "") not in ("", "0")


def run_afr(
    *args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    """Run ``afr ARGS`` as its own process, as a user would; returns the completed process (no check).

    The process is a child of this test process's fork server (tests/afr_forkserver.py), which
    imported afr once: the same exit code, stdout and stderr as the console script started afresh
    (tests/test_afr_forkserver.py), without its one to three seconds of imports per command. The
    environment is ``env`` or, as subprocess.run would pass it, this process's environment now."""
    if REAL_PROCESSES:
        return subprocess.run(
            [afr_bin(), *args], cwd=cwd or ROOT, env=env, capture_output=True, text=True, timeout=timeout
        )
    return run_one(Invocation(tuple(args), Path(cwd or ROOT), dict(os.environ if env is None else env)), timeout)


@pytest.fixture(autouse=True)
def _environment_restored():
    """Each test starts from the environment the test before it started from. A library may set
    variables in this process's os.environ (Dask's nanny sets OMP_NUM_THREADS and its kin for the
    workers it spawns), and every afr command a later test runs inherits them: with xdist running
    the files in another order, a record of `afr bench steps` then named those variables."""
    saved = dict(os.environ)
    yield
    if dict(os.environ) != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture
def small_data():
    """A small regression problem (Friedman 1, 60 rows) split 45/15."""
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n_samples=60, n_features=5, noise=0.5, random_state=3)
    return X[:45], y[:45], X[45:], y[45:]


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    """Exit 2, a single line on stderr starting with 'error:', no traceback, containing needles."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def random_simplex(rng: np.random.Generator, size: int, count: int) -> np.ndarray:
    return rng.dirichlet(np.ones(size), size=count)


def _shared_folder() -> Path | None:
    """A folder every xdist worker of this test run shares (None outside xdist): the run's base
    temporary folder, which pytest-xdist gives each worker a folder inside. PYTEST_XDIST_TESTRUNUID
    is the same in every worker of one run and new in the next, so a file here is never a stale
    one from an earlier run."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run or _BASE_TEMP is None:
        return None
    folder = _BASE_TEMP.parent / f"shared-{run}"
    folder.mkdir(exist_ok=True)
    return folder


_BASE_TEMP: Path | None = None


@pytest.fixture(scope="session", autouse=True)
def _base_temp(tmp_path_factory) -> None:
    global _BASE_TEMP
    _BASE_TEMP = tmp_path_factory.getbasetemp()


def computed_once_per_run(name: str, build: Callable[[], object]) -> object:
    """``build()`` computed once for the whole test run, as JSON: under xdist the first worker to
    ask computes it while holding a lock on its file and the others wait and read what it wrote
    (the pattern pytest-xdist documents for session-wide data); outside xdist it is computed here."""
    folder = _shared_folder()
    if folder is None:
        return build()
    path = folder / f"{name}.json"
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))
        value = build()
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(value), encoding="utf-8")
        tmp.replace(path)
        return value


def _study_blocks_of(paper_id: str) -> dict[str, object]:
    from afr_cli.catalogue.knowledge import paper
    from afr_cli.publish.context import ReportContext
    from afr_cli.publish.studies import study_blocks
    from afr_cli.store.cache import CACHE_ENV

    saved = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = "off"
    try:
        blocks, written = study_blocks((paper(paper_id),), ReportContext(ROOT / "results"))
    finally:
        if saved is None:
            del os.environ[CACHE_ENV]
        else:
            os.environ[CACHE_ENV] = saved
    return {"blocks": blocks, "written": [str(path) for path in written]}


@functools.cache
def _committed_study_blocks_of(paper_id: str) -> dict[str, object]:
    return computed_once_per_run(f"study-blocks-{paper_id}", lambda: _study_blocks_of(paper_id))


def committed_study_blocks_and_written(*paper_ids: str) -> tuple[dict[str, str], list[str]]:
    """What ``study_blocks`` gives for these papers over the committed results/ (each paper on its
    own: a paper's studies read only its own stores): the blocks by name and the cache files it
    wrote. Computed once per paper for the whole test run and shared by the xdist workers
    (several test modules read the same blocks; the robust-RF ones take half a minute).

    They are computed with the export cache off: they are its values either way, and the robust-RF
    studies alone would write some 2,300 entries to it."""
    blocks: dict[str, str] = {}
    written: list[str] = []
    for paper_id in paper_ids:
        computed = _committed_study_blocks_of(paper_id)
        blocks.update(computed["blocks"])
        written += computed["written"]
    return blocks, written


def _classes_of_every_paper() -> dict[str, list[dict]]:
    from afr_cli.publish.cell_classes import classify_paper
    from afr_cli.publish.context import ReportContext

    ctx = ReportContext(ROOT / "results")
    return {paper.id: classify_paper(paper, ctx).to_dict("records") for paper in ctx.papers}


@functools.cache
def _committed_classes() -> dict[str, list[dict]]:
    return computed_once_per_run("cell-classes", _classes_of_every_paper)


def committed_classes(paper_id: str):
    """``classify_paper``'s frame of a paper over the committed results/, computed once for the
    whole test run and shared by the xdist workers (each classing reads every store the paper's
    reports and explanations name: some twenty seconds)."""
    import pandas as pd

    return pd.DataFrame.from_records(_committed_classes()[paper_id])


def committed_study_blocks(*paper_ids: str) -> dict[str, str]:
    """The study blocks of these papers over the committed results/ (see
    ``committed_study_blocks_and_written``)."""
    return committed_study_blocks_and_written(*paper_ids)[0]
