"""A store declared a variant of another experiment (``variant_of``: one choice changed, such as a
model's reading or the inner-fold assignment) is left out of ``afr table --compare`` without
--results where the other stores hold both models, and the key changes no unit."""

from __future__ import annotations

from pathlib import Path

import yaml

from afr_cli.config.experiment import load_experiment
from afr_cli.store.discover import is_variant, stores_for_compare

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


def test_the_committed_variants_are_declared_and_left_out_of_a_default_comparison():
    assert is_variant(RESULTS / "larf_folds") and is_variant(RESULTS / "larf_code_reading")
    assert not is_variant(RESULTS / "larf_rf")
    # larf_folds, larf_folds_2 and larf_code_reading hold em-w-arf on RF too: the principal store answers
    assert stores_for_compare("rf", "em-w-arf", RESULTS) == [RESULTS / "larf_rf"]


def test_variant_of_is_described_not_hashed(tmp_path):
    config = yaml.safe_load((ROOT / "configs" / "larf_folds.yaml").read_text())
    assert config["variant_of"] == "larf_rf"
    plain = dict(config)
    del plain["variant_of"]
    path = tmp_path / "plain.yaml"
    path.write_text(yaml.safe_dump(plain, sort_keys=False))
    assert load_experiment(path).unit_hash() == load_experiment(ROOT / "configs" / "larf_folds.yaml").unit_hash()
