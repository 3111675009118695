"""protocol.fold_assignment: another assignment of a repetition's training rows to the inner folds,
with the split and the forests unchanged; 0 (the default) is every stored number's."""

from __future__ import annotations

import pytest

from afr_cli.config.experiment import load_experiment
from afr_cli.engine.protocol import UnitSeeds
from afr_cli.errors import AfrInputError

CONFIG = """name: f
datasets: [Friedman1]
bases: [{kind: rf, n_estimators: 3}]
protocol: {reps: 2, seeding: SEEDING, FOLDS}
models: [{id: rf, family: forest}]
"""


def _experiment(tmp_path, seeding: str, folds: str):
    path = tmp_path / "f.yaml"
    path.write_text(CONFIG.replace("SEEDING", seeding).replace("FOLDS", folds))
    return load_experiment(path)


@pytest.mark.parametrize("seeding", ["rep-index", "derived"])
def test_another_assignment_moves_only_the_folds(tmp_path, seeding):
    plain = _experiment(tmp_path, seeding, "inner_folds: 3")
    assert plain.protocol.fold_assignment == 0
    seeds = {
        k: UnitSeeds(_experiment(tmp_path, seeding, f"fold_assignment: {k}"), "Friedman1", plain.bases[0], 1)
        for k in (0, 1, 2)
    }
    base = UnitSeeds(plain, "Friedman1", plain.bases[0], 1)
    assert seeds[0].folds == base.folds and (seeding != "rep-index" or base.folds == 1)
    assert len({s.folds for s in seeds.values()}) == 3
    for s in seeds.values():  # the split and the forests stay
        assert s.split == base.split and s.forest(0) == base.forest(0)
        assert (s.split_rows(50)[0] == base.split_rows(50)[0]).all()
    # an assignment is part of the config's hash: a store of one never resumes into another
    assert plain.unit_hash() != _experiment(tmp_path, seeding, "fold_assignment: 1").unit_hash()


def test_a_negative_assignment_is_refused(tmp_path):
    with pytest.raises(AfrInputError, match=r"protocol.fold_assignment: -1 is not allowed"):
        _experiment(tmp_path, "rep-index", "fold_assignment: -1")
