"""Experiment configs: YAML -> a validated ``Experiment``; every error names the file, key and what is allowed.

An experiment is one YAML file: name, seed, protocol, datasets, preprocessing, base
ensembles, models (fixed hyperparameters and grids), solver, results directory. Its keys,
types, domains and defaults are declared once, in ``afr_cli.config.schema``; this module holds the
validated result (``Experiment`` and its parts), reading and ``--set`` overrides, and the
small validators of what the table cannot state (datasets, bases, models and their grids).
Unknown keys are errors, in the file and in ``--set`` overrides alike: a typo must never pass.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from afr_cli.config.family_names import unknown_family
from afr_cli.config.plugin_files import PluginSource, activate, beside_config, defines_classes, parse_plugins
from afr_cli.config.schema import (
    BASE,
    MODEL,
    NOISE_ON,
    PROTOCOL,
    SCALES,
    SEEDINGS,
    SELECT_BY,
    SELECTIONS,
    TOP,
    check_known,
    check_section,
    section_at,
)
from afr_cli.core.names import hint
from afr_cli.core.yaml_safe import load_yaml
from afr_cli.data.files import DatasetSource, LoaderDataset, parse_entry
from afr_cli.ensembles import Ensemble, get_ensemble
from afr_cli.errors import AfrInputError
from afr_cli.models import FAMILIES, get_family
from afr_cli.solvers.solve import DEFAULT_SOLVER
from afr_cli.store import has_results

__all__ = [
    "Base",
    "Experiment",
    "ModelConfig",
    "NOISE_ON",
    "Protocol",
    "SCALES",
    "SEEDINGS",
    "SELECT_BY",
    "SELECTIONS",
    "apply_override",
    "families_help",
    "load_experiment",
    "read_yaml_file",
    "set_key",
    "validate",
]

_P = {k.name: k.default for k in PROTOCOL.keys}


@dataclass(frozen=True)
class Protocol:
    """The validated ``protocol:`` section; its defaults are the schema's (``afr_cli.config.schema.PROTOCOL``)."""

    reps: int = _P["reps"]
    test_fraction: float = _P["test_fraction"]
    inner_folds: int = _P["inner_folds"]
    selection: str = _P["selection"]
    select_by: str = _P["select_by"]
    seeding: str = _P["seeding"]
    # Protocol axes (each value a unit of its own): training fractions (the rest is the test set;
    # empty = one 1 - test_fraction split as before) and Gaussian noise levels eta (noise sd =
    # eta times the training part's std) added where noise_on says: test features, training targets.
    train_fractions: tuple[float, ...] = _P["train_fractions"]
    noise_etas: tuple[float, ...] = _P["noise_eta"]
    noise_on: str = _P["noise_on"]
    # which assignment of training rows to the inner folds (0: the seeding's own; UnitSeeds)
    fold_assignment: int = _P["fold_assignment"]

    def axes(self) -> list[tuple[float, float]]:
        """Every (train_fraction, noise_eta) of a repetition, as stored in the unit key."""
        fractions = self.train_fractions or (round(1.0 - self.test_fraction, 10),)
        return [(f, e) for f in fractions for e in self.noise_etas]


@dataclass(frozen=True)
class Base:
    """A base ensemble of the experiment: a registered kind (or module:Class) with its parameters;
    ``id`` labels it in the store and tables (RF, ERT, RF@400, GBM-DT, ...). It only names the
    forest: the engine fits it (``afr_cli.engine.forest_fit``)."""

    id: str
    kind: str
    params: dict = field(default_factory=dict)

    @property
    def ensemble(self) -> Ensemble:
        """The registered (or plugin) ensemble of this kind."""
        return get_ensemble(self.kind)


