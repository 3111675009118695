"""The fast tree path gives scikit-learn's own bytes: the trees, apply, predict, the fitted forest
object, the leaf statistics and the families' features, for rf, ert, dt, gbm-dt and gbm-ert; and a
unit run with ``--trees fast`` stores what ``--trees sklearn`` stores."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_one_line_error, run_afr
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

from afr_cli.engine.shared_work import TODAY, SharedWork, Speedups, speedups_for
from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.fast_trees import fit_forest
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.ensembles.random_forests import forest_prefix
from afr_cli.ensembles.tree_path import FAST, SKLEARN, current_tree_path, use_tree_path
from afr_cli.errors import AfrInputError
from afr_cli.models import get_family

FOREST_FAMILIES = ("eps-abrf", "sat-rf-y", "em-w-larf", "dm-soft", "robust-rf")
BOOSTED_FAMILIES = ("agboost", "dm-soft")


def _data(kind: str, n: int = 90, m: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training rows with ties (discrete features, duplicated rows), their targets and query rows.
    ``kind`` "one": a single feature; "f-order": the columns F-ordered, as a DataFrame's values are."""
    rng = np.random.default_rng(seed)
    m = 1 if kind == "one" else m
    X = rng.normal(size=(n, m))
    if m > 1:
        X[:, 1] = rng.integers(0, 3, n)  # a discrete feature: many equally good thresholds
    X[n // 2 : n // 2 + 15] = X[:15]  # duplicated rows
    y = X[:, 0] + np.round(rng.normal(size=n), 1)
    Xq = np.vstack([rng.normal(size=(20, m)), X[:5]])
    if kind == "f-order":
        X, Xq = np.asfortranarray(X), np.asfortranarray(Xq)
    return X, y, Xq


def _tree_bytes(fitted) -> list[bytes]:
    out = []
    for tree in fitted.trees:
        t = tree.tree_
        out += [
            a.tobytes()
            for a in (t.children_left, t.children_right, t.feature, t.threshold, t.value, t.n_node_samples, t.impurity)
        ]
        out.append(repr(sorted(_comparable(tree.get_params()).items())).encode())
    return out


def _comparable(params: dict) -> dict:
    """A tree's parameters with a RandomState given by its state: its repr names its address, which
    two equal generators do not share (a boosted ensemble hands its trees its own generator)."""
    out = dict(params)
    if isinstance(out.get("random_state"), np.random.RandomState):
        name, keys, pos, has_gauss, cached = out["random_state"].get_state(legacy=True)
        out["random_state"] = (name, keys.tobytes(), pos, has_gauss, cached)
    return out


def _flat(value) -> list:
    """Every array inside a family's features (arrays, sparse matrices, dataclasses, containers) as bytes."""
    if isinstance(value, np.ndarray):
        return [value.dtype.str, value.shape, value.tobytes()]
    if sp.issparse(value):
        value = value.tocsr()
        return _flat(value.data) + _flat(value.indices) + _flat(value.indptr)
    if dataclasses.is_dataclass(value):
        return [x for f in dataclasses.fields(value) for x in _flat(getattr(value, f.name))]
    if isinstance(value, dict):
        return [x for k in value for x in [k, *_flat(value[k])]]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    return [repr(value)]


def _everything(kind: str, params: dict, X, y, Xq, seed: int, path: str) -> dict:
    """What the engine reads of a fitted ensemble, fitted on ``path``."""
    with use_tree_path(path):
        fitted = get_ensemble(kind).fit(X, y, seed, **params)
    assert fitted.fast is (path == FAST)
    out = {"trees": _tree_bytes(fitted), "predict": fitted.predict(Xq).tobytes()}
    for name, rows in (("train", X), ("query", Xq)):
        leaves = fitted.apply(rows)
        out[f"apply {name}"] = (
            leaves.tobytes(),
            leaves.flags.f_contiguous,
            leaves.flags.c_contiguous,
            leaves.dtype.str,
        )
    if fitted.model is not None:  # the scikit-learn object itself, as the DM families and users call it
        out["model"] = (fitted.model.predict(Xq).tobytes(), np.asarray(fitted.model.apply(Xq)).tobytes())
        out["pickled model"] = pickle.loads(pickle.dumps(fitted.model)).predict(Xq).tobytes()
    stats = LeafStatistics(fitted, X, y)
    out["stats"] = [
        a.tobytes()
        for a in (
            stats.mean_x,
            stats.mean_y,
            stats.counts,
            stats.leaf_value,
            stats.train_leaves,
            stats.membership.indices,
        )
    ]
    families = BOOSTED_FAMILIES if fitted.structure == "boosted" else FOREST_FAMILIES
    for rows_name, rows in (("train", stats.rows()), ("query", stats.rows(Xq))):
        out[f"tensors {rows_name}"] = [
            rows.keys.tobytes(),
            rows.values.tobytes(),
            rows.key_sqdist.tobytes(),
            rows.values.flags.f_contiguous,
        ]
        for family_name in families:
            family = get_family(family_name)
            design = {d: family.param(d).default for d in family.design_names()}
            out[f"{family_name} {rows_name}"] = _flat(family.features(rows, design))
    return out


CASES = [
    ("rf", {"n_estimators": 6}),
    ("rf", {"n_estimators": 6, "max_features": "sqrt", "min_samples_leaf": 1}),
    ("rf", {"n_estimators": 6, "max_features": 2, "max_depth": 3}),
    ("rf", {"n_estimators": 6, "max_features": 0.5, "min_samples_leaf": 3}),
    ("ert", {"n_estimators": 6}),
    ("ert", {"n_estimators": 6, "max_features": "sqrt", "min_samples_leaf": 1}),
    ("ert", {"n_estimators": 6, "max_features": 3, "max_depth": 4}),
    ("ert", {"n_estimators": 6, "max_features": 0.3}),
    ("dt", {}),
    ("dt", {"max_features": "sqrt", "min_samples_leaf": 1}),
    ("dt", {"max_features": 0.5, "max_depth": 2}),
    ("gbm-dt", {"n_estimators": 8}),
    ("gbm-dt", {"n_estimators": 8, "max_features": "sqrt", "min_samples_leaf": 1, "learning_rate": 0.3}),
    ("gbm-dt", {"n_estimators": 8, "max_features": 2, "max_depth": None}),
    ("gbm-ert", {"n_estimators": 8}),
    ("gbm-ert", {"n_estimators": 8, "max_features": 0.5, "min_samples_leaf": 2, "max_depth": 2}),
]


@pytest.mark.parametrize(
    "kind, params", CASES, ids=lambda v: v if isinstance(v, str) else "-".join(map(str, v.values()))
)
@pytest.mark.parametrize("data", ["ties", "one", "f-order"])
def test_the_fast_path_gives_scikit_learns_bytes(kind, params, data):
    X, y, Xq = _data(data)
    for seed in (0, 7, 2024):
        fast = _everything(kind, params, X, y, Xq, seed, FAST)
        reference = _everything(kind, params, X, y, Xq, seed, SKLEARN)
        assert fast.keys() == reference.keys()
        for key in reference:
            assert fast[key] == reference[key], (kind, params, data, seed, key)


@pytest.mark.parametrize("forest_class", [RandomForestRegressor, ExtraTreesRegressor])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"bootstrap": True, "max_samples": 0.5},
        {"bootstrap": True, "max_samples": 40},
        {"bootstrap": False},
        {"max_features": 1.0, "min_samples_leaf": 5},
        {"max_features": None},
    ],
)
def test_the_forest_object_is_the_one_its_own_fit_builds(forest_class, options):
    """Every attribute scikit-learn's fit sets is set, to the same value; its own apply/predict agree."""
    X, y, Xq = _data("ties")
    ours = fit_forest(forest_class(n_estimators=5, random_state=3, **options), X, y)
    theirs = forest_class(n_estimators=5, random_state=3, **options).fit(X, y)
    assert sorted(vars(ours)) == sorted(vars(theirs))
    for name, value in vars(theirs).items():
        if name not in ("estimators_", "estimator_", "estimator"):
            assert repr(getattr(ours, name)) == repr(value), name
    assert [t.get_params() for t in ours.estimators_] == [t.get_params() for t in theirs.estimators_]
    for a, b in zip(ours.estimators_, theirs.estimators_):
        assert sorted(vars(a)) == sorted(vars(b))
        assert a.tree_.threshold.tobytes() == b.tree_.threshold.tobytes()
        assert a.tree_.value.tobytes() == b.tree_.value.tobytes()
    assert ours.apply(Xq).tobytes() == theirs.apply(Xq).tobytes()
    assert ours.predict(Xq).tobytes() == theirs.predict(Xq).tobytes()


