"""The hierarchical test of `afr table --compare`, memoized in the export cache
(afr_cli/tables/compare_memo.py): a hit prints byte for byte what a miss prints, every input and
setting is part of the key, a damaged or unreadable entry is recomputed without a word, and a
cache that cannot be written leaves nothing behind."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from afr_cli.analysis import hierarchical
from afr_cli.analysis.bayesian import RopeProbabilities
from afr_cli.analysis.hierarchical import HierarchicalResult, hierarchical_test, result_from_json, result_to_json
from afr_cli.store import cache as export_cache
from afr_cli.tables import (
    compare_evidence,
    compare_memo,
    compare_models,
    render_comparison_lead,
    render_model_comparison,
)
from tests.test_compare_evidence import _frame

SMALL = (200, 50)  # draws, burn-in: a short chain, the memo does not care how long


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch) -> Path:
    """Every test its own cache folder, and a short chain for the comparisons."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(export_cache.CACHE_ENV, str(folder))
    monkeypatch.setattr(compare_evidence, "COMPARE_SAMPLES", SMALL[0])
    monkeypatch.setattr(compare_evidence, "COMPARE_BURN_IN", SMALL[1])
    return folder


@pytest.fixture
def sampler_calls(monkeypatch) -> list[int]:
    """Counts the Gibbs sampler's runs (one entry per run)."""
    calls: list[int] = []
    gibbs = hierarchical._gibbs

    def counted(*args, **kwargs):
        calls.append(1)
        return gibbs(*args, **kwargs)

    monkeypatch.setattr(hierarchical, "_gibbs", counted)
    return calls


def _printed(metric: str = "r2") -> str:
    """Everything `afr table --compare a b` prints in md and json, from a fresh comparison."""
    frame = _frame(0.004, bases=("RF", "ERT"))
    comparison = compare_models(frame, "a", "b", metric)
    text = render_comparison_lead(comparison) + render_model_comparison(comparison, "md")
    return text + render_model_comparison(compare_models(frame, "a", "b", metric), "json")


def _entries(folder: Path) -> list[Path]:
    return sorted(p for p in (folder / compare_memo.HIERARCHICAL_KIND).glob("*/*") if p.is_file())


@pytest.mark.parametrize("metric", ["r2", "mae"])
def test_a_hit_prints_byte_for_byte_what_a_miss_prints(cache_dir, sampler_calls, metric):
    miss = _printed(metric)
    assert len(sampler_calls) == 2 and len(_entries(cache_dir)) == 2  # one per base, kept
    hit = _printed(metric)
    assert len(sampler_calls) == 2  # the second comparison ran no sampler ...
    assert hit == miss  # ... and printed the same bytes (md and every float of the json)
    payload = json.loads(export_cache.read_entry(compare_memo.HIERARCHICAL_KIND, _entries(cache_dir)[0].name))
    assert payload["samples"] == SMALL[0] and len(payload["probabilities"]) == 3  # a small JSON


def test_the_summary_reads_back_bit_for_bit():
    result = hierarchical_test(
        [[0.1, 0.12, 0.09], [0.02, -0.01, 0.03, 0.0], [0.05, 0.07]], [0.2, 0.25, 0.2], 0.01, *SMALL
    )
    back = result_from_json(json.loads(json.dumps(result_to_json(result))))
    assert back == result
    assert [v.hex() for v in back.dataset_means] == [v.hex() for v in result.dataset_means]


@pytest.mark.parametrize(
    "broken",
    [
        lambda d: {"n_datasets": d["n_datasets"]},  # fields missing
        lambda d: {**d, "extra": 1},  # a field too many
        lambda d: {**d, "probabilities": [0.5, 0.5]},  # two probabilities
        lambda d: {**d, "n_datasets": 2.5},  # not an integer
        lambda d: {**d, "seed": True},  # not a number
        lambda d: {**d, "mean": "0.1"},  # not a number
        lambda d: {**d, "dataset_means": [0.0]},  # fewer means than datasets
        lambda d: [d],  # not an object
    ],
)
def test_a_summary_that_is_not_one_is_refused(broken):
    result = hierarchical_test([[0.1, 0.12, 0.09], [0.02, -0.01, 0.03]], 0.2, 0.01, *SMALL)
    assert result_from_json(result_to_json(result)) == result
    with pytest.raises(ValueError):
        result_from_json(broken(result_to_json(result)))


BASE_ARGS = ([np.array([0.1, 0.12, 0.09]), np.array([0.02, -0.01, 0.03])], [0.2, 0.25], 0.01, 200, 50, 0, 0.95)


def _key(*args) -> str:
    return compare_memo.memo_key(hierarchical_test, *args)


