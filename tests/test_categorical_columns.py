"""Text columns of a user's file enter the model through the entry's ``encode:`` key.

tests/fixtures/salaries.csv is a small file shaped like R's ``Salaries`` (rank, discipline,
yrs.since.phd, yrs.service, sex, salary), written for these tests with a salary that depends on
rank and discipline. The categories come from every row of the file and are sorted; a missing
cell is all zeros one-hot and a missing value ordinal; the manifest records the encoding, and a
changed encoding is refused as other data; ``afr datasets info`` suggests the entry (the output
docs/datasets.md shows), and the encoded columns reach the model and score better than dropping them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from afr_forkserver import Invocation, run_afr_forked

from afr_cli.config.experiment import load_experiment
from afr_cli.data.encode import categories, parse_encode
from afr_cli.data.files import read_file_dataset
from afr_cli.data.survey import survey_file
from afr_cli.errors import AfrInputError

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "salaries.csv"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "datasets.md"
ENCODE = {"rank": "onehot", "discipline": "ordinal", "sex": "ordinal"}


def _small(tmp: Path) -> Path:
    path = tmp / "small.csv"
    path.write_text("grade,size,y\nmid,1,1.0\nlow,2,2.5\n,3,2.0\nhigh,4,4.0\nmid,5,3.5\n10,6,1.0\n")
    return path


def test_onehot_takes_every_category_of_the_file_sorted_and_a_missing_cell_is_all_zeros(tmp_path):
    loaded = read_file_dataset(_small(tmp_path), "y", encode=(("grade", "onehot"),))
    assert loaded.identity["columns"] == ["grade=10", "grade=high", "grade=low", "grade=mid", "size"]
    assert loaded.identity["encode"] == {"grade": {"as": "onehot", "categories": ["10", "high", "low", "mid"]}}
    assert loaded.X[:, :4].tolist()[2] == [0.0, 0.0, 0.0, 0.0]  # the empty cell: no category
    assert loaded.X[:, :4].sum(axis=1).tolist() == [1, 1, 0, 1, 1, 1]


def test_ordinal_codes_follow_the_sorted_categories_or_the_given_order(tmp_path):
    path = _small(tmp_path)
    with pytest.raises(AfrInputError, match="column 'grade': missing value"):
        read_file_dataset(path, "y", encode="ordinal")
    loaded = read_file_dataset(path, "y", encode=(("grade", ("low", "mid", "high", "10")),), missing="drop-rows")
    assert loaded.X[:, 0].tolist() == [1.0, 0.0, 2.0, 1.0, 3.0]
    assert loaded.identity["rows_dropped"] == 1
    with pytest.raises(AfrInputError, match=r"encode: column 'grade': '10' \(row 6\) is not in its list"):
        read_file_dataset(path, "y", encode=(("grade", ("low", "mid", "high")),), missing="drop-rows")


def test_numbers_sort_as_numbers_and_the_target_is_never_encoded(tmp_path):
    import pandas as pd

    assert categories(pd.Series([10.0, 2.0, None, 2.0, 1.5])) == ["1.5", "2", "10"]
    with pytest.raises(AfrInputError, match="encode: 'y' is the target"):
        read_file_dataset(_small(tmp_path), "y", encode=(("y", "onehot"), ("grade", "onehot")))


def test_bad_encode_values_are_one_line_naming_the_key():
    for value, needle in (
        ("hash", "'hash' is not allowed; allowed: onehot, ordinal"),
        ({"rank": "dummy"}, "datasets[0].encode.rank: 'dummy' is not allowed"),
        ({"rank": ["a", "a"]}, "must list each category once"),
        ([], "must be onehot, ordinal or a non-empty mapping"),
    ):
        with pytest.raises(AfrInputError, match="datasets\\[0\\].encode") as err:
            parse_encode(value, "c.yaml: datasets[0].encode")
        assert needle in str(err.value)


def test_a_text_column_without_encode_names_both_fixes(tmp_path):
    with pytest.raises(AfrInputError) as err:
        read_file_dataset(FIXTURE, "salary")
    message = str(err.value)
    assert "3 columns are not numeric" in message and "encode them (encode: onehot" in message
    assert "drop them (drop: [rank, discipline, sex])" in message


def test_survey_suggests_encoding_and_reads_the_suggestion_without_a_problem():
    survey = survey_file(FIXTURE, "salary")
    assert survey.entry() == (
        "{name: NAME, file: salaries.csv, target: salary, encode: {rank: onehot, discipline: ordinal, sex: ordinal}}"
    )
    fixed = survey_file(FIXTURE, "salary", encode=tuple(ENCODE.items()))
    assert fixed.problems == [] and len(fixed.columns) == 7


def test_a_changed_encoding_is_other_data_for_the_store():
    from types import SimpleNamespace

    from afr_cli.engine.runner import _check_same_data

    onehot = read_file_dataset(FIXTURE, "salary", encode=tuple(ENCODE.items())).identity
    ordinal = read_file_dataset(FIXTURE, "salary", encode="ordinal").identity
    exp = SimpleNamespace(dataset_sources={"S": SimpleNamespace(where="c.yaml: datasets[0]")})
    with pytest.raises(AfrInputError, match="dataset S changed since the store"):
        _check_same_data(exp, SimpleNamespace(path="results/s"), {"data": {"S": onehot}}, {"S": ordinal})


def _docs_block() -> str:
    text = DOCS.read_text(encoding="utf-8")
    command = "```console\n$ afr datasets info salaries.csv --target salary\n"
    start = text.index(command) + len(command)
    return text[start : text.index("```", start)]


def test_encoded_columns_reach_the_model_and_beat_dropping_them(tmp_path):
    """One config, the file twice: encoded (7 features) and with its text columns dropped (2).
    The run's manifest records the encoding; its R² is higher where rank is kept; and
    ``afr datasets info`` prints exactly what docs/datasets.md shows."""
    from afr_cli.store.reader import open_existing

    shutil.copy(FIXTURE, tmp_path / "salaries.csv")
    entries = [
        {"name": "encoded", "file": "salaries.csv", "target": "salary", "encode": ENCODE},
        {"name": "dropped", "file": "salaries.csv", "target": "salary", "drop": list(ENCODE)},
    ]
    config = {
        "name": "sal",
        "seed": 1,
        "protocol": {"reps": 5, "test_fraction": 0.2, "inner_folds": 3},
        "datasets": entries,
        "bases": [{"kind": "rf", "n_estimators": 50, "min_samples_leaf": 5}],
        "models": [{"id": "rf", "family": "forest"}],
    }
    (tmp_path / "sal.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    exp = load_experiment(tmp_path / "sal.yaml")
    assert exp.dataset_sources["encoded"].encode == tuple(ENCODE.items())
    env = {**os.environ, "MPLBACKEND": "Agg"}
    run, info = run_afr_forked(
        [
            Invocation(("run", "sal.yaml", "-q", "-j", "1"), tmp_path, env),
            Invocation(("datasets", "info", "salaries.csv", "--target", "salary"), FIXTURE.parent, env),
        ]
    )
    assert run.returncode == 0, run.stderr
    reader = open_existing(tmp_path / "results" / "sal")
    data = reader.manifest()["data"]
    assert len(data["encoded"]["columns"]) == 7 and len(data["dropped"]["columns"]) == 2
    assert data["encoded"]["encode"]["rank"] == {"as": "onehot", "categories": ["AssocProf", "AsstProf", "Prof"]}
    results = reader.frame("results")
    r2 = results.groupby("dataset")["r2"].mean()
    assert r2["encoded"] > r2["dropped"] + 0.05, r2
    assert np.isclose(r2["encoded"], 0.466, atol=0.0005) and np.isclose(r2["dropped"], 0.326, atol=0.0005)
    assert info.returncode == 2 and "Traceback" not in info.stderr
    assert _docs_block() == info.stdout + info.stderr


def test_survey_suggests_dropping_a_column_of_names(tmp_path):
    """More categories than SUGGEST_ONEHOT_UP_TO (names, ids) are suggested dropped, not encoded."""
    from afr_cli.data.encode import SUGGEST_ONEHOT_UP_TO

    rows = SUGGEST_ONEHOT_UP_TO + 10
    path = tmp_path / "people.csv"
    path.write_text("who,x,y\n" + "".join(f"person{i},{i % 4},{i * 0.5}\n" for i in range(rows)))
    survey = survey_file(path, "y")
    assert survey.entry() == "{name: NAME, file: people.csv, target: y, drop: [who]}"
    expected = f"dropped by the entry below (who: more than {SUGGEST_ONEHOT_UP_TO} categories, names or ids?)"
    assert expected in survey.problems[0]
