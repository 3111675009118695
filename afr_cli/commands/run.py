"""``afr run``, ``afr validate`` and ``afr models``: experiments from YAML configs (their keys: afr_cli.config.schema).

Heavy modules (cvxpy, scikit-learn) are imported inside the commands, so ``afr --help``
and every other command start fast.
"""

from __future__ import annotations

from pathlib import Path

import typer

from afr_cli.core.path_rules import directory_error
from afr_cli.ensembles.tree_path import FAST, TREES_HELP
from afr_cli.errors import AfrInputError


def _overrides(
    reps: int | None, datasets: str | None, sets: list[str], config: Path | None = None
) -> list[str | tuple[str, object]]:
    """--reps and --datasets as overrides after the --set ones, so one code path validates them all.
    They are (key, value) pairs, the value built here: an option's text is never parsed as YAML,
    so a name holding a quote or a bracket stays a plain (unknown) dataset name. A name of
    --datasets that a config entry gives to a file or loader stands for that whole entry."""
    out: list[str | tuple[str, object]] = list(sets)
    if reps is not None:
        out.append(("protocol.reps", reps))
    if datasets:
        names = [d.strip() for d in datasets.split(",") if d.strip()]
        own = _own_dataset_entries(config) if config is not None else {}
        out.append(("datasets", [own.get(n, n) for n in names]))
    return out


def _own_dataset_entries(config: Path) -> dict[str, dict]:
    """The config's ``{name: ..., file|loader: ...}`` dataset entries by name (none when the
    file cannot be read: loading it reports that)."""
    from afr_cli.config.experiment import read_yaml_file

    try:
        raw = read_yaml_file(config, "config")
    except AfrInputError:
        return {}
    entries = raw.get("datasets") if isinstance(raw, dict) else None
    return {e["name"]: e for e in entries or [] if isinstance(e, dict) and isinstance(e.get("name"), str)}


def _check_directory(option: str, value: str | None) -> None:
    """A directory option's value, refused in one line when empty, a file, or otherwise unusable."""
    problem = directory_error(option, value)
    if problem:
        raise AfrInputError(problem)


def _fresh_confirmation(yes: bool):
    """How --fresh is confirmed: --yes, else a prompt when stdin is a terminal, else not at all."""
    import sys

    if yes:
        return lambda question: True
    if sys.stdin.isatty():
        return lambda question: typer.confirm(question, default=False, err=True)
    return None


