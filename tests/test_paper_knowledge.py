"""The papers' data files (afr_cli/papers/*/paper.yaml): tables, aliases, parameter rows, axes, reports."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from afr_cli.catalogue.knowledge import paper, param_rows, parse_paper, reports, table_info
from afr_cli.catalogue.printed_tests import ttest_sources
from afr_cli.catalogue.published import published_table
from afr_cli.errors import AfrInputError

ROOT = Path(__file__).resolve().parents[1]


def test_every_claim_report_and_ttest_of_the_data_files_is_well_formed():
    known_reports = {r.name for r in reports()}
    for pid in ("satrf", "larf", "agboost", "robust_rf"):
        p = paper(pid)
        assert p.claims, pid
        for claim in p.claims:
            assert claim["quote"] and claim["test"] in (
                "wins",
                "best",
                "ttest",
                "negligible",
                "equal",
                "surface_peak",
                "figure_wins",
                "gain_contrast",
                "not_checked",
            )
            assert claim["test"] != "not_checked" or claim["reason"].strip(), claim["id"]
            assert claim.get("report", "store") in known_reports | {"store"}, claim["id"]
        for report in p.reports:
            for spec in report.papers:
                published_table(spec)  # every table a report names exists
    assert len(ttest_sources()) == 9


def test_agboost_and_robust_tables_answer_to_their_arabic_numbers():
    assert table_info("agboost:2").spec == "agboost:II" and table_info("AGBOOST:3").spec == "agboost:III"
    assert table_info("robust_rf:1").spec == "robust_rf:I"
    assert len(published_table("agboost:2")) == len(published_table("agboost:II"))
    assert {"eps_opt", "delta_opt"} <= set(published_table("agboost:III").metric)
    assert param_rows()["delta_opt"] == "delta" and param_rows()["eps_opt"] == "eps"


def test_a_bad_data_file_is_a_one_line_error_naming_the_key():
    with pytest.raises(AfrInputError, match="x.yaml: colour: unknown key; allowed:"):
        parse_paper({"id": "x", "published": "x.csv", "colour": "red"}, "x.yaml")
    with pytest.raises(AfrInputError, match="x.yaml: published: missing"):
        parse_paper({"id": "x"}, "x.yaml")


def test_a_new_familys_parameter_gets_its_opt_column_without_code_changes(monkeypatch):
    from afr_cli import models
    from afr_cli.models.base import MIXING, Param
    from afr_cli.tables import summary_wide

    class Wobble(models.EpsABRFFamily):
        name, summary = "wobble", "eps-ABRF with a wobble"
        params = (*models.EpsABRFFamily.params, Param("wobble", MIXING, 0.5, 0.0, 1.0))

    monkeypatch.setitem(models.FAMILIES, "wobble", Wobble())
    rows = [
        {
            "dataset": "Wine",
            "base": "RF",
            "model": "mine",
            "rep": r,
            "r2": 0.4,
            "mae": 1.0,
            "rmse": 1.0,
            "params": {"eps": 0.5, "wobble": w},
            "selection": "inner-cv",
        }
        for r, w in enumerate((0.1, 0.9, 0.9))
    ]
    wide = summary_wide(pd.DataFrame(rows), "r2")
    assert list(wide["wobble_opt (mine)"]) == [0.9]


def test_robust_table_groups_ours_by_training_fraction_and_noise():
    from afr_cli.tables import paper_comparison, summary_long

    rows = [
        {
            "dataset": "Boston",
            "base": "RF",
            "model": m,
            "rep": r,
            "r2": 0.8,
            "mae": 3.0,
            "rmse": rmse + r * 0.01,
            "params": {},
            "selection": "inner-cv",
            "train_fraction": frac,
            "noise_eta": eta,
        }
        for m in ("rf", "robust-rf-a0.2")
        for r in range(2)
        for frac in (0.15, 0.95)
        for eta in (0.0, 0.5)
        for rmse in [4.7 if m == "rf" else 4.6]
    ]
    results = pd.DataFrame(rows)
    long = summary_long(results)
    assert {"train_fraction", "noise_eta"} <= set(long.columns) and len(long) == 2 * 4 * 3
    cells = paper_comparison(results, "robust_rf:1")
    hit = cells[(cells.dataset == "Boston [train_fraction=15, noise_eta=0]") & (cells.model == "rf")].iloc[0]
    assert hit["ours"] == pytest.approx(4.705) and hit["published"] == 4.787
    missing = cells[cells.dataset == "Boston [train_fraction=25, noise_eta=0]"]
    assert missing["ours"].isna().all()
    from afr_cli.tables import compare_models

    paired = compare_models(results, "rf", "robust-rf-a0.2", "rmse").bases[0]
    assert len(paired.per_dataset) == 4 and paired.record.wins and not paired.record.losses


def test_a_report_compares_on_its_papers_own_metric():
    assert {r.name: r.compare_metric for r in reports()}["robust_rf"] == "rmse"  # Table I prints RMSE
    assert {r.name: r.compare_metric for r in reports()}["satrf"] == "r2"
    with pytest.raises(
        AfrInputError, match=r"x.yaml: reports\[0\]: compare_metric: 'auc' is not allowed; allowed: r2, mae, rmse"
    ):
        parse_paper(
            {
                "id": "x",
                "order": 9,
                "title": "t",
                "text": "t",
                "published": "x.csv",
                "reps": 1,
                "models": [],
                "bases": [],
                "reports": [{"name": "x", "stores": [], "compare_metric": "auc"}],
            },
            "x.yaml",
        )


MINIMAL = {"id": "x", "published": "x.csv"}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"order": "first"}, "x.yaml: order: 'first' is not allowed; allowed: an integer >= 0"),
        ({"order": True}, "x.yaml: order: True is not allowed"),
        ({"reps": 0}, "x.yaml: reps: 0 is not allowed; allowed: an integer >= 1"),
        ({"stated_reps": "ten"}, "x.yaml: stated_reps: 'ten' is not allowed"),
        ({"tables": ["1"]}, "x.yaml: tables: list ['1'] is not allowed; allowed: a mapping"),
        (
            {"tables": {"1": "R²"}},
            "x.yaml: tables: 1: 'R²' is not allowed; allowed: a mapping of aliases, also, caption",
        ),
        ({"tables": {"1": {"colour": "red"}}}, "x.yaml: tables: 1: colour: unknown key"),
        ({"tables": {"1": {"aliases": ["a"]}}}, "x.yaml: tables: 1: aliases: list"),
        ({"models": "rf"}, "x.yaml: models: str 'rf' is not allowed; allowed: a list"),
        ({"models": [{"id": "rf"}]}, "x.yaml: models: {'id': 'rf'} is not allowed; allowed: a list of names"),
        ({"axes": {"noise": {"scale": "big"}}}, "x.yaml: axes: noise: scale: 'big' is not allowed; allowed: a number"),
        ({"claims": {"id": "c"}}, "x.yaml: claims: dict"),
        ({"claims": ["c"]}, "x.yaml: claims[0]: 'c' is not allowed; allowed: a mapping"),
        ({"claims": [{"id": "c", "test": "wins"}, {"id": "c", "test": "best"}]}, "x.yaml: claims: c: id given twice"),
        ({"claims": [{"id": "c"}]}, "x.yaml: claims: c: test: missing"),
        ({"baselines": {"RF": {"kind": "rf"}}}, "x.yaml: baselines: RF: table: missing"),
        ({"id": "../x"}, "x.yaml: id: '../x' contains a path separator"),
        ({"id": 7}, "x.yaml: id: must be a non-empty string"),
        ({"published": "../elsewhere.csv"}, "x.yaml: published: '../elsewhere.csv' leaves the results root"),
        ({"reports": [{"name": "../r", "stores": []}]}, "x.yaml: reports[0]: name: '../r' leaves the results root"),
        ({"reports": [{"name": "/tmp/r", "stores": []}]}, "x.yaml: reports[0]: name: '/tmp/r' is absolute"),
        ({"reports": [{"name": "r", "stores": "s"}]}, "x.yaml: reports[0]: stores: str 's' is not allowed"),
        (
            {"reports": [{"name": "r", "stores": ["a/../../b"]}]},
            "reports[0]: stores: 'a/../../b' leaves the results root",
        ),
        ({"reports": [{"name": "r", "stores": [], "compare": [["a"]]}]}, "reports[0]: compare: ['a'] is not allowed"),
        ({"reports": ["r"]}, "x.yaml: reports[0]: 'r' is not allowed; allowed: a mapping"),
        (
            {"reports": [{"name": "r", "stores": [], "friedman_alpha": 1}]},
            "x.yaml: reports[0]: 1 is not allowed; friedman_alpha must be in (0, 1)",
        ),
        (
            {"reports": [{"name": "r", "stores": [], "friedman_alpha": "5%"}]},
            "x.yaml: reports[0]: '5%' is not a number; friedman_alpha must be in (0, 1)",
        ),
        (
            {"experiments": [{"config": "configs/quickstart.yaml", "reps": 1, "out": "../x"}]},
            "experiments[0]: out: '../x' leaves the results root",
        ),
        (
            {"outputs": [{"afr": ["models"], "stdout": "models.txt"}]},
            "outputs[0]: stdout: 'models.txt' is not under the results root; allowed: '{root}/'",
        ),
        ({"outputs": [{"afr": ["models"], "stdout": "{root}/../m.txt"}]}, "outputs[0]: stdout: '../m.txt' leaves"),
        ({"outputs": [{"afr": ["plot", "--out", "/tmp/p.png"]}]}, "outputs[0]: afr: --out: '/tmp/p.png' is not under"),
        ({"outputs": [{"afr": ["plot", "--out={root}/../p.png"]}]}, "outputs[0]: afr: --out: '../p.png' leaves"),
        ({"studies": [{"name": "s", "block": "b", "cache": "../s.csv"}]}, "studies: s: cache: '../s.csv' leaves"),
    ],
)
def test_every_key_of_a_data_file_has_its_type_checked_in_one_line(change, message):
    """Each bad key is one line naming it: `order: first`, `tables:` as a list and friends would
    otherwise be a traceback (int(), .items()) or pass, and paths must stay inside the results root."""
    with pytest.raises(AfrInputError) as err:
        parse_paper({**MINIMAL, **change}, "x.yaml")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_package_papers_configs_resolve_from_the_checkout_not_the_working_directory(tmp_path, monkeypatch):
    import yaml

    from afr_cli.catalogue.knowledge import PAPERS_DIR, PROJECT_DIR, read_paper_folder

    monkeypatch.chdir(tmp_path)
    satrf = read_paper_folder(PAPERS_DIR / "satrf")
    assert satrf.experiments and all(e.config.is_absolute() and e.config.is_file() for e in satrf.experiments)
    assert satrf.experiments[0].config == PROJECT_DIR / "configs" / "abrf_rf.yaml"
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "own.yaml").write_text("name: own\n")
    (tmp_path / "cwd_only.yaml").write_text("name: cwd\n")  # in the working directory only: never used
    raw = {
        **MINIMAL,
        "experiments": [{"config": "own.yaml", "reps": 1}, {"config": "configs/quickstart.yaml", "reps": 1}],
    }
    mine = parse_paper(raw, "mine/paper.yaml", folder)
    assert [e.config for e in mine.experiments] == [folder / "own.yaml", PROJECT_DIR / "configs" / "quickstart.yaml"]
    with pytest.raises(AfrInputError, match=r"experiments\[0\]: config: 'cwd_only.yaml' is no file of"):
        parse_paper({**MINIMAL, "experiments": [{"config": "cwd_only.yaml", "reps": 1}]}, "mine/paper.yaml", folder)
    assert yaml  # the data file format stays YAML


def test_a_data_file_not_in_utf8_is_one_line(tmp_path):
    from afr_cli.catalogue.knowledge import read_paper_folder

    (tmp_path / "paper.yaml").write_bytes("id: x\npublished: x.csv\ntitle: pap\xe9r\n".encode("latin-1"))
    with pytest.raises(AfrInputError, match="paper.yaml: not a UTF-8 text file"):
        read_paper_folder(tmp_path)


def test_a_published_csv_is_checked_before_anything_runs(tmp_path):
    from afr_cli.catalogue.knowledge import parse_paper as parse
    from afr_cli.reproduction.checks import check_published

    paper = parse({**MINIMAL, "published": "published.csv", "axes": {"noise_eta": {"scale": 1}}}, "x.yaml", tmp_path)
    with pytest.raises(AfrInputError, match="paper.yaml: published: 'published.csv': no such file"):
        check_published(paper)
    csv = tmp_path / "published.csv"
    header = "paper,table,base,dataset,model,metric,value"
    for text, message in (
        (header + "\n", "column 'noise_eta' missing"),
        (header + ",noise_eta\nx,1,RF,D,rf,r2,0.5\n", "line 2: 7 fields, the header has 8"),
        (header + ",noise_eta\nx,1,RF,D,rf,r2,0.5,none\n", "line 2: noise_eta: 'none' is not a number"),
    ):
        csv.write_text(text)
        with pytest.raises(AfrInputError, match=message):
            check_published(paper)
    csv.write_bytes((header + ",noise_eta\nx,1,RF,Caf\xe9,rf,r2,0.5,0\n").encode("latin-1"))
    with pytest.raises(AfrInputError, match="published.csv: not a UTF-8 text file"):
        check_published(paper)
    csv.write_text(header + ",noise_eta\n\nx,1,RF,D,rf,r2,0.5,0\n")
    check_published(paper)  # a blank line is no row


def test_a_report_chooses_its_post_hoc_alpha(tmp_path):
    """A report's post-hoc tests run at the alpha its data file chooses (default
    the papers' 0.05), and friedman.md says which."""
    from afr_cli.publish.context import ReportContext
    from afr_cli.tables.friedman import ALPHA, write_friedman

    chosen = parse_paper({**MINIMAL, "reports": [{"name": "r", "stores": [], "friedman_alpha": 0.1}]}, "x.yaml")
    default = parse_paper({**MINIMAL, "reports": [{"name": "r", "stores": []}]}, "x.yaml")
    assert chosen.reports[0].friedman_alpha == 0.1 and default.reports[0].friedman_alpha == ALPHA == 0.05
    results = ReportContext(ROOT / "results").report_frames("larf_trees")
    for folder in ("a10", "a05"):
        (tmp_path / folder).mkdir()
    write_friedman(results, ["larf:9"], tmp_path / "a10", chosen.reports[0].friedman_alpha)
    write_friedman(results, ["larf:9"], tmp_path / "a05", default.reports[0].friedman_alpha)
    at10, at05 = ((tmp_path / d / "friedman.md").read_text(encoding="utf-8") for d in ("a10", "a05"))
    assert "α = 0.1" in at10 and "α = 0.05" not in at10
    assert "α = 0.05" in at05 and "α = 0.1" not in at05


def test_check_studies_loads_each_studies_file_once(monkeypatch):
    """The pre-run check resolves every study (and its ``show``) of a paper from one load of its
    studies.py: the file is executed once, not once per function it names."""
    from afr_cli.publish import studies
    from afr_cli.reproduction.checks import check_studies

    satrf = paper("satrf")
    assert sum(1 + bool(s.show) for s in satrf.studies) > 1  # several functions named
    loads = []
    real = studies.load_studies
    monkeypatch.setattr(studies, "load_studies", lambda p: loads.append(p.id) or real(p))
    check_studies(satrf)
    assert loads == ["satrf"]
