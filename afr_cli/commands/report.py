"""``afr report``: regenerate the committed summaries, paper comparisons, claims and pages under results/."""

from __future__ import annotations

from pathlib import Path

import typer

from afr_cli.commands.options import check_directory, reps_option
from afr_cli.errors import AfrInputError


def report(
    names: list[str] = typer.Argument(
        None,
        help=(
            "reports to write (default: all, as the papers' data files afr_cli/papers/*/paper.yaml list them; "
            "with all, also the claims ledgers and the READMEs' generated sections)"
        ),
    ),
    root_option: str = typer.Option("results", "--root", metavar="DIR", help="directory holding the stores"),
    reps: int | None = reps_option(
        "use only repetitions 0..N-1 (e.g. 10, "
        "the papers' count); written beside the all-repetition files, "
        "as summary-repsN.* and results/<report>/repsN/"
    ),
    html: bool = typer.Option(
        False,
        "--html",
        help="also write the static site results/site/index.html "
        "(one page per paper and the docs; open it from disk or copy the folder anywhere)",
    ),
    site_only: bool = typer.Option(
        False,
        "--site-only",
        help="write only the static site results/site/ (the papers' pages and the docs) from the files already there",
    ),
    studies: bool = typer.Option(
        False,
        "--studies",
        help="also rerun the expensive studies (refits) and "
        "rewrite their committed csv files before rendering their blocks",
    ),
    check: bool = typer.Option(
        False,
        "--check",
        help="write nothing: regenerate in a scratch copy and "
        "exit 1 naming every committed file or generated block that is stale",
    ),
) -> None:
    """Write every store's summary and ours beside the papers' tables (results/<report>/)."""
    from afr_cli.publish.build import stale_outputs, write_all, written_line
    from afr_cli.publish.frames import report_by_name, reps_shortfall
    from afr_cli.publish.site import write_site
    from afr_cli.store import has_results, load_results

    check_directory("--root", root_option)
    root = Path(root_option)
    if not root.is_dir():  # never created here: a typo must not make an empty results tree
        raise AfrInputError(f"--root: {root}: no such directory (it holds the results stores)")
    if site_only and (names or reps is not None or studies or check):
        raise AfrInputError(
            "--site-only: takes no report names, --reps, --studies or --check; "
            "allowed: afr report --site-only [--root DIR]"
        )
    if check:
        if names or reps is not None or html or studies:
            raise AfrInputError(
                "--check: takes no report names, --reps, --html or --studies; allowed: afr report --check [--root DIR]"
            )
        stale = stale_outputs(root)
        for line in stale:
            typer.echo(line)
        if stale:
            typer.echo(f"{len(stale)} stale: run afr report --html (and commit) to regenerate", err=True)
            raise typer.Exit(1)
        typer.echo("every generated file and block is current")
        return
    try:
        written = write_site(root) if site_only else write_all(root, names or None, reps, html, studies)
    except OSError as err:
        raise AfrInputError(f"{err.filename}: cannot write the report ({err.strerror})") from None
    typer.echo(written_line(written, root))
    stores = dict.fromkeys(
        root / s for r in report_by_name().values() if not names or r.name in names for s in r.stores
    )
    for store in (s for s in stores if reps is not None and has_results(s)):
        short = reps_shortfall(load_results(store), reps, str(store))
        if short:
            typer.echo(f"note: {short}", err=True)
