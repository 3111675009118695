"""A corpus of bad inputs and faults, each run as a real ``afr`` subprocess: the exit code,
no traceback, exactly one line on stderr, and (for every bad input) the bytes of every file under
the case's directory unchanged. Kinds: what a run would trip on (caught by validate and run),
paths, YAML and usage, plugins, storage. A fault that must write (a plugin failing inside a unit,
a full disk, a file-size limit) instead leaves only whole units, no journal, and resumes exactly
(tests/test_faults.py); signals and the store's lock are tested there too, with live processes.

Configs are tiny (Friedman1's 100 rows, three trees, one or two repetitions); most cases use
``afr validate``, and the cases run two at a time, each a process forked from one that imported
afr once (tests/afr_forkserver.py), so the corpus takes well under a minute."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from afr_forkserver import Invocation, run_afr_forked
from conftest import run_afr

pytestmark = pytest.mark.slow

TINY = {
    "name": "tiny",
    "seed": 3,
    "protocol": {"reps": 1, "inner_folds": 2},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 3, "min_samples_leaf": 5}],
    "models": [{"id": "rf", "family": "forest"}, {"id": "a", "family": "eps-abrf", "grid": {"eps": [0.0, 1.0]}}],
}

PLUGINS = {
    "plug_import.py": 'raise RuntimeError("boom at import")\n',
    "plug_exit0.py": "import sys\nsys.exit(0)\n",
    "plug_exit3.py": "raise SystemExit(3)\n",
    "plug_os_exit.py": "import os\nos._exit(0)\n",
    "plug_families.py": """
from afr_cli.ensembles import get_ensemble
from afr_cli.models.abrf import EpsABRFFamily

RandomForest = type(get_ensemble("rf"))


class Unbuildable(EpsABRFFamily):
    name = "unbuildable"

    def __init__(self):
        raise ValueError("no constructing me")


class ExitOnBuild(EpsABRFFamily):
    name = "exit-on-build"

    def __init__(self):
        raise SystemExit(0)


class NoName(EpsABRFFamily):
    name = None


class BadEnsemble(RandomForest):
    name = "bad-ensemble"

    def __init__(self):
        raise RuntimeError("no forest today")
""",
}


def _write_config(tmp: Path, text: str | None = None, **changes) -> str:
    path = tmp / "c.yaml"
    path.write_text(text if text is not None else yaml.safe_dump({**TINY, **changes}, allow_unicode=True))
    return "c.yaml"


def _protocol(**changes) -> dict:
    return {**TINY["protocol"], **changes}


def validate(**changes) -> Callable[[Path], tuple[str, ...]]:
    return lambda t: ("validate", _write_config(t, **changes))


def run(**changes) -> Callable[[Path], tuple[str, ...]]:
    return lambda t: ("run", _write_config(t, **changes), "--out", "s", "--jobs", "1", "-q")


def text_config(command: str, text: str) -> Callable[[Path], tuple[str, ...]]:
    extra = ("--out", "s", "--jobs", "1", "-q") if command == "run" else ()
    return lambda t: (command, _write_config(t, text), *extra)


def _tiny_text(**replace: str) -> str:
    """TINY as YAML text, with whole lines replaced (key -> new lines)."""
    lines = yaml.safe_dump(TINY, sort_keys=False).splitlines()
    out = []
    for line in lines:
        key = line.split(":", 1)[0]
        out.append(replace.pop(key) if key in replace else line)
    return "\n".join(out + list(replace.values())) + "\n"


BOMB = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10) if i else ', '.join(['x'] * 10)}]\n" for i in range(9))


def _store(directory: Path, drop: tuple[str, str] | None = None, export: bool = False, config_hash: str = "x") -> Path:
    """A one-unit store of TINY (``drop``: a (table, column) removed; ``export``: its export too)."""
    from afr_cli.store import ResultsStore, UnitRecord
    from afr_cli.store.export import export_store

    store = ResultsStore(directory)
    store.create({"experiment": "tiny", "config_hash": config_hash})
    rows = [
        {
            "model": m,
            "r2": 0.5,
            "mae": 1.0,
            "rmse": 1.0,
            "params": {},
            "selection": "inner-cv",
            "cv_score": 0.4,
            "solver_status": {},
            "seconds": 0.1,
        }
        for m in ("rf", "a")
    ]
    grid = [
        {
            "model": "a",
            "point": {"eps": e},
            "cv_r2": 0.4,
            "cv_mae": 1.0,
            "test_r2": 0.5,
            "test_mae": 1.0,
            "test_rmse": 1.0,
        }
        for e in (0.0, 1.0)
    ]
    store.write_unit(UnitRecord("Friedman1", "RF@3", 0, 0, 80, 20, 0.1, 0.2, rows, grid))
    if export:
        export_store(directory)
    if drop:
        with sqlite3.connect(store.path) as conn:
            conn.execute(f"ALTER TABLE {drop[0]} DROP COLUMN {drop[1]}")
        conn.close()
    return directory


def _store_is_a_directory(tmp: Path, export: bool) -> None:
    _store(tmp / "s", export=export)
    (tmp / "s" / "store.sqlite").unlink()
    (tmp / "s" / "store.sqlite").mkdir()
    (tmp / "s" / "store.sqlite" / "x").write_text("not a store")


def _not_a_store(tmp: Path) -> None:
    (tmp / "s").mkdir()
    with sqlite3.connect(tmp / "s" / "store.sqlite") as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    conn.close()


def _export_with_corrupt_results(tmp: Path) -> None:
    """A committed store as a fresh clone holds it (its export, no store.sqlite), with its
    results table replaced by bytes that are not xz; made by c.yaml's config, so a run reads it."""
    from afr_cli.config.experiment import load_experiment

    _store(tmp / "s", export=True, config_hash=load_experiment(tmp / _write_config(tmp)).unit_hash())
    (tmp / "s" / "store.sqlite").unlink()
    (tmp / "s" / "export" / "results.csv.xz").write_bytes(b"not xz at all")


