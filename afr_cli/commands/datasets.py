"""``afr datasets``: list the registry, fetch UCI files into the cache, verify them, show a record
(of a registered dataset, or of a file of the user's own: what afr would read from it)."""

from __future__ import annotations

from pathlib import Path

import typer

from afr_cli.errors import AfrInputError

LIST_FORMATS = ("table", "csv")
HELP = "The papers' 11 datasets: list, fetch and verify the UCI files, show a record."


def list_datasets(
    fmt: str = typer.Option("table", "--format", help="table (with licence) or csv."),
) -> None:
    """List the 11 datasets: m features, n rows, source and whether they can be loaded now."""
    from afr_cli.data import DATASETS, dataset_available

    if fmt not in LIST_FORMATS:
        raise AfrInputError(f"--format: {fmt!r} is not one of {', '.join(LIST_FORMATS)}")

    rows = [(s.name, s.m, s.n, s.source, dataset_available(s.name), s.licence) for s in DATASETS.values()]
    if fmt == "csv":
        typer.echo("name,m,n,source,available")
        for name, m, n, source, available, _ in rows:
            typer.echo(f"{name},{m},{n},{source},{str(available).lower()}")
        return
    from tabulate import tabulate

    table = [(name, m, n, source, "yes" if ok else "no", licence) for name, m, n, source, ok, licence in rows]
    typer.echo(tabulate(table, headers=["name", "m", "n", "source", "available", "licence"]))


def fetch(
    names: list[str] | None = typer.Argument(None, help="Datasets to fetch (default: every UCI set)."),
    source_dir: Path | None = typer.Option(
        None, "--from", help="Copy from this directory (e.g. ../shared/datasets) instead of UCI."
    ),
) -> None:
    """Fetch UCI files into the cache from --from DIR, AFR_DATA_MIRROR or the UCI archive, checked by sha256."""
    from afr_cli.data import fetch_all

    for result in fetch_all(names, source_dir):
        if result.action == "builtin":
            typer.echo(f"{result.name}: {result.origin}")
        elif result.action == "present":
            typer.echo(f"{result.name}: {result.file} already present in {result.path.parent} (sha256 ok)")
        else:
            verb = "replaced a corrupted copy," if result.action == "replaced" else "fetched"
            typer.echo(f"{result.name}: {result.file} {verb} from {result.origin} -> {result.path}")


def verify(
    names: list[str] | None = typer.Argument(None, help="Datasets to verify (default: every UCI set)."),
) -> None:
    """Check the sha256 and size of every cached UCI file; exit 2 naming each missing or bad file."""
    from afr_cli.data import verify_all

    results = verify_all(names)
    for result in results:
        typer.echo(f"{result.status:8} {result.name:9} {result.detail}")
    failed = [r for r in results if not r.ok]
    if failed:
        details = "; ".join(f"{r.file} {r.status} ({r.detail})" for r in failed)
        raise AfrInputError(
            f"{len(failed)} of {len(results)} dataset files failed verification: {details}; "
            "run `afr datasets fetch` to fetch them again"
        )


def info(
    name: str = typer.Argument(..., help="Dataset name, e.g. wine or 'Friedman 1', or a CSV/TSV/Parquet file."),
    target: str | None = typer.Option(None, "--target", help="With a file: the column to predict."),
    sep: str | None = typer.Option(None, "--sep", help="With a CSV file: its delimiter (default: detected)."),
    drop: list[str] = typer.Option([], "--drop", help="With a file: a column not to use (repeatable)."),
    missing: str = typer.Option(
        "error",
        "--missing",
        help="With a file: error, or drop-rows to leave out "
        "the rows with a missing value (as the entry's missing: key).",
    ),
    encode: list[str] = typer.Option(
        [],
        "--encode",
        help="With a file: COLUMN=onehot or COLUMN=ordinal (repeatable), or onehot or ordinal for "
        "every text column (as the entry's encode: key).",
    ),
) -> None:
    """Show the full registry record of one dataset, or what afr would read from a file of your own
    (rows, features, target summary), every problem of the file at once and the config entry that
    fixes them (exit 2 while the file, read as given, has a problem)."""
    from afr_cli.data import DEFAULT_DATA_SEED, get_spec, verify_dataset

    if target is not None or Path(name).is_file():
        _file_info(Path(name), target, sep, tuple(drop), missing, _encode_option(encode))
        return
    spec = get_spec(name)
    lines = [
        ("name", spec.name),
        ("m (features)", spec.m),
        ("n (rows)", spec.n),
        ("source", spec.source),
        ("licence", spec.licence),
        ("citation", spec.citation),
    ]
    if spec.note:
        lines.append(("note", spec.note))
    if spec.file is None:
        params = ", ".join(f"{k}={v}" for k, v in spec.params.items())
        lines.append(("generator", f"sklearn.datasets.{spec.generator}({params})"))
        if spec.source == "synthetic":
            lines.append(("random_state", f"the data seed (default {DEFAULT_DATA_SEED}, set per experiment)"))
    else:
        state = verify_dataset(spec.name)
        lines += [
            ("file", spec.file.name),
            ("url", spec.file.url),
            ("sha256", spec.file.sha256),
            ("size (bytes)", spec.file.size),
            ("format", spec.file.format),
            ("cache", f"{state.path} ({state.status})"),
        ]
    _print_record(lines)


