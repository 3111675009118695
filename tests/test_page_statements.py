"""Every generated statement of a paper's page is true of the stores under the root the page is
built for: a page never says what its numbers do not show.

One scratch root is built once for the module: small copies of the committed stores' exports (two
repetitions, four datasets; no dataset is loaded and nothing is refitted). Each paper's page is
regenerated there (``afr reproduce --root DIR`` writes it as ``DIR/<paper>/page.md``) with the
blocks that state results in words, and each statement is checked against the table beside it:
a direction against the sign of the printed mean, "significant" only where the printed p is below
the level, counts equal to the table's, store paths under the scratch root, and no empty "()".
"""

from __future__ import annotations

import csv
import io
import json
import lzma
import re
from dataclasses import replace
from pathlib import Path

import pytest

from afr_cli.catalogue.knowledge import papers
from afr_cli.publish.build import write_ledgers
from afr_cli.publish.claims.ledger import judge_paper, summary_block
from afr_cli.publish.context import ReportContext
from afr_cli.publish.page_words import (
    ALPHA,
    how_many,
    in_brackets,
    listing,
    repetitions_label,
    shown_root,
)
from afr_cli.publish.pages import blocks_in, paper_page, replace_sections, unbuilt_note
from afr_cli.publish.studies import study_blocks
from afr_cli.store.cache import CACHE_ENV

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
REPS = 2
DATASETS = {"Diabetes", "Friedman1", "Yacht", "Boston"}
# store -> (keep its grid, keep every dataset): a grid is read by the comparisons (through the
# results' selection), not by `afr status`; the GBM settings study reads every printed cell.
STORES = {
    "dm_soft": (True, False),
    "agboost_dt": (True, False),
    "agboost_ert": (True, False),
    "agboost_gbm_baselines/none": (True, True),
    "agboost_gbm_baselines/standard": (True, True),
    "satrf_rf": (True, False),
    "satrf_ert": (True, False),
    "abrf_rf": (True, True),
    "abrf_ert": (True, True),
    "abrf_rf_derived": (True, True),
    "abrf_ert_derived": (True, True),
    "larf_rf": (False, False),
    "larf_ert": (False, False),
    "larf_leave_self_out": (False, True),
    "robust_rf_boston": (False, False),
    "robust_rf_diabetes": (False, False),
    "robust_rf_all": (True, False),
}
# the blocks each page states results in, regenerated here (the others are left as they are)
BLOCKS = {
    "dm": ("soft_comparisons", "soft_verdicts", "store_solves", "tau_choices"),
    "satrf": (
        "variant_tests",
        "variant_verdicts",
        "yx_best",
        "yx_over_y",
        "softmax_comparisons",
        "softmax_verdicts",
        "stores_held",
        "identified_gains",
        "derived_gains",
    ),
    "agboost": ("gbm_cells", "ert_depths", "diabetes_gap", "stores_held"),
    "larf": ("compute_per_base", "stores_held", "larger_sets"),
    "robust_rf": ("store_facts", "stores_held", "all_datasets", "table_one_verdicts"),
}


def _small_export(src: Path, dst: Path, grid: bool, every_dataset: bool) -> None:
    """``src``'s export with only repetitions 0..REPS-1 (and DATASETS), as an export-only store at
    ``dst``; without ``grid`` the grid table keeps only its header."""
    out = dst / "export"
    out.mkdir(parents=True)
    meta = json.loads((src / "export" / "manifest.json").read_text(encoding="utf-8"))
    for table in ("units", "results", "grid"):
        with lzma.open(src / "export" / f"{table}.csv.xz", "rt", encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader)
            rep, dataset = header.index("rep"), header.index("dataset")
            kept = (
                []
                if table == "grid" and not grid
                else [row for row in reader if int(row[rep]) < REPS and (every_dataset or row[dataset] in DATASETS)]
            )
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(kept)
        with lzma.open(out / f"{table}.csv.xz", "wt", encoding="utf-8", newline="") as handle:
            handle.write(text.getvalue())
        meta["tables"][table]["rows"] = len(kept)
    (out / "manifest.json").write_text(json.dumps(meta), encoding="utf-8")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pages") / "scratch"
    for store, (grid, every) in STORES.items():
        _small_export(REPO / "results" / store, root / store, grid, every)
    return root


