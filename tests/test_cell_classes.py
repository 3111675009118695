"""Every published cell in one class (afr_cli/publish/cell_classes.py): a toy paper whose stores
put one cell in each class, the data file's rules for the stores it consults, the site's showing
of the classes, and every cell of the committed root classed exactly once."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from afr_cli.catalogue import knowledge
from afr_cli.errors import AfrInputError
from afr_cli.publish.cell_classes import CLASSES, UNEXPLAINED, class_counts, classify_paper, reading_counts

REPO = Path(__file__).resolve().parents[1]
# dataset -> (paper, the text reading's mean on repetitions 0-1, the store that reaches the paper)
TOY_CELLS = {
    "D1": ("0.500", 0.5, None),  # as printed
    "D2": ("0.500", 0.51, None),  # within tolerance
    "D3": ("0.700", 0.5, "spread"),
    "D4": ("0.700", 0.5, "code"),
    "D5": ("0.700", 0.5, "cause"),
    "D6": ("0.700", 0.5, None),  # unexplained
}
CAUSE_TEST = "tests/test_cell_classes.py::test_a_toy_paper_puts_one_cell_in_each_class"


def write_store(directory: Path, values: dict[tuple[str, str], float]) -> None:
    """A store of (dataset, model) -> R² on repetitions 0 and 1 (each that value), and a
    repetition 2 far off, which the paper's two repetitions leave out."""
    from afr_cli.store import ResultsStore, UnitRecord

    store = ResultsStore(directory)
    store.create({"experiment": directory.name, "config_hash": "x", "config": {"name": directory.name, "seed": 1}})
    for dataset in sorted({d for d, _ in values}):
        for rep in range(3):
            rows = [
                {
                    "model": model,
                    "r2": r2 if rep < 2 else -5.0,
                    "mae": 1.0,
                    "rmse": 1.0,
                    "params": {},
                    "selection": "inner-cv",
                    "cv_score": None,
                    "solver_status": {},
                    "seconds": 0.0,
                }
                for (d, model), r2 in values.items()
                if d == dataset
            ]
            store.write_unit(UnitRecord(dataset, "RF", rep, rep, 80, 20, 0.0, 0.0, rows, []))