def register(app: typer.Typer) -> None:
    @app.command()
    def run(
        config: Path = typer.Argument(..., help="experiment YAML, e.g. configs/quickstart.yaml"),
        reps: int | None = typer.Option(None, "--reps", help="repetitions (protocol.reps)"),
        jobs: int = typer.Option(-1, "--jobs", "-j", help="parallel workers (-1 = all cores)"),
        datasets: str | None = typer.Option(None, "--datasets", help="comma-separated subset, e.g. Diabetes,Yacht"),
        out: str | None = typer.Option(None, "--out", metavar="DIR", help="store directory (default results/<name>/)"),
        set_: list[str] = typer.Option([], "--set", help="override a config key: protocol.reps=10"),
        fresh: bool = typer.Option(
            False, "--fresh", help="discard an existing store first (asks, or needs --yes, when it holds results)"
        ),
        yes: bool = typer.Option(False, "--yes", "-y", help="confirm --fresh on a store that holds results"),
        backend: str = typer.Option("loky", "--backend", help="loky (this machine) or dask"),
        scheduler: str | None = typer.Option(None, "--scheduler", help="Dask scheduler address"),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
        trees: str = typer.Option(FAST, "--trees", help=TREES_HELP),
    ) -> None:
        """Run an experiment (resumes: only units missing from the store are computed)."""
        from afr_cli.catalogue.knowledge import is_reference_store
        from afr_cli.config.experiment import load_experiment
        from afr_cli.engine.messages import rerun_command
        from afr_cli.engine.runner import RunOptions, run_experiment
        from afr_cli.engine.shared_work import speedups_for

        speedups = speedups_for(trees)
        if jobs == 0 or jobs < -1:
            raise AfrInputError(f"--jobs: {jobs} is not allowed; a positive count or -1 for all cores")
        _check_directory("--out", out)
        exp = load_experiment(config, _overrides(reps, datasets, set_, config), out)
        command = rerun_command(config, datasets, set_, out)
        # The committed export is written for the stores a paper folder declares, and kept current
        # where one exists; a store of one's own stays a single git-ignored store.sqlite (`afr export`).
        export = is_reference_store(exp.results) or (exp.results / "export").is_dir()
        run_experiment(
            exp,
            RunOptions(
                jobs, backend, scheduler, fresh, not quiet, _fresh_confirmation(yes), command, export, speedups=speedups
            ),
            echo=typer.echo,
        )

    @app.command()
    def validate(
        config: Path = typer.Argument(..., help="experiment YAML"),
        set_: list[str] = typer.Option([], "--set", help="override a config key: protocol.reps=10"),
    ) -> None:
        """Check a config without running it (exit 0, or exit 2 with one line naming the key)."""
        from afr_cli.config.experiment import load_experiment
        from afr_cli.engine.experiment_data import load_experiment_data
        from afr_cli.engine.preflight import check_runnable

        exp = load_experiment(config, set_)
        check_runnable(exp)
        load_experiment_data(exp, registered=False)  # the user's files and loaders: read and checked
        points = sum(len(m.grid_points()) for m in exp.models if not m.best_of)
        typer.echo(
            f"{config}: ok ({exp.name}: {len(exp.datasets)} datasets, {len(exp.bases)} bases, "
            f"{len(exp.models)} models, {points} grid points, {exp.protocol.reps} reps)"
        )

    register_report(app)

    @app.command()
    def models() -> None:
        """The registered model families and base ensembles, with their hyperparameters."""
        from tabulate import tabulate

        from afr_cli.config.experiment import families_help
        from afr_cli.config.schema import key_rows
        from afr_cli.ensembles import ensembles_help

        typer.echo(
            tabulate(
                families_help(),
                headers=["family", "what it is", "hyperparameters"],
                tablefmt="simple",
                maxcolwidths=[14, 40, 60],
            )
        )
        typer.echo("")
        typer.echo(
            tabulate(
                ensembles_help(),
                headers=["ensemble (bases: kind)", "what it is", "parameters"],
                tablefmt="simple",
                maxcolwidths=[14, 40, 60],
            )
        )
        typer.echo("")
        typer.echo(
            tabulate(
                key_rows(),
                headers=["config key", "allowed", "default", "what it is"],
                tablefmt="simple",
                maxcolwidths=[26, 34, 18, 50],
            )
        )


def register_report(app: typer.Typer) -> None:
    """``afr report``: regenerate the committed summaries and paper comparisons under results/."""

    @app.command()
    def report(
        names: list[str] = typer.Argument(
            None,
            help=(
                "reports to write (default: all, as the papers' data files afr_cli/papers/*/paper.yaml list them; "
                "with all, also the claims ledgers and the READMEs' generated sections)"
            ),
        ),
        root_option: str = typer.Option("results", "--root", metavar="DIR", help="directory holding the stores"),
        reps: int | None = typer.Option(
            None,
            "--reps",
            help="use only repetitions 0..N-1 (e.g. 10, "
            "the papers' count); written beside the all-repetition files, "
            "as summary-repsN.* and results/<report>/repsN/",
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
            help="write only the static site results/site/ "
            "(the papers' pages and the docs) from the files already there",
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

        if reps is not None and reps < 1:
            raise AfrInputError(f"--reps: {reps} is not allowed; an integer >= 1")
        _check_directory("--root", root_option)
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
                    "--check: takes no report names, --reps, --html or --studies; "
                    "allowed: afr report --check [--root DIR]"
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
