"""Experiment configs: YAML -> a validated ``Experiment``; every error names the file, key and what is allowed.

An experiment is one YAML file: name, seed, protocol, datasets, preprocessing, base
ensembles, models (fixed hyperparameters and grids), solver, results directory. Unknown
keys are errors, in the file and in ``--set`` overrides alike: a typo must never pass.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from afr_cli.errors import AfrInputError
from afr_cli.ensembles import Ensemble, FittedEnsemble, get_ensemble
from afr_cli.models import FAMILIES, get_family
from afr_cli.path_rules import name_error
from afr_cli.solve import DEFAULT_SOLVER, LOSSES, SOLVERS
from afr_cli.yaml_safe import load_yaml

SELECTIONS = ("inner-cv", "best-test")
SELECT_BY = ("r2", "mae", "rmse")
NOISE_ON = ("test", "train", "both")
SCALES = ("standard", "minmax", "none")
METRICS = ("r2", "mae", "rmse")

_TOP_KEYS = {"name", "description", "seed", "data_seed", "synthetic_noise", "protocol", "datasets",
             "preprocess", "bases", "models", "solver", "results"}
_PROTOCOL_KEYS = {"reps", "test_fraction", "inner_folds", "selection", "select_by", "seeding",
                  "train_fractions", "noise_eta", "noise_on"}
SEEDINGS = ("derived", "rep-index")
_PREPROCESS_KEYS = {"scale"}
_BASE_KEYS = {"id", "kind"}  # plus the parameters of the base's ensemble kind
_MODEL_KEYS = {"id", "family", "params", "grid", "loss", "solver", "best_of", "select_as"}


@dataclass(frozen=True)
class Protocol:
    reps: int = 100
    test_fraction: float = 0.2
    inner_folds: int = 3
    selection: str = "inner-cv"
    select_by: str = "r2"
    seeding: str = "derived"
    # Protocol axes (each value a unit of its own): training fractions (the rest is the test set;
    # empty = one 1 - test_fraction split as before) and Gaussian noise levels eta (noise sd =
    # eta times the training part's std) added where noise_on says: test features, training targets.
    train_fractions: tuple[float, ...] = ()
    noise_etas: tuple[float, ...] = (0.0,)
    noise_on: str = "test"

    def axes(self) -> list[tuple[float, float]]:
        """Every (train_fraction, noise_eta) of a repetition, as stored in the unit key."""
        fractions = self.train_fractions or (round(1.0 - self.test_fraction, 10),)
        return [(f, e) for f in fractions for e in self.noise_etas]


@dataclass(frozen=True)
class Base:
    """A base ensemble of the experiment: a registered kind (or module:Class) with its parameters;
    ``id`` labels it in the store and tables (RF, ERT, RF@400, GBM-DT, ...)."""

    id: str
    kind: str
    params: dict = field(default_factory=dict)

    @property
    def ensemble(self) -> Ensemble:
        return get_ensemble(self.kind)

    def fit(self, X: np.ndarray, y: np.ndarray, seed: int | None) -> FittedEnsemble:
        return self.ensemble.fit(X, y, seed, **self.params)


@dataclass(frozen=True)
class ModelConfig:
    """A model of the experiment: a family with fixed values and grids, or the best of other models."""

    id: str
    family: str | None
    grid: dict[str, tuple[float, ...]] = field(default_factory=dict)
    loss: str = "l2"
    solver: str = DEFAULT_SOLVER
    best_of: tuple[str, ...] = ()
    select_as: str | None = None  # evaluated at the grid point this other model selects

    def grid_points(self) -> list[dict[str, float]]:
        """Every combination of the model's hyperparameter values, design ones varying slowest."""
        if not self.grid:
            return [{}]
        names = list(self.grid)
        return [dict(zip(names, combo)) for combo in itertools.product(*(self.grid[n] for n in names))]