def toy_paper(where: Path, explanations: list[dict], cells: dict | None = None) -> Path:
    folder = where / "toyc_paper"
    folder.mkdir()
    lines = ["paper,table,base,dataset,model,metric,value"]
    lines += [f"toyc,1,RF,{d},m,r2,{v[0]}" for d, v in (cells or TOY_CELLS).items()]
    lines.append("toyc,1,RF,D1,never,r2,0.400")  # no store of ours holds it
    (folder / "published.csv").write_text("\n".join(lines) + "\n")
    data = {
        "id": "toyc",
        "title": "A toy paper",
        "published": "published.csv",
        "reps": 2,
        "models": ["m", "never"],
        "bases": ["RF"],
        "reports": [{"name": "toyc", "stores": ["toyc_text"], "tables": ["toyc:1"]}],
        "explanations": explanations,
    }
    (folder / "paper.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


TOY_EXPLANATIONS = [
    {"kind": "spread", "store": "toyc_spread", "choice": "folds 1"},
    {"kind": "code", "store": "toyc_code", "suffix": "-code"},
    {"kind": "cause", "store": "toyc_cause", "suffix": "-loo", "cause": "a toy cause", "test": CAUSE_TEST},
]


def test_a_toy_paper_puts_one_cell_in_each_class(tmp_path):
    from afr_cli.publish.context import ReportContext
    from afr_cli.publish.site import _classes_html, index_page
    from afr_cli.tables.format import format_cell

    root = tmp_path / "results"
    write_store(root / "toyc_text", {(d, "m"): ours for d, (_, ours, _) in TOY_CELLS.items()})
    reached = {kind: d for d, (_, _, kind) in TOY_CELLS.items() if kind}
    # the spread store also reaches D4 (the earlier class wins) and holds a code-reading row the
    # spread, read without a suffix, does not take for the model
    write_store(root / "toyc_spread", {(reached["spread"], "m"): 0.695, ("D4", "m"): 0.5, ("D6", "m-code"): 0.7})
    write_store(root / "toyc_code", {("D3", "m-code"): 0.7, (reached["code"], "m-code"): 0.7, ("D6", "m"): 0.7})
    write_store(root / "toyc_cause", {(reached["cause"], "m-loo"): 0.71, ("D6", "m-code"): 0.7})
    knowledge.forget_added_folders()
    try:
        paper = knowledge.add_paper_folder(toy_paper(tmp_path, TOY_EXPLANATIONS))
        classed = classify_paper(paper, ReportContext(root)).set_index(["dataset", "model"])
    finally:
        knowledge.forget_added_folders()
    expected = dict(zip(TOY_CELLS, CLASSES))
    assert {d: classed.loc[(d, "m"), "class"] for d in TOY_CELLS} == expected
    assert classed.loc[("D1", "never"), "class"] == UNEXPLAINED and math.isnan(classed.loc[("D1", "never"), "ours"])
    counts = class_counts(classed.reset_index())
    assert sum(counts.values()) == 7 and counts[UNEXPLAINED] == 2
    # the code reading beside ours: the store without a suffixed row (D6's "m") holds no code cell
    assert classed["code reading"].dropna().to_dict() == {("D3", "m"): 0.7, ("D4", "m"): 0.7}
    readings = reading_counts(classed.reset_index()).iloc[0].to_dict()
    assert readings == {
        "table": "1",
        "cells": 2,
        "text: as printed": 0,
        "text: within tolerance": 0,
        "code: as printed": 2,
        "code: within tolerance": 0,
    }

    page = "".join(_classes_html(paper, classed.reset_index()))
    assert "1 as printed; 1 within tolerance; 1 within the spread" in page and "2 unexplained" in page
    assert f"a toy cause (<code>toyc_cause</code>, checked by <code>{CAUSE_TEST}</code>)" in page
    assert re.search(r"<td>D6</td><td>m</td><td>R²</td><td>0.700</td><td>0.50*</td>", page), page
    assert "<td>never</td><td>R²</td><td>0.400</td><td>n/a</td>" in page
    assert format_cell(10.0, "tau0", {"tau0": "tau0"}) == "10"  # a tuning parameter as set, not as a metric
    from afr_cli.publish.cells_file import cells_by_paper

    listed = cells_by_paper([(paper, classed.reset_index())])
    assert "| [A toy paper](toyc/cells.md) | 7 | 1 | 1 | 1 | 1 | 1 | 2 |" in listed
    index = index_page([(paper, "toyc.html", Counter(), Counter())], classes={"toyc": counts})
    assert '<td class="num">2</td><td class="num">7</td></tr>' in index


def test_without_its_stores_a_cell_stays_unexplained_and_a_miss_is_never_explained_by_the_text(tmp_path):
    from afr_cli.publish.context import ReportContext

    root = tmp_path / "results"
    write_store(root / "toyc_text", {(d, "m"): ours for d, (_, ours, _) in TOY_CELLS.items()})
    knowledge.forget_added_folders()
    try:
        paper = knowledge.add_paper_folder(toy_paper(tmp_path, TOY_EXPLANATIONS))
        classed = classify_paper(paper, ReportContext(root))
    finally:
        knowledge.forget_added_folders()
    assert dict(class_counts(classed)) == {"as printed": 1, "within tolerance": 1, UNEXPLAINED: 5}


# dataset -> (paper, ours, under folds 1, under folds 2): the printed number between ours and a
# spread value is within the spread, as is one a spread value agrees with; one beyond every value
# (by more than the tolerance) or with a single value held is not
SPREAD_CELLS = {
    "D1": ("0.700", 0.5, 0.8, 0.6),  # between ours and folds 1
    "D2": ("0.700", 0.8, 0.5, math.nan),  # between, ours the high end
    "D3": ("0.700", 0.5, 0.55, 0.69),  # folds 2 within tolerance
    "D4": ("0.900", 0.5, 0.8, 0.6),  # above every value
    "D5": ("0.700", 0.5, math.nan, math.nan),  # no spread value: no range
    "D6": ("0.500", 0.5, 0.9, 0.1),  # as printed: the text reading's class comes first
}


def test_the_printed_number_within_the_range_of_the_choices_is_within_the_spread(tmp_path):
    from afr_cli.publish.cell_classes import spread_cells, spread_summary
    from afr_cli.publish.cells_file import render_cells
    from afr_cli.publish.context import ReportContext
    from afr_cli.publish.site import _spread_html

    root = tmp_path / "results"
    write_store(root / "toyc_text", {(d, "m"): v[1] for d, v in SPREAD_CELLS.items()})
    for n in (1, 2):
        values = {(d, "m"): v[1 + n] for d, v in SPREAD_CELLS.items() if not math.isnan(v[1 + n])}
        write_store(root / f"toyc_folds_{n}", values)
    spreads = [{"kind": "spread", "store": f"toyc_folds_{n}", "choice": f"folds {n}"} for n in (1, 2)]
    knowledge.forget_added_folders()
    try:
        paper = knowledge.add_paper_folder(toy_paper(tmp_path, spreads, SPREAD_CELLS))
        classed = classify_paper(paper, ReportContext(root))
    finally:
        knowledge.forget_added_folders()
    classed = classed[classed["model"] == "m"]  # without the toy paper's cell no store holds
    found = dict(zip(classed["dataset"], classed["class"]))
    assert found == {
        "D1": CLASSES[2],
        "D2": CLASSES[2],
        "D3": CLASSES[2],
        "D4": UNEXPLAINED,
        "D5": UNEXPLAINED,
        "D6": CLASSES[0],
    }
    assert list(classed.columns[-2:]) == ["folds 1", "folds 2"]
    held = spread_cells(classed).set_index("dataset")
    assert sorted(held.index) == ["D1", "D2", "D3", "D4"]  # D6 agrees, D5 has no spread value
    assert held.loc["D1", "range"] == pytest.approx(0.3) and held.loc["D2", "range"] == pytest.approx(0.3)
    summary = spread_summary(classed)
    assert (
        "(folds 1, folds 2; ours: the default) recompute 4 of the 5 scores our text reading misses "
        "(tuning-parameter cells aside)" in summary
    )
    assert "R² by 0.3 at the median and up to 0.3 (m on D1, table 1)" in summary
    assert summary.endswith("The printed number falls within their spread on 3.")
    page = "".join(_spread_html(classed))
    assert "<td>D2</td><td>m</td><td>R²</td><td>0.700</td><td>0.800</td><td>0.500</td><td>n/a</td>" in page
    text = render_cells(paper, classed)
    assert "| table | dataset | model | metric | paper | ours | folds 1 | folds 2 | class |" in text
    assert "| 1 | D4 | m | R² | 0.900 | 0.500 | 0.800 | 0.600 | unexplained |" in text
    assert "1 as printed; 0 within tolerance; 3 within the spread of unpinned choices" in text


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ({"kind": "guess", "store": "s"}, "kind: 'guess' is not allowed; allowed: spread, code, cause"),
        ({"kind": "cause", "store": "s", "cause": "why"}, "a cause needs cause: (what it removes) and test:"),
        ({"kind": "cause", "store": "s", "cause": "why", "test": "it was tested"}, "test 'it was tested'"),
        ({"kind": "spread", "store": "s", "choice": "f", "test": CAUSE_TEST}, "allowed only with kind: cause"),
        ({"kind": "spread", "store": "s"}, "a spread needs choice: (the value it takes"),
        (
            {"kind": "cause", "store": "s", "choice": "f", "cause": "c", "test": CAUSE_TEST},
            "allowed only with kind: spread or code",
        ),
        ({"kind": "code", "store": "../s"}, "explanations[0]: store:"),
        ({"kind": "code", "store": "s", "solver": "x"}, "explanations[0]"),
    ],
)
def test_the_data_file_refuses_an_explanation_it_cannot_check(tmp_path, entry, needle):
    with pytest.raises(AfrInputError) as caught:
        knowledge.read_paper_folder(toy_paper(tmp_path, [entry]))
    assert needle in str(caught.value) and "paper.yaml" in str(caught.value)


