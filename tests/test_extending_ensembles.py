"""docs/extending-ensembles.md works as written: its ensemble file and its config, taken from the
page's code blocks, validate and run (`afr run`, two repetitions on Friedman 1), and the page's
one-line errors are what afr says."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import ROOT, assert_one_line_error, run_afr

from afr_cli.store import load_results

PAGE = ROOT / "docs" / "extending-ensembles.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", PAGE.read_text(encoding="utf-8"), flags=re.S | re.M)


def _write_page_files(tmp_path: Path, **base_overrides) -> tuple[Path, dict]:
    (module,), (config_text,) = _blocks("python"), _blocks("yaml")
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "my_ensembles.py").write_text(module)
    config = yaml.safe_load(config_text)
    config["bases"][0].update(base_overrides)
    path = tmp_path / "subsampled.yaml"
    path.write_text(config_text if not base_overrides else yaml.safe_dump(config))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    return path, env


def test_the_page_shows_one_file_and_one_config():
    assert len(_blocks("python")) == 1 and len(_blocks("yaml")) == 1
    config = yaml.safe_load(_blocks("yaml")[0])
    assert config["protocol"]["reps"] == 2 and config["datasets"] == ["Friedman1"]
    assert config["bases"][0]["kind"] == "my_ensembles:SubsampledForest"


def test_the_pages_ensemble_fits_on_subsamples(tmp_path, monkeypatch, small_data):
    _write_page_files(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    from afr_cli.ensembles import get_ensemble

    ensemble = get_ensemble("my_ensembles:SubsampledForest")
    Xtr, ytr, Xte, _ = small_data
    fitted = ensemble.fit(Xtr, ytr, 3, **ensemble.check_params({"n_estimators": 5, "sample_fraction": 0.3}, "b"))
    assert fitted.model.max_samples == 0.3 and fitted.n_trees == 5
    np.testing.assert_allclose(fitted.predict(Xte), sum(t.predict(Xte) for t in fitted.trees) / 5, rtol=1e-12)


@pytest.mark.slow
def test_the_pages_ensemble_runs_as_the_page_says(tmp_path):
    config, env = _write_page_files(tmp_path)
    out = tmp_path / "results" / "subsampled"
    proc = run_afr("run", str(config), "--out", str(out), "-q", env=env)
    assert proc.returncode == 0, proc.stderr
    rows = load_results(out)
    assert set(rows.base) == {"SUBSAMPLED-RF@50"}
    assert sorted(rows.model.unique()) == ["eps-abrf", "forest"] and sorted(rows.rep.unique()) == [0, 1]
    assert len(rows) == 4 and rows.r2.notna().all() and (rows.r2 > 0).all()

    misspelt, env = _write_page_files(tmp_path / "misspelt", sample_fracton=0.5)
    assert_one_line_error(
        run_afr("validate", str(misspelt), env=env),
        "bases[0].sample_fracton",
        "unknown key",
        "allowed for kind subsampled-rf",
    )
    too_big, env = _write_page_files(tmp_path / "too_big", sample_fraction=1.5)
    assert_one_line_error(run_afr("validate", str(too_big), env=env), "bases[0].sample_fraction", "in (0, 1]")