@pytest.fixture(scope="module")
def pages(scratch) -> dict[str, dict[str, str]]:
    """Each paper's page regenerated on the scratch root: its copy there, with the claims summary
    and the blocks of BLOCKS rewritten; paper id -> the copy's generated blocks by name.

    The export cache is off here: the scratch stores are new to it, so every frame and test would
    be a new entry, and each entry written lists the whole cache folder (to trim it), so in a
    project folder that has cached thousands of entries the thousand written here cost minutes.
    The report context still reads each store once; what the pages say does not depend on it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, "off")
        return _regenerated_pages(scratch)


def _regenerated_pages(scratch: Path) -> dict[str, dict[str, str]]:
    shown = {}
    ctx = ReportContext(scratch)
    for paper in papers():
        if paper.id not in BLOCKS:
            continue
        chosen = tuple(s for s in paper.studies if s.name in BLOCKS[paper.id])
        assert {s.name for s in chosen} == set(BLOCKS[paper.id]), paper.id
        blocks, _ = study_blocks((replace(paper, studies=chosen),), ctx)
        verdicts = judge_paper(paper, ctx)
        if verdicts:
            blocks[f"claims:{paper.id}"] = summary_block(paper, verdicts, ctx.shown)
        copy = paper_page(paper.page, paper.id, scratch)
        replace_sections(copy, blocks)
        shown[paper.id] = blocks_in(copy.read_text(encoding="utf-8"))
    return shown


def _rows(table: str) -> list[dict[str, str]]:
    """A generated Markdown table's rows as header -> cell."""
    lines = [line for line in table.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(header, (c.strip() for c in re.split(r"(?<!\\)\|", line.strip("|"))))) for line in lines[2:]]


def _sign(text: str) -> int:
    value = float(text)
    return (value > 0) - (value < 0)


def test_the_words_are_computed():
    assert listing([]) == "" and listing(["a"]) == "a" and listing(["a", "b", "c"]) == "a, b and c"
    assert in_brackets([]) == "" and in_brackets(["9 to CLARABEL"]) == " (9 to CLARABEL)"
    assert how_many(11, 11) == "all 11" and how_many(0, 11) == "none of the 11" and how_many(8, 11) == "8 of 11"
    assert repetitions_label([1, 0]) == "0-1" and repetitions_label([0]) == "0"


def test_a_check_copy_names_the_root_it_stands_for(tmp_path):
    copy = tmp_path / "results"
    assert shown_root(copy) == copy.as_posix()
    assert ReportContext(copy, shown=shown_root(REPO / "results")).shown_store("dm_soft") == "results/dm_soft"
    assert ReportContext(copy).shown_store("dm_soft") == f"{copy.as_posix()}/dm_soft"


def test_every_regenerated_page_names_the_scratch_stores_and_prints_no_empty_list(scratch, pages):
    assert set(pages) == set(BLOCKS)
    for paper_id, blocks in pages.items():
        for name, body in blocks.items():
            if name.startswith(("claims:", "study:")) and name.split(":")[-1] in (*BLOCKS[paper_id], paper_id):
                assert "()" not in body, (paper_id, name)
                assert "`results/" not in body, (paper_id, name)
        if f"claims:{paper_id}" in blocks:
            assert f"ledger: `{scratch.as_posix()}/{paper_id}/claims.md`" in blocks[f"claims:{paper_id}"]
        for path in re.findall(r"`([^`]+)`", blocks.get(f"study:{paper_id}:stores_held", "")):
            assert path == "afr status" or path.startswith(scratch.as_posix()), path


