"""``afr table``: our results as the papers' tables, optionally beside a published table and
with a B-against-A test over datasets."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from afr_cli.analysis.rope import DEFAULT_ROPE
from afr_cli.commands.options import reps_option
from afr_cli.errors import AfrInputError

SELECTIONS = ("stored", "best-test")


def _stores_under_results() -> str:
    """The stores under ./results, for the error messages."""
    from afr_cli.store.discover import stores_under

    return ", ".join(str(d) for d in stores_under()) or "none"


def _complete_repetitions(directory: Path, results):
    """The store's results without a repetition a run stopped half-way through, and a note on
    stderr saying which was left out and why (afr_cli/store/holdings.py); and the note of an
    ``--until-decided`` run saying why it stopped."""
    from afr_cli.store import open_existing
    from afr_cli.store.holdings import without_incomplete_repetitions
    from afr_cli.store.status import incomplete_text

    reader = open_existing(directory)
    manifest = reader.manifest()
    kept, partial = without_incomplete_repetitions(results, manifest, reader.frame("units"))
    if partial:
        print(
            f"note: {directory}: {kept['rep'].nunique()} complete repetitions; {incomplete_text(partial)}, "
            "incomplete (an interrupted run): left out of the tables until a run completes them",
            file=sys.stderr,
        )
    stopped = manifest.get("stopped")
    if isinstance(stopped, dict) and stopped.get("reason"):
        print(f"note: {directory}: an --until-decided run {stopped['reason']}", file=sys.stderr)
    return kept


def _load(
    dirs: list[Path],
    selection: str = "stored",
    reps: int | None = None,
    compare: tuple[str, str] | None = None,
    shown: set[str] | None = None,
):
    """Concatenate the results of every store given with --results, repetitions 0..reps-1, under
    the one best-test definition (afr_cli/tables/selection.py) when asked for or when a store
    was run with the protocol's ``selection: best-test``. With --compare and no --results, the
    stores under ./results that hold both models are used, and named on stderr. From several
    stores each row keeps its store and split (afr_cli/tables/stores.py), and a model of
    ``shown`` (None: every model) held by two of them is refused in one line."""
    import pandas as pd

    from afr_cli.store import STORE_FILE, has_results, load_grid, load_results, store_select_by
    from afr_cli.tables import results_in_view
    from afr_cli.tables.stores import check_one_store_per_model, tag_rows

    if selection not in SELECTIONS:
        raise AfrInputError(f"--selection: {selection!r} is not allowed; allowed: {', '.join(SELECTIONS)}")
    if not dirs and compare is not None:
        from afr_cli.store.discover import stores_for_compare

        dirs = stores_for_compare(*compare)
        print(
            f"note: --compare {' '.join(compare)}: using {', '.join(str(d) for d in dirs)} "
            f"(the stores under results/ that hold them)",
            file=sys.stderr,
        )
    if not dirs:
        raise AfrInputError("--results DIR is required; stores under ./results: " + _stores_under_results())
    seen: set[Path] = set()
    for d in dirs:  # one store twice would be pooled with itself, every repetition counted twice
        if Path(d).resolve() in seen:
            raise AfrInputError(f"--results: {d} is given twice; allowed: each store once")
        seen.add(Path(d).resolve())
    frames = []
    for d in dirs:
        if not has_results(d):
            raise AfrInputError(
                f"--results: {d} is not a results store (no {STORE_FILE} or export); "
                f"stores under ./results: {_stores_under_results()}"
            )
        results = _complete_repetitions(d, load_results(d))
        wants_grid = selection == "best-test" or (results["selection"] == "best-test").any()
        view = results_in_view(results, load_grid(d) if wants_grid else None, selection, reps, store_select_by(d))
        frames.append(tag_rows(view, d) if len(dirs) > 1 else view)
    results = pd.concat(frames, ignore_index=True)
    if results.empty:
        raise AfrInputError(f"--results: no results in {', '.join(str(d) for d in dirs)}")
    check_one_store_per_model(results, shown)
    return results


def table(
    results_dirs: list[Path] | None = typer.Option(
        None, "--results", help="A results store directory; repeat to concatenate several."
    ),
    metric: str | None = typer.Option(
        None,
        "--metric",
        help="r2, mae or rmse (md/latex default r2; csv and --paper default all); with "
        "--compare also all: R², MAE and RMSE side by side, each with its direction.",
    ),
    fmt: str = typer.Option(
        "md", "--format", help="md, latex or csv; with --compare also json (every number of the comparison)."
    ),
    with_std: bool = typer.Option(False, "--std", help="Show mean ± std (ddof=1) over reps."),
    paper: str | None = typer.Option(
        None, "--paper", help="Compare with a published table, e.g. satrf:9 or agboost:II."
    ),
    tol: float | None = typer.Option(
        None,
        "--tol",
        help=(
            "With --paper: one absolute tolerance for |ours − paper| (default 0.02 on R², 5 % of the paper's MAE/RMSE)."
        ),
    ),
    selection: str = typer.Option(
        "stored",
        "--selection",
        help="stored (as the run selected, normally inner CV) or best-test: per dataset, base and model the "
        "one grid point with the best mean test score over the repetitions shown (after --reps), from "
        "the stored grid scores (optimistic; labelled).",
    ),
    reps: int | None = reps_option("Use only repetitions 0..N-1 (e.g. 10: the papers' own number, README)."),
    compare: tuple[str, str] | None = typer.Option(
        None,
        "--compare",
        help="models A and B: one sentence answering which is better, by how much and how surely, "
        "then per base B − A per dataset with a paired t-test (raw and Holm-adjusted p), "
        "Wilcoxon, effect sizes with intervals, the Bayesian signed-rank and hierarchical tests "
        "with a ROPE and per dataset the Bayesian correlated t-test; MODEL:BASE on both sides "
        "compares across bases.",
    ),
    rope: Annotated[
        float,
        typer.Option(
            "--rope",
            help="With --compare: half-width of the region of practical equivalence, in the "
            "metric's unit (default ±0.01, R² or error); the hierarchical test on MAE or RMSE reads it "
            "as a fraction of A's error (0.01: ±1 %).",
        ),
    ] = DEFAULT_ROPE,
    show_all: Annotated[
        bool, typer.Option("--all", help="With --compare: also print the full model table after the comparison.")
    ] = False,
    stability: Annotated[
        bool,
        typer.Option(
            "--stability",
            help="With --compare: the decision rule's verdict and its probability per base on the first 5, 10, "
            "20, 30, 50 and all stored repetitions, and the count from which the verdict no longer changes "
            "(md or json).",
        ),
    ] = False,
) -> None:
    """Summarise results per dataset and model, or set them beside a published table; with
    --compare A B, the comparison of B against A first (the full table only with --all)."""
    from afr_cli.commands.answer_memo import answer_key, answered, store_parts
    from afr_cli.store.discover import stores_under

    options = {
        "results": [str(d) for d in results_dirs or []],
        "metric": metric,
        "format": fmt,
        "std": with_std,
        "paper": paper,
        "tol": tol,
        "selection": selection,
        "reps": reps,
        "compare": list(compare) if compare is not None else None,
        "rope": rope,
        "all": show_all,
        **({"stability": True} if stability else {}),
    }
    # what the answer reads: the stores named, or every store --compare chooses among
    read = results_dirs or (stores_under() if compare is not None else None)
    key = answer_key("table", options, store_parts(read) if read else None)
    if stability:
        answered(key, lambda: _stability(results_dirs, metric, fmt, selection, reps, compare, rope, show_all, paper))
        return
    answered(
        key, lambda: _answer(results_dirs, metric, fmt, with_std, paper, tol, selection, reps, compare, rope, show_all)
    )


def _stability(
    results_dirs: list[Path] | None,
    metric: str | None,
    fmt: str,
    selection: str,
    reps: int | None,
    compare: tuple[str, str] | None,
    rope: float,
    show_all: bool,
    paper: str | None,
) -> bool:
    """``--stability``: the answer recomputed on the first repetitions (afr_cli/tables/compare_decision.py)."""
    import json

    from afr_cli.tables.compare import _json_numbers
    from afr_cli.tables.compare_decision import render_stability, stability

    if compare is None:
        raise AfrInputError("--stability: needs --compare A B; allowed only with it")
    if show_all or paper is not None or metric == "all":
        raise AfrInputError("--stability: allowed without --all, --paper and --metric all")
    if fmt not in ("md", "json"):
        raise AfrInputError(f"--format: {fmt!r} is not allowed with --stability; allowed: md, json")
    if not rope >= 0:
        raise AfrInputError(f"--rope: {rope!r} is not allowed; a number >= 0 (in the metric's unit)")
    from afr_cli import tables

    if metric is not None and metric not in tables.METRICS:
        raise AfrInputError(f"--metric: {metric!r} is not one of {', '.join(tables.METRICS)}")
    results = _load(results_dirs or [], selection, reps, compare, {spec.partition(":")[0] for spec in compare})
    rows = stability(results, *compare, metric or "r2", rope)
    if fmt == "json":
        data = {"a": compare[0], "b": compare[1], "metric": metric or "r2", "rope": rope}
        data["bases"] = [s.as_dict() for s in rows]
        typer.echo(json.dumps(_json_numbers(data), indent=2, ensure_ascii=False))
    else:
        typer.echo(render_stability(rows, *compare), nl=False)
    return True


def _answer(
    results_dirs: list[Path] | None,
    metric: str | None,
    fmt: str,
    with_std: bool,
    paper: str | None,
    tol: float | None,
    selection: str,
    reps: int | None,
    compare: tuple[str, str] | None,
    rope: float,
    show_all: bool,
) -> bool:
    """What ``afr table`` prints (:func:`table`); True: it is a function of the stores and options
    it was given, so its memo may keep it (afr_cli/commands/answer_memo.py)."""
    from afr_cli import tables
    from afr_cli.catalogue.knowledge import paper as paper_info
    from afr_cli.catalogue.knowledge import paper_reps
    from afr_cli.catalogue.published import published_table
    from afr_cli.publish.frames import reps_shortfall

    if fmt not in tables.FORMATS and not (fmt == "json" and compare is not None):
        allowed = ", ".join(tables.FORMATS) + (", json" if compare is not None else " (json with --compare)")
        raise AfrInputError(f"--format: {fmt!r} is not one of {allowed}")
    if fmt == "json" and (show_all or paper is not None):
        raise AfrInputError("--format json: holds the comparison only; allowed without --all and --paper")
    if not rope >= 0:  # NaN too
        raise AfrInputError(f"--rope: {rope!r} is not allowed; a number >= 0 (in the metric's unit)")
    if tol is not None:
        tables.check_tolerance(tol)
    if metric == "all" and compare is None:
        raise AfrInputError(f"--metric: 'all' is allowed with --compare only; allowed: {', '.join(tables.METRICS)}")
    if metric is not None and metric not in (*tables.METRICS, "all"):
        allowed = ", ".join(tables.METRICS) + (", all" if compare is not None else "")
        raise AfrInputError(f"--metric: {metric!r} is not one of {allowed}")
    if paper is not None:
        published_table(paper)  # reject an unknown spec before loading results
    # with --compare alone only its two models are shown: another model in two stores is no matter
    shown = (
        {spec.partition(":")[0] for spec in compare} if compare is not None and not show_all and paper is None else None
    )
    results = _load(results_dirs or [], selection, reps, compare, shown)
    short = reps_shortfall(results, reps, "the results")  # 0..reps-1 kept: a shortfall still shows
    if short:
        print(f"note: {short}", file=sys.stderr)
    if compare is None:
        model_comparison = None
    elif metric == "all":
        from afr_cli.tables.compare_all import ALL_METRICS

        model_comparison = [tables.compare_models(results, *compare, m, rope) for m in ALL_METRICS]
        metric = None  # the full table and the published one: every metric
    else:
        model_comparison = tables.compare_models(results, *compare, metric or "r2", rope)
    note = tables.selection_note(results)
    if model_comparison is not None and paper is None:  # the comparison leads; the full table on --all
        _echo_comparison(model_comparison, fmt)
        if show_all:
            typer.echo("")
            typer.echo(tables.render_summary(results, metric, fmt, with_std), nl=False)
        elif fmt == "md":
            typer.echo("(the full model table: add --all)", err=True)  # a hint to the terminal, not the table
    elif paper is not None:
        stated = paper_info(paper.partition(":")[0].lower()).stated_reps
        note = " ".join(
            filter(
                None,
                (note, tables.repetitions_note(results, reps, published_reps=paper_reps(paper), stated_reps=stated)),
            )
        )
        comparison = tables.paper_comparison(results, paper, tol)
        if metric is not None:
            comparison = comparison[~comparison["metric"].isin(tables.METRICS) | (comparison["metric"] == metric)]
        typer.echo(tables.render_paper_comparison(comparison, paper, fmt, tol, note), nl=False)
        if model_comparison is not None:  # both asked for: the published table, then the comparison
            typer.echo("")
            _echo_comparison(model_comparison, fmt)
    else:
        _echo_summary(results, results_dirs or [], metric, fmt, with_std)
    if fmt == "csv" and note:
        print(note, file=sys.stderr)
    return True


TABLE_WIDTH = 120  # an md summary wider than this is cut into blocks of columns that fit


def _echo_summary(results, dirs: list[Path], metric: str | None, fmt: str, with_std: bool) -> None:
    """The summary table, its datasets in the stores' config order, cut to TABLE_WIDTH in md;
    then on stderr a line for each (dataset, base) whose trees barely split or whose models tie."""
    from afr_cli import tables
    from afr_cli.tables.store_notes import dataset_order, table_warnings

    order = dataset_order(dirs)
    text = tables.render_summary(results, metric, fmt, with_std, dataset_order=order, width=TABLE_WIDTH)
    typer.echo(text, nl=False)
    for line in table_warnings(dirs, results, metric or "r2"):
        print(line, file=sys.stderr)


def _echo_comparison(model_comparison, fmt: str) -> None:
    """The comparison: in md the answer and the across-dataset summary first, then the per-base
    blocks; what was dropped (a score undefined) is in the text, in the JSON, and for csv on
    stderr. A list of comparisons (--metric all) is rendered side by side."""
    from afr_cli import tables
    from afr_cli.tables.compare import dropped_notes

    if isinstance(model_comparison, list):
        from afr_cli.tables.compare_all import render_all

        if fmt == "latex":
            raise AfrInputError("--metric all: allowed with --format md, csv or json")
        typer.echo(render_all(model_comparison, fmt), nl=False)
        if fmt == "csv":
            for comparison in model_comparison:
                for note in dropped_notes(comparison):
                    print(note, file=sys.stderr)
        return

    if fmt == "md":
        typer.echo(tables.render_comparison_lead(model_comparison))
    typer.echo(tables.render_model_comparison(model_comparison, fmt), nl=False)
    if fmt == "csv":  # the tests' rows have no place for it: the drop is said on stderr
        for note in dropped_notes(model_comparison):
            print(note, file=sys.stderr)
