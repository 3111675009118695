"""The preprocessing study (`afr fidelity preprocessing`): forests under each candidate, the
as-printed count against published cells, the verdict rule, and bad study files."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import assert_one_line_error, run_afr
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from afr_cli.errors import AfrInputError
from afr_cli.studies.preprocessing import (
    Candidate,
    _candidate_unit,
    decide,
    distinct_cells,
    load_study,
    match_cells,
)

FORESTS = """\
name: tiny_forests
seed: 2023
data_seed: 1
synthetic_noise: none
protocol: {reps: 2, seeding: rep-index, test_fraction: 0.2}
preprocess: {scale: none}
datasets: [Diabetes]
bases:
  - {id: RF, kind: rf, n_estimators: 20, min_samples_leaf: 10, max_features: 1.0}
models:
  - {id: forest, family: forest}
"""

STUDY = """\
experiment: forests.yaml
reps: 2
candidates:
  - {name: none, scale: none}
  - {name: standard, scale: standard, fit_on: train}
  - {name: standard-whole, scale: standard, fit_on: whole}
cells:
  - {paper: satrf, tables: ["2"], models: [rf]}
"""


@pytest.fixture
def study_file(tmp_path: Path) -> Path:
    (tmp_path / "forests.yaml").write_text(FORESTS)
    path = tmp_path / "study.yaml"
    path.write_text(STUDY)
    return path


def _sklearn_rf(Xtr, ytr, Xte, yte, rep):
    forest = RandomForestRegressor(n_estimators=20, min_samples_leaf=10, max_features=1.0, random_state=rep)
    pred = forest.fit(Xtr, ytr).predict(Xte)
    return 1 - ((yte - pred) ** 2).sum() / ((yte - yte.mean()) ** 2).sum()


def test_candidates_fit_what_they_say(study_file):
    """Raw, train-part and whole-dataset scaling each equal a plain scikit-learn forest on the
    papers' split (train_test_split(random_state=rep)), fitted on X so transformed."""
    study = load_study(study_file)
    X, y = load_diabetes(return_X_y=True)
    base = study.experiment.bases[0]
    for cand in study.candidates:
        rows = _candidate_unit(study.experiment, cand, "Diabetes", base, 2, X, y)
        for rep, row in enumerate(rows):
            Xs = StandardScaler().fit_transform(X) if cand.fit_on == "whole" else X
            Xtr, Xte, ytr, yte = train_test_split(Xs, y, test_size=0.2, random_state=rep)
            if cand.scale != "none" and cand.fit_on == "train":
                scaler = StandardScaler().fit(Xtr)
                Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
            assert row["r2"] == pytest.approx(_sklearn_rf(Xtr, ytr, Xte, yte, rep), abs=1e-12), cand
    raw = _candidate_unit(study.experiment, Candidate("none", "none"), "Diabetes", base, 1, X, y)
    scaled = _candidate_unit(study.experiment, Candidate("s", "standard"), "Diabetes", base, 1, X, y)
    assert raw[0]["r2"] != scaled[0]["r2"]  # scaling moves the trees at the float level


def _cells(printed: list[str]) -> pd.DataFrame:
    n = len(printed)
    return pd.DataFrame(
        {
            "paper": "p",
            "table": "1",
            "base": "RF",
            "our_base": "RF",
            "dataset": [f"D{i}" for i in range(n)],
            "model": "rf",
            "metric": "r2",
            "value_str": printed,
            "value": [float(v) for v in printed],
        }
    )


def _scores(values: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"candidate": c, "base": "RF", "dataset": f"D{i}", "rep": 0, "r2": v, "mae": 1.0}
            for c, vals in values.items()
            for i, v in enumerate(vals)
        ]
    )


def test_as_printed_rounding_and_duplicates():
    cells = pd.concat([_cells(["0.845", "0.51"]), _cells(["0.845"]).assign(table="2")], ignore_index=True)
    scores = _scores({"a": [0.8454376, 0.505], "b": [0.8456684, 0.5149]})
    m = match_cells(scores, cells)
    got = {(r.candidate, r.dataset, r.table): r.matched for r in m.itertuples()}
    assert got[("a", "D0", "1")] and got[("a", "D0", "2")] and got[("a", "D1", "1")]  # 0.505 rounds half up
    assert not got[("b", "D0", "1")] and not got[("b", "D0", "2")] and got[("b", "D1", "1")]
    assert len(distinct_cells(m)) == 4  # the repeated 0.845 counts once per candidate


def test_verdict_needs_a_significant_sign_test():
    printed = [f"0.{i}00" for i in range(1, 8)]
    exact, off = [float(v) for v in printed], [float(v) + 0.002 for v in printed]
    clear = decide(match_cells(_scores({"a": exact, "b": off}), _cells(printed)), ["a", "b"])
    assert clear.winner == "a" and "clear winner: a" in clear.text  # 7-0: p = 0.016
    weak = exact[:3] + off[3:]
    close = decide(match_cells(_scores({"a": weak, "b": off}), _cells(printed)), ["a", "b"])
    assert close.winner is None and close.leader == "a"  # 3-0: p = 0.25
    assert "no clear winner" in close.text and "every printed value" in close.text


def test_cli_writes_the_report(study_file, tmp_path):
    proc = run_afr(
        "fidelity", "preprocessing", "--study", str(study_file), "--out", str(tmp_path / "out"), "--jobs", "1"
    )
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "out" / "preprocessing.md").read_text()
    assert "## Verdict" in md and "| satrf:2 r2" in md
    cells = pd.read_csv(tmp_path / "out" / "preprocessing.csv")
    assert set(cells.candidate) == {"none", "standard", "standard-whole"}
    assert len(cells) == 3 * 2  # Diabetes R2 and MAE of SAT-RF Table 2, per candidate
    scores = pd.read_csv(tmp_path / "out" / "preprocessing_scores.csv")
    assert len(scores) == 3 * 2 and np.isfinite(scores.r2).all()


@pytest.mark.parametrize(
    "edit, needle",
    [
        (("scale: none}", "scale: robust}"), "candidates[0].scale"),
        (("fit_on: whole", "fit_on: test"), "candidates[2].fit_on"),
        (('tables: ["2"]', 'tables: ["99"]'), "cells[0].tables"),
        (("reps: 2", "reps: 2\nseeds: 3"), "unknown key 'seeds'"),
        (("models: [rf]", "models: [ert]"), "cells: no selected cell"),
    ],
)
def test_bad_study_is_one_line_error(study_file, edit, needle):
    study_file.write_text(STUDY.replace(*edit))
    with pytest.raises(AfrInputError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        load_study(study_file)


def test_bad_study_on_the_command_line(study_file):
    study_file.write_text(STUDY.replace("scale: none}", "scale: robust}"))
    proc = run_afr("fidelity", "preprocessing", "--study", str(study_file))
    assert_one_line_error(proc, str(study_file), "candidates[0].scale", "allowed: standard, minmax, none")


@pytest.mark.parametrize(
    "content, needle",
    [
        (b"experiment: forests.yaml\nreps: \xff\n", "not a UTF-8 text file (byte 31"),
        (b"experiment: [forests.yaml\n", "malformed YAML (line 2, column 1)"),
    ],
)
def test_unreadable_study_file_is_one_line_error(study_file, content, needle):
    """The study file is read as a config is: bad bytes or YAML name the file and where."""
    study_file.write_bytes(content)
    with pytest.raises(AfrInputError, match=re.escape(f"{study_file}: {needle}")):
        load_study(study_file)