def test_the_dm_page_states_what_its_table_shows(scratch, pages):
    blocks = pages["dm"]
    store = f"{scratch.as_posix()}/dm_soft"
    solves = blocks["study:dm:store_solves"]
    assert solves.startswith(f"`{store}` holds {REPS} repetitions of {len(DATASETS)} datasets: ")
    assert f"(`afr status {store}`)" in solves and "committed" not in solves
    rows = _rows(blocks["study:dm:soft_comparisons"])
    assert {r["repetitions"] for r in rows} == {f"all {REPS}"}  # no repetitions 0-9 beside 2 stored
    words = blocks["study:dm:soft_verdicts"]
    assert words.startswith(f"So on the {REPS} stored repetitions dm-soft is ")
    for r in rows:
        p = r["p (Demšar's t-test)"]
        direction = {1: "above", -1: "below", 0: "level with"}[_sign(r["mean ΔR² over the datasets"])]
        wins, ties, losses = (int(n) for n in r["better / tied / worse"].split(" (")[0].split(" / "))
        verdict = "significant" if float(p) < ALPHA else "not significant"
        assert (
            f"{direction} {r['dm-soft against']} with the {r['base']} ({verdict}, p = {p}; better on "
            f"{how_many(wins, wins + ties + losses)} datasets)"
        ) in words, r
    assert f"`afr table --results {store} --compare forest dm-soft`" in words and f"`{store}/compare.md`" in words


def test_the_satrf_verdicts_state_what_their_tables_show(pages):
    blocks = pages["satrf"]
    tests = _rows(blocks["study:satrf:variant_tests"])
    assert {r["repetitions"] for r in tests} == {"all stored"}
    bullets = {
        line.split(":")[0][2:]: line
        for line in blocks["study:satrf:variant_verdicts"].splitlines()
        if line.startswith("- ")
    }
    assert set(bullets) == {r["comparison"] for r in tests}
    for r in tests:
        sign = {1: "positive", -1: "negative", 0: "zero"}[_sign(r["mean"])]
        verdict = "significant" if float(r["p (t-test)"]) < ALPHA else "not significant"
        assert f"{sign} on the {r['forest']} ({verdict}, p = {r['p (t-test)']})" in bullets[r["comparison"]], r
    softmax = blocks["study:satrf:softmax_verdicts"]
    for r in _rows(blocks["study:satrf:softmax_comparisons"]):
        alone = "significant" if float(r["p (t-test)"]) < ALPHA else "not significant"
        holm = "significant" if float(r["p (Holm, 2 forests)"]) < ALPHA else "not significant"
        sign = {1: "positive", -1: "negative", 0: "zero"}[_sign(r["eps-ABRF − Softmax"])]
        assert f"{sign} on the {r['forest']} ({alone} alone, {holm} after Holm's adjustment)" in softmax, r
    assert "repetitions 0-9" not in blocks["study:satrf:yx_best"]
    # what -yx adds over -y: the counts are the sums of the table's -yx against -y rows
    yx = [r for r in tests if r["comparison"].startswith("-yx against -y")]
    wins, ties, losses = (sum(int(r["better/tie/worse"].split("/")[i]) for r in yx) for i in range(3))
    adds = blocks["study:satrf:yx_over_y"]
    assert (
        f"-yx is better than -y in {how_many(wins, wins + ties + losses)} (dataset, forest) pairs, has the same "
        f"mean R² to three decimals in {ties} and is worse in {losses}"
    ) in adds
    assert "rarely" not in adds and "often" not in adds


def test_the_agboost_statements_state_what_their_numbers_show(pages):
    blocks = pages["agboost"]
    gap = blocks["study:agboost:diabetes_gap"]
    ours, gbm = (float(x) for x in re.search(r"R² is (\S+) against the GBM's (\S+) over", gap).groups())
    assert ("our AGBoost beats its GBM" if ours - gbm > 0 else "our AGBoost does not beat its GBM") in gap
    ert = [r for r in _rows(blocks["study:agboost:gbm_settings"]) if "ERT learners" in r["GBM setting"]]
    for column, label in (("as printed, raw", "raw"), ("as printed, standardised", "standardised")):
        most = max(int(r[column].split(" of ")[0]) for r in ert)
        assert (
            f"at most {most} of the {ert[0][column].split(' of ')[1]} cells with {label} features"
            in blocks["study:agboost:ert_depths"]
        )