@dataclass(frozen=True)
class ModelConfig:
    """A model of the experiment: a family with fixed values and grids, or the best of other models."""

    id: str
    family: str | None
    grid: dict[str, tuple[float, ...]] = field(default_factory=dict)
    loss: str = MODEL["loss"].default
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
    """One experiment config, validated: everything ``afr run`` needs to compute and store its units.

    Built only by :func:`validate` (from :func:`load_experiment`), so every field holds a checked
    value and a default where the file gave none; the engine reads it and never changes it. A unit
    is one (dataset, base, repetition[, protocol axis point]); its numbers depend on the fields
    hashed by :meth:`unit_hash`, not on the name, the datasets listed or the repetitions.

    - ``name``: the experiment's name, a plain file name; its store is results/<name>/ by default.
    - ``seed``: the seed splits, folds and forests derive theirs from (with the dataset, repetition,
      stage and base; ``afr_cli.engine.seeds``).
    - ``data_seed``: the one draw of the synthetic datasets for the whole experiment.
    - ``synthetic_noise``: ``documented`` (the registry's noise levels) or ``none`` (the generators'
      defaults), for the synthetic datasets.
    - ``protocol``: the repetitions, test fraction, inner folds, selection rule, seeding and
      protocol axes (:class:`Protocol`).
    - ``datasets``: the dataset names in the config's order (registered ones in their registered
      spelling, your own by the name their entry gives).
    - ``scale``: the feature scaler fitted on each stage's training rows (standard, minmax, none).
    - ``bases``: the base ensembles every model attends over (:class:`Base`), in order.
    - ``models``: the models scored on every unit (:class:`ModelConfig`), in order; a ``best_of``
      model comes after its components.
    - ``solver``: the default solver of every model that names none (each ModelConfig holds its own).
    - ``results``: the store's directory (``--out``, the config's ``results:``, or results/<name>,
      found beside the config when run from elsewhere; :func:`store_directory`).
    - ``source``: the config file's path as given; every error message names it.
    - ``raw``: the config as read, with ``--set`` overrides applied (a copy): what the store's
      manifest records and :meth:`unit_hash` hashes.
    - ``dataset_sources``: the file or loader behind each dataset of your own, by name
      (registered names are not in it).
    - ``plugins``: the plugin files and modules imported before the models were checked (and a
      loader's file that also defines a family or ensemble); workers import them again.
    """

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
    # datasets read from files or loaders, by name (registered names are not in it)
    dataset_sources: dict[str, DatasetSource] = field(default_factory=dict)
    plugins: tuple[PluginSource, ...] = ()  # imported before the models are checked, and in workers

    def unit_hash(self) -> str:
        """Hash of everything that changes a unit's numbers (not the name, reps or the dataset list)."""
        described = ("name", "datasets", "description", "variant_of", "results")
        keep = {k: v for k, v in self.raw.items() if k not in described}
        keep["protocol"] = {k: v for k, v in dict(keep.get("protocol") or {}).items() if k != "reps"}
        text = json.dumps(keep, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_experiment(
    path: str | Path, overrides: list[str | tuple[str, Any]] | None = None, results_dir: str | Path | None = None
) -> Experiment:
    """Read, override and validate a config file. An override is ``"key.sub=value"`` (``--set``:
    the value is YAML) or a ``(key, value)`` pair whose value is used as it is (CLI options such
    as ``--datasets``: their text is never parsed as YAML)."""
    src = str(path)
    raw = read_yaml_file(path, "config")
    if not isinstance(raw, dict):
        raise AfrInputError(f"{src}: the top level must be a mapping with keys {sorted(TOP.names())}")
    for item in overrides or []:
        if isinstance(item, tuple):
            set_key(raw, *item, src=src)
        else:
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
        raise AfrInputError(
            f"{src}: not a UTF-8 text file (byte {err.start}: {err.reason}); a {what} is YAML text"
        ) from None
    except OSError as err:
        raise AfrInputError(f"{src}: cannot read the {what} ({err.strerror})") from None
    except yaml.YAMLError as err:
        raise AfrInputError(f"{src}: malformed YAML{_yaml_where(err)}: {getattr(err, 'problem', err)}") from None


def _yaml_where(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""


def apply_override(raw: dict, item: str, src: str) -> None:
    """Apply one ``--set a.b.c=value`` (value parsed as YAML) to the raw config, in place."""
    if "=" not in item:
        raise AfrInputError(f"--set {item!r}: expected KEY=VALUE, e.g. protocol.reps=10")
    key, text = item.split("=", 1)
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as err:
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise AfrInputError(f"{src}: --set {key.strip()}: {text!r} is not a YAML value: {problem}") from None
    set_key(raw, key, value, src)


def set_key(raw: dict, key: str, value: Any, src: str) -> None:
    """Set the config key ``a.b.c`` (list entries by index: ``models.1.solver``) to ``value``, in
    place; a key the schema does not declare is an error listing the keys allowed there."""
    parts = key.strip().split(".")
    node: Any = raw
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        where = ".".join(parts[: depth + 1])
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
    """Keys allowed at a config path, from the schema (None where any name is allowed, e.g. under a
    grid); a base entry also takes the parameters of its kind."""
    section = section_at(path)
    if section is None:
        return None
    allowed = set(section.names())
    if section is BASE:
        try:
            allowed |= set(get_ensemble(node.get("kind")).param_names())
        except AfrInputError:
            return None  # an unknown kind is reported by validate, with what is allowed
    return allowed


def validate(raw: dict, src: str, results_dir: str | Path | None = None) -> Experiment:
    """Check every key and value of a raw config against the schema; the first problem raises AfrInputError.
    The config's plugins are imported first (the ``plugins`` key comes before bases and models in the
    table), so their families and ensembles are known when the models are checked."""
    v = check_section(
        TOP,
        raw,
        src,
        "",
        {"plugins": _plugins, "protocol": _protocol, "datasets": _datasets_key, "bases": _bases, "models": _models},
    )
    _check_compatible(v["models"], v["bases"], src)
    out = (
        Path(results_dir)
        if results_dir
        else store_directory(Path(v["results"] or Path("results") / v["name"]), Path(src).parent)
    )
    datasets, sources, loader_files = v["datasets"]
    return Experiment(
        v["name"],
        v["seed"],
        v["data_seed"],
        v["synthetic_noise"],
        v["protocol"],
        datasets,
        v["preprocess"]["scale"],
        v["bases"],
        v["models"],
        v["solver"],
        out,
        src,
        copy.deepcopy(raw),
        sources,
        v["plugins"] + loader_files,
    )


def _plugins(node: Any, src: str, done: dict) -> tuple[PluginSource, ...]:
    """The validator of ``plugins:``: each file or module read and imported, its classes registered."""
    plugins = parse_plugins(node, src, Path(src).parent)
    activate(plugins, src)
    return plugins


def _protocol(node: Any, src: str, done: dict) -> Protocol:
    """The protocol's keys from the table, and the one rule across keys: the split is given by
    train_fractions or by test_fraction, not both."""
    v = check_section(PROTOCOL, node, src, "protocol")
    if "train_fractions" in node and "test_fraction" in node:
        raise AfrInputError(
            f"{src}: protocol.train_fractions: give train_fractions or test_fraction, not both "
            "(with train_fractions the rest of the data is the test set)"
        )
    return Protocol(
        v["reps"],
        v["test_fraction"],
        v["inner_folds"],
        v["selection"],
        v["select_by"],
        v["seeding"],
        v["train_fractions"],
        v["noise_eta"],
        v["noise_on"],
        fold_assignment=v["fold_assignment"],
    )


def _datasets_key(
    node: Any, src: str, done: dict
) -> tuple[tuple[str, ...], dict[str, DatasetSource], tuple[PluginSource, ...]]:
    """The validator of ``datasets:`` (``_datasets`` checks the list on its own); a loader whose
    module is a file beside the config, not listed under ``plugins:``, is imported as a plugin is.
    Only the loader is called (in this process), so the file is returned third, for the workers
    to import, only when it also defines a family or ensemble."""
    names, sources = _datasets(node, src)
    imported: list[PluginSource] = []
    found: list[PluginSource] = []
    for name, source in sources.items():
        if not isinstance(source, LoaderDataset):
            continue
        plugin = beside_config(source.module, Path(src).parent, tuple(done["plugins"]) + tuple(imported))
        if plugin is not None:
            activate((plugin,), src, f"datasets ({name}).loader: {plugin.entry}")
            imported.append(plugin)
            if defines_classes(plugin):
                found.append(plugin)
    return names, sources, tuple(found)


def store_directory(given: Path, config_dir: Path) -> Path:
    """Where the config's store is: ``given`` (results/<name>, or the config's ``results:``) as
    seen from the current directory, as always, unless no store is there and one is found at that
    path beside the config or in a folder above it; then that one, so a config run from another
    directory resumes its own store instead of starting a new one. The search stops at the first
    folder holding ``.git`` (a checkout's root) or the home directory."""
    if given.is_absolute() or has_results(given):
        return given
    home = Path.home().resolve()
    folder = config_dir
    for _ in range(64):  # a bound on a path's depth, never reached
        candidate = folder / given
        if has_results(candidate):
            return candidate
        resolved = folder.resolve()
        if (resolved / ".git").exists() or resolved == home or resolved == resolved.parent:
            return given
        folder = Path(os.path.normpath(folder / ".."))
    return given


def _datasets(node: Any, src: str) -> tuple[tuple[str, ...], dict[str, DatasetSource]]:
    """The dataset names, and the file or loader source of each name that is not registered
    (an entry is a name or a mapping, see afr_cli.data.files.parse_entry)."""
    if not isinstance(node, list) or not node:
        raise AfrInputError(
            f"{src}: datasets: must be a non-empty list of dataset names or "
            "{name: NAME, file: PATH, target: COLUMN} mappings"
        )
    names, sources = [], {}
    for i, item in enumerate(node):
        entry = parse_entry(item, f"{src}: datasets[{i}]", Path(src).parent)
        if isinstance(entry, str):
            names.append(entry)
        else:
            names.append(entry.name)
            sources[entry.name] = entry
    if len(set(names)) != len(names):
        raise AfrInputError(f"{src}: datasets: a dataset is listed twice")
    return tuple(names), sources


def _bases(node: Any, src: str, done: dict) -> tuple[Base, ...]:
    """Each base entry: its kind, that kind's own parameters (the ensemble's Params) and its id."""
    if not isinstance(node, list) or not node:
        raise AfrInputError(
            f"{src}: bases: must be a non-empty list of base ensembles ({{kind: NAME, ...}}; see `afr models`)"
        )
    bases = []
    for i, item in enumerate(node):
        where = f"bases[{i}]"
        if not isinstance(item, dict):
            raise AfrInputError(f"{src}: {where}: must be a mapping {{kind: NAME, id: ..., parameters of that kind}}")
        if item.get("kind") is None:
            raise AfrInputError(f"{src}: {where}.kind: missing (required)")
        kind = item["kind"]
        ensemble = get_ensemble(kind, f"{src}: {where}.kind")
        params = ensemble.check_params({k: v for k, v in item.items() if k not in BASE.names()}, f"{src}: {where}")
        base_id = BASE["id"].check(item.get("id", ensemble.default_id(params)), f"{src}: {where}.id")
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
                raise AfrInputError(
                    f"{src}: models[{i}].family: {family.name} cannot run on base {base.id} "
                    f"(kind {base.kind}, a {structure} ensemble); it takes "
                    f"{' or '.join(family.structures)} ensembles"
                )


def _models(node: Any, src: str, done: dict) -> tuple[ModelConfig, ...]:
    """Each model entry: the table's plain keys (id, loss, solver), then its family, params and
    grid (checked against the family's own Params), or best_of; then select_as across models."""
    if not isinstance(node, list) or not node:
        raise AfrInputError(f"{src}: models: must be a non-empty list of models")
    models: list[ModelConfig] = []
    for i, item in enumerate(node):
        where = f"models[{i}]"
        check_known(MODEL, item, src, where)
        if item.get("id") is None:
            raise AfrInputError(f"{src}: {where}.id: missing (required)")
        mid = MODEL["id"].check(item["id"], f"{src}: {where}.id")
        if "best_of" in item:
            models.append(_best_of(item, models, src, where, mid))
            continue
        if item.get("family") is None:
            raise AfrInputError(f"{src}: {where}.family: missing (required)")
        family_spec = item["family"]
        if not isinstance(family_spec, str):
            raise AfrInputError(f"{src}: {where}.family: must be a family name (see `afr models`) or module:Class")
        if family_spec not in FAMILIES and ":" not in family_spec:
            raise unknown_family(family_spec, f"{src}: {where}.family", FAMILIES)
        family = get_family(family_spec, f"{src}: {where}.family")
        loss = MODEL["loss"].check(item.get("loss", MODEL["loss"].default), f"{src}: {where}.loss")
        msolver = MODEL["solver"].check(item.get("solver", done["solver"]), f"{src}: {where}.solver")
        if loss == "l1" and msolver == "OSQP":
            raise AfrInputError(
                f"{src}: {where}.solver: OSQP solves QPs only; loss l1 needs AUTO, ECOS, CLARABEL or SCS"
            )
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
            allowed = [k for k in choosers if k != model.id]
            raise AfrInputError(
                f"{where}: {model.select_as!r} is not a model that selects its own grid point; "
                f"{hint(str(model.select_as), allowed)}allowed: {', '.join(allowed) or 'none'}"
            )
        if other.grid != model.grid:
            raise AfrInputError(
                f"{where}: {model.id} and {other.id} must have the same grid ({dict(model.grid)} != {dict(other.grid)})"
            )


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
                raise AfrInputError(
                    f"{src}: {where}.{key}.{name}: unknown hyperparameter of {family.name}; allowed: {allowed}"
                )
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
        elif not p.recorded_by_default:
            continue  # the family reads its default; the stored hyperparameters leave it out
        else:
            checked = (p.default,)
        out[p.name] = checked
    order = [p.name for p in sorted(family.params, key=lambda p: p.kind != "design")]
    return {n: out[n] for n in order if n in out}


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
            allowed = [m.id for m in previous if not m.best_of]
            raise AfrInputError(
                f"{src}: {where}.best_of[{j}]: {part!r} is not a model defined above; "
                f"{hint(str(part), allowed)}allowed: {', '.join(allowed)}"
            )
    return ModelConfig(mid, None, best_of=tuple(parts))


def families_help() -> list[tuple[str, str, str]]:
    """(family, summary, hyperparameters) rows for ``afr models``."""
    rows = []
    for fam in FAMILIES.values():
        params = "; ".join(f"{p.name} ({p.kind}, {p.allowed()}, default {p.show_default()})" for p in fam.params)
        rows.append((fam.name, fam.summary, params or "none"))
    return rows