def _print_record(lines: list[tuple[str, object]]) -> None:
    """Key-value lines, the values aligned; a value of several lines continues under the first."""
    width = max(len(key) for key, _ in lines)
    for key, value in lines:
        first, *rest = str(value).split("\n")
        typer.echo(f"{key:<{width}}  {first}")
        for line in rest:
            typer.echo(f"{'':<{width}}  {line}")


def _encode_option(values: list[str]) -> object:
    """--encode as the entry's encode: value (a kind for every text column, or a mapping)."""
    from afr_cli.data.encode import parse_encode

    if not values:
        return None
    if len(values) == 1 and "=" not in values[0]:
        return parse_encode(values[0], "--encode")
    pairs = {}
    for value in values:
        column, sep, kind = value.partition("=")
        if not sep or not column:
            raise AfrInputError(f"--encode: {value!r} is not allowed; give COLUMN=onehot or COLUMN=ordinal")
        pairs[column] = kind
    return parse_encode(pairs, "--encode")


def _file_info(
    path: Path, target: str | None, sep: str | None, drop: tuple[str, ...], missing: str, encode: object = None
) -> None:
    """What a ``{name, file, target}`` dataset entry would read from ``path``: every problem at
    once, and the one entry that fixes all an entry can fix."""
    import numpy as np

    from afr_cli.data.checks import rows_needed
    from afr_cli.data.files import MISSING
    from afr_cli.data.survey import DEFAULT_INNER_FOLDS, DEFAULT_TEST_FRACTIONS, survey_file

    if target is None:
        raise AfrInputError(
            f"{path}: --target: missing; name the column to predict (afr datasets info FILE --target COL)"
        )
    if missing not in MISSING:
        raise AfrInputError(f"--missing: {missing!r} is not allowed; allowed: {', '.join(MISSING)}")
    if not path.is_file():
        raise AfrInputError(f"{path}: no such file")
    survey = survey_file(path, target, sep, drop, missing, encode)
    need = rows_needed(DEFAULT_TEST_FRACTIONS, DEFAULT_INNER_FOLDS)
    rows = f"{survey.rows_in_file} (the default protocol, 80/20 with 3 inner folds, needs at least {need})"
    if survey.rows_dropped:
        rows = (
            f"{survey.rows_in_file - survey.rows_dropped} of {survey.rows_in_file}: {survey.rows_dropped} with a "
            f"missing value left out (missing: drop-rows); the default protocol, 80/20 with 3 inner folds, "
            f"needs at least {need}"
        )
    lines: list[tuple[str, object]] = [
        ("file", str(path)),
        ("sha256", survey.sha256),
        ("rows", rows),
        ("features", f"{len(survey.columns)}: {', '.join(survey.columns)}"),
    ]
    y = survey.y
    if y is not None and len(y):
        with np.errstate(over="ignore"):  # a target too large to square is named under problems
            std = np.std(y, ddof=1) if len(y) > 1 else 0
        lines.append(
            (
                "target",
                f"{target}: mean {np.mean(y):.6g}, std {std:.6g}, "
                f"min {np.min(y):.6g}, max {np.max(y):.6g}, {len(np.unique(y))} distinct values",
            )
        )
    lines.append(("problems", "\n".join(f"{i}. {p}" for i, p in enumerate(survey.problems, 1)) or "none"))
    if survey.warning:
        lines.append(("warning", survey.warning.removeprefix("warning: ")))
    lines.append(("config entry", survey.entry()))
    _print_record(lines)
    if survey.problems:
        count = len(survey.problems)
        them = "them" if count > 1 else "it"
        if not survey.unfixable:
            fixed = f"the config entry above fixes {them}"
        elif survey.unfixable == count:
            fixed = f"no entry key fixes {them}: change the file or the target"
        else:
            fixed = (
                f"the config entry above fixes all but {survey.unfixable}, which need a change to the file or target"
            )
        raise AfrInputError(f"{path}: {count} problem{'s' if count > 1 else ''} (listed above); {fixed}")
