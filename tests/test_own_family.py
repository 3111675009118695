"""A model family of the user's own, named ``module:Class`` in a config, runs on the same
footing as the registered ones (same splits, forests and selection), in parallel workers too."""

from __future__ import annotations

import os

import pytest
from conftest import assert_one_line_error, run_afr
from own_family_fixture import SHARP_FAMILY_MODULE, assert_mine_equals_same, write_sharp_config


def _env_with(tmp_path):
    """The test's environment with the family module's directory first on PYTHONPATH (the rest
    kept, so the subprocess imports the afr under test)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))}


@pytest.mark.slow
def test_a_family_of_ones_own_runs_beside_the_registered_ones(tmp_path):
    (tmp_path / "my_families.py").write_text(SHARP_FAMILY_MODULE)
    env = _env_with(tmp_path)
    out = tmp_path / "store"
    config = write_sharp_config(tmp_path / "own.yaml", "my_families:SharpABRF")
    proc = run_afr("run", config, "--out", str(out), "--jobs", "2", "-q", env=env)
    assert proc.returncode == 0, proc.stderr
    assert_mine_equals_same(out)


@pytest.mark.slow
def test_a_family_that_cannot_be_used_is_a_one_line_error(tmp_path):
    (tmp_path / "my_families.py").write_text(SHARP_FAMILY_MODULE)
    env = _env_with(tmp_path)

    def validate(family: str):
        return run_afr("validate", write_sharp_config(tmp_path / "own.yaml", family), env=env)

    assert_one_line_error(
        validate("no_such_module:X"), "models[0].family", "cannot import module 'no_such_module'", "PYTHONPATH"
    )
    assert_one_line_error(
        validate("my_families:NotAFamily"), "models[0].family", "not a concrete subclass of afr_cli.models.Family"
    )
    assert_one_line_error(validate("sharp"), "unknown model family 'sharp'", "module:Class")
