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
            "reports to write: the papers' reports (as afr_cli/papers/*/paper.yaml list them) and the root's own "
            "experiments (each store under --root that no paper names, by its path there, e.g. mine); default: "
            "all, and with all also the claims ledgers and the READMEs' generated sections"
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
        "(one page per paper, one per experiment of the root and the docs; open it from disk or copy the folder "
        "anywhere)",
    ),
    site_only: bool = typer.Option(
        False,
        "--site-only",
        help="write only the static site results/site/ (the papers' and the experiments' pages and the docs) "
        "from the files already there",
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
    """Write every store's summary, ours beside the papers' tables (results/<report>/) and a report of
    each of the root's own experiments (<store>/report.md, and its page with --html)."""
    from afr_cli.publish import build_keys

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
        stale = _checked(root)
        for line in stale:
            typer.echo(line)
        if stale:
            typer.echo(f"{len(stale)} stale: run afr report --html (and commit) to regenerate", err=True)
            raise typer.Exit(1)
        typer.echo("every generated file and block is current")
        return
    try:
        written = _built(root, names or None, reps, html, studies, site_only)
    except OSError as err:
        raise AfrInputError(f"{err.filename}: cannot write the report ({err.strerror})") from None
    if written is None:  # the same state a full build of this kind left: nothing to write
        typer.echo(build_keys.NOTHING_CHANGED.format(root=root))
    else:
        from afr_cli.publish.build import written_line

        typer.echo(written_line(written, root))
    if reps is None:
        return
    from afr_cli.publish.frames import report_by_name, reps_shortfall
    from afr_cli.store import has_results, load_results

    stores = dict.fromkeys(
        root / s for r in report_by_name().values() if not names or r.name in names for s in r.stores
    )
    for store in (s for s in stores if has_results(s)):
        short = reps_shortfall(load_results(store), reps, str(store))
        if short:
            typer.echo(f"note: {short}", err=True)


def _checked(root: Path) -> list[str]:
    """``afr report --check``'s lines: recorded for this state (afr_cli/publish/build_keys.py), or
    regenerated in a scratch copy and recorded."""
    from afr_cli.publish import build_keys

    mode = build_keys.Mode("check")
    lines = build_keys.remembered(root, mode)
    if lines is not None:
        return lines
    from afr_cli.reporting.build import stale_outputs

    return build_keys.remember(root, mode, lambda: stale_outputs(root), answer=list)


def _built(
    root: Path, names: list[str] | None, reps: int | None, html: bool, studies: bool, site_only: bool
) -> list[Path] | None:
    """The files a build wrote, or None when it was skipped: the state is the one a full build of
    the same kind left (afr_cli/publish/build_keys.py). ``--studies`` always reruns in full."""
    from afr_cli.publish import build_keys

    if site_only:
        mode, also = build_keys.Mode("site"), ()
    else:
        mode = build_keys.Mode("build", tuple(names or ()), reps, html)
        # a full --html build also answers for the build without the site and for --site-only
        also = (build_keys.Mode("build"), build_keys.Mode("site")) if html and not names and reps is None else ()
    if studies:
        from afr_cli.reporting.build import write_all

        return write_all(root, names, reps, html, studies)
    if build_keys.remembered(root, mode) is not None:
        return None

    def run() -> list[Path]:
        if site_only:
            from afr_cli.publish.context import ReportContext
            from afr_cli.reporting.build import write_site_of

            return write_site_of(ReportContext(root))
        from afr_cli.reporting.build import write_all

        return write_all(root, names, reps, html)

    return build_keys.remember(root, mode, run, answer=lambda _: [], wrote=lambda written: written, also=also)