def test_every_declared_cause_names_a_test_that_exists():
    """No page claims a cause that no test checks: each cause's test is a function of tests/."""
    causes = [e for p in knowledge.papers() for e in p.explanations if e.kind == "cause"]
    assert causes
    for cause in causes:
        file, _, function = cause.test.partition("::")
        assert re.search(rf"^def {function}\(", (REPO / file).read_text(encoding="utf-8"), re.M), cause.test


def test_every_published_cell_of_the_committed_root_has_exactly_one_class():
    from conftest import committed_classes, committed_study_blocks

    from afr_cli.catalogue.published import load_published

    total = 0
    for paper in knowledge.papers():
        classed = committed_classes(paper.id)
        if not len(load_published(paper.id)):
            continue
        keys = classed[["table", "dataset", "model", "metric"]]
        assert not keys.duplicated().any(), paper.id
        assert set(classed["class"]) <= set(CLASSES)
        counts = class_counts(classed)
        assert sum(counts.values()) == len(classed) == len(load_published(paper.id)), paper.id
        total += len(classed)
    assert total == len(load_published())
    # the LARF page's own classing of its code-reading cells is this one's
    block = committed_study_blocks("larf")["study:larf:cell_classes"]
    own = [line.strip("|").split("|")[-1].strip() for line in block.splitlines()[2:]]
    assert len(own) == 20 and set(own) <= set(CLASSES)
    assert class_counts(committed_classes("larf"))[CLASSES[4]] >= own.count(CLASSES[4]) > 0


