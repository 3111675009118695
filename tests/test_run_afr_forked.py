"""conftest.run_afr runs ``afr`` as a child of a fork server kept for the whole test process
(tests/afr_forkserver.py's run_one): it must answer as the console script started afresh does
(exit code, stdout, stderr, the environment and directory given, or this process's environment as
it is now), keep answering after a command fails, and treat a timeout as subprocess.run does."""

from __future__ import annotations

import os
import subprocess

import pytest
from afr_forkserver import Invocation, afr_script, run_one
from conftest import run_afr

pytestmark = pytest.mark.slow

OK = (
    "name: ok\nseed: 1\nprotocol: {reps: 1, inner_folds: 2}\ndatasets: [Friedman1]\n"
    "bases: [{kind: rf, n_estimators: 3}]\nmodels: [{id: rf, family: forest}]\n"
)


def _real(args: tuple[str, ...], cwd, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [afr_script(), *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300
    )


def test_run_afr_answers_as_the_console_script_started_afresh(tmp_path, monkeypatch):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "plug_boom.py").write_text('raise RuntimeError("boom at import")\n')
    (tmp_path / "ok.yaml").write_text(OK)
    (tmp_path / "plug.yaml").write_text(OK.replace("family: forest", "family: plug_boom:X"))
    path = os.pathsep.join(p for p in (str(tmp_path / "plugins"), os.environ.get("PYTHONPATH")) if p)
    monkeypatch.setenv("PYTHONPATH", path)  # no env given: the environment as it is now, as subprocess.run
    monkeypatch.setenv("COLUMNS", "61")
    cases = [("validate", "ok.yaml"), ("validate", "plug.yaml"), ("frobnicate",), ("validate", "--help")]
    for args in cases * 2:  # twice: a failed command leaves the server as it was
        got = run_afr(*args, cwd=tmp_path)
        real = _real(args, tmp_path, dict(os.environ))
        assert (got.returncode, got.stdout, got.stderr) == (real.returncode, real.stdout, real.stderr), args
    assert run_afr("validate", "ok.yaml", cwd=tmp_path).returncode == 0
    boom = run_afr("validate", "plug.yaml", cwd=tmp_path)
    assert boom.returncode == 2 and "boom at import" in boom.stderr
    # an explicit env is the child's whole environment: without the plugin folder the import fails otherwise
    plain = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    other = run_afr("validate", "plug.yaml", cwd=tmp_path, env=plain)
    assert other.returncode == 2 and "boom at import" not in other.stderr, other.stderr


def test_a_command_past_its_timeout_is_killed_and_raises_as_subprocess_run_does(tmp_path):
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(60)\n")
    (tmp_path / "slow.yaml").write_text(OK.replace("seed: 1\n", "seed: 1\nplugins: [slow.py]\n"))
    with pytest.raises(subprocess.TimeoutExpired) as stopped:
        run_one(Invocation(("validate", "slow.yaml"), tmp_path, dict(os.environ)), timeout=3)
    assert stopped.value.cmd == [afr_script(), "validate", "slow.yaml"] and stopped.value.timeout == 3
    (tmp_path / "ok.yaml").write_text(OK)
    after = run_one(Invocation(("validate", "ok.yaml"), tmp_path, dict(os.environ)))
    assert after.returncode == 0, after.stderr