def test_the_store_statements_count_what_the_scratch_stores_hold(scratch, pages):
    for paper_id in ("satrf", "agboost", "larf", "robust_rf"):
        held = pages[paper_id][f"study:{paper_id}:stores_held"]
        assert held.startswith("Held now (`afr status`): `" + scratch.as_posix())
        assert f"{REPS} repetitions" in held and "100 repetitions" not in held, paper_id
    assert (
        f"`afr status {scratch.as_posix()}/larf_rf {scratch.as_posix()}/larf_ert`"
        in pages["larf"]["study:larf:compute_per_base"]
    )
    facts = pages["robust_rf"]["study:robust_rf:store_facts"]
    assert facts.startswith(f"`{scratch.as_posix()}/robust_rf_boston` (Table I)")
    assert f"`{scratch.as_posix()}/robust_rf_all` (section 5) holds" in facts


def test_the_robust_rf_counts_are_the_table_beside_them(pages):
    block = pages["robust_rf"]["study:robust_rf:all_datasets"]
    rows, words = _rows(block), block.split("\n\n", 1)[1]
    for forest in dict.fromkeys(r["forest"] for r in rows):
        honest = next(r for r in rows if r["forest"] == forest and r["selection"] == "inner-CV")
        best = next(r for r in rows if r["forest"] == forest and r["selection"] == "best-test")
        w, t, lost = (int(n) for n in honest["robust-rf-a0.2: better / tied / worse"].split(" / "))
        share = "more than half" if 2 * w > w + t + lost else "half" if 2 * w == w + t + lost else "fewer than half"
        assert (
            f"- {forest}, inner CV: α = 0.2 beats RF on {w} of {w + t + lost} cells ({share}) and loses on {lost};"
            in words
        )
        lost = best["robust-rf-a0.2: better / tied / worse"].split(" / ")[2]
        assert f"Chosen on the test set, α = 0.2 loses on {lost} cells" in words


def test_the_satrf_gains_are_read_from_their_cells(pages):
    blocks = pages["satrf"]
    table, words = blocks["study:satrf:identified_gains"].split("\n\n")
    for column in list(_rows(table)[0])[1:]:
        ours = {r["dataset"]: float(r[column].split(" (")[0]) for r in _rows(table)}
        up, down = [d for d, g in ours.items() if g > 0], [d for d, g in ours.items() if g < 0]
        line = next(w for w in words.splitlines() if w.startswith(f"- {column.split(':')[0]}:"))
        assert f"gains on {how_many(len(up), len(ours))} datasets{in_brackets(up)}, loses on {len(down)}" in line
    table, words = blocks["study:satrf:derived_gains"].split("\n\n")
    for row in _rows(table):
        cells = {
            d: [float(x) for x in c.rstrip(")").split(" (")]
            for d, c in row.items()
            if d not in ("forest", "best-test − inner-CV (11 sets)")
        }
        near = sum(abs(o - p) <= 0.02 for o, p in cells.values())
        line = next(w for w in words.splitlines() if w.startswith(f"- {row['forest']}:"))
        assert f"within 0.02 of the paper's gain on {how_many(near, len(cells))} UCI sets" in line


def _one_store_root(tmp_path: Path, store: str) -> Path:
    """A scratch root holding one small store (REPS repetitions of DATASETS) and nothing else."""
    root = tmp_path / "scratch"
    _small_export(REPO / "results" / store, root / store, True, False)
    return root