def test_a_class_agrees_where_the_papers_table_beside_ours_agrees():
    """The classes judge a cell as the tables beside the paper do: a tuning parameter at the most
    decimals the paper prints it with in that table (a printed 0 among 0.25s is not met by 0.25),
    a score within the metric's tolerance; so no cell is as printed or within tolerance in the
    classes and starred in a table."""
    from conftest import committed_classes

    from afr_cli.publish.context import ReportContext
    from afr_cli.tables.paper_compare import paper_comparison

    ctx = ReportContext(REPO / "results")
    for paper in ctx.papers:
        classed = committed_classes(paper.id)
        if not len(classed):
            continue
        agreed = {(r.table, r.dataset, r.model, r.metric) for r in classed.itertuples() if r[7] in CLASSES[:2]}
        table_agrees = set()
        for report in paper.reports:
            results = ctx.report_frames(report, paper.reps)
            if results is None:
                continue
            for spec in (s for s in report.papers if s.startswith(f"{paper.id}:")):
                frame = paper_comparison(results, spec)
                table = spec.partition(":")[2]
                table_agrees |= {
                    (table, r.dataset, r.model, r.metric) for r in frame.itertuples() if r.within_tol is True
                }
        assert agreed <= table_agrees, (paper.id, sorted(agreed - table_agrees)[:5])


def _manifest_config(store: str) -> dict:
    import json

    path = REPO / "results" / store / "export" / "manifest.json"
    return json.loads(path.read_text(encoding="utf-8"))["manifest"]["config"]


def test_a_spread_store_differs_from_the_store_it_varies_in_its_choice_alone():
    """Each spread a paper declares is the store it varies (its config's variant_of) with one choice
    changed: the inner-fold assignment its column names; seeds, splits, scaling, bases and every
    model both hold are the same, so the spread of a cell is the choice's and nothing else's."""
    spreads = [e for p in knowledge.papers() for e in p.explanations if e.kind == "spread"]
    assert len(spreads) >= 10
    own_keys = {"name", "description", "variant_of", "datasets"}
    for spread in spreads:
        config = _manifest_config(spread.store)
        varied = _manifest_config(config["variant_of"])
        assert config["protocol"].pop("fold_assignment") == int(spread.choice.removeprefix("folds ")), spread.store
        assert varied["protocol"].pop("fold_assignment", 0) == 0
        config["protocol"].pop("reps"), varied["protocol"].pop("reps")
        assert set(config["datasets"]) <= set(varied["datasets"]), spread.store
        models = {m["id"]: m for m in varied.pop("models")}
        for model in config.pop("models"):
            assert model["id"] not in models or model == models[model["id"]], (spread.store, model["id"])
        rest = {k: v for k, v in config.items() if k not in own_keys}
        assert rest == {k: v for k, v in varied.items() if k not in own_keys}, spread.store
