"""AGBoost: the paper's invariants, a brute-force check, the estimator, the adapter, select_as."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.utils.estimator_checks import check_estimator

from afr_cli.errors import AfrInputError
from afr_cli.models import AGBoost, AGBoostOnFitted
from afr_cli.models.agboost import AGBoostFamily, NonParamFamily

SMALL = dict(n_estimators=25, learning_rate=0.1, max_depth=3, min_samples_leaf=5, random_state=0)


def _brute_predict(model: AGBoost, X: np.ndarray) -> np.ndarray:
    """G(x) = h0 + sum_t alpha_t(x) B_t(x) by loops over rows and iterations (paper eqs 11-19)."""
    stats, trees, T = model.leaf_stats_, model.trees_, len(model.trees_)
    train_leaves = np.column_stack([t.apply(stats.X) for t in trees])
    out = np.empty(len(X))
    for s, x in enumerate(X):
        logits, values = np.empty(T), np.empty(T)
        for t, tree in enumerate(trees):
            leaf = tree.apply(x[None, :])[0]
            A = stats.X[train_leaves[:, t] == leaf].mean(axis=0)
            logits[t] = -0.5 * np.sum((x - A) ** 2) * model.delta ** (t + 1)
            values[t] = T * model.learning_rate * tree.predict(x[None, :])[0]
        soft = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
        alpha = (1 - model.eps) * soft + model.eps * model.w_
        out[s] = model.init_ + alpha @ values
    return out


@pytest.mark.parametrize("learner", ["dt", "ert"])
def test_predictions_equal_the_papers_formula(small_data, learner):
    Xtr, ytr, Xte, _ = small_data
    model = AGBoost(learner=learner, eps=0.4, delta=0.8, **SMALL).fit(Xtr, ytr)
    assert len(model.trees_) == 25 and model.init_ == pytest.approx(ytr.mean())
    assert model.w_.shape == (25,) and model.w_.min() >= -1e-9 and model.w_.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(model.predict(Xte), _brute_predict(model, Xte), rtol=1e-10)


def test_uniform_attention_is_the_gbm(small_data):
    """alpha = 1/T (eps = 1, w = 1/T) gives back the GBM's own prediction."""
    Xtr, ytr, Xte, _ = small_data
    model = AGBoost(eps=1.0, **SMALL).fit(Xtr, ytr)
    feats = model.family.features(model.leaf_stats_.rows(Xte), {"delta": 0.7})
    uniform = NonParamFamily().predict(feats, {"eps": 1.0}, None)
    np.testing.assert_allclose(uniform, model.forest_.predict(Xte), rtol=0, atol=1e-10)


def test_at_eps_one_delta_has_no_effect(small_data):
    Xtr, ytr, Xte, _ = small_data
    a = AGBoost(eps=1.0, delta=0.01, **SMALL).fit(Xtr, ytr)
    b = AGBoost(eps=1.0, delta=1.0, **SMALL).fit(Xtr, ytr)
    np.testing.assert_array_equal(a.w_, b.w_)
    np.testing.assert_array_equal(a.predict(Xte), b.predict(Xte))


def test_as_delta_vanishes_the_untrained_model_tends_to_the_gbm(small_data):
    Xtr, ytr, Xte, _ = small_data
    model = AGBoost(eps=0.0, **SMALL).fit(Xtr, ytr)
    rows, gbm = model.leaf_stats_.rows(Xte), model.forest_.predict(Xte)
    gaps = [
        np.abs(NonParamFamily().predict(model.family.features(rows, {"delta": d}), {"eps": 0.0}, None) - gbm).max()
        for d in (0.9, 0.1, 1e-3, 1e-9)
    ]
    assert gaps[0] > 1e-3 and all(later <= earlier for earlier, later in zip(gaps, gaps[1:]))
    assert gaps[-1] < 1e-7


