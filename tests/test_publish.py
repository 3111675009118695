"""afr_cli/publish/: studies rendered into generated blocks, ``afr report --check``, and a site
that stands alone with one page per paper the loader returns."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pandas as pd
import pytest
import yaml
from conftest import committed_study_blocks, committed_study_blocks_and_written, run_afr

from afr_cli.catalogue.knowledge import Catalogue, catalogue, paper, papers, parse_paper
from afr_cli.errors import AfrInputError
from afr_cli.publish import site as site_module
from afr_cli.publish.context import ReportContext
from afr_cli.publish.pages import BEGIN, END, blocks_in, with_blocks
from afr_cli.publish.studies import render_frame, study_function

REPO = Path(__file__).resolve().parents[1]


def test_no_python_file_is_under_results():
    """results/ holds data and generated output only: analyses are studies in the paper folders."""
    assert sorted(p.relative_to(REPO).as_posix() for p in (REPO / "results").rglob("*.py")) == []


def test_every_declared_study_names_a_function_of_its_papers_studies_file():
    declared = [(p, s) for p in papers() for s in p.studies]
    assert {p.id for p, _ in declared} >= {"satrf", "larf", "robust_rf"}
    for p, s in declared:
        assert callable(study_function(p, s)), (p.id, s.name)
        if s.show:
            assert callable(study_function(p, s, s.show)), (p.id, s.show)
        pages = [
            REPO / "README.md",
            *sorted((REPO / "docs").glob("*.md")),
            *sorted((REPO / "results").glob("*/README.md")),
            *(q.page for q in papers() if q.page is not None),
        ]
        assert any(BEGIN.format(name=s.block) in page.read_text() for page in pages), f"no page quotes {s.block}"


def test_a_bad_study_declaration_is_one_line_naming_the_key():
    raw = yaml.safe_load((REPO / "afr_cli" / "papers" / "larf" / "paper.yaml").read_text())
    raw["studies"] = [{"name": "x", "block": "study:larf:x", "colour": "red"}]
    with pytest.raises(AfrInputError, match=r"studies: colour: unknown key; allowed: block, cache, digits"):
        parse_paper(raw, "larf.yaml")
    raw["studies"] = [{"name": "x", "block": "study:larf:x", "formats": {"p": "%.2f"}}]
    with pytest.raises(AfrInputError, match=r"formats: p: '%.2f' is not a number format"):
        parse_paper(raw, "larf.yaml")


def test_render_frame_formats_by_column_and_shows_missing_values_as_a_dash():
    frame = pd.DataFrame({"dataset": ["A", "B"], "ours": [0.12345, None], "Δ": [0.01, -0.2], "n": [3, 4]})
    assert render_frame(frame, 3, {"Δ": "+.3f"}).splitlines() == [
        "| dataset | ours | Δ | n |",
        "|---|---|---|---|",
        "| A | 0.123 | +0.010 | 3 |",
        "| B | — | -0.200 | 4 |",
    ]


def test_render_frame_escapes_a_bar_in_a_header_or_a_cell_so_the_columns_stay_put():
    frame = pd.DataFrame({"|weights|": [0.5], "where": ["|ΔR²| 0.1"], "done": ["a \\| b"]})
    header, _, row = render_frame(frame, 1).splitlines()
    assert header == "| \\|weights\\| | where | done |"
    assert row == "| 0.5 | \\|ΔR²\\| 0.1 | a \\| b |"  # an already escaped bar is not escaped twice


def test_cheap_studies_reproduce_the_numbers_the_scripts_printed():
    """The scripts' outputs (run once before they were deleted) as the studies give them now."""
    blocks, written = committed_study_blocks_and_written("satrf", "larf")  # study_blocks over results/
    assert written == []  # no refit without --studies
    assert (
        "| Diabetes | 0.448 / 0.416 / +0.032 | 0.463 / 0.438 / +0.025 | 0.442 / 0.424 / +0.018 | "
        "0.455 / 0.441 / +0.014 | 0.445 (+0.021) | 0.464 (+0.023) |"
    ) in blocks["study:satrf:derived_protocol"]
    assert (
        "| RF | +0.016 (+0.020) | +0.008 (+0.008) | +0.006 (+0.012) | -0.011 (-0.010) | -0.001 (+0.009) |"
        in blocks["study:satrf:derived_gains"]
    )
    assert (
        "| Friedman3 | 0.614 | 0.749 | -0.135 | 0.327 | 0.103 | 100 | 0.667 | 0.245 | -0.082 |"
        in blocks["study:larf:small_sets"]
    )
    assert (
        "| em-w-larf | 100 | 0.667 → 0.673 | 0.522 → 0.564 | 0.407 → 0.489 | 0.19 |"
        in blocks["study:larf:leave_self_out_paired"]
    )
    # the refit, rendered from its committed csv
    assert (
        "| 1 | 20 | ECOS | ECOS: optimal | 80 | 2.09e-25 | 3.64 | 120 | 0.4522 |" in blocks["study:larf:which_optimum"]
    )


def test_blocks_are_replaced_in_place_and_the_prose_around_them_stays():
    text = f"before\n{BEGIN.format(name='study:x')}\nold 1\n{END.format(name='study:x')}\nafter 2\n"
    new = with_blocks(text, {"study:x": "| a |\n|---|\n| 3 |", "study:unquoted": "ignored"})
    assert new.startswith("before\n") and new.endswith("after 2\n") and "old 1" not in new
    assert blocks_in(new) == {"study:x": "| a |\n|---|\n| 3 |"}


