"""The two readings of LARF, eps-ABRF and SAT-RF: the paper's text (the default, unchanged) and
the authors' public code.

LARF's code reading differs exactly where docs/models.md says: the leaf softmax(-tau0 d^2 / 2),
the heads on the plain distance with multipliers 10^linspace(-M//2, M//2, M), and head weights
free on one simplex with the static weight (no (1 - varsigma)/M bound, no floor). eps-ABRF's
differs in one place: softmax(-tau d / 2), tau multiplying.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_friedman1

from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.errors import AfrInputError
from afr_cli.models import FAMILIES, LARF, EpsABRF
from afr_cli.models.larf import (
    LARF_FAMILIES,
    READING,
    code_head_scales,
    code_leaf_temperature,
    code_temperatures,
    head_taus,
)
from afr_cli.models.larf_leaf import leaf_attention

SMALL = dict(n_estimators=6, min_samples_leaf=5, random_state=0)


@pytest.fixture(scope="module")
def data():
    X, y = make_friedman1(70, noise=1.0, random_state=1)
    return X[:50], y[:50], X[50:]


@pytest.fixture(scope="module")
def stats(data):
    X, y, _ = data
    return LeafStatistics(get_ensemble("rf").fit(X, y, 3, n_estimators=7, min_samples_leaf=5), X, y)


def test_code_head_scales_floor_divide_and_differ_from_the_text():
    np.testing.assert_allclose(code_head_scales(1), [0.1])  # the text: tau = 1
    np.testing.assert_allclose(code_head_scales(2), [0.1, 10.0])
    np.testing.assert_allclose(code_head_scales(3), 10.0 ** np.array([-2.0, -0.5, 1.0]))
    np.testing.assert_allclose(code_head_scales(5), 10.0 ** np.linspace(-3, 2, 5))
    np.testing.assert_allclose(code_temperatures(3), 2.0 / code_head_scales(3))
    for M in range(1, 21):
        assert len(code_head_scales(M)) == M
        assert not np.allclose(code_temperatures(M), head_taus(M))
    assert code_leaf_temperature(4.0) == 0.5


def brute_code_prediction(stats: LeafStatistics, X: np.ndarray, tau0: float, M: int, g, G) -> np.ndarray:
    """sum_j g_j sum_k softmax_k(-t_j ||x - A_k|| / 2) B_k + sum_k G_k B_k, with the leaf weights
    softmax_i(-tau0 ||x - x_i||^2 / 2), by a loop over rows and trees."""
    leaves = stats.leaf_ids(X)
    out = np.zeros(len(X))
    for i, x in enumerate(X):
        keys, values = [], []
        for leaf in leaves[i]:
            members = stats.members(leaf)
            logits = -0.5 * tau0 * ((stats.X[members] - x) ** 2).sum(axis=1)
            mu = np.exp(logits - logits.max())
            mu /= mu.sum()
            keys.append(mu @ stats.X[members])
            values.append(mu @ stats.y[members])
        keys, values = np.array(keys), np.array(values)
        d = np.linalg.norm(keys - x, axis=1)
        for gj, t in zip(g, code_head_scales(M)):
            logits = -0.5 * t * d
            a = np.exp(logits - logits.max())
            out[i] += gj * (a / a.sum()) @ values
        out[i] += G @ values
    return out


@pytest.mark.parametrize("variant", ["em-w-larf", "em-larf"])
def test_code_reading_predicts_the_authors_formula(variant, data):
    X, y, X_test = data
    model = LARF(variant=variant, tau0=0.5, M=3, reading="code", **SMALL).fit(X, y)
    T = SMALL["n_estimators"]
    theta = model.theta_
    if variant == "em-larf":  # theta = (g_1..g_M, g_s), G = g_s / T
        g, G = theta[:-1], np.full(T, theta[-1] / T)
    else:  # theta = (G_1..G_T, g_1..g_M)
        g, G = theta[T:], theta[:T]
    brute = brute_code_prediction(model.leaf_stats_, X_test, 0.5, 3, g, G)
    np.testing.assert_allclose(model.predict(X_test), brute, atol=1e-8)
    np.testing.assert_allclose(model.taus_, code_temperatures(3))
    # the same prediction through the fitted attributes of the text's formula (eps_j = 1 - M g_j)
    np.testing.assert_allclose(model.eps_, 1 - 3 * g)


@pytest.mark.parametrize("variant", ["em-w-larf", "em-larf", "em-w-arf", "em-arf"])
def test_code_problem_is_one_simplex_without_the_head_bound(variant, stats):
    family = FAMILIES[variant]
    rows = stats.rows()
    design = {"M": 4, "tau0": 1.0, "reading": "code"} if family.leaf else {"M": 4, "reading": "code"}
    text = family.training_problem(family.features(rows, {**design, "reading": "text"}), stats.y, {"varsigma": 0.05})
    code = family.training_problem(family.features(rows, design), stats.y, {"varsigma": 0.05})
    T = rows.leaves.shape[1]
    size = (T if family.trains == "eps-w" else 1) + 4
    cons = code.constraints
    assert code.Phi.shape[1] == size and not code.r.any()
    np.testing.assert_array_equal(cons.lower, np.zeros(size))
    assert np.isinf(cons.upper).all()  # no (1 - varsigma)/M bound on a head, no floor
    np.testing.assert_array_equal(cons.eq_matrix, np.ones((1, size)))
    np.testing.assert_array_equal(cons.eq_rhs, [1.0])
    # the text bounds each eps_j to [varsigma, 1], i.e. each head weight (1 - eps_j)/M to [0, (1 - varsigma)/M]
    eps = slice(-4, None)
    np.testing.assert_array_equal(text.constraints.lower[eps], 0.05)
    np.testing.assert_array_equal(text.constraints.upper[eps], 1.0)


def test_code_leaf_level_is_the_text_at_temperature_two_over_tau0(stats, data):
    family, rows = FAMILIES["em-w-larf"], stats.rows(data[2])
    code = family.features(rows, {"M": 1, "tau0": 4.0, "reading": "code"})
    level = leaf_attention(rows, 0.5)
    np.testing.assert_array_equal(code.values, level.values)
    # one head, t = 0.1: softmax(-0.05 ||x - A_k||) on the plain distance
    d = np.sqrt(level.key_sqdist)
    a = np.exp(-0.05 * (d - d.min(axis=1, keepdims=True)))
    np.testing.assert_allclose(code.head_sums[:, 0], (a / a.sum(axis=1, keepdims=True) * level.values).sum(axis=1))


def test_text_reading_is_the_default_bit_for_bit(stats, data):
    rows = stats.rows(data[2])
    for name, family in LARF_FAMILIES.items():
        design = {"M": 3, "tau0": 0.5}
        design = {k: v for k, v in design.items() if k in family.design_names()}
        plain = family.features(rows, design)
        text = family.features(rows, {**design, "reading": "text"})
        np.testing.assert_array_equal(plain.head_sums, text.head_sums)
        np.testing.assert_array_equal(plain.taus, text.taus)
        assert family.param("reading").default == "text", name


def test_reading_is_validated_like_the_other_parameters(data):
    assert READING.check("code", "x") == "code"
    with pytest.raises(AfrInputError, match=r"x: 'paper' is not allowed; reading must be text or code"):
        READING.check("paper", "x")
    X, y, _ = data
    with pytest.raises(AfrInputError, match="LARF.reading"):
        LARF(variant="em-larf", reading="authors", **SMALL).fit(X, y)


def test_a_config_selects_the_reading_and_refuses_others(tmp_path):
    from afr_cli.config.experiment import load_experiment

    text = (
        "name: r\ndatasets: [Friedman1]\nbases: [{kind: rf}]\nprotocol: {reps: 1}\n"
        "models:\n  - {id: m, family: em-larf, params: {reading: READING}}\n"
    )
    path = tmp_path / "r.yaml"
    path.write_text(text.replace("READING", "code"))
    model = load_experiment(path).models[0]
    assert model.grid["reading"] == ("code",)
    path.write_text(text.replace("READING", "both"))
    with pytest.raises(AfrInputError, match=r"params.reading: 'both' is not allowed; reading must be text or code"):
        load_experiment(path)


def test_eps_abrf_code_reading_is_softmax_of_minus_half_tau_d(data):
    X, y, X_test = data
    code = EpsABRF(tau=4.0, eps=0.3, reading="code", **SMALL).fit(X, y)
    text = EpsABRF(tau=0.5, eps=0.3, **SMALL).fit(X, y)
    np.testing.assert_array_equal(code.predict(X_test), text.predict(X_test))
    stats = code.leaf_stats_
    leaves = stats.leaf_ids(X_test)
    d = ((stats.mean_x[leaves] - X_test[:, None, :]) ** 2).sum(axis=2)
    a = np.exp(-0.5 * 4.0 * (d - d.min(axis=1, keepdims=True)))
    a /= a.sum(axis=1, keepdims=True)
    B = stats.mean_y[leaves]
    brute = 0.7 * (a * B).sum(axis=1) + 0.3 * B @ code.w_
    np.testing.assert_allclose(code.predict(X_test), brute, atol=1e-9)
    # the default is the text, and differs from the code at the same tau
    assert EpsABRF().reading == "text" == FAMILIES["eps-abrf"].param("reading").default
    assert not np.allclose(EpsABRF(tau=4.0, eps=0.3, **SMALL).fit(X, y).predict(X_test), code.predict(X_test))


def test_afr_models_and_the_docs_list_every_difference_with_its_file_and_line():
    from afr_cli.core.paths import PROJECT_ROOT
    from afr_cli.models import readings_help

    rows = readings_help()
    families = {r[0] for r in rows}
    assert families == {"eps-abrf", "eps-arf ... em-larf-loo (12)", "sat-rf-y ... sat-rf-y2 (4)"}  # agboost: no reading
    larf = [r for r in rows if r[0].startswith("eps-arf")]
    assert [r[1] for r in larf] == [
        "leaf attention",
        "tree-level distance",
        "head temperatures",
        "head weights (eps- and eps-w- variants)",
    ]
    assert all(r[4].startswith("andruekonst/leaf-attention-forest@d5a3527 leaf_att_forest/model.py:") for r in larf)
    docs = (PROJECT_ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    for families, what, text, code, where in rows:
        row = " | ".join(c.replace("|", "\\|") for c in (families, what, text, code)) + f" | `{where}` |"
        assert row in docs, f"docs/models.md lacks the row for {families}: {what}"


def test_the_larf_code_reading_store_is_within_003_of_the_referees_run_of_the_authors_code():
    from conftest import committed_study_blocks

    table = committed_study_blocks("larf")["study:larf:code_reading_referee"]
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in table.splitlines()[2:]}
    assert set(rows) == {"Friedman3", "Sparse", "Regression"}
    for dataset, cells in rows.items():
        code, referee, gap = float(cells[3]), float(cells[4]), float(cells[5].strip(" |"))
        assert referee == {"Friedman3": 0.643, "Sparse": 0.590, "Regression": 0.452}[dataset]
        assert abs(code - referee) <= 0.03 and gap == pytest.approx(code - referee, abs=1.5e-3), dataset
    counts = committed_study_blocks("larf")["study:larf:code_reading_counts"]
    assert "| text | 20 |" in counts and "| code | 20 |" in counts


def test_every_larf_code_reading_cell_has_one_class_and_assignment_0_is_the_stored_one():
    from conftest import committed_study_blocks

    from afr_cli.publish.cell_classes import CLASSES

    blocks = committed_study_blocks("larf")

    def rows(name: str) -> list[list[str]]:
        return [[c.strip() for c in line.strip("|").split("|")] for line in blocks[name].splitlines()[2:]]

    classes = rows("study:larf:cell_classes")
    allowed = set(CLASSES)
    assert len(classes) == 20 and {r[-1] for r in classes} <= allowed
    summary = blocks["study:larf:cell_classes_summary"]
    counts = {c: sum(r[-1] == c for r in classes) for c in allowed}
    assert all(f"{n} {c}" in summary for c, n in counts.items())
    # the text reading's "as printed" / "within tol" cells are the first two classes, nothing else is
    readings = {(r[1], r[2]): r for r in rows("study:larf:code_reading")}
    for _table, model, dataset, _, found in classes:
        text_agrees = readings[(model, dataset)][5]
        assert (found == "as printed") == (text_agrees == "as printed")
        assert (found == "within tolerance") == (text_agrees == "within tol")
    # assignment 0 of the spread is the stored number of the same reading
    for model, reading, dataset, _, folds0, *_ in rows("study:larf:fold_spread"):
        assert folds0 == readings[(model, dataset)][4 if reading == "text" else 6], (model, reading, dataset)


def test_the_satrf_code_reading_blocks_hold_both_readings_of_every_rf_cell_and_class_them():
    from conftest import committed_classes, committed_study_blocks

    from afr_cli.publish.cell_classes import CLASSES

    blocks = committed_study_blocks("satrf")
    rows = [
        [c.strip() for c in line.strip("|").split("|")] for line in blocks["study:satrf:code_reading"].splitlines()[2:]
    ]
    # Tables 2, 4 and 6 (variant and its Softmax point) and 9 (SAT-RF, eps-ABRF): 8 columns x 11 sets
    assert len(rows) == 88
    kinds = ("as printed", "within tol", "miss")
    assert {r[5] for r in rows} | {r[7] for r in rows} <= set(kinds)
    counts = blocks["study:satrf:code_reading_counts"]
    for reading, column in (("text", 5), ("code", 7)):
        tally = " | ".join(str(sum(r[column] == k for r in rows)) for k in kinds)
        assert f"| {reading} | 88 | {tally} |" in counts, (reading, counts)
    agrees = {reading: sum(r[column] != "miss" for r in rows) for reading, column in (("text", 5), ("code", 7))}
    summary = blocks["study:satrf:code_reading_summary"]
    assert f"the text reading agrees with {agrees['text']} and the code reading with {agrees['code']}" in summary
    # the page's classes: a cell the code reading misses is never "reached" by it; one the text
    # misses and the code reaches is at worst "reached by the code reading"
    classed = committed_classes("satrf").set_index(["table", "dataset", "model", "metric"])["class"]
    published = {"softmax-y": "softmax", "softmax-x": "softmax", "softmax-yx": "softmax", "sat-rf": "sat-rf (RF)"}
    published["eps-abrf"] = "eps-abrf (RF)"
    reached = 0
    for table, model, dataset, _paper, _text, text_agrees, _code, code_agrees in rows:
        found = classed[(table, dataset, published.get(model, model), "r2")]
        if code_agrees == "miss":
            assert found != CLASSES[3], (table, model, dataset)
        elif text_agrees == "miss":
            assert CLASSES.index(found) <= 3, (table, model, dataset, found)
            reached += found == CLASSES[3]
    assert reached > 0