@dataclass(frozen=True)
class Experiment:
    name: str
    seed: int
    data_seed: int
    synthetic_noise: str
    protocol: Protocol
    datasets: tuple[str, ...]
    scale: str
    bases: tuple[Base, ...]
    models: tuple[ModelConfig, ...]
    solver: str
    results: Path
    source: str
    raw: dict

    def unit_hash(self) -> str:
        """Hash of everything that changes a unit's numbers (not the name, reps or the dataset list)."""
        keep = {k: v for k, v in self.raw.items() if k not in ("name", "datasets", "description", "results")}
        keep["protocol"] = {k: v for k, v in dict(keep.get("protocol") or {}).items() if k != "reps"}
        text = json.dumps(keep, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_experiment(path: str | Path, overrides: list[str] | None = None,
                    results_dir: str | Path | None = None) -> Experiment:
    """Read, override (``key.sub=value``) and validate a config file."""
    src = str(path)
    raw = read_yaml_file(path, "config")
    if not isinstance(raw, dict):
        raise AfrInputError(f"{src}: the top level must be a mapping with keys {sorted(_TOP_KEYS)}")
    for item in overrides or []:
        apply_override(raw, item, src)
    return validate(raw, src, results_dir)


def read_yaml_file(path: str | Path, what: str) -> Any:
    """The parsed YAML of a user's ``what`` file (a config, a study); a missing, unreadable,
    non-UTF-8 or malformed file is one AfrInputError naming the file (and line, column)."""
    path = Path(path)
    src = str(path)
    if not path.is_file():
        raise AfrInputError(f"{src}: no such {what} file")
    try:
        return load_yaml(path.read_text(encoding="utf-8"), src)
    except UnicodeDecodeError as err:
        raise AfrInputError(f"{src}: not a UTF-8 text file (byte {err.start}: {err.reason}); "
                            f"a {what} is YAML text") from None
    except OSError as err:
        raise AfrInputError(f"{src}: cannot read the {what} ({err.strerror})") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise AfrInputError(f"{src}: malformed YAML{where}: {getattr(err, 'problem', err)}") from None


def apply_override(raw: dict, item: str, src: str) -> None:
    """Apply one ``--set a.b.c=value`` (value parsed as YAML) to the raw config, in place."""
    if "=" not in item:
        raise AfrInputError(f"--set {item!r}: expected KEY=VALUE, e.g. protocol.reps=10")
    key, text = item.split("=", 1)
    value = yaml.safe_load(text)
    parts = key.strip().split(".")
    node: Any = raw
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        where = ".".join(parts[:depth + 1])
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise AfrInputError(f"{src}: --set {key}: {where} is not an index of a list of {len(node)}")
            if last:
                node[int(part)] = value
            else:
                node = node[int(part)]
            continue
        if not isinstance(node, dict):
            raise AfrInputError(f"{src}: --set {key}: {'.'.join(parts[:depth])} is not a mapping")
        allowed = _allowed_keys(parts[:depth], node)
        if allowed is not None and part not in allowed:
            raise AfrInputError(f"{src}: --set {key}: unknown key {where!r}; allowed: {', '.join(sorted(allowed))}")
        if last:
            node[part] = value
        else:
            node = node.setdefault(part, {})


def _allowed_keys(path: list[str], node: dict) -> set[str] | None:
    """Keys allowed at a config path (None where any name is allowed, e.g. under a grid)."""
    if not path:
        return _TOP_KEYS
    if path == ["protocol"]:
        return _PROTOCOL_KEYS
    if path == ["preprocess"]:
        return _PREPROCESS_KEYS
    if len(path) == 2 and path[0] == "bases":
        kind = node.get("kind")
        try:
            return _BASE_KEYS | set(get_ensemble(kind).param_names())
        except AfrInputError:
            return None  # an unknown kind is reported by validate, with what is allowed
    if len(path) == 2 and path[0] == "models":
        return _MODEL_KEYS
    return None


def validate(raw: dict, src: str, results_dir: str | Path | None = None) -> Experiment:
    """Check every key and value of a raw config; the first problem raises AfrInputError."""
    _no_unknown(raw, _TOP_KEYS, src, "")
    name = _require(raw, "name", src, "")
    if name_error(name):  # a plain file name: the store stays inside results/ (afr_cli.path_rules)
        raise AfrInputError(f"{src}: {name_error(name)}")
    seed = _int(raw.get("seed", 0), src, "seed", low=0)
    data_seed = _int(raw.get("data_seed", 0), src, "data_seed", low=0)
    noise = _choice(raw.get("synthetic_noise", "documented"), ("documented", "none"), src, "synthetic_noise")
    protocol = _protocol(raw.get("protocol") or {}, src)
    datasets = _datasets(_require(raw, "datasets", src, ""), src)
    pre = raw.get("preprocess") or {}
    _no_unknown(pre, _PREPROCESS_KEYS, src, "preprocess")
    scale = _choice(pre.get("scale", "standard"), SCALES, src, "preprocess.scale")
    solver = _choice(str(raw.get("solver", DEFAULT_SOLVER)).upper(), SOLVERS, src, "solver")
    bases = _bases(_require(raw, "bases", src, ""), src)
    models = _models(_require(raw, "models", src, ""), src, solver)
    _check_compatible(models, bases, src)
    out = Path(results_dir) if results_dir else Path(raw.get("results") or Path("results") / name)
    return Experiment(name, seed, data_seed, noise, protocol, datasets, scale, bases, models, solver, out,
                      src, copy.deepcopy(raw))


def _no_unknown(node: Any, allowed: set[str], src: str, where: str) -> None:
    if not isinstance(node, dict):
        raise AfrInputError(f"{src}: {where or 'top level'}: must be a mapping with keys {', '.join(sorted(allowed))}")
    for key in node:
        if key not in allowed:
            at = f"{where}.{key}" if where else str(key)
            raise AfrInputError(f"{src}: {at}: unknown key; allowed: {', '.join(sorted(allowed))}")


def _require(node: dict, key: str, src: str, where: str) -> Any:
    if key not in node or node[key] is None:
        raise AfrInputError(f"{src}: {where + '.' if where else ''}{key}: missing (required)")
    return node[key]


def _int(value: Any, src: str, where: str, low: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or (low is not None and value < low):
        bound = f" >= {low}" if low is not None else ""
        raise AfrInputError(f"{src}: {where}: {value!r} is not allowed; must be an integer{bound}")
    return value


def _choice(value: Any, allowed: tuple[str, ...], src: str, where: str) -> str:
    if value not in allowed:
        raise AfrInputError(f"{src}: {where}: {value!r} is not allowed; allowed: {', '.join(allowed)}")
    return value


def _protocol(node: dict, src: str) -> Protocol:
    _no_unknown(node, _PROTOCOL_KEYS, src, "protocol")
    reps = _int(node.get("reps", 100), src, "protocol.reps", low=1)
    frac = node.get("test_fraction", 0.2)
    if isinstance(frac, bool) or not isinstance(frac, (int, float)) or not 0 < frac < 1:
        raise AfrInputError(f"{src}: protocol.test_fraction: {frac!r} is not allowed; must be in (0, 1)")
    folds = _int(node.get("inner_folds", 3), src, "protocol.inner_folds", low=2)
    selection = _choice(node.get("selection", "inner-cv"), SELECTIONS, src, "protocol.selection")
    select_by = _choice(node.get("select_by", "r2"), SELECT_BY, src, "protocol.select_by")
    seeding = _choice(node.get("seeding", "derived"), SEEDINGS, src, "protocol.seeding")
    if "train_fractions" in node and "test_fraction" in node:
        raise AfrInputError(f"{src}: protocol.train_fractions: give train_fractions or test_fraction, not both "
                            "(with train_fractions the rest of the data is the test set)")
    fractions = _number_list(node, "train_fractions", (), src, lambda v: 0 < v < 1, "in (0, 1)")
    etas = _number_list(node, "noise_eta", (0.0,), src, lambda v: v >= 0, ">= 0")
    noise_on = _choice(node.get("noise_on", "test"), NOISE_ON, src, "protocol.noise_on")
    return Protocol(reps, float(frac), folds, selection, select_by, seeding, fractions, etas, noise_on)


def _number_list(node: dict, key: str, default: tuple[float, ...], src: str, ok, allowed: str) -> tuple[float, ...]:
    """A protocol axis: a non-empty list of distinct numbers (a single number is a list of one)."""
    if key not in node:
        return default
    values = node[key] if isinstance(node[key], list) else [node[key]]
    where = f"{src}: protocol.{key}"
    if not values:
        raise AfrInputError(f"{where}: must be a non-empty list of numbers {allowed}")
    for j, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not ok(v):
            raise AfrInputError(f"{where}[{j}]: {v!r} is not allowed; must be a number {allowed}")
    if len(set(values)) != len(values):
        raise AfrInputError(f"{where}: a value is listed twice")
    return tuple(float(v) for v in values)


def _datasets(node: Any, src: str) -> tuple[str, ...]:
    from afr_cli.data import DATASETS, canonical_name

    if not isinstance(node, list) or not node:
        raise AfrInputError(f"{src}: datasets: must be a non-empty list of dataset names")
    names = []
    for i, item in enumerate(node):
        try:
            names.append(canonical_name(str(item)))
        except AfrInputError:
            raise AfrInputError(f"{src}: datasets[{i}]: unknown dataset {item!r}; allowed: {', '.join(DATASETS)}") from None
    if len(set(names)) != len(names):
        raise AfrInputError(f"{src}: datasets: a dataset is listed twice")
    return tuple(names)


def _bases(node: Any, src: str) -> tuple[Base, ...]:
    if not isinstance(node, list) or not node:
        raise AfrInputError(f"{src}: bases: must be a non-empty list of base ensembles ({{kind: NAME, ...}}; "
                            "see `afr models`)")
    bases = []
    for i, item in enumerate(node):
        where = f"bases[{i}]"
        if not isinstance(item, dict):
            raise AfrInputError(f"{src}: {where}: must be a mapping {{kind: NAME, id: ..., parameters of that kind}}")
        kind = _require(item, "kind", src, where)
        ensemble = get_ensemble(kind, f"{src}: {where}.kind")
        params = ensemble.check_params({k: v for k, v in item.items() if k not in _BASE_KEYS}, f"{src}: {where}")
        base_id = item.get("id", ensemble.default_id(params))
        if not isinstance(base_id, str) or not base_id:
            raise AfrInputError(f"{src}: {where}.id: must be a non-empty string")
        bases.append(Base(base_id, kind, params))
    ids = [b.id for b in bases]
    if len(set(ids)) != len(ids):
        raise AfrInputError(f"{src}: bases: two bases share the id {ids}; give each an id")
    return tuple(bases)


def _check_compatible(models: tuple[ModelConfig, ...], bases: tuple[Base, ...], src: str) -> None:
    """Every family can attend over every base (a family declares the ensemble structures it takes)."""
    for i, model in enumerate(models):
        if model.best_of:
            continue
        family = get_family(model.family)
        for base in bases:
            structure = base.ensemble.structure
            if structure not in family.structures:
                raise AfrInputError(f"{src}: models[{i}].family: {family.name} cannot run on base {base.id} "
                                    f"(kind {base.kind}, a {structure} ensemble); it takes "
                                    f"{' or '.join(family.structures)} ensembles")


def _models(node: Any, src: str, solver: str) -> tuple[ModelConfig, ...]:
    if not isinstance(node, list) or not node:
        raise AfrInputError(f"{src}: models: must be a non-empty list of models")
    models: list[ModelConfig] = []
    for i, item in enumerate(node):
        where = f"models[{i}]"
        _no_unknown(item, _MODEL_KEYS, src, where)
        mid = _require(item, "id", src, where)
        if not isinstance(mid, str) or not mid:
            raise AfrInputError(f"{src}: {where}.id: must be a non-empty string")
        if "best_of" in item:
            models.append(_best_of(item, models, src, where, mid))
            continue
        family_spec = _require(item, "family", src, where)
        if not isinstance(family_spec, str):
            raise AfrInputError(f"{src}: {where}.family: must be a family name (see `afr models`) or module:Class")
        family = get_family(family_spec, f"{src}: {where}.family")
        loss = _choice(item.get("loss", "l2"), LOSSES, src, f"{where}.loss")
        msolver = _choice(str(item.get("solver", solver)).upper(), SOLVERS, src, f"{where}.solver")
        if loss == "l1" and msolver == "OSQP":
            raise AfrInputError(f"{src}: {where}.solver: OSQP solves QPs only; loss l1 needs AUTO, ECOS, CLARABEL or SCS")
        grid = _grid(item, family, src, where)
        models.append(ModelConfig(mid, family_spec, grid, loss, msolver, select_as=item.get("select_as")))
    ids = [m.id for m in models]
    dup = sorted({x for x in ids if ids.count(x) > 1})
    if dup:
        raise AfrInputError(f"{src}: models: duplicate model id {dup[0]!r}")
    _check_select_as(models, src)
    return tuple(models)


def _check_select_as(models: list[ModelConfig], src: str) -> None:
    """``select_as: ID`` names a model that chooses its own grid point, over the same grid."""
    choosers = {m.id: m for m in models if not m.best_of and m.select_as is None}
    for i, model in enumerate(models):
        if model.select_as is None:
            continue
        where = f"{src}: models[{i}].select_as"
        other = choosers.get(model.select_as) if isinstance(model.select_as, str) else None
        if other is None or other.id == model.id:
            raise AfrInputError(f"{where}: {model.select_as!r} is not a model that selects its own grid point; "
                                f"allowed: {', '.join(k for k in choosers if k != model.id) or 'none'}")
        if other.grid != model.grid:
            raise AfrInputError(f"{where}: {model.id} and {other.id} must have the same grid "
                                f"({dict(model.grid)} != {dict(other.grid)})")


def _grid(item: dict, family, src: str, where: str) -> dict[str, tuple[float, ...]]:
    """Fixed ``params`` and ``grid`` lists merged into one grid; every family parameter gets values."""
    names = [p.name for p in family.params]
    params = item.get("params") or {}
    grid = item.get("grid") or {}
    for key, node in (("params", params), ("grid", grid)):
        if not isinstance(node, dict):
            raise AfrInputError(f"{src}: {where}.{key}: must be a mapping of {family.name} hyperparameters")
        for name in node:
            if name not in names:
                allowed = ", ".join(names) if names else "none (this family has no hyperparameters)"
                raise AfrInputError(f"{src}: {where}.{key}.{name}: unknown hyperparameter of {family.name}; allowed: {allowed}")
    both = set(params) & set(grid)
    if both:
        raise AfrInputError(f"{src}: {where}: {sorted(both)[0]} is given in both params and grid")
    out: dict[str, tuple[float, ...]] = {}
    for p in family.params:  # design parameters first: the grid varies them slowest
        at = f"{where}.grid.{p.name}"
        if p.name in grid:
            values = grid[p.name]
            if not isinstance(values, list) or not values:
                raise AfrInputError(f"{src}: {at}: must be a non-empty list of values ({p.name} {p.allowed()})")
            checked = tuple(p.check(v, f"{src}: {at}[{j}]") for j, v in enumerate(values))
            if len(set(checked)) != len(checked):
                raise AfrInputError(f"{src}: {at}: a value is listed twice")
        elif p.name in params:
            checked = (p.check(params[p.name], f"{src}: {where}.params.{p.name}"),)
        else:
            checked = (p.default,)
        out[p.name] = checked
    order = [p.name for p in sorted(family.params, key=lambda p: p.kind != "design")]
    return {n: out[n] for n in order}


def _best_of(item: dict, previous: list[ModelConfig], src: str, where: str, mid: str) -> ModelConfig:
    extra = set(item) - {"id", "best_of"}
    if extra:
        raise AfrInputError(f"{src}: {where}.{sorted(extra)[0]}: not allowed with best_of (only id and best_of)")
    parts = item["best_of"]
    known = {m.id: m for m in previous}
    if not isinstance(parts, list) or len(parts) < 2:
        raise AfrInputError(f"{src}: {where}.best_of: must list at least two model ids defined above it")
    for j, part in enumerate(parts):
        if part not in known or known[part].best_of:
            raise AfrInputError(f"{src}: {where}.best_of[{j}]: {part!r} is not a model defined above; "
                                f"allowed: {', '.join(m.id for m in previous if not m.best_of)}")
    return ModelConfig(mid, None, best_of=tuple(parts))


def families_help() -> list[tuple[str, str, str]]:
    """(family, summary, hyperparameters) rows for ``afr models``."""
    rows = []
    for fam in FAMILIES.values():
        params = "; ".join(f"{p.name} ({p.kind}, {p.allowed()}, default {p.default:g})" for p in fam.params)
        rows.append((fam.name, fam.summary, params or "none"))
    return rows