def _site_root(tmp_path: Path) -> Path:
    """A results root without stores but with a paper's figure and a report's Friedman files."""
    root = tmp_path / "results"
    (root / "satrf" / "figures").mkdir(parents=True)
    shutil.copy(REPO / "results" / "satrf" / "figures" / "Sparse.png", root / "satrf" / "figures")
    (root / "larf").mkdir()
    for f in [*(REPO / "results" / "larf").glob("cd-larf-3-*.svg"), REPO / "results" / "larf" / "friedman.md"]:
        shutil.copy(f, root / "larf")
    return root


def test_the_site_has_a_page_for_every_paper_the_loader_returns_and_stands_alone(tmp_path):
    toy = dataclasses.replace(paper("robust_rf"), id="toy", title="A toy paper of our own", reports=(), claims=())
    known = catalogue()
    root = _site_root(tmp_path)  # the site's papers are its report context's: the catalogue's and the toy
    written = site_module.write_site(root, ReportContext(root, known=Catalogue(known.folders, (*known.papers, toy))))
    site = root / "site"
    assert sorted(p.name for p in site.glob("*.html")) == sorted(
        [f"{p.id}.html" for p in papers()] + ["toy.html", "index.html", "readme.html"]
    )
    assert site / "satrf" / "figures" / "Sparse.png" in written
    index = (site / "index.html").read_text()
    assert '<a href="toy.html">A toy paper of our own</a>' in index
    chart = re.search(r"<svg class=\"glance\".*?</svg>", index, re.S).group(0)
    assert chart.count('class="paper"') == len(papers()) + 1 and "<rect" in chart
    # copied anywhere, every link still resolves inside the copy, and none leaves it
    elsewhere = shutil.copytree(site, tmp_path / "published")
    shutil.rmtree(root)
    for page in elsewhere.glob("*.html"):
        for target in re.findall(r'(?:src|href)="([^"#]+)"', page.read_text()):
            assert not target.startswith(("../", "/")) and not re.match(r"[a-z]+:", target), (page.name, target)
            assert (elsewhere / unquote(target)).is_file(), f"{page.name}: {target} missing"
    assert '<img src="satrf/figures/Sparse.png"' in (elsewhere / "satrf.html").read_text()
    assert 'href="results/larf/friedman.html"' in (elsewhere / "larf.html").read_text()  # rendered, not raw Markdown


@pytest.mark.slow
def test_report_check_names_a_stale_block_and_a_stale_file_and_passes_when_current(tmp_path):
    root = tmp_path / "results"
    cfg = {
        "name": "abrf_rf",
        "seed": 3,
        "protocol": {"reps": 2},
        "datasets": ["Sparse", "Friedman1"],
        "bases": [{"id": "RF", "kind": "rf", "n_estimators": 8, "min_samples_leaf": 5}],
        "models": [
            {"id": "rf", "family": "forest"},
            {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 1.0]}},
        ],
    }
    config = tmp_path / "abrf_rf.yaml"
    config.write_text(yaml.safe_dump(cfg))
    assert run_afr("run", str(config), "--out", str(root / "abrf_rf"), "-q", "--jobs", "1").returncode == 0
    readme = tmp_path / "README.md"
    readme.write_text(f"# ours\n\nprose\n\n{BEGIN.format(name='claims:satrf')}\n{END.format(name='claims:satrf')}\n")
    assert run_afr("report", "--root", str(root), "--html").returncode == 0
    assert "reproduces" in readme.read_text() or "not run" in readme.read_text()
    fresh = run_afr("report", "--root", str(root), "--check")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr

    readme.write_text(readme.read_text().replace("not run", "reproduces by hand", 1))
    summary = root / "abrf_rf" / "summary.md"
    summary.write_text(summary.read_text() + "edited\n")
    (root / "site" / "larf.html").unlink()
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    stale = run_afr("report", "--root", str(root), "--check")
    assert stale.returncode == 1, stale.stdout + stale.stderr
    lines = stale.stdout.splitlines()
    assert f"{readme.as_posix()}: generated block claims:satrf is stale" in lines
    assert f"{summary.as_posix()}: stale" in lines
    assert f"{(root / 'site' / 'larf.html').as_posix()}: missing (afr report writes it)" in lines
    assert len(lines) == 3, lines
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before  # --check writes nothing


def test_report_check_refuses_other_options_in_one_line():
    from conftest import assert_one_line_error

    assert_one_line_error(run_afr("report", "--check", "--html"), "--check", "allowed: afr report --check")


def test_a_study_may_show_text_and_the_prose_studies_give_the_numbers_the_pages_quoted():
    """The prose numbers of the pages, now generated (the values the hand-typed prose held)."""
    blocks = committed_study_blocks("satrf", "larf", "agboost", "robust_rf")
    assert blocks["study:satrf:friedman3_tail"] == (
        "Within our draw its R² is heavy-tailed over splits (RF: standard "
        "deviation 0.47, minimum -1.82), so its mean was 0.14 over the first "
        "20 repetitions and is 0.32 over 100."
    )
    assert "ranges from 0.14 to 0.52" in blocks["study:satrf:synthetic_draws"]  # from the committed refit csv
    assert (
        "| Wine | tau = 0.1, eps = 0.5 (0.413) | kappa = 0.1, gamma = 0.5 (0.415) |"
        in blocks["study:satrf:figure_peaks"]
    )
    assert "| min-max to [0, 1] | 55/66 | 9/66 | −0.008 |" in blocks["study:satrf:softmax_scaling"]
    assert (
        "Friedman3 (0.614 to 0.702, paper 0.749) and Regression (0.378 to 0.461, paper 0.455)"
        in blocks["study:larf:leave_self_out_summary"]
    )
    assert "| 9 of 22 | 8 of 22 |" in blocks["study:agboost:gbm_settings"]
    assert "659 of 770 units identical" in blocks["study:agboost:best_dt"]
    assert "beats RF on 121 of 198 (dataset, γ, η) cells" in blocks["study:robust_rf:summary"]
