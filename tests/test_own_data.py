"""Your own data without a workaround, with small files written here in the
shapes of real ones: Hitters (a target with missing values and a text column), airquality
(missing values in the target and in a feature), Carseats (three text columns), mtcars (32 rows).

Rows with a missing value are dropped by ``missing: drop-rows`` and counted; ``afr datasets
info`` names every problem of a file at once with one entry that fixes them; a loader's file
beside the config needs no ``plugins:``, and a misspelt function is named with the functions the
file has; a config's store is found from another directory; a small dataset is warned about.
The CLI cases run as ``afr`` processes through the fork server (tests/afr_forkserver.py)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import yaml
from afr_forkserver import Invocation, run_afr_forked

from afr_cli.config.schema import DATASET
from afr_cli.data.checks import SMALL_ROWS, small_data_warning
from afr_cli.data.files import FILE_KEYS, LOADER_KEYS, LoaderDataset, loader_function, read_file_dataset
from afr_cli.data.survey import survey_file
from afr_cli.errors import AfrInputError

ROWS = 60


def _hitters(tmp: Path) -> Path:
    """AtBat, Hits, League (text), Salary (the target; every fifth row NA, as Hitters' 59 of 322)."""
    rng = np.random.default_rng(1)
    lines = ["AtBat,Hits,League,Salary"]
    for i in range(ROWS):
        salary = "NA" if i % 5 == 0 else f"{rng.normal(500, 200):.1f}"
        lines.append(f"{rng.integers(100, 600)},{rng.integers(20, 200)},{'AN'[i % 2]},{salary}")
    path = tmp / "hitters.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _airquality(tmp: Path) -> Path:
    """Ozone (the target) NA in every fourth row, Solar.R empty in every seventh, as airquality."""
    rng = np.random.default_rng(2)
    lines = ["Ozone,Solar.R,Wind,Temp"]
    for i in range(ROWS):
        ozone = "NA" if i % 4 == 1 else str(rng.integers(1, 150))
        solar = "" if i % 7 == 3 else str(rng.integers(7, 330))
        lines.append(f"{ozone},{solar},{rng.normal(10, 3):.1f},{rng.integers(56, 97)}")
    path = tmp / "airquality.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _carseats(tmp: Path) -> Path:
    """Sales (the target) with ShelveLoc, Urban and US as text, as Carseats."""
    rng = np.random.default_rng(3)
    lines = ["Sales,CompPrice,ShelveLoc,Price,Urban,US"]
    for i in range(ROWS):
        lines.append(
            f"{rng.normal(7, 2):.2f},{rng.integers(80, 160)},{('Bad', 'Good', 'Medium')[i % 3]},"
            f"{rng.integers(50, 180)},{('Yes', 'No')[i % 2]},{('No', 'Yes')[(i // 2) % 2]}"
        )
    path = tmp / "carseats.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _mtcars(tmp: Path) -> Path:
    """32 rows, as mtcars."""
    rng = np.random.default_rng(4)
    lines = ["mpg,cyl,disp,hp"] + [
        f"{rng.normal(20, 6):.1f},{(4, 6, 8)[i % 3]},{rng.integers(70, 470)},{rng.integers(50, 330)}" for i in range(32)
    ]
    path = tmp / "mtcars.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


# --- reading files ---------------------------------------------------------------------------


def test_missing_drop_rows_leaves_out_the_rows_with_a_missing_value_and_counts_them(tmp_path):
    loaded = read_file_dataset(_hitters(tmp_path), "Salary", drop=("League",), missing="drop-rows")
    assert loaded.identity["rows_dropped"] == ROWS // 5
    assert loaded.identity["rows"] == len(loaded.y) == ROWS - ROWS // 5
    assert np.isfinite(loaded.X).all() and np.isfinite(loaded.y).all()
    air = read_file_dataset(_airquality(tmp_path), "Ozone", missing="drop-rows")
    gone = {i for i in range(ROWS) if i % 4 == 1 or i % 7 == 3}
    assert air.identity["rows_dropped"] == len(gone) and len(air.y) == ROWS - len(gone)


def test_without_missing_the_error_names_the_key_that_drops_the_rows(tmp_path):
    with pytest.raises(AfrInputError, match=r"column 'Salary': missing value .* at row 1 .*missing: drop-rows"):
        read_file_dataset(_hitters(tmp_path), "Salary", drop=("League",))


def test_a_file_without_missing_values_reads_as_before(tmp_path):
    """The identity of an entry without ``missing`` is unchanged (stores made before compare equal)."""
    loaded = read_file_dataset(_carseats(tmp_path), "Sales", drop=("ShelveLoc", "Urban", "US"))
    assert set(loaded.identity) == {"file", "sha256", "rows", "columns", "target"}


def test_every_text_column_is_named_in_the_one_error_with_the_whole_drop_list(tmp_path):
    with pytest.raises(AfrInputError) as err:
        read_file_dataset(_carseats(tmp_path), "Sales", drop=("CompPrice",))
    message = str(err.value)
    assert "3 columns are not numeric: 'ShelveLoc' (row 1: 'Bad'), 'Urban' (row 1: 'Yes'), 'US'" in message
    assert "drop: [CompPrice, ShelveLoc, Urban, US]" in message


# --- afr datasets info: every problem at once ----------------------------------------------


def test_survey_names_the_text_columns_and_one_entry_encodes_them_all(tmp_path):
    survey = survey_file(_carseats(tmp_path), "Sales", drop=("ShelveLoc",))
    assert len(survey.problems) == 1 and survey.unfixable == 0
    assert "2 non-numeric columns: 'Urban' (row 1: 'Yes'), 'US' (row 1: 'No')" in survey.problems[0]
    assert survey.entry() == (
        "{name: NAME, file: carseats.csv, target: Sales, encode: {Urban: ordinal, US: ordinal}, drop: [ShelveLoc]}"
    )
    assert survey.columns == ["CompPrice", "Price", "Urban", "US"]


def test_survey_of_hitters_combines_the_text_column_and_the_missing_rows(tmp_path):
    survey = survey_file(_hitters(tmp_path), "Salary")
    assert len(survey.problems) == 2 and survey.unfixable == 0
    assert "12 of 60 rows have a missing value" in survey.problems[1] and "Salary 12" in survey.problems[1]
    assert survey.entry() == (
        "{name: NAME, file: hitters.csv, target: Salary, encode: {League: ordinal}, missing: drop-rows}"
    )
    assert survey.rows_dropped == 12 and len(survey.y) == 48
    fixed = survey_file(_hitters(tmp_path), "Salary", encode=(("League", "ordinal"),), missing="drop-rows")
    assert fixed.problems == [] and fixed.entry() == survey.entry()


def test_survey_names_what_no_entry_fixes(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(
        "a,b,y\n" + "".join(f"{i},{'inf' if i == 3 else i % 4},{'x' if i == 2 else i}\n" for i in range(20))
    )
    survey = survey_file(path, "y")
    assert any("the target 'y' is not numeric (row 3: 'x')" in p for p in survey.problems)
    survey = survey_file(path, "a", drop=("y",))
    assert survey.unfixable == 1 and "infinite values (by column: b 1)" in survey.problems[0]


# --- loaders, the store's place, small data ---------------------------------------------------


def test_a_misspelt_loader_function_is_named_with_the_functions_of_the_file(tmp_path):
    import types

    module = types.ModuleType("mydata")
    module.__file__ = str(tmp_path / "mydata.py")
    exec("def load_hitters():\n    return None\n\ndef helper():\n    return 1\n", module.__dict__)
    source = LoaderDataset("Mine", "mydata:load_hiters", str(tmp_path))
    with pytest.raises(AfrInputError) as err:
        loader_function(module, source)
    assert "'load_hiters' not found in module 'mydata'" in str(err.value)
    assert "did you mean mydata:load_hitters?" in str(err.value)
    assert "the functions it defines: helper, load_hitters" in str(err.value)
    assert f"put {tmp_path / 'mydata.py'} beside the config" in source.import_fix()


def test_the_store_of_a_config_is_found_beside_it_from_another_directory(tmp_path, monkeypatch):
    from afr_cli.config.experiment import store_directory

    (tmp_path / ".git").mkdir()  # the search stops at a checkout's root
    project = tmp_path / "myexp"
    (project / "results" / "mine").mkdir(parents=True)
    given = Path("results") / "mine"
    monkeypatch.chdir(tmp_path)
    assert store_directory(given, Path("myexp")) == given  # no store anywhere: where it always was
    (project / "results" / "mine" / "store.sqlite").write_bytes(b"")
    assert store_directory(given, Path("myexp")) == Path("myexp/results/mine")
    (tmp_path / "results" / "mine").mkdir(parents=True)
    (tmp_path / "results" / "mine" / "store.sqlite").write_bytes(b"")
    assert store_directory(given, Path("myexp")) == given  # the current directory's store comes first
    monkeypatch.chdir(project / "results")
    assert store_directory(given, Path("..")) == Path("../results/mine")


def test_small_data_warning_names_the_rows_and_the_test_split():
    line = small_data_warning(32, (0.2,), "dataset Cars (mtcars.csv)")
    assert line.startswith("warning: dataset Cars (mtcars.csv): only 32 rows") and "test split holds 6 rows" in line
    assert "\n" not in line
    assert small_data_warning(SMALL_ROWS, (0.2,), "x") is None


def test_survey_of_a_small_file_warns_about_its_size(tmp_path):
    survey = survey_file(_mtcars(tmp_path), "mpg")
    assert survey.problems == []
    assert survey.warning == small_data_warning(32, (0.2,), str(tmp_path / "mtcars.csv"))


def test_the_schema_declares_every_key_of_a_dataset_entry():
    assert set(DATASET.names()) == set(FILE_KEYS) | set(LOADER_KEYS)
    assert DATASET["missing"].choices == ("error", "drop-rows")


# --- the CLI, through the fork server -------------------------------------------------------


def _config(path: Path, name: str, datasets: list, **extra) -> Path:
    cfg = {
        "name": name,
        "seed": 1,
        "protocol": {"reps": 1, "inner_folds": 2},
        "datasets": datasets,
        "bases": [{"kind": "rf", "n_estimators": 3, "min_samples_leaf": 5}],
        "models": [{"id": "rf", "family": "forest"}],
        **extra,
    }
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _docs_example() -> str:
    """The output docs/datasets.md prints for ``afr datasets info carseats.csv --target Sales``."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "datasets.md").read_text(encoding="utf-8")
    command = "```console\n$ afr datasets info carseats.csv --target Sales\n"
    start = text.index(command) + len(command)
    return text[start : text.index("```", start)]


def _one_line(proc, *needles: str) -> None:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


@pytest.mark.slow
def test_own_data_from_the_command_line(tmp_path):
    """Hitters and airquality run from a config with no loader, their dropped rows in the manifest,
    and the run resumes its store from another directory; info lists Carseats' three columns at once;
    a loader beside the config runs without plugins:; mtcars' 32 rows are warned about."""
    from afr_cli.store.reader import open_existing

    project = tmp_path / "myexp"
    project.mkdir()
    _hitters(project), _airquality(project), _carseats(project), _mtcars(project)
    _config(
        project / "own.yaml",
        "own",
        [
            {"name": "Hitters", "file": "hitters.csv", "target": "Salary", "drop": ["League"], "missing": "drop-rows"},
            {"name": "Air", "file": "airquality.csv", "target": "Ozone", "missing": "drop-rows"},
        ],
    )
    (project / "mydata.py").write_text(
        "import numpy as np\n\n\ndef load_data():\n    rng = np.random.default_rng(0)\n"
        "    X = rng.normal(size=(60, 2))\n    return X, X[:, 0] + rng.normal(size=60)\n"
    )
    loader = _config(project / "loader.yaml", "loader", [{"name": "Mine", "loader": "mydata:load_data"}])
    typo = _config(project / "typo.yaml", "typo", [{"name": "Mine", "loader": "mydata:load_dta"}])
    cars = _config(project / "cars.yaml", "cars", [{"name": "Cars", "file": "mtcars.csv", "target": "mpg"}])
    env = {**os.environ, "MPLBACKEND": "Agg"}
    first = run_afr_forked(
        [
            Invocation(("run", "own.yaml", "-q", "-j", "1"), project, env),
            Invocation(("datasets", "info", "carseats.csv", "--target", "Sales"), project, env),
            Invocation(("datasets", "info", "hitters.csv", "--target", "Salary"), project, env),
            Invocation(("validate", str(loader)), tmp_path, env),
            Invocation(("validate", str(typo)), tmp_path, env),
            Invocation(("validate", str(cars)), tmp_path, env),
        ]
    )
    run, carseats, hitters, loaded, misspelt, small = first
    assert run.returncode == 0, run.stderr
    data = open_existing(project / "results" / "own").manifest()["data"]
    assert (data["Hitters"]["rows_dropped"], data["Hitters"]["rows"]) == (12, 48)
    assert data["Air"]["rows_dropped"] == len({i for i in range(ROWS) if i % 4 == 1 or i % 7 == 3})

    _one_line(carseats, "carseats.csv: 1 problem (listed above); the config entry above fixes it")
    assert "'ShelveLoc' (row 1: 'Bad'), 'Urban' (row 1: 'Yes'), 'US' (row 1: 'No')" in carseats.stdout
    assert (
        "config entry  {name: NAME, file: carseats.csv, target: Sales, "
        "encode: {ShelveLoc: onehot, Urban: ordinal, US: ordinal}}" in carseats.stdout
    )
    assert _docs_example() == carseats.stdout + carseats.stderr  # docs/datasets.md shows this run as it prints
    _one_line(hitters, "hitters.csv: 2 problems (listed above); the config entry above fixes them")
    assert "rows          48 of 60: 12 with a missing value left out" in hitters.stdout
    assert "encode: {League: ordinal}, missing: drop-rows}" in hitters.stdout

    assert loaded.returncode == 0 and ": ok (loader:" in loaded.stdout, loaded.stderr
    _one_line(
        misspelt,
        "'load_dta' not found in module 'mydata'",
        "did you mean mydata:load_data?",
        "the functions it defines: load_data",
    )
    assert small.returncode == 0, small.stderr
    assert [line for line in small.stderr.splitlines() if line.strip()] == [
        small_data_warning(32, (0.2,), f"dataset Cars ({project / 'mtcars.csv'})")
    ]

    (again,) = run_afr_forked([Invocation(("run", "myexp/own.yaml", "-j", "1"), tmp_path, env)])
    assert again.returncode == 0, again.stderr
    assert "2 already stored, 0 to run -> myexp/results/own/store.sqlite" in again.stdout
    assert not (tmp_path / "results").exists()


@pytest.fixture
def registries_restored():
    """The family registry and the modules imported as they were before the test."""
    import sys

    from afr_cli.models import FAMILIES

    families, modules = dict(FAMILIES), set(sys.modules)
    yield
    FAMILIES.clear()
    FAMILIES.update(families)
    for name in set(sys.modules) - modules:
        if name.startswith("own_rows_"):
            del sys.modules[name]


def test_a_loader_file_beside_the_config_is_imported_without_plugins(tmp_path, registries_restored):
    """Found beside the config and imported in this process; handed to the workers only when it
    defines a family or ensemble of its own (the loader itself is called here, never there)."""
    from afr_cli.config.experiment import load_experiment
    from afr_cli.engine.experiment_data import load_experiment_data

    (tmp_path / "own_rows_a.py").write_text(
        "import numpy as np\n\n\ndef load():\n    X = np.arange(120.0).reshape(60, 2)\n"
        "    return X, np.sin(X[:, 0]) + X[:, 1]\n"
    )
    (tmp_path / "own_rows_b.py").write_text(
        "from afr_cli.family_api import EpsABRFFamily\n\n\nclass Mine(EpsABRFFamily):\n"
        "    name = 'own-rows-b-family'\n\n\ndef load():\n"
        "    import numpy as np\n    X = np.arange(120.0).reshape(60, 2)\n"
        "    return X, np.cos(X[:, 0]) + X[:, 1]\n"
    )
    plain = load_experiment(_config(tmp_path / "a.yaml", "a", [{"name": "A", "loader": "own_rows_a:load"}]))
    assert plain.plugins == ()
    data, identity = load_experiment_data(plain)
    assert data["A"][0].shape == (60, 2) and identity["A"]["loader"] == "own_rows_a:load"
    family = load_experiment(_config(tmp_path / "b.yaml", "b", [{"name": "B", "loader": "own_rows_b:load"}]))
    assert [p.module for p in family.plugins] == ["own_rows_b"]


def test_a_store_refuses_the_same_file_read_with_another_entry():
    """The config hash leaves the dataset entries out (the dataset list may grow), so a changed
    ``drop:`` or ``missing:`` on an unchanged file must be caught by the data's identity: other
    columns or other rows are other data, and the store is not extended with them."""
    from types import SimpleNamespace

    from afr_cli.engine.runner import _check_same_data
    from afr_cli.errors import AfrInputError

    exp = SimpleNamespace(dataset_sources={"H": SimpleNamespace(where="c.yaml: datasets[0]")})
    held = SimpleNamespace(path="results/h")
    before = {"data": {"H": {"sha256": "s", "rows": 263, "columns": ["a", "b"], "target": "y"}}}
    _check_same_data(exp, held, before, {"H": {"sha256": "s", "rows": 263, "columns": ["a", "b"], "target": "y"}})
    for changed in ({"columns": ["a"]}, {"rows": 250, "rows_dropped": 13}, {"target": "b"}):
        now = {**before["data"]["H"], **changed}
        with pytest.raises(AfrInputError, match="dataset H changed since the store"):
            _check_same_data(exp, held, before, {"H": now})