def _own_csv(tmp: Path, scale: float = 1.0) -> str:
    """A small file of the user's own (40 rows, two features, target y times ``scale``)."""
    lines = ["a,b,y"] + [f"{i % 7},{(i * 3) % 11},{(i % 5 + 1) * scale!r}" for i in range(40)]
    (tmp / "own.csv").write_text("\n".join(lines) + "\n")
    return "own.csv"


def own_data(command: str, name: str = "own", scale: float = 1.0, extra: tuple[str, ...] = ()):
    """A config over one file dataset called ``name`` (its text as YAML writes it: a NUL stays
    an escape in a double-quoted string), run or validated with ``extra`` options."""

    def build(tmp: Path) -> tuple[str, ...]:
        entry = {"name": name, "file": _own_csv(tmp, scale), "target": "y"}
        _write_config(tmp, datasets=[entry])
        tail = ("--out", "s", "--jobs", "1", "-q") if command == "run" else ()
        return (command, "c.yaml", *tail, *extra)

    return build


def _then(setup: Callable[[Path], object], args: tuple[str, ...] | Callable[[Path], tuple[str, ...]]):
    def build(tmp: Path) -> tuple[str, ...]:
        setup(tmp)
        return args(tmp) if callable(args) else args

    return build


@dataclass
class Case:
    kind: str
    name: str
    setup: Callable[[Path], tuple[str, ...]]
    needles: tuple[str, ...] = ()
    code: int = 2
    env: dict = field(default_factory=dict)


TABLE = ("table", "--results", "s")
STATUS = ("status", "s")
RUN = ("run", "c.yaml", "--out", "s", "--jobs", "1", "-q")

