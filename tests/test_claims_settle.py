"""The claims ledger's "settles at" column: a claim judged again on the first repetitions."""

from __future__ import annotations

import numpy as np
import pandas as pd

from afr_cli.publish.claims.judge import DOES_NOT, REPRODUCES, judge
from afr_cli.publish.claims.ledger import ledger_table
from afr_cli.publish.claims.settle import DOES_NOT_SETTLE, settle, settle_sentence

CLAIM = {"id": "b-beats-a", "test": "figure_wins", "base": "RF", "a": "a", "b": "b", "store": "s", "at_least": "all"}


def _results(reps: int, flip_at: int) -> pd.DataFrame:
    """b better than a by 0.01 on every cell up to repetition ``flip_at``, worse by 0.02 after."""
    rng = np.random.default_rng(0)
    rows = []
    for noise in (0.0, 0.5, 1.0):
        for rep in range(reps):
            r2 = 0.6 + rng.normal(0, 0.001)
            gain = 0.01 if rep < flip_at else -0.02
            for model, value in (("a", r2), ("b", r2 + gain)):
                rows.append(
                    {
                        "dataset": "Boston",
                        "base": "RF",
                        "model": model,
                        "rep": rep,
                        "train_fraction": 0.5,
                        "noise_eta": noise,
                        "r2": value,
                    }
                )
    return pd.DataFrame(rows)


def test_a_verdict_that_turns_late_settles_where_it_turned():
    results = _results(60, flip_at=20)  # b's mean lead is gone from 30 repetitions on
    verdict = settle(judge("satrf", CLAIM, results, 10), results)
    assert verdict.verdict == DOES_NOT and verdict.settles == "30"
    sentence = settle_sentence([verdict], 10)
    assert "1 need more than the paper's 10: b-beats-a (at 30)" in sentence
    assert "| settles at 30 |" in ledger_table([verdict], "repetitions 0-9")


def test_a_steady_verdict_settles_at_the_first_count_and_a_last_turn_does_not_settle():
    steady = _results(30, flip_at=30)
    verdict = settle(judge("satrf", CLAIM, steady, 10), steady)
    assert verdict.verdict == REPRODUCES and verdict.settles == "5"
    assert "1 of 1 verdicts settle at or below the paper's 10 repetitions (b-beats-a)" in settle_sentence([verdict], 10)
    late = _results(100, flip_at=50)  # the lead holds on 50 and is lost on 100
    turned = settle(judge("satrf", CLAIM, late, 10), late)
    assert turned.verdict == DOES_NOT and turned.settles == DOES_NOT_SETTLE


def test_the_papers_claims_block_says_which_verdicts_need_more_repetitions():
    from afr_cli.catalogue.knowledge import paper
    from afr_cli.publish.claims.ledger import summary_block

    results = _results(60, flip_at=20)
    verdict = settle(judge("satrf", CLAIM, results, 10), results)
    block = summary_block(paper("satrf"), [verdict])
    assert block.splitlines()[-1].startswith("Repetitions each verdict needs")
    assert "need more than the paper's 10: b-beats-a (at 30)" in block