def test_estimator_passes_sklearn_checks():
    check_estimator(AGBoost(n_estimators=8, learning_rate=0.2, max_depth=2, min_samples_leaf=2, random_state=0))


def test_estimator_rejects_an_unknown_learner(small_data):
    Xtr, ytr, _, _ = small_data
    with pytest.raises(AfrInputError, match="AGBoost.learner: 'rf' is not allowed; allowed: dt, ert"):
        AGBoost(learner="rf").fit(Xtr, ytr)


def test_attention_on_a_fitted_scikit_learn_gbm(small_data):
    """AGBoostOnFitted on sklearn's GBM equals AGBoost over our DT-learner GBM (the same trees)."""
    Xtr, ytr, Xte, _ = small_data
    gbr = GradientBoostingRegressor(
        n_estimators=25, learning_rate=0.1, max_depth=3, min_samples_leaf=5, random_state=0
    ).fit(Xtr, ytr)
    before = gbr.predict(Xte)
    on = AGBoostOnFitted(gbr, eps=0.6, delta=0.9).fit(Xtr, ytr)
    ours = AGBoost(eps=0.6, delta=0.9, **SMALL).fit(Xtr, ytr)
    np.testing.assert_allclose(on.predict(Xte), ours.predict(Xte), rtol=1e-8)
    np.testing.assert_allclose(on.w_, ours.w_, atol=1e-6)
    np.testing.assert_array_equal(gbr.predict(Xte), before)  # the user's model is untouched
    with pytest.raises(AfrInputError, match="agboost cannot attend over a average ensemble"):
        AGBoostOnFitted(RandomForestRegressor(n_estimators=3).fit(Xtr, ytr)).fit(Xtr, ytr)


def test_nonparam_is_evaluated_at_agboosts_selection(tmp_path):
    from afr_cli.config.experiment import load_experiment
    from afr_cli.data import load_dataset
    from afr_cli.engine.protocol import run_unit

    grid = {"delta": [0.01, 0.9], "eps": [0.0, 0.5, 1.0]}
    cfg = {
        "name": "ag",
        "protocol": {"reps": 2, "inner_folds": 2},
        "datasets": ["Friedman1"],
        "bases": [{"kind": "gbm-dt", "id": "DT", "n_estimators": 15, "learning_rate": 0.1, "max_depth": 3}],
        "models": [
            {"id": "gbm", "family": "forest"},
            {"id": "nonparam", "family": "nonparam", "select_as": "agboost", "grid": grid},
            {"id": "agboost", "family": "agboost", "grid": grid},
        ],
    }
    path = tmp_path / "ag.yaml"
    path.write_text(yaml.safe_dump(cfg))
    exp = load_experiment(path)
    X, y = load_dataset("Friedman1")
    for rep in range(2):
        unit = run_unit(exp, "Friedman1", exp.bases[0], rep, X, y)
        rows = {r["model"]: r for r in unit.results}
        assert rows["nonparam"]["params"] == rows["agboost"]["params"]
        at = next(g for g in unit.grid if g["model"] == "nonparam" and g["point"] == rows["nonparam"]["params"])
        assert rows["nonparam"]["r2"] == at["test_r2"]
    bad = dict(cfg, models=cfg["models"][:2] + [{"id": "agboost", "family": "agboost", "grid": {"eps": [0, 1]}}])
    path.write_text(yaml.safe_dump(bad))
    with pytest.raises(AfrInputError, match=r"models\[1\].select_as: nonparam and agboost must have the same grid"):
        load_experiment(path)
    path.write_text(yaml.safe_dump(dict(cfg, models=cfg["models"][:2])))
    with pytest.raises(AfrInputError, match="'agboost' is not a model that selects its own grid point; allowed: gbm"):
        load_experiment(path)


def test_families_declare_boosted_ensembles():
    assert AGBoostFamily.structures == ("boosted",) and NonParamFamily().training_problem(None, None, {}) is None
