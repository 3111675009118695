"""The fork server the bad-input corpora run afr through (tests/afr_forkserver.py) gives what the
console script gives: the same exit code, stdout and stderr, for a success, a plugin that fails at
import (found on the invocation's PYTHONPATH) and a usage error, run in another directory."""

from __future__ import annotations

import os
import subprocess

import pytest
from afr_forkserver import Invocation, afr_script, run_afr_forked

pytestmark = pytest.mark.slow


def test_a_forked_afr_answers_as_the_console_script(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "plug_boom.py").write_text('raise RuntimeError("boom at import")\n')
    (tmp_path / "ok.yaml").write_text(
        "name: ok\nseed: 1\nprotocol: {reps: 1, inner_folds: 2}\ndatasets: [Friedman1]\n"
        "bases: [{kind: rf, n_estimators: 3}]\nmodels: [{id: rf, family: forest}]\n"
    )
    (tmp_path / "plug.yaml").write_text(
        (tmp_path / "ok.yaml").read_text().replace("family: forest", "family: plug_boom:X")
    )
    path = os.pathsep.join(p for p in (str(tmp_path / "plugins"), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path, "COLUMNS": "80"}
    cases = [("validate", "ok.yaml"), ("validate", "plug.yaml"), ("frobnicate",)]
    forked = run_afr_forked([Invocation(args, tmp_path, env) for args in cases], jobs=2)
    for args, got in zip(cases, forked):
        real = subprocess.run(
            [afr_script(), *args],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert (got.returncode, got.stdout, got.stderr) == (real.returncode, real.stdout, real.stderr), args
    assert [p.returncode for p in forked] == [0, 2, 2]
    assert "boom at import" in forked[1].stderr
