"""Shared test helpers: the installed ``afr`` console script and small fitted forests."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
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


@functools.cache
def _committed_study_blocks_of(paper_id: str) -> dict[str, str]:
    from afr_cli.catalogue.knowledge import paper
    from afr_cli.publish.context import ReportContext
    from afr_cli.publish.studies import study_blocks

    return study_blocks((paper(paper_id),), ReportContext(Path(__file__).resolve().parents[1] / "results"))[0]


def committed_study_blocks(*paper_ids: str) -> dict[str, str]:
    """The study blocks of these papers over the committed results/, computed once per paper for
    the whole session (several test modules read the same blocks; the robust-RF ones take seconds)."""
    blocks: dict[str, str] = {}
    for paper_id in paper_ids:
        blocks.update(_committed_study_blocks_of(paper_id))
    return dict(blocks)
