"""The config schema table (afr_cli/config/schema.py) drives validation, --set, afr models and docs/config.md;
--set values are YAML with one-line errors; CLI values are never parsed as YAML; config hashes stay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, assert_one_line_error, run_afr

from afr_cli.config.experiment import Protocol, load_experiment
from afr_cli.config.key_docs import REFERENCE_FILE, reference_page
from afr_cli.config.schema import (
    AXIS,
    CHOICE,
    ENTRIES,
    ID,
    INTEGER,
    NAME,
    NUMBER,
    PREPROCESS,
    PROTOCOL,
    SECTION,
    SECTIONS,
    TEXT,
    TOP,
    Key,
    key_rows,
    section_at,
)
from afr_cli.errors import AfrInputError

GOOD = {
    "name": "t",
    "seed": 1,
    "protocol": {"reps": 2, "inner_folds": 3},
    "datasets": ["Diabetes", "Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 10}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "a", "family": "eps-abrf", "grid": {"eps": [0, 0.5], "tau": [1, 10]}},
    ],
}

# Every config's hash (the store's config_hash: a store refuses a config whose hash differs), computed
# on main at 7050df0 before the schema table existed: the table must not change what is hashed.
HASHES = {
    "configs/abrf_ert.yaml": "af92deb60e6e7fa6",
    "configs/abrf_ert_derived.yaml": "00e5003aad9b1487",
    "configs/abrf_rf.yaml": "2bbd918aeb10fddc",
    "configs/abrf_rf_derived.yaml": "5512335883eff2f5",
    "configs/agboost_dt.yaml": "f7ad60f4c0d7e62d",
    "configs/agboost_ert.yaml": "9980098769800a40",
    "configs/agboost_gbm_baselines.yaml": "2612b0b853457675",
    "configs/dm_soft.yaml": "c65bcc88329f1097",
    "configs/fidelity/forests.yaml": "84d4f420cf851da9",
    "configs/fidelity/forests_trees.yaml": "82ccfe424f0ebe22",
    "configs/larf_ert.yaml": "afacca02c429afac",
    "configs/larf_leave_self_out.yaml": "93f72361b65d8f72",
    "configs/larf_rf.yaml": "9f9e7bf53093eafd",
    "configs/larf_trees.yaml": "4ae7731dc75d62c5",
    "configs/quickstart.yaml": "1bc18335357b7d71",
    "configs/regress.yaml": "61c8bf8636d4582c",
    "configs/regress_agboost.yaml": "25c361d98cb0763c",
    "configs/robust_rf_all.yaml": "428a7f096d7bf645",
    "configs/robust_rf_boston.yaml": "6a019a9d72744bc4",
    "configs/robust_rf_diabetes.yaml": "765bc84a8269deed",
    "configs/satrf_ert.yaml": "113441b3095dcdb1",
    "configs/satrf_rf.yaml": "820bf301e0924826",
    "configs/satrf_softmax_scaling.yaml": "406395dcba4fe9e1",
    "configs/satrf_surfaces.yaml": "d2b5ac5a00c8a307",
    "configs/synthetic_draws.yaml": "8bb08b669d1f19e7",
}


def _write(tmp_path: Path, cfg: dict, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize("config", sorted(HASHES))
def test_config_hashes_are_those_of_main_before_the_table(config):
    assert load_experiment(ROOT / config).unit_hash() == HASHES[config]


def test_committed_stores_accept_their_configs():
    """Every committed export's manifest names its config and hash: extending it must still work,
    as ``afr reproduce`` extends it (a store a paper's experiments declare with ``set``, ``datasets``
    or ``out``: its config under those overrides, the repetition count aside, which a run may raise)."""
    from afr_cli.catalogue.knowledge import papers
    from afr_cli.reproduction.pipeline import _overrides

    declared = {spec.store(): spec for paper in papers() for spec in paper.experiments}
    manifests = sorted(ROOT.glob("results/**/export/manifest.json"))
    assert manifests
    checked = overridden = 0
    for path in manifests:
        manifest = json.loads(path.read_text())["manifest"]
        source = ROOT / str(manifest.get("config_source", ""))
        if manifest.get("config_hash") and source.is_file():
            spec = declared.get(path.parent.parent.relative_to(ROOT / "results").as_posix())
            overrides = _overrides(spec, None, None) if spec is not None else []
            assert load_experiment(source, overrides).unit_hash() == manifest["config_hash"], path
            checked += 1
            overridden += bool(spec is not None and (spec.sets or spec.datasets))
    assert checked >= 10 and overridden >= 15


def test_reference_page_is_current():
    committed = (ROOT / REFERENCE_FILE).read_text(encoding="utf-8")
    assert committed == reference_page(), "docs/config.md is stale: regenerate it with `afr docs config`"


def test_every_key_of_the_table_is_on_the_reference_page_and_in_the_models_listing():
    page = reference_page()
    listed = {row[0] for row in key_rows()}
    for section in SECTIONS:
        assert f"## {section.title}" in page
        prefix = "" if section is TOP else f"{section.title}."
        for key in section.keys:
            assert f"| `{key.name}` |" in page and prefix + key.name in listed
            assert key.doc and key.allowed(), (section.title, key.name)


def test_defaults_of_the_validated_protocol_are_the_tables(tmp_path):
    assert Protocol() == Protocol(*(k.default for k in PROTOCOL.keys))
    exp = load_experiment(_write(tmp_path, {**GOOD, "protocol": {}}))
    assert exp.protocol == Protocol()
    assert exp.scale == PREPROCESS["scale"].default
    assert (exp.seed, exp.solver) == (1, TOP["solver"].default)


def _invalid(key: Key):
    """A value the key must refuse (the idea of scikit-learn's generate_invalid_param_val)."""
    if key.type in (INTEGER, NUMBER):
        return (key.bound.low - 1) if key.bound.low is not None else "x"
    if key.type == AXIS:
        return [key.bound.low - 1] if key.bound.low is not None else ["x"]
    if key.type == CHOICE:
        return "no-such-choice"
    if key.type in (NAME, ID):
        return ""
    if key.type == TEXT:
        return [1]
    if key.type == SECTION:
        return {"no_such_key": 1}
    return None


PLAIN = [
    (section, key)
    for section in (TOP, PROTOCOL, PREPROCESS)
    for key in section.keys
    if key.type not in (ENTRIES,) and _invalid(key) is not None
]


@pytest.mark.parametrize("section, key", PLAIN, ids=[f"{s.title}.{k.name}" for s, k in PLAIN])
def test_every_declared_key_refuses_a_bad_value_in_one_line_naming_it(tmp_path, section, key):
    cfg = yaml.safe_load(yaml.safe_dump(GOOD))
    node = cfg if section is TOP else cfg.setdefault(section.title, {})
    node[key.name] = _invalid(key)
    if key.name == "train_fractions":
        node.pop("test_fraction", None)
    path = _write(tmp_path, cfg)
    with pytest.raises(AfrInputError) as err:
        load_experiment(path)
    message = str(err.value)
    where = key.name if section is TOP else f"{section.title}.{key.name}"
    assert "\n" not in message and message.startswith(f"{path}: {where}"), message


@pytest.mark.parametrize("value, ok", [(float("inf"), False), (float("nan"), False), (0.5, True)])
def test_axes_take_finite_numbers_only(tmp_path, value, ok):
    cfg = {**GOOD, "protocol": {"reps": 2, "noise_eta": [0, value]}}
    if ok:
        assert load_experiment(_write(tmp_path, cfg)).protocol.noise_etas == (0.0, value)
    else:
        with pytest.raises(AfrInputError, match=r"protocol.noise_eta\[1\]"):
            load_experiment(_write(tmp_path, cfg))


def test_set_takes_the_keys_the_table_declares(tmp_path):
    path = _write(tmp_path, GOOD)
    assert section_at(["protocol"]) is PROTOCOL and section_at(["models", "1", "grid"]) is None
    for key in PROTOCOL.keys:
        if key.type == INTEGER:
            assert (
                getattr(load_experiment(path, [f"protocol.{key.name}={key.default + 1}"]).protocol, key.name)
                == key.default + 1
            )
    with pytest.raises(AfrInputError) as err:
        load_experiment(path, ["protocol.rep=3"])
    assert f"allowed: {', '.join(sorted(PROTOCOL.names()))}" in str(err.value)
    with pytest.raises(AfrInputError, match="models.0.famly"):
        load_experiment(path, ["models.0.famly=forest"])
    assert load_experiment(path, ["models.1.solver=ecos"]).models[1].solver == "ECOS"


@pytest.mark.parametrize("value", ["[1,", "{a: [", "'unclosed", "a: b: c", "[1, 2]]"])
def test_a_malformed_set_value_is_one_line_naming_key_and_value(tmp_path, value):
    with pytest.raises(AfrInputError) as err:
        load_experiment(_write(tmp_path, GOOD), [f"protocol.reps={value}"])
    message = str(err.value)
    assert "\n" not in message and "--set protocol.reps" in message and repr(value) in message


def test_cli_values_are_values_not_yaml(tmp_path):
    """A (key, value) override is used as it is: a quote or bracket in a dataset name stays text."""
    path = _write(tmp_path, GOOD)
    with pytest.raises(AfrInputError, match=r"datasets\[0\]: unknown dataset \"Dia'betes\""):
        load_experiment(path, [("datasets", ["Dia'betes"])])
    exp = load_experiment(path, [("datasets", ["yacht"]), ("protocol.reps", 3)])
    assert exp.datasets == ("Yacht",) and exp.protocol.reps == 3


def _snapshot(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, needles",
    [
        (
            ("run", "c.yaml", "--out", "s", "--datasets", "Dia'betes"),
            ["--datasets: unknown dataset", "Dia'betes", "did you mean 'Diabetes'?"],
        ),
        (("run", "c.yaml", "--out", "s", "--datasets", "Yacht,[x]"), ["--datasets: unknown dataset", "'[x]'"]),
        (("run", "c.yaml", "--out", "s", "--datasets", "a: b"), ["--datasets: unknown dataset", "'a: b'"]),
        (("run", "c.yaml", "--out", "s", "--set", "protocol.reps=[1,"), ["--set protocol.reps", "'[1,'"]),
        (("validate", "c.yaml", "--set", "protocol.reps=[1,"), ["--set protocol.reps", "'[1,'", "not a YAML value"]),
        (("validate", "c.yaml", "--set", "models.1.grid.eps={a: ["), ["--set models.1.grid.eps", "'{a: ['"]),
        (("run", "c.yaml", "--out", "s", "--set", "protocol.rep=3"), ["protocol.rep", "unknown key", "inner_folds"]),
    ],
)
def test_bad_cli_values_are_one_line_exit_2_and_write_nothing(tmp_path, args, needles):
    _write(tmp_path, GOOD)
    before = _snapshot(tmp_path)
    proc = run_afr(*args, cwd=tmp_path)
    assert_one_line_error(proc, *needles)
    assert _snapshot(tmp_path) == before


@pytest.mark.slow
def test_docs_config_writes_and_checks_the_page(tmp_path):
    assert run_afr("docs", "config", "--check").returncode == 0
    out = tmp_path / "config.md"
    proc = run_afr("docs", "config", "--out", str(out))
    assert proc.returncode == 0 and out.read_text(encoding="utf-8") == reference_page()
    out.write_text(reference_page().replace("| `reps` |", "| `repz` |"))
    stale = run_afr("docs", "config", "--check", "--out", str(out))
    assert stale.returncode == 1 and "afr docs config" in stale.stderr


@pytest.mark.slow
def test_models_lists_the_config_keys_from_the_table():
    proc = run_afr("models")
    assert proc.returncode == 0
    for section in (PROTOCOL, PREPROCESS):
        for key in section.keys:
            assert f"{section.title}.{key.name}" in proc.stdout


def test_an_integer_past_64_bits_is_compared_exactly_and_a_seed_has_a_range():
    from afr_cli.config.schema import MAX_SEED
    from afr_cli.core.params import as_float, in_interval, interval_text

    big = 99999999999999999999999
    assert in_interval(big, 0, None) and not in_interval(big, 0, MAX_SEED) and in_interval(MAX_SEED, 0, MAX_SEED)
    assert as_float(10**400) == float("inf") and as_float(-(10**400)) == float("-inf")
    assert interval_text(0, MAX_SEED) == "in [0, 4294967295]" and interval_text(0, 1, True, True) == "in (0, 1)"
    for key, value in (("seed", big), ("seed", MAX_SEED + 1), ("data_seed", -1)):
        with pytest.raises(AfrInputError, match=rf"{key}: .* must be an integer in \[0, 4294967295\]"):
            load_experiment(ROOT / "configs" / "quickstart.yaml", [f"{key}={value}"])
    assert load_experiment(ROOT / "configs" / "quickstart.yaml", [f"seed={MAX_SEED}"]).seed == MAX_SEED
