"""No solve memo where a family never repeats a problem: LARF's and dm-soft's problems are
solved without being keyed or kept, with the same bytes as a keyed solve, and a unit of theirs
gives the same rows either way. The families that do repeat problems keep the memo."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from afr_cli.config.experiment import load_experiment
from afr_cli.engine.experiment_data import load_one
from afr_cli.engine.protocol import run_unit
from afr_cli.engine.shared_work import SharedWork
from afr_cli.models import FAMILIES
from afr_cli.models.dm_soft import DMSoftFamily
from afr_cli.models.larf import LARF_FAMILIES, LEAVE_SELF_OUT_FAMILIES, LARFFamily
from afr_cli.solvers.memo import SolveMemo
from afr_cli.solvers.problems import LinearAttentionProblem, simplex_constraints


def _problem(seed: int) -> LinearAttentionProblem:
    rng = np.random.default_rng(seed)
    return LinearAttentionProblem(rng.random(40), 0.1 * rng.random(40), rng.random((40, 6)), simplex_constraints(6))


def test_an_unremembered_problem_is_solved_with_the_kept_bytes_and_nothing_is_kept():
    kept, unkept = SolveMemo(), SolveMemo()
    first, _ = kept.solve(_problem(0))
    for _ in range(2):
        result, hit = unkept.solve(_problem(0), remember=False)
        assert not hit and result.theta.tobytes() == first.theta.tobytes()
        assert (result.solver, result.status, result.objective) == (first.solver, first.status, first.objective)
    assert unkept.solves == 2 and unkept.hits == 0
    assert not unkept._results and not unkept._grams  # no key taken, no Gram kept
    assert kept.solve(_problem(0))[1]  # remembered: the second is a hit


def test_larf_and_dm_soft_declare_that_they_never_repeat_a_problem_and_the_others_keep_the_memo():
    never = {*LARF_FAMILIES, *LEAVE_SELF_OUT_FAMILIES, "dm-soft"}
    assert all(not FAMILIES[name].repeats_problems for name in never)
    for name in ("eps-abrf", "sat-rf-y", "sat-rf-x", "sat-rf-yx", "sat-rf-y2", "agboost", "robust-rf", "forest"):
        assert FAMILIES[name].repeats_problems, name


CONFIGS = {
    "larf": {
        "bases": [{"kind": "rf", "n_estimators": 8, "min_samples_leaf": 5}],
        "models": [
            {"id": "em-w-larf", "family": "em-w-larf", "grid": {"tau0": [0.1, 10], "M": [1, 3]}},
            {"id": "em-arf", "family": "em-arf", "grid": {"M": [1, 2]}},
        ],
    },
    "dm": {
        "bases": [{"kind": "rf", "n_estimators": 6, "min_samples_leaf": 8}],
        "models": [{"id": "dm-soft", "family": "dm-soft", "grid": {"eps": [0.0, 0.5, 1.0], "tau": [0.01, 1]}}],
    },
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_a_unit_gives_the_same_rows_unkeyed_and_keyed_finds_no_repeat(tmp_path: Path, monkeypatch, name):
    config = {
        "name": f"memo-{name}",
        "seed": 3,
        "protocol": {"reps": 1, "inner_folds": 2, "seeding": "rep-index"},
        "datasets": ["Friedman1"],
        **CONFIGS[name],
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config))
    exp = load_experiment(path, [], tmp_path / "out")
    X, y = load_one(exp, "Friedman1")
    unkeyed = SharedWork()
    plain = run_unit(exp, "Friedman1", exp.bases[0], 0, X, y, shared=unkeyed)
    assert unkeyed.memo.solves > 0 and not unkeyed.memo._results  # solved, never keyed
    family = LARFFamily if name == "larf" else DMSoftFamily
    monkeypatch.setattr(family, "repeats_problems", True)
    keyed = SharedWork()
    again = run_unit(exp, "Friedman1", exp.bases[0], 0, X, y, shared=keyed)
    assert keyed.memo.hits == 0 and len(keyed.memo._results) == keyed.memo.solves == unkeyed.memo.solves
    untimed = [[{k: v for k, v in r.items() if k != "seconds"} for r in u.results] for u in (plain, again)]
    assert repr(untimed[0]) == repr(untimed[1])
    logs = [[{**g, "solves": [e[:4] + e[5:] for e in g["solves"]]} for g in u.grid] for u in (plain, again)]
    assert repr(logs[0]) == repr(logs[1])