@pytest.mark.parametrize(
    "position, other",
    [
        (0, [np.array([0.1, 0.12, 0.09]), np.array([0.02, -0.01, math.nextafter(0.03, 1.0)])]),  # one bit
        (0, [np.array([0.1, 0.12]), np.array([0.09, 0.02, -0.01, 0.03])]),  # the same values, cut elsewhere
        (0, [np.array([0.1, 0.12, 0.09], dtype=np.float32), np.array([0.02, -0.01, 0.03])]),  # another dtype
        (1, [0.2, 0.2]),  # rho
        (1, 0.2),  # one rho for all
        (2, 0.02),  # rope
        (3, 400),  # draws
        (4, 100),  # burn-in
        (5, 1),  # seed
        (6, 0.9),  # credible level
    ],
)
def test_every_input_and_setting_is_part_of_the_key(position, other):
    args = list(BASE_ARGS)
    args[position] = other
    assert _key(*args) != _key(*BASE_ARGS)
    assert _key(*BASE_ARGS) == _key(*[list(a) if isinstance(a, list) else a for a in BASE_ARGS])


def test_defaults_are_keyed_as_if_given():
    assert _key(*BASE_ARGS[:-1]) == _key(*BASE_ARGS)  # level 0.95 is the default
    assert compare_memo.memo_key(hierarchical_test, *BASE_ARGS[:3]) == _key(
        *BASE_ARGS[:3], hierarchical.HIERARCHICAL_SAMPLES, hierarchical.HIERARCHICAL_BURN_IN, 0, 0.95
    )


def test_the_code_and_the_library_versions_are_part_of_the_key(tmp_path):
    before = _key(*BASE_ARGS)
    copy = tmp_path / "analysis"
    copy.mkdir()
    for path in compare_memo.ANALYSIS.glob("*.py"):
        (copy / path.name).write_bytes(path.read_bytes())
    try:
        with pytest.MonkeyPatch.context() as m:
            m.setattr(compare_memo, "ANALYSIS", copy)
            compare_memo.code_version.cache_clear()
            assert _key(*BASE_ARGS) == before  # the same sources: the same key
            (copy / "hierarchical.py").write_bytes((copy / "hierarchical.py").read_bytes() + b"# changed\n")
            compare_memo.code_version.cache_clear()
            assert _key(*BASE_ARGS) != before  # the sampler's source changed: another key
        with pytest.MonkeyPatch.context() as m:
            m.setattr(compare_memo.np, "__version__", "0.0")
            compare_memo.code_version.cache_clear()
            assert _key(*BASE_ARGS) != before  # another numpy: another key
    finally:
        compare_memo.code_version.cache_clear()
    assert _key(*BASE_ARGS) == before


def _damage_payload(path: Path) -> None:
    export_cache.write_entry(
        compare_memo.HIERARCHICAL_KIND, path.name, b'{"samples": 200}'
    )  # framed well, not a result


def _damage_bytes(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-7] + b"garbage")  # its digest no longer matches


def _unreadable(path: Path) -> None:
    path.unlink()
    path.mkdir()  # reading it fails (a folder where the entry was)


@pytest.mark.parametrize("damage", [_damage_payload, _damage_bytes, _unreadable])
def test_a_damaged_or_unreadable_entry_is_recomputed_silently(cache_dir, sampler_calls, capsys, damage):
    miss = _printed()
    for entry in _entries(cache_dir):
        damage(entry)
    capsys.readouterr()
    assert _printed() == miss
    # both bases ran again; an entry that cannot be replaced is missed by the json's comparison too
    assert len(sampler_calls) == (6 if damage is _unreadable else 4)
    assert capsys.readouterr() == ("", "")  # not a word
    if damage is not _unreadable:  # the recomputed summary is stored again, whole
        assert all(
            result_from_json(json.loads(export_cache.read_entry(compare_memo.HIERARCHICAL_KIND, e.name))).samples
            == SMALL[0]
            for e in _entries(cache_dir)
        )


def test_nothing_is_written_when_the_cache_cannot_be_written(tmp_path, monkeypatch, sampler_calls):
    blocker = tmp_path / "blocker"
    blocker.write_bytes(b"a file, not a folder")
    monkeypatch.setenv(export_cache.CACHE_ENV, str(blocker / "cache"))  # under a file: no folder can be made
    before = sorted(tmp_path.rglob("*"))
    first, second = _printed(), _printed()
    assert first == second and len(sampler_calls) == 8  # the answer, computed each time (2 × md and json)
    assert sorted(tmp_path.rglob("*")) == before and blocker.read_bytes() == b"a file, not a folder"


def test_bad_input_is_the_same_value_error_and_nothing_is_kept(cache_dir):
    with pytest.raises(ValueError, match="at least 2"):
        compare_memo.memo_hierarchical_test([[0.1], [0.2, 0.3]], 0.2, 0.01, *SMALL, 0)
    assert not cache_dir.exists() or not _entries(cache_dir)


def test_a_memoized_result_is_the_samplers(cache_dir):
    args = ([np.array([0.1, 0.12, 0.09]), np.array([0.02, -0.01, 0.03, 0.01])], [0.2, 0.2], 0.01, *SMALL, 0)
    fresh = hierarchical_test(*args)
    assert compare_memo.memo_hierarchical_test(*args) == fresh  # miss
    assert compare_memo.memo_hierarchical_test(*args) == fresh  # hit
    assert isinstance(fresh, HierarchicalResult) and isinstance(fresh.probabilities, RopeProbabilities)
