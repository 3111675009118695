"""Every test of `afr table --compare` memoized in the export cache
(afr_cli/tables/compare_memo.py): a hit prints what a miss prints, byte for byte, in every format;
a changed input is computed again, never served stale; bad input raises as before and keeps
nothing; the keys tell apart what must be told apart; and a hit imports no scipy module."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from afr_cli.analysis.bayesian import correlated_ttest, signed_rank_test
from afr_cli.analysis.stats import paired_ttest
from afr_cli.store import cache as export_cache
from afr_cli.tables import (
    compare_evidence,
    compare_memo,
    compare_models,
    render_comparison_lead,
    render_model_comparison,
)
from afr_cli.tables.compare_all import render_all
from tests.test_compare_evidence import _frame

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(export_cache.CACHE_ENV, str(folder))
    monkeypatch.setattr(compare_evidence, "COMPARE_SAMPLES", 200)
    monkeypatch.setattr(compare_evidence, "COMPARE_BURN_IN", 50)
    return folder


def _printed(frame: pd.DataFrame) -> str:
    """Everything --compare prints for this frame: md (answer first), csv, json, --metric all."""
    out = []
    for fmt in ("md", "csv", "json"):
        comparison = compare_models(frame, "a", "b", "mae")
        out.append(
            (render_comparison_lead(comparison) if fmt == "md" else "") + render_model_comparison(comparison, fmt)
        )
    out.append(render_all([compare_models(frame, "a", "b", m) for m in ("r2", "mae", "rmse")], "json"))
    return "\n".join(out)


def _entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*/*/*") if p.is_file())


def test_a_hit_prints_what_a_miss_prints_and_adds_nothing(cache_dir):
    frame = _frame(0.004, bases=("RF", "ERT"))
    miss = _printed(frame)
    kept = _entries(cache_dir)
    assert {p.parent.parent.name for p in kept} == {compare_memo.TESTS_KIND, compare_memo.HIERARCHICAL_KIND}
    assert _printed(frame) == miss
    assert _entries(cache_dir) == kept  # every test was read back: nothing new computed or kept
    with pytest.MonkeyPatch.context() as m:  # and it is what the tests compute with no cache at all
        m.setenv(export_cache.CACHE_ENV, "off")
        assert _printed(frame) == miss


def test_a_changed_input_is_computed_again(cache_dir):
    frame = _frame(0.004)
    before = _printed(frame)
    changed = frame.copy()
    row = changed.index[(changed["model"] == "b") & (changed["dataset"] == "Wine") & (changed["rep"] == 0)][0]
    changed.loc[row, ["r2", "mae", "rmse"]] += [1e-3, -1e-3, -1e-3]  # one repetition of one dataset
    after = _printed(changed)
    assert after != before
    with pytest.MonkeyPatch.context() as m:
        m.setenv(export_cache.CACHE_ENV, "off")
        assert _printed(changed) == after  # what a fresh computation prints, not a stale entry


def test_bad_input_raises_as_before_and_keeps_nothing(cache_dir):
    with pytest.raises(ValueError, match="rope"):
        compare_memo.memoized(signed_rank_test, np.array([0.1, 0.2]), -1.0)
    with pytest.raises(ValueError, match="rho"):
        compare_memo.memoized(correlated_ttest, np.array([0.1, 0.2]), 1.5)
    assert not _entries(cache_dir)


def test_a_result_read_back_equals_the_computed_one(cache_dir):
    a, b = np.array([0.5, 0.61, 0.42, 0.7]), np.array([0.52, 0.6, 0.47, 0.71])
    fresh = paired_ttest(a, b)
    assert compare_memo.memoized(paired_ttest, a, b) == fresh  # miss
    assert compare_memo.memoized(paired_ttest, a, b) == fresh  # hit
    assert len(_entries(cache_dir)) == 1


@pytest.mark.parametrize(
    "one, other",
    [
        (0.0, -0.0),  # signed zeros: a test may tell them apart
        (1, 1.0),  # an int and a float
        (np.array([1.0, 2.0]), np.array([1.0, 2.0], dtype=np.float32)),  # dtypes
        (np.array([1.0, 2.0]), np.array([[1.0, 2.0]])),  # shapes
        ([np.array([1.0]), np.array([2.0, 3.0])], [np.array([1.0, 2.0]), np.array([3.0])]),  # where rows split
        ("ab", ["a", "b"]),
        (None, False),
        (math.nan, math.inf),
    ],
)
def test_keys_tell_apart_what_differs(one, other):
    assert compare_memo.encoded(one) != compare_memo.encoded(other)
    assert compare_memo.encoded(one) == compare_memo.encoded(one)


def test_a_series_is_keyed_by_its_values():
    assert compare_memo.encoded(pd.Series([0.1, 0.2], index=[5, 9])) == compare_memo.encoded(np.array([0.1, 0.2]))


@pytest.mark.parametrize("value", [{"a": 1}, np.array(["x"], dtype=object), object()])
def test_what_cannot_be_keyed_safely_is_refused(value):
    with pytest.raises(TypeError):
        compare_memo.encoded(value)


PROBE = """
import sys
from afr_cli.tables import compare_evidence, compare_models, render_comparison_lead, render_model_comparison
from tests.test_compare_evidence import _frame
compare_evidence.COMPARE_SAMPLES, compare_evidence.COMPARE_BURN_IN = 200, 50
comparison = compare_models(_frame(0.004), "a", "b")
print(render_comparison_lead(comparison) + render_model_comparison(comparison, "md"))
print(sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy.")))
"""


@pytest.mark.slow
def test_a_hit_imports_no_scipy_module(cache_dir):
    """In a fresh interpreter (a test process has imported scipy already): the first comparison
    computes (scipy.special), the second reads every test back and loads only scipy's package."""
    env = {**os.environ, export_cache.CACHE_ENV: str(cache_dir)}

    def run() -> tuple[str, list[str]]:
        out = subprocess.run(
            [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300, check=True
        ).stdout
        text, _, modules = out.rstrip("\n").rpartition("\n")
        return text, json.loads(modules.replace("'", '"'))

    cold_text, cold = run()
    warm_text, warm = run()
    assert "scipy.special" in cold
    assert warm_text == cold_text
    assert not {"scipy.special", "scipy.optimize", "scipy.stats", "scipy.linalg", "scipy.sparse"} & set(warm)