CASES = [
    # -- 1. what a run would trip on: validate says so, run refuses before anything is created ----
    Case(
        "trip",
        "inner-folds-beyond-rows-validate",
        validate(protocol=_protocol(inner_folds=90)),
        ("protocol.inner_folds", "90", "at most 40"),
    ),
    Case("trip", "inner-folds-beyond-rows-run", run(protocol=_protocol(inner_folds=90)), ("protocol.inner_folds",)),
    Case("trip", "inner-folds-one-row-each", validate(protocol=_protocol(inner_folds=41)), ("protocol.inner_folds",)),
    Case(
        "trip",
        "inner-folds-on-diabetes",
        validate(datasets=["Diabetes"], protocol=_protocol(inner_folds=300)),
        ("Diabetes", "inner_folds"),
    ),
    Case(
        "trip",
        "train-fraction-no-training-rows",
        validate(protocol=_protocol(train_fractions=[0.005])),
        ("train_fractions", "0 training"),
    ),
    Case(
        "trip",
        "train-fraction-one-test-row",
        validate(protocol=_protocol(train_fractions=[0.5, 0.995])),
        ("train_fractions", "1 test"),
    ),
    Case(
        "trip", "test-fraction-no-training-rows-run", run(protocol=_protocol(test_fraction=0.999)), ("test_fraction",)
    ),
    Case("trip", "test-fraction-one-test-row", validate(protocol=_protocol(test_fraction=0.001)), ("test_fraction",)),
    Case(
        "trip",
        "rep-index-test-fraction",
        validate(protocol=_protocol(seeding="rep-index", test_fraction=0.99)),
        ("test_fraction",),
    ),
    Case(
        "trip",
        "noise-eta-infinite-validate",
        validate(protocol=_protocol(noise_eta=[0.0, float("inf")])),
        ("noise_eta[1]", "finite"),
    ),
    Case("trip", "noise-eta-infinite-run", run(protocol=_protocol(noise_eta=float("inf"))), ("noise_eta",)),
    Case("trip", "noise-eta-nan", validate(protocol=_protocol(noise_eta=[float("nan")])), ("noise_eta",)),
    Case(
        "trip",
        "trees-quintillion-validate",
        validate(bases=[{"kind": "rf", "n_estimators": 10**18}]),
        ("n_estimators", "100000"),
    ),
    Case("trip", "trees-quintillion-run", run(bases=[{"kind": "ert", "n_estimators": 10**18}]), ("n_estimators",)),
    Case(
        "trip",
        "boosting-iterations-quintillion",
        validate(bases=[{"kind": "gbm-dt", "n_estimators": 10**18}], models=[{"id": "g", "family": "agboost"}]),
        ("n_estimators",),
    ),
    Case(
        "trip",
        "leaf-larger-than-fitted-rows",
        validate(bases=[{"kind": "rf", "min_samples_leaf": 200}]),
        ("min_samples_leaf", "200"),
    ),
    Case("trip", "reps-trillion", validate(protocol=_protocol(reps=10**12)), ("protocol.reps", "units")),
    Case(
        "trip",
        "grid-of-a-million-points",
        validate(
            models=[
                {
                    "id": "a",
                    "family": "eps-abrf",
                    "grid": {"eps": [i / 1000 for i in range(1001)], "tau": [1 + i for i in range(1000)]},
                }
            ]
        ),
        ("grid", "grid points"),
    ),
    # -- 2. paths: a name is a plain file name; --out/--root a directory --------------------------
    Case("paths", "name-dotdot-validate", validate(name=".."), ("name", "'..'")),
    Case("paths", "name-dotdot-run", run(name=".."), ("name",)),
    Case("paths", "name-dot-run", lambda t: ("run", _write_config(t, name="."), "--jobs", "1", "-q"), ("name",)),
    Case("paths", "name-with-slash", validate(name="../escape"), ("name", "separator")),
    Case("paths", "name-with-backslash", validate(name="a\\b"), ("name", "separator")),
    Case("paths", "name-with-nul", text_config("validate", _tiny_text(name='name: "a\\0b"')), ("name", "control")),
    Case("paths", "name-with-nul-run", text_config("run", _tiny_text(name='name: "a\\0b"')), ("name",)),
    Case("paths", "name-with-newline", validate(name="a\nb"), ("name", "control")),
    Case("paths", "dataset-name-with-nul", own_data("validate", "a\0b"), ("datasets[0].name", "control")),
    Case("paths", "dataset-name-with-nul-run", own_data("run", "a\0b"), ("datasets[0].name", "control")),
    Case(
        "paths",
        "datasets-option-with-control",
        own_data("run", extra=("--datasets", "o\x01wn")),
        ("--datasets", "control"),
    ),
    Case(
        "usage",
        "datasets-option-misspelt",
        own_data("run", "swiss", extra=("--datasets", "Swiss")),
        ("--datasets: unknown dataset 'Swiss'", "did you mean 'swiss'?", "the config's datasets: swiss"),
    ),
    Case(
        "usage",
        "family-is-a-best-of-model",
        validate(models=[{"id": "sat-rf", "family": "sat-rf"}]),
        ("models[0].family", "best_of", "sat-rf-y, sat-rf-x, sat-rf-yx"),
    ),
    Case(
        "trip",
        "target-near-1e301-run",
        own_data("run", scale=1e301),
        ("own.csv", "column 'y'", "allowed magnitude is 1e+100"),
    ),
    Case(
        "paths",
        "name-too-long",
        lambda t: ("run", _write_config(t, name="n" * 300), "--jobs", "1", "-q"),
        ("name", "300 bytes"),
    ),
    Case("paths", "name-too-many-bytes", validate(name="é" * 51), ("name", "102 bytes")),
    Case("paths", "name-empty", validate(name=""), ("name",)),
    Case("paths", "name-not-a-string", validate(name=12), ("name",)),
    Case("paths", "out-empty", lambda t: ("run", _write_config(t), "--out", "", "-q"), ("--out", "empty")),
    Case("paths", "out-blank", lambda t: ("run", _write_config(t), "--out", "  ", "-q"), ("--out", "empty")),
    Case(
        "paths",
        "out-is-a-file",
        _then(lambda t: (t / "f").write_text("x"), ("run", "c.yaml", "--out", "f", "-q")),
        ("--out", "is a file"),
    ),
    Case(
        "paths",
        "out-component-too-long",
        lambda t: ("run", _write_config(t), "--out", "x" * 300, "-q"),
        ("--out", "too long"),
    ),
    Case(
        "paths",
        "results-key-is-a-file",
        _then(lambda t: (t / "f").write_text("x"), lambda t: ("run", _write_config(t, results="f"), "-q")),
        ("results", "is a file"),
    ),
    Case("paths", "report-root-missing", lambda t: ("report", "--root", "nowhere"), ("--root", "nowhere")),
    Case("paths", "report-root-empty", lambda t: ("report", "--root", ""), ("--root", "empty")),
    Case(
        "paths",
        "report-root-is-a-file",
        _then(lambda t: (t / "f").write_text("x"), ("report", "--root", "f")),
        ("--root", "is a file"),
    ),
    # -- 3. YAML and usage -----------------------------------------------------------------------
    Case(
        "yaml",
        "duplicate-top-key",
        text_config("validate", _tiny_text(seed="seed: 3\nseed: 4")),
        ("duplicate key 'seed'", "line 3", "line 2"),
    ),
    Case(
        "yaml",
        "duplicate-top-key-run",
        text_config("run", _tiny_text(seed="seed: 3\nseed: 4")),
        ("duplicate key 'seed'",),
    ),
    Case(
        "yaml",
        "duplicate-nested-key",
        text_config("validate", _tiny_text() + "preprocess: {scale: standard, scale: none}\n"),
        ("duplicate key 'scale'",),
    ),
    Case("yaml", "duplicate-name-key", text_config("validate", "name: a\n" + _tiny_text()), ("duplicate key 'name'",)),
    Case(
        "yaml",
        "alias-bomb-validate",
        text_config("validate", BOMB + _tiny_text(description="description: *l8")),
        ("expands to more than",),
    ),
    Case(
        "yaml",
        "alias-bomb-run",
        text_config("run", BOMB + _tiny_text(description="description: *l8")),
        ("expands to more than",),
    ),
    Case(
        "yaml", "recursive-alias", text_config("validate", _tiny_text(description="description: &r [*r]")), ("expands",)
    ),
    Case("yaml", "malformed-yaml", text_config("validate", "name: [unclosed\n"), ("malformed YAML",)),
    Case("usage", "reps-not-a-number", lambda t: ("run", _write_config(t), "--reps", "abc"), ("--reps",)),
    Case("usage", "jobs-not-a-number", lambda t: ("run", _write_config(t), "--jobs", "many"), ("--jobs",)),
    Case("usage", "unknown-option", lambda t: ("run", _write_config(t), "--bogus"), ("--bogus",)),
    Case("usage", "unknown-command", lambda t: ("frobnicate",), ("frobnicate",)),
    Case("usage", "missing-argument", lambda t: ("validate",), ("Missing argument", "CONFIG")),
    Case("usage", "table-reps-not-a-number", lambda t: ("table", "--reps", "x"), ("--reps",)),
    # -- 4. plugins: one line naming the plugin --------------------------------------------------
    *(
        Case(
            "plugins",
            f"{what}-{cmd}",
            (
                lambda t, s=spec, c=cmd: (
                    c,
                    _write_config(t, models=[{"id": "p", "family": s}]),
                    *(RUN[2:] if c == "run" else ()),
                )
            ),
            (spec.split(":")[0], *needles),
        )
        for what, spec, needles in (
            ("import-raises", "plug_import:X", ("RuntimeError", "boom at import")),
            ("import-exits-0", "plug_exit0:X", ("exit(0)",)),
            ("import-exits-3", "plug_exit3:X", ("exit(3)",)),
            ("import-os-exit", "plug_os_exit:X", ("os._exit(0)",)),
            ("construction-raises", "plug_families:Unbuildable", ("no constructing me",)),
            ("construction-exits", "plug_families:ExitOnBuild", ("exit(0)",)),
            ("no-name", "plug_families:NoName", ("name",)),
            ("no-such-module", "plug_nowhere:X", ("plug_nowhere",)),
        )
        for cmd in ("validate", "run")
    ),
    Case(
        "plugins",
        "ensemble-construction-raises",
        validate(bases=[{"kind": "plug_families:BadEnsemble"}]),
        ("plug_families:BadEnsemble", "no forest today"),
    ),
    Case("plugins", "ensemble-import-exits", run(bases=[{"kind": "plug_exit0:X"}]), ("plug_exit0", "exit(0)")),
    # -- 5. storage: a store that is not whole is an error, never the export's fallback ---------
    Case(
        "storage",
        "store-is-a-directory-table",
        _then(lambda t: _store_is_a_directory(t, False), TABLE),
        ("store.sqlite", "Is a directory"),
    ),
    Case(
        "storage",
        "store-is-a-directory-beside-export-table",
        _then(lambda t: _store_is_a_directory(t, True), TABLE),
        ("store.sqlite", "Is a directory"),
    ),
    Case(
        "storage",
        "store-is-a-directory-beside-export-status",
        _then(lambda t: _store_is_a_directory(t, True), STATUS),
        ("store.sqlite",),
    ),
    Case(
        "storage",
        "store-is-a-directory-beside-export-run",
        _then(lambda t: _store_is_a_directory(t, True), lambda t: ("run", _write_config(t), *RUN[2:])),
        ("store.sqlite",),
    ),
    Case(
        "storage",
        "store-lacks-a-column-table",
        _then(lambda t: _store(t / "s", drop=("results", "r2")), TABLE),
        ("store.sqlite", "results", "r2"),
    ),
    Case(
        "storage",
        "store-lacks-a-column-status",
        _then(lambda t: _store(t / "s", drop=("units", "n_train")), STATUS),
        ("store.sqlite", "n_train"),
    ),
    Case(
        "storage",
        "store-lacks-a-column-run",
        _then(lambda t: _store(t / "s", drop=("grid", "test_r2")), lambda t: ("run", _write_config(t), *RUN[2:])),
        ("store.sqlite", "test_r2"),
    ),
    Case(
        "storage",
        "export-results-not-xz-run",
        _then(_export_with_corrupt_results, (*RUN, "--reps", "2")),
        ("results.csv.xz", "unreadable export table"),
    ),
    Case("storage", "sqlite-but-not-a-store-table", _then(_not_a_store, TABLE), ("store.sqlite", "not an afr")),
    Case(
        "storage",
        "sqlite-but-not-a-store-run",
        _then(_not_a_store, lambda t: ("run", _write_config(t), *RUN[2:])),
        ("store.sqlite",),
    ),
]


