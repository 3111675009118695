"""SAT-RF's code reading: what andruekonst/forest-self-attention at 129a6d7 computes
(``sa_forest/model.py``), against a transcription of its formulas; the text stays the default."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.datasets import make_friedman1

from afr_cli.errors import AfrInputError
from afr_cli.models import FAMILIES, SATRF
from afr_cli.models.satrf import code_self_attention

SMALL = dict(n_estimators=6, min_samples_leaf=5, random_state=0)


@pytest.fixture(scope="module")
def data():
    X, y = make_friedman1(70, noise=1.0, random_state=1)
    return X[:50], y[:50], X[50:]


def the_codes_prediction(model: SATRF, X: np.ndarray, variant: str) -> np.ndarray:
    """``SelfAttentionForest.predict`` of the authors' code, written out for a fitted model of
    ours (its leaves, w_ and v_): lines 219-223 (tree attention), 245-263 (self-attention with
    the diagonal at -inf) and 278-285 (the mixture)."""
    stats = model.leaf_stats_
    leaves = stats.leaf_ids(X)
    A, y = stats.mean_x[leaves], stats.mean_y[leaves]  # (n, T, m), (n, T)
    dynamic = softmax(-0.5 * np.linalg.norm(X[:, None, :] - A, axis=2) ** 2 * model.tau, axis=1)
    neg_y = -((y[:, np.newaxis] - y[..., np.newaxis]) ** 2)
    neg_x = -(np.linalg.norm(A[:, np.newaxis] - A[..., np.newaxis, :], ord=2, axis=-1) ** 2)
    neg = {"y": neg_y, "x": neg_x, "yx": neg_y / np.maximum(neg_x, 1.0e-9)}[variant]
    for i in range(neg.shape[1]):
        neg[:, i, i] = -np.inf
    sa = softmax(model.kappa * neg, axis=2)
    weights = (1.0 - model.gamma) * sa + model.gamma * model.v_[np.newaxis, np.newaxis, :]
    sa_y = np.einsum("ijk,ik->ij", weights, y)
    mixed = (1.0 - model.eps) * dynamic + model.eps * model.w_
    return np.sum(mixed * sa_y, axis=1)


@pytest.mark.parametrize("variant", ["y", "x", "yx"])
def test_code_reading_predicts_the_authors_formula(variant, data):
    X, y, X_test = data
    code = SATRF(variant=variant, eps=0.4, gamma=0.3, tau=3.0, kappa=0.7, reading="code", **SMALL).fit(X, y)
    np.testing.assert_allclose(code.predict(X_test), the_codes_prediction(code, X_test, variant), rtol=0, atol=1e-9)
    np.testing.assert_allclose(code.predict(X), the_codes_prediction(code, X, variant), rtol=0, atol=1e-9)
    text = SATRF(variant=variant, eps=0.4, gamma=0.3, tau=3.0, kappa=0.7, **SMALL).fit(X, y)
    assert not np.allclose(text.predict(X_test), code.predict(X_test))


def test_text_reading_is_the_default_bit_for_bit(data):
    X, y, X_test = data
    plain = SATRF(variant="yx", eps=0.4, gamma=0.3, **SMALL).fit(X, y)
    text = SATRF(variant="yx", eps=0.4, gamma=0.3, reading="text", **SMALL).fit(X, y)
    np.testing.assert_array_equal(plain.predict(X_test), text.predict(X_test))
    assert SATRF().reading == "text"
    for name in ("sat-rf-y", "sat-rf-x", "sat-rf-yx", "sat-rf-y2"):
        assert FAMILIES[name].param("reading").default == "text", name


def test_two_heads_take_the_codes_form_in_each_head(data):
    X, y, X_test = data
    code = SATRF(heads=2, gamma=(0.3, 0.2), kappa=(0.5, 2.0), reading="code", **SMALL).fit(X, y)
    text = SATRF(heads=2, gamma=(0.3, 0.2), kappa=(0.5, 2.0), **SMALL).fit(X, y)
    assert np.isfinite(code.predict(X_test)).all() and not np.allclose(code.predict(X_test), text.predict(X_test))


def test_a_tree_never_attends_to_itself_except_when_it_is_alone():
    s = np.array([[[0.0, 1.0, 4.0], [1.0, 0.0, 9.0], [4.0, 9.0, 0.0]]])
    weights = code_self_attention(s, 2.0)
    np.testing.assert_array_equal(np.diagonal(weights[0]), 0.0)
    np.testing.assert_allclose(weights[0, 0, 1:], softmax([-2.0, -8.0]), atol=1e-15)
    np.testing.assert_allclose(weights.sum(axis=2), 1.0, atol=1e-15)
    np.testing.assert_array_equal(code_self_attention(np.zeros((2, 1, 1)), 2.0), 1.0)
    # a large dissimilarity (the code's -yx scale) underflows to weight 0, not to NaN
    far = code_self_attention(1e9 * s, 1.0)
    assert np.isfinite(far).all() and far[0, 0, 1] == 1.0


def test_the_reading_is_validated_like_the_other_parameters(data):
    X, y, _ = data
    with pytest.raises(AfrInputError, match=r"SATRF.reading: 'authors' is not allowed; reading must be text or code"):
        SATRF(reading="authors", **SMALL).fit(X, y)