def test_a_scratch_root_writes_no_page_or_ledger_of_a_paper_it_holds_no_store_of(tmp_path):
    root = _one_store_root(tmp_path, "dm_soft")
    written = write_ledgers(ReportContext(root))
    assert {p.relative_to(root).parts[0] for p in written if p.is_relative_to(root)} == {"dm"}
    for paper in papers():
        if paper.id != "dm":  # the committed blocks and claims of a paper this root holds nothing of
            assert not (root / paper.id).exists(), paper.id


def test_a_page_copy_says_which_results_its_root_could_not_build(tmp_path):
    root = _one_store_root(tmp_path, "satrf_rf")  # the RF store only: the ERT, ABRF and figure stores are missing
    write_ledgers(ReportContext(root))
    copy = blocks_in((root / "satrf" / "page.md").read_text(encoding="utf-8"))
    committed = blocks_in(next(p for p in papers() if p.id == "satrf").page.read_text(encoding="utf-8"))
    assert copy.keys() == committed.keys()
    note = unbuilt_note(root.as_posix())
    unbuilt = {name for name, body in copy.items() if body == note}
    # the derived-protocol gains read the ABRF stores, the variant tests the ERT store: neither is here
    assert {"study:satrf:derived_gains", "study:satrf:variant_verdicts"} <= unbuilt
    assert copy["study:satrf:stores_held"].startswith(f"Held now (`afr status`): `{root.as_posix()}/satrf_rf` holds")
    assert f"ledger: `{root.as_posix()}/satrf/claims.md`" in copy["claims:satrf"]
    for name, body in copy.items():  # every result block is either rebuilt from this root or the note
        if name not in unbuilt:
            assert body != committed[name] or "results/" not in body, name


def test_the_larf_sentences_count_their_tables_rows(pages):
    from afr_cli.tables.agreement import R2_TOL

    block = pages["larf"]["study:larf:larger_sets"]
    rows = _rows(block)
    assert {r["dataset"] for r in rows} == {"Yacht"}  # the one larger set the scratch root holds
    near = [r for r in rows if abs(float(r["ours"]) - float(r["paper"])) <= R2_TOL]
    assert (
        f"within {R2_TOL:g} of the paper's R² (the agreement tolerance) on {how_many(len(near), len(rows))} " in block
    )


def test_the_robust_rf_verdict_bullets_follow_their_counts(pages):
    bullets = [b for b in pages["robust_rf"]["study:robust_rf:table_one_verdicts"].splitlines() if b.startswith("- ")]
    assert len(bullets) == 2
    for bullet in bullets:
        k, n = (int(x) for x in re.search(r"ours (\d+) of (\d+)", bullet).groups())
        verdict = re.search(r"the ledger's verdict is \*\*(.+?)\*\*", bullet).group(1)
        assert (verdict == "reproduces") == (k == n), bullet  # "all" cells asked: only all of them reproduce
        assert "every cell" not in bullet


def test_the_dm_tau_note_counts_the_scratch_units(scratch, pages):
    note = pages["dm"]["study:dm:tau_choices"]
    units = int(re.search(r"Of the ([\d,]+) dm-soft units", note).group(1).replace(",", ""))
    chosen = [int(n.replace(",", "")) for n in re.findall(r"tau = [\d.e-]+ on ([\d,]+)", note)]
    assert units == REPS * len(DATASETS) * 2 and sum(chosen) == units  # two forests per (dataset, repetition)
    assert chosen == sorted(chosen, reverse=True) and f"`{scratch.as_posix()}/dm_soft`" in note


def test_a_small_store_s_compute_is_never_said_to_be_zero():
    """A scratch store of a few seconds' compute said '0 CPU-min' on its page: spent compute is
    never printed as none; larger stores keep the whole minutes the committed pages print."""
    from afr_cli.publish.frames import compute_words

    assert compute_words(0.04, "CPU") == "under 1 CPU-min"
    assert compute_words(0.2, "wall") == "under 1 wall-clock min"
    assert compute_words(0.0, "CPU") == "0 CPU-min"
    assert compute_words(40.4, "CPU") == "40 CPU-min"