def _digest(root: Path) -> dict[str, str | None]:
    """Every path below root: a file's SHA-256, None for a directory."""
    return {
        str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


@dataclass
class Outcome:
    proc: subprocess.CompletedProcess
    before: dict
    after: dict


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, Outcome]:
    """Every case set up in a directory of its own (with the plugin modules beside its config),
    then the ``afr`` processes two at a time (each a child of one server that imported afr once:
    tests/afr_forkserver.py), then the files compared."""
    prepared = []
    for case in CASES:
        tmp = tmp_path_factory.mktemp(case.name)
        plugins = tmp_path_factory.mktemp(f"{case.name}-plugins")
        for name, text in PLUGINS.items():
            (plugins / name).write_text(text)
        args = case.setup(tmp)
        path = os.pathsep.join(p for p in (str(plugins), os.environ.get("PYTHONPATH")) if p)
        env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": path, "COLUMNS": "80", **case.env}
        prepared.append((case, tmp, Invocation(tuple(args), tmp, env), _digest(tmp)))
    procs = run_afr_forked([invocation for _, _, invocation, _ in prepared], jobs=2)
    return {case.name: Outcome(proc, before, _digest(tmp)) for (case, tmp, _, before), proc in zip(prepared, procs)}


def test_the_corpus_covers_every_kind_with_sixty_cases():
    kinds = {c.kind for c in CASES}
    assert {"trip", "paths", "yaml", "usage", "plugins", "storage"} <= kinds
    assert len(CASES) >= 60 and len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=f"{c.kind}-{c.name}") for c in CASES])