def test_a_column_y_is_warned_about_and_fitted_as_scikit_learn_fits_it():
    from sklearn.exceptions import DataConversionWarning

    X, y, Xq = _data("ties")
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        ours = fit_forest(RandomForestRegressor(n_estimators=3, random_state=4), X, y[:, None])
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        theirs = RandomForestRegressor(n_estimators=3, random_state=4).fit(X, y[:, None])
    assert ours.predict(Xq).tobytes() == theirs.predict(Xq).tobytes()


def test_forests_the_fast_path_does_not_reproduce_are_left_to_scikit_learn():
    X, y, _ = _data("ties")
    warm = fit_forest(RandomForestRegressor(n_estimators=3, random_state=1, warm_start=True), X, y)
    assert len(warm.estimators_) == 3
    with pytest.raises(ValueError, match="max_sample"):  # scikit-learn's own error, not ours
        fit_forest(RandomForestRegressor(n_estimators=3, bootstrap=False, max_samples=0.5), X, y)
    with pytest.raises(ValueError):  # a bad parameter fails as scikit-learn's fit fails
        fit_forest(RandomForestRegressor(n_estimators=0), X, y)


def test_an_ensemble_of_ones_own_over_a_subclass_keeps_scikit_learns_own_calls():
    """The fast path calls scikit-learn's tree internals; a subclass may override what it bypasses."""
    from sklearn.tree import DecisionTreeRegressor

    from afr_cli.ensembles.gbm import BoostedTrees
    from afr_cli.ensembles.random_forests import RandomForest

    class Halved(RandomForestRegressor):
        def predict(self, X):
            return super().predict(X) / 2

    class HalvedTree(DecisionTreeRegressor):
        def predict(self, X, check_input=True):
            return super().predict(X, check_input) / 2

    class MyForest(RandomForest):
        sklearn_class = Halved

    class MyBoosted(BoostedTrees):
        learner = HalvedTree

    X, y, Xq = _data("ties")
    forest = MyForest().fit(X, y, 0, n_estimators=3)
    assert not forest.fast and np.array_equal(forest.predict(Xq), forest.model.predict(Xq))
    boosted = MyBoosted().fit(X, y, 0, n_estimators=3)
    assert not boosted.fast
    halved = np.full(len(Xq), boosted.intercept)
    for weight, tree in zip(boosted.tree_weights, boosted.trees):
        halved += weight * tree.predict(Xq)  # the subclass's own predict, halved
    assert np.array_equal(boosted.predict(Xq), halved)


