"""The sequential decision rule's benchmark: its replay on a pair and its wrong-decision reading."""

from __future__ import annotations

import numpy as np
import pandas as pd

from afr_cli.benchmarks.sequential import _wrong, replay_pair
from afr_cli.publish.bench_blocks import sequential_block


def _pair(shift: float, reps: int = 100) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for dataset in ("Wine", "Diabetes", "Boston", "Yacht", "Airfoil"):
        for rep in range(reps):
            common = rng.normal(0, 0.02)
            for model, delta in (("a", 0.0), ("b", shift + rng.normal(0, 0.005))):
                rows.append(
                    {
                        "dataset": dataset,
                        "base": "RF",
                        "model": model,
                        "rep": rep,
                        "r2": 0.6 + common + delta,
                        "mae": 0.4,
                        "rmse": 0.5,
                        "params": {},
                        "selection": "inner-cv",
                        "train_fraction": 0.8,
                    }
                )
    return pd.DataFrame(rows)


def test_a_clear_winner_stops_at_the_first_batch_with_the_final_verdict():
    result = replay_pair(_pair(0.05), "a", "b", "r2")
    assert result["stop_at"] == 10 and result["early"] == {"RF": "b_better"} == result["final"]
    assert not result["differs"]


def test_what_counts_as_wrong():
    assert _wrong("b_better", 0.0) and not _wrong("equivalent", 0.5) and not _wrong("undecided", 0.0)
    assert not _wrong("b_better", 1.0) and not _wrong("equivalent", 1.0) and _wrong("a_better", 1.0)
    assert _wrong("equivalent", 2.0) and not _wrong("b_better", 2.0)


def test_the_block_renders_a_record():
    record = {
        "result": {
            "batch": 10,
            "max_reps": 100,
            "threshold": 0.95,
            "replay": {
                "pairs": [
                    {
                        "pair": "b (RF) vs a (RF), r2",
                        "claims": ["x:c1"],
                        "stop_at": 10,
                        "early": {"RF": "b_better"},
                        "final": {"RF": "b_better"},
                        "differs": False,
                    }
                ],
                "n_pairs": 1,
                "stopped_early": 1,
                "differs": 0,
                "units_saved_share": 0.9,
            },
            "synthetic": {
                "datasets": 11,
                "rho": 0.2,
                "spread": 0.005,
                "noise": 0.03,
                "rope": 0.01,
                "seed": 0,
                "shifts": [
                    {
                        "true_difference": 0.0,
                        "in_ropes": 0.0,
                        "trials": 2,
                        "verdicts": {"equivalent": 2},
                        "wrong_rate": 0.0,
                        "undecided_at_max": 0.0,
                        "mean_reps": 10.0,
                    }
                ],
            },
        }
    }
    text = sequential_block([record])
    assert "saves 90 % of the units" in text and "| b (RF) vs a (RF), r2 | c1 | 10 |" in text
    assert "| 0 (0 × ROPE) | 2 | 0 % |" in text