def test_a_bad_input_is_one_line_and_changes_no_byte(case: Case, outcomes: dict[str, Outcome]):
    outcome = outcomes[case.name]
    proc = outcome.proc
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == case.code, (proc.returncode, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for needle in case.needles:
        assert needle in lines[0], (needle, lines[0])
    assert outcome.after == outcome.before, "a bad input must leave every file as it was"


def test_a_store_with_no_unit_does_not_block_the_corrected_config(tmp_path):
    """A first run refused (or killed) before its first unit leaves a store of no units; the
    corrected config (another hash) runs on it instead of being told it is another config's."""
    from afr_cli.store import ResultsStore

    ResultsStore(tmp_path / "s").create({"experiment": "tiny", "config_hash": "an-earlier-config"})
    proc = run_afr("run", _write_config(tmp_path), "--out", "s", "--jobs", "1", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(ResultsStore(tmp_path / "s").done_units()) == 1


def test_a_merge_key_is_not_a_duplicate(tmp_path):
    # The anchor sits on the first base: `description` (where it sat before) is text in the schema.
    text = (
        "name: merged\nseed: 3\nprotocol: {reps: 1, inner_folds: 2}\ndatasets: [Friedman1]\n"
        "bases: [&common {kind: rf, id: A, n_estimators: 3},\n"
        "        {<<: *common, id: B, n_estimators: 4, min_samples_leaf: 5}]\n"
        "models: [{id: rf, family: forest}]\n"
    )
    (tmp_path / "c.yaml").write_text(text)
    proc = run_afr("validate", "c.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_required_columns_match_a_store_afr_creates(tmp_path):
    from afr_cli.store import ResultsStore
    from afr_cli.store.faults import REQUIRED_COLUMNS
    from afr_cli.store.schema import COLUMNS, OPTIONAL_COLUMNS

    store = ResultsStore(tmp_path)
    store.create({"experiment": "x"})
    assert REQUIRED_COLUMNS["grid"] == tuple(name for name, _ in COLUMNS["grid"] if name != "solves")
    for table, columns in REQUIRED_COLUMNS.items():
        have = [name for name, _ in store.columns(table)]
        assert set(columns) <= set(have), table
        optional = {name for name, _ in OPTIONAL_COLUMNS.get(table, ())}  # later columns a store may lack (cpu_seconds)
        assert set(have) - set(columns) <= {"solves", "train_fraction", "noise_eta"} | optional, table


def test_a_store_made_before_the_solve_log_reads_and_a_run_gives_it_the_column(tmp_path):
    from afr_cli.store import ResultsStore, open_existing

    _store(tmp_path / "s", drop=("grid", "solves"))  # as a store made before per-solve logs
    store = ResultsStore(tmp_path / "s")
    assert "solves" not in dict(store.columns("grid"))
    grid = open_existing(tmp_path / "s").frame("grid")  # not "lacks the column"
    assert len(grid) == 2 and "solves" not in grid
    store.create({"experiment": "tiny", "config_hash": "x"})  # a run opening it adds the column, empty
    assert dict(store.columns("grid"))["solves"] == "TEXT"
    assert store.frame("grid")["solves"].isna().all() and open_existing(tmp_path / "s").source == "store"