def test_leaf_ids_keep_scikit_learns_layout_because_a_c_ordered_copy_moves_sums_over_trees():
    """A forest's leaf ids are F-ordered (scikit-learn's ``np.array(per_tree).T``), a GBM's
    C-ordered (``np.column_stack``); the fast path keeps both. Why it matters: B indexed by the
    ids keeps their layout, and numpy sums a C-ordered row pairwise but an F-ordered one in
    sequence, so the weighted sums the families take over trees move in the last bits."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 5))
    y = X[:, 0] + rng.normal(size=300)
    forest = get_ensemble("rf").fit(X, y, 0, n_estimators=64)
    boosted = get_ensemble("gbm-dt").fit(X, y, 0, n_estimators=12)
    assert forest.fast and forest.apply(X).flags.f_contiguous and not forest.apply(X).flags.c_contiguous
    assert boosted.fast and boosted.apply(X).flags.c_contiguous
    values = LeafStatistics(forest, X, y).rows().values
    assert values.flags.f_contiguous
    assert not np.array_equal(values.sum(axis=1), np.ascontiguousarray(values).sum(axis=1))


def test_a_prefix_of_a_fast_forest_is_fast_and_the_forest_fitted_apart():
    X, y, Xq = _data("ties")
    large = get_ensemble("ert").fit(X, y, 5, n_estimators=9)
    with use_tree_path(SKLEARN):
        alone = get_ensemble("ert").fit(X, y, 5, n_estimators=4)
    prefix = forest_prefix(large, 4)
    assert prefix.fast and not alone.fast
    assert prefix.apply(Xq).tobytes() == alone.apply(Xq).tobytes()
    assert prefix.predict(Xq).tobytes() == alone.predict(Xq).tobytes()
    assert prefix.model.predict(Xq).tobytes() == alone.model.predict(Xq).tobytes()


def test_the_estimators_predict_the_same_on_either_path():
    from afr_cli.models import EpsABRF

    X, y, Xq = _data("ties")
    with use_tree_path(SKLEARN):
        reference = EpsABRF(n_estimators=6, random_state=2).fit(X, y)
    fast = EpsABRF(n_estimators=6, random_state=2).fit(X, y)
    assert fast.forest_.fast and not reference.forest_.fast
    assert fast.predict(Xq).tobytes() == reference.predict(Xq).tobytes()


def test_the_path_is_chosen_by_name_and_travels_with_the_speedups():
    assert current_tree_path() == FAST  # the default
    with use_tree_path(SKLEARN):
        assert current_tree_path() == SKLEARN
    assert current_tree_path() == FAST
    with pytest.raises(AfrInputError, match="--trees: 'cython' is not allowed; allowed: fast, sklearn"):
        speedups_for("cython")
    assert speedups_for(SKLEARN) == Speedups(fast_trees=False) and speedups_for(FAST) == Speedups()
    assert not TODAY.fast_trees and TODAY.tree_path == SKLEARN
    X, y, _ = _data("ties")
    from afr_cli.config.experiment import Base

    base = Base("RF", "rf", {"n_estimators": 4})
    assert SharedWork(Speedups())._training(base, 0, X, y)[0].ensemble.fast is True
    assert SharedWork(TODAY).training(base, 0, X, y)[0].ensemble.fast is False
    assert SharedWork(Speedups()).training(base, 0, X, y)[0].ensemble.fast is True


@pytest.mark.parametrize(
    "command",
    [
        ["run", "configs/quickstart.yaml"],
        ["reproduce", "eps_abrf"],
        ["bench", "floor", "configs/quickstart.yaml", "--dataset", "Friedman1"],
    ],
)
def test_a_bad_tree_path_fails_at_once(command):
    assert_one_line_error(run_afr(*command, "--trees", "cython", timeout=60), "--trees", "fast, sklearn")


def test_a_unit_run_on_either_tree_path_stores_the_same_rows(tmp_path):
    import yaml

    from afr_cli.store import load_results

    cfg = {
        "name": "paths",
        "protocol": {"reps": 1},
        "datasets": ["Friedman1"],
        "bases": [
            {"id": "RF", "kind": "rf", "n_estimators": 8},
            {"id": "ERT", "kind": "ert", "n_estimators": 8},
            {"id": "DT", "kind": "dt"},
            {"id": "GBM", "kind": "gbm-dt", "n_estimators": 10},
            {"id": "GBM-ERT", "kind": "gbm-ert", "n_estimators": 10},
        ],
        "models": [
            {"id": "forest", "family": "forest"},  # the ensemble's own prediction
            {"id": "soft", "family": "dm-soft", "grid": {"tau": [0.1, 1.0]}},
        ],
    }  # leaf statistics, a solve
    path = tmp_path / "paths.yaml"
    path.write_text(yaml.safe_dump(cfg))
    stored = {}
    for trees in (FAST, SKLEARN):
        out = tmp_path / trees
        proc = run_afr("run", str(path), "--out", str(out), "--jobs", "1", "--quiet", "--trees", trees, timeout=300)
        assert proc.returncode == 0, proc.stderr
        stored[trees] = load_results(out).drop(columns=["seconds"]).sort_values(["base", "model"])
    assert len(stored[FAST]) == 10 and stored[FAST].r2.notna().all()
    assert stored[FAST].to_csv(index=False) == stored[SKLEARN].to_csv(index=False)


def test_bench_trees_times_both_paths_in_one_run_and_finds_them_identical(tmp_path):
    import json

    from afr_cli.publish.bench_blocks import bench_blocks
    from afr_cli.store.bench_records import read_records

    proc = run_afr(
        "bench",
        "trees",
        "--dataset",
        "Diabetes",
        "--repeats",
        "1",
        "--format",
        "json",
        "--record",
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    (record,) = read_records(tmp_path / "results", "trees")  # --record: what afr report renders
    assert record["key"] == "Diabetes" and record["result"] == r
    assert record["command"].endswith("afr bench trees --dataset Diabetes --repeats 1 --format json")
    rf = r["ensembles"]["RF-100"]
    block = bench_blocks(tmp_path / "results")["bench:trees"]
    assert block.startswith("Diabetes's training split of repetition 0 (n = 353), applied to it and the 89 test rows")
    assert (
        f"| RF-100 | {rf[SKLEARN]['fit']:.3f} / {rf[FAST]['fit']:.3f} | {rf['fit_ratio']:.2f}x | "
        f"{rf[SKLEARN]['apply']:.4f} / {rf[FAST]['apply']:.4f} | {rf['apply_ratio']:.2f}x | yes |"
    ) in block
    assert r["n_train"] == 353 and r["n_test"] == 89  # Diabetes' 80/20 split of repetition 0
    assert list(r["ensembles"]) == ["RF-100", "ERT-100", "GBM-DT-200", "GBM-ERT-200", "DT"]
    for label, row in r["ensembles"].items():
        assert row["identical"] is True, label
        assert row[FAST]["fit"] > 0 and row[SKLEARN]["fit"] > 0 and row["fit_ratio"] > 0, label
    assert_one_line_error(run_afr("bench", "trees", "--repeats", "0"), "--repeats", ">= 1")


def test_the_runner_and_reproduce_hand_the_tree_path_to_the_workers(tmp_path, monkeypatch):
    """``--trees`` reaches the fits: with ``sklearn`` the fast forest builder is never called."""
    from pathlib import Path
    from types import SimpleNamespace

    import yaml

    import afr_cli.ensembles.random_forests as random_forests
    import afr_cli.reproduction.pipeline as reproduce
    from afr_cli.config.experiment import load_experiment
    from afr_cli.engine.runner import RunOptions, run_experiment

    fast_fits = []
    real = random_forests.fit_forest
    monkeypatch.setattr(random_forests, "fit_forest", lambda *args: fast_fits.append(1) or real(*args))
    cfg = {
        "name": "path",
        "protocol": {"reps": 1},
        "datasets": ["Friedman1"],
        "bases": [{"id": "RF", "kind": "rf", "n_estimators": 3}],
        "models": [{"id": "forest", "family": "forest"}],
    }
    path = tmp_path / "path.yaml"
    path.write_text(yaml.safe_dump(cfg))
    for trees, out in ((SKLEARN, "a"), (FAST, "b")):
        exp = load_experiment(path, [], str(tmp_path / out))
        run_experiment(
            exp, RunOptions(jobs=1, progress=False, export=False, speedups=speedups_for(trees)), echo=lambda *_: None
        )
        assert bool(fast_fits) is (trees == FAST), trees  # jobs=1: the worker is this process

    seen = []
    monkeypatch.setattr(reproduce, "run_experiments", lambda exps, options, echo: seen.append(options.speedups))
    planned = [
        SimpleNamespace(
            exp=SimpleNamespace(results=Path("r")),
            missing=[1],
            owner="paper",
            spec=SimpleNamespace(label="one", config=Path("one.yaml")),
        )
    ]
    reproduce.run_plan(planned, RunOptions(progress=False, speedups=speedups_for(SKLEARN)))
    assert seen == [Speedups(fast_trees=False)]
