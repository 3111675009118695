"""One declaration of a bound (afr_cli/core/bounds.py), held by every family and ensemble
parameter and every config key with a domain: for each of them, a value its bound refuses is
built from the declaration alone (the idea of scikit-learn's generate_invalid_param_val) and the
config holding it must be refused in one line naming the file, the key and what is allowed."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
import yaml
from afr_forkserver import Invocation, run_afr_forked

from afr_cli.config.experiment import load_experiment
from afr_cli.config.schema import AXIS, DATASET, MODEL, PREPROCESS, PROTOCOL, TOP, Key
from afr_cli.core.bounds import FLOAT, INTEGER, REAL, WHOLE, AnyOf, Bound, Interval, Options
from afr_cli.core.params import Param
from afr_cli.ensembles import ENSEMBLES
from afr_cli.ensembles.params import MAX_FEATURES
from afr_cli.errors import AfrInputError
from afr_cli.models import FAMILIES

GOOD = {
    "name": "t",
    "seed": 1,
    "protocol": {"reps": 1, "inner_folds": 2},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 3}],
    "models": [{"id": "rf", "family": "forest"}],
}
BASE_OF = {"average": "rf", "boosted": "gbm-dt"}  # a registered kind of each structure


def invalid_value(bound: Bound):
    """A value ``bound`` refuses, read off its declaration: just past an end, a fraction where a
    whole number is wanted, or an unknown option."""
    if isinstance(bound, Options):
        return "no-such-option"
    if isinstance(bound, AnyOf):
        for part in bound.parts:
            value = invalid_value(part)
            if not bound.accepts(value):
                return value
        raise AssertionError(f"no value outside {bound}")
    as_kind = float if bound.kind in (REAL, FLOAT) else int
    if bound.low is not None:
        return as_kind(bound.low if bound.low_open else bound.low - 1)
    if bound.high is not None:
        return as_kind(bound.high if bound.high_open else bound.high + 1)
    return 0.5 if bound.kind in (INTEGER, WHOLE) else math.inf


def _write(tmp_path: Path, cfg: dict) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _refused(path: Path) -> str:
    with pytest.raises(AfrInputError) as err:
        load_experiment(path)
    message = str(err.value)
    assert "\n" not in message, message
    return message


def _one_line_naming(message: str, where: str, value, allowed: str, name: str = "") -> None:
    """``WHERE: VALUE is not (a number|allowed); [NAME ]must be ALLOWED``."""
    assert message.startswith(f"{where}: {value!r} is not "), message
    assert message.endswith(f"; {name + ' ' if name else ''}must be {allowed}"), message


FAMILY_PARAMS = [(fam, p) for fam in FAMILIES.values() for p in fam.params]
ENSEMBLE_PARAMS = [(ens, p) for ens in ENSEMBLES.values() for p in ens.params]


def test_every_declared_parameter_holds_a_bound_that_refuses_a_value():
    assert len(FAMILY_PARAMS) >= 40 and len(ENSEMBLE_PARAMS) >= 20
    for _, p in FAMILY_PARAMS + ENSEMBLE_PARAMS:
        assert isinstance(p.bound, Bound) and p.allowed(), p.name
        bad = invalid_value(p.bound)
        assert not p.bound.accepts(bad) and p.bound.accepts(p.default), (p.name, bad)


@pytest.mark.parametrize("fam, p", FAMILY_PARAMS, ids=[f"{f.name}.{p.name}" for f, p in FAMILY_PARAMS])
@pytest.mark.parametrize("where", ["params", "grid"])
def test_every_family_parameter_refuses_a_bad_value_in_one_line(tmp_path, fam, p, where):
    bad = invalid_value(p.bound)
    model = {"id": "m", "family": fam.name, where: {p.name: bad if where == "params" else [p.default, bad]}}
    cfg = {**GOOD, "bases": [{"kind": BASE_OF[fam.structures[0]]}], "models": [model]}
    path = _write(tmp_path, cfg)
    at = f"{path}: models[0].params.{p.name}" if where == "params" else f"{path}: models[0].grid.{p.name}[1]"
    _one_line_naming(_refused(path), at, bad, p.allowed(), p.name)


@pytest.mark.parametrize("ens, p", ENSEMBLE_PARAMS, ids=[f"{e.name}.{p.name}" for e, p in ENSEMBLE_PARAMS])
def test_every_ensemble_parameter_refuses_a_bad_value_in_one_line(tmp_path, ens, p):
    bad = invalid_value(p.bound)
    path = _write(tmp_path, {**GOOD, "bases": [{"kind": ens.name, p.name: bad}]})
    _one_line_naming(_refused(path), f"{path}: bases[0].{p.name}", bad, p.allowed(), p.name)


# Every key of the table with a bound, with where it sits in a config.
BOUNDED = [
    (f"{section.title}.{key.name}" if section is not TOP else key.name, key)
    for section in (TOP, PROTOCOL, PREPROCESS, MODEL, DATASET)
    for key in section.keys
    if key.bound is not None
]


def test_the_table_declares_its_bounds_once():
    names = {name for name, _ in BOUNDED}
    assert {"seed", "data_seed", "solver", "protocol.reps", "protocol.noise_eta", "models[].loss"} <= names
    assert {"datasets[].missing", "preprocess.scale", "protocol.train_fractions"} <= names
    for _, key in BOUNDED:
        assert not key.bound.accepts(key.bound.normalize(invalid_value(key.bound))), key.name
    with pytest.raises(TypeError, match="needs a bound"):
        Key("k", AXIS, "an axis without its numbers' bound")


def _place(cfg: dict, name: str, value, tmp_path: Path) -> str:
    """Put ``value`` at the config key ``name``; returns the key as the error names it."""
    if name.startswith("models[]."):
        key = name.split(".", 1)[1]
        cfg["models"] = [{"id": "rf", "family": "forest", key: value}]
        return f"models[0].{key}"
    if name.startswith("datasets[]."):
        (tmp_path / "d.csv").write_text("a,y\n1,2\n3,4\n5,6\n")
        cfg["datasets"] = [{"name": "mine", "file": "d.csv", "target": "y", "missing": value}]
        return "datasets[0].missing"
    if "." in name:
        section, key = name.split(".")
        cfg[section] = {**cfg.get(section, {}), key: value}
        return name
    cfg[name] = value
    return name


@pytest.mark.parametrize("name, key", BOUNDED, ids=[n for n, _ in BOUNDED])
def test_every_bounded_config_key_refuses_a_bad_value_in_one_line(tmp_path, name, key):
    bad = invalid_value(key.bound)
    cfg = yaml.safe_load(yaml.safe_dump(GOOD))
    where = _place(cfg, name, [bad] if key.type == AXIS else bad, tmp_path)
    path = _write(tmp_path, cfg)
    message = _refused(path)
    shown = key.bound.normalize(bad)
    if key.type == AXIS:
        _one_line_naming(message, f"{path}: {where}[0]", shown, key.bound.allowed())
    elif isinstance(key.bound, Options):
        assert message.startswith(f"{path}: {where}: {shown!r} is not allowed; allowed: {key.allowed()}"), message
    else:
        _one_line_naming(message, f"{path}: {where}", shown, key.allowed())


FEATURES = "a fraction in (0, 1], an integer >= 1, sqrt or log2"
# What users read, word for word (the same before the bounds were declared once, but for the
# two noted in test_the_messages_that_changed).
MESSAGES = [
    (
        {"models": [{"id": "a", "family": "eps-abrf", "params": {"eps": 1.5}}]},
        "models[0].params.eps: 1.5 is not allowed; eps must be in [0, 1]",
    ),
    (
        {"models": [{"id": "a", "family": "eps-abrf", "grid": {"tau": [1, 0]}}]},
        "models[0].grid.tau[1]: 0 is not allowed; tau must be > 0",
    ),
    (
        {"models": [{"id": "a", "family": "eps-abrf", "params": {"tau": "hot"}}]},
        "models[0].params.tau: 'hot' is not a number; tau must be > 0",
    ),
    (
        {"models": [{"id": "a", "family": "em-arf", "params": {"M": 1.5}}]},
        "models[0].params.M: 1.5 is not allowed; M must be an integer >= 1",
    ),
    (
        {"models": [{"id": "a", "family": "robust-rf", "params": {"alpha": 1}}]},
        "models[0].params.alpha: 1 is not allowed; alpha must be in (0, 1)",
    ),
    (
        {"bases": [{"kind": "rf", "max_depth": "deep"}]},
        "bases[0].max_depth: 'deep' is not a number; max_depth must be an integer >= 1 or null",
    ),
    (
        {"bases": [{"kind": "rf", "n_estimators": 100001}]},
        "bases[0].n_estimators: 100001 is not allowed; n_estimators must be an integer in [1, 100000]",
    ),
    (
        {"bases": [{"kind": "rf", "max_features": "auto"}]},
        "bases[0].max_features: 'auto' is not allowed; max_features must be " + FEATURES,
    ),
    (
        {"bases": [{"kind": "rf", "max_features": 0}]},
        "bases[0].max_features: 0 is not allowed; max_features must be " + FEATURES,
    ),
    (
        {"bases": [{"kind": "gbm-dt", "learning_rate": 0}], "models": [{"id": "rf", "family": "forest"}]},
        "bases[0].learning_rate: 0 is not allowed; learning_rate must be > 0",
    ),
    ({"seed": 4294967296}, "seed: 4294967296 is not allowed; must be an integer in [0, 4294967295]"),
    ({"protocol": {"reps": 0}}, "protocol.reps: 0 is not allowed; must be an integer >= 1"),
    ({"protocol": {"reps": 2.0}}, "protocol.reps: 2.0 is not allowed; must be an integer >= 1"),
    ({"protocol": {"test_fraction": 1}}, "protocol.test_fraction: 1 is not allowed; must be a number in (0, 1)"),
    ({"protocol": {"noise_eta": [0, -1]}}, "protocol.noise_eta[1]: -1 is not allowed; must be a finite number >= 0"),
    ({"protocol": {"noise_eta": []}}, "protocol.noise_eta: must be a non-empty list of numbers >= 0"),
    (
        {"protocol": {"selection": "oracle"}},
        "protocol.selection: 'oracle' is not allowed; allowed: inner-cv, best-test",
    ),
    ({"solver": "gurobi"}, "solver: 'GUROBI' is not allowed; allowed: " + ", ".join(TOP["solver"].bound.values)),
]


@pytest.mark.parametrize("change, expected", MESSAGES, ids=[m.split(":")[0] for _, m in MESSAGES])
def test_what_users_read_word_for_word(tmp_path, change, expected):
    path = _write(tmp_path, {**GOOD, **change})
    assert _refused(path) == f"{path}: {expected}"


@pytest.mark.parametrize(
    "change, expected",
    [
        # a config key's text value read "is not allowed", a family parameter's "is not a number"
        ({"protocol": {"reps": "ten"}}, "protocol.reps: 'ten' is not a number; must be an integer >= 1"),
        (
            {"protocol": {"test_fraction": True}},
            "protocol.test_fraction: True is not a number; must be a number in (0, 1)",
        ),
        # an axis's fraction read "a finite number in (0, 1)", test_fraction's "a number in (0, 1)"
        (
            {"protocol": {"train_fractions": [0.5, 1]}},
            "protocol.train_fractions[1]: 1 is not allowed; must be a number in (0, 1)",
        ),
    ],
)
def test_the_messages_that_changed(tmp_path, change, expected):
    """The two wordings that differed between keys and parameters for one mistake now agree."""
    path = _write(tmp_path, {**GOOD, **change})
    assert _refused(path) == f"{path}: {expected}"


def test_an_interval_says_what_it_allows_and_keeps_its_kind():
    unit = Interval.between(REAL, 0, 1, low_open=True)
    assert (unit.closed, unit.low_open, unit.high_open) == ("right", True, False)
    assert unit.allowed() == "a number in (0, 1]" and unit.allowed(after_name=True) == "in (0, 1]"
    assert Interval(REAL, 0).allowed() == "a finite number >= 0" and Interval(REAL).allowed() == "a finite number"
    assert Interval(INTEGER, 1).allowed(after_name=True) == "an integer >= 1"
    assert not unit.accepts(math.nan) and not Interval(REAL, 0).accepts(math.inf) and unit.accepts(np.float32(0.5))
    big = 99999999999999999999999  # compared exactly, past 64 bits
    assert Interval(INTEGER, 0).check(big, "w") == big and not Interval(INTEGER, 0, 2**32 - 1).accepts(big)
    assert not Interval(INTEGER, 1).accepts(2.0) and Interval(WHOLE, 1).check(2.0, "w") == 2
    assert type(Interval(WHOLE, 1).check(np.float64(3.0), "w")) is int
    assert not Interval(FLOAT, 0, 1).accepts(1) and Interval(FLOAT, 0, 1).check(1.0, "w") == 1.0
    with pytest.raises(ValueError, match="closed 'open'"):
        Interval(REAL, 0, 1, closed="open")
    with pytest.raises(ValueError, match="kind 'natural'"):
        Interval("natural")


def test_a_parameter_is_declared_as_families_and_plugins_always_have():
    depth = Param("max_depth", "ensemble", None, 1, None, integer=True, choices=(None,))
    assert depth.allowed() == "an integer >= 1 or null" and depth.check(None, "w") is None
    assert depth.check(3.0, "w") == 3 and depth.show_default() == "null"
    named = Param("p", "design", 0.5, bound=Options(("a", "b")))
    with pytest.raises(AfrInputError, match=r"^w: 'c' is not allowed; allowed: a, b$"):
        named.check("c", "w")
    one, every = MAX_FEATURES.check(1, "w"), MAX_FEATURES.check(1.0, "w")
    assert (type(one), type(every)) == (int, float) and MAX_FEATURES.show_default() == "1.0"
    assert Param("t", "design", 1.0, 0.0, None, low_open=True) == Param("t", "design", 1.0, 0, None, low_open=True)


@pytest.mark.slow
def test_the_command_line_refuses_a_bad_parameter_and_key_in_one_line_exit_2(tmp_path):
    cases = [
        (
            {"models": [{"id": "a", "family": "eps-abrf", "params": {"eps": 1.5}}]},
            "models[0].params.eps: 1.5 is not allowed; eps must be in [0, 1]",
        ),
        ({"protocol": {"reps": "ten"}}, "protocol.reps: 'ten' is not a number; must be an integer >= 1"),
    ]
    invocations = []
    for i, (change, _) in enumerate(cases):
        folder = tmp_path / str(i)
        folder.mkdir()
        _write(folder, {**GOOD, **change})
        invocations.append(Invocation(("validate", "c.yaml"), folder, {**os.environ, "MPLBACKEND": "Agg"}))
    for proc, (_, expected), inv in zip(run_afr_forked(invocations), cases, invocations):
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == f"error: c.yaml: {expected}\n", proc.stderr
        assert sorted(p.name for p in inv.cwd.iterdir()) == ["c.yaml"]
