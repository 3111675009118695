"""``afr stats``: statistics over the papers' numbers; ``published`` re-checks their printed t-tests."""

from __future__ import annotations

import typer

from afr_cli.errors import AfrInputError

PUBLISHED_FORMATS = ("table", "csv")
HELP = "Statistics over the papers' numbers (Demšar paired t-test, Wilcoxon)."
PUBLISHED_CSV_COLUMNS = [
    "paper",
    "table",
    "comparison",
    "base",
    "metric",
    "published_mean",
    "recomputed_mean",
    "published_p",
    "recomputed_p",
    "agrees",
]


def _interval(low, high, printed: bool) -> str:
    if printed:
        return f"[{low}, {high}]" if low != "" else ""
    return f"[{low:.4g}, {high:.4g}]"


def published(
    fmt: str = typer.Option("table", "--format", help="table (with CIs and a verdict) or csv."),
) -> None:
    """Recompute every t-test printed in the papers from the published table it is about."""
    from tabulate import tabulate

    from afr_cli.catalogue.printed_tests import disagreeing_quantities, recompute_published_ttests

    if fmt not in PUBLISHED_FORMATS:
        raise AfrInputError(f"--format: {fmt!r} is not one of {', '.join(PUBLISHED_FORMATS)}")
    tests = recompute_published_ttests()
    if fmt == "csv":
        typer.echo(tests[PUBLISHED_CSV_COLUMNS].to_csv(index=False, float_format="%.6g"), nl=False)
        return
    rows = [
        (
            f"{r['paper']}:{r['table']}",
            r["comparison"],
            r["base"],
            r["published_mean"],
            f"{r['recomputed_mean']:.4g}",
            r["published_p"],
            f"{r['recomputed_p']:.4g}",
            _interval(r["published_ci_low"], r["published_ci_high"], printed=True),
            _interval(r["recomputed_ci_low"], r["recomputed_ci_high"], printed=False),
            "yes" if r["agrees"] else "NO: " + ", ".join(disagreeing_quantities(r)),
        )
        for _, r in tests.iterrows()
    ]
    headers = [
        "table",
        "comparison (A vs B: A − B, R²)",
        "base",
        "mean",
        "mean (ours)",
        "p",
        "p (ours)",
        "95 % CI",
        "95 % CI (ours)",
        "reproduces",
    ]
    typer.echo(tabulate(rows, headers=headers, disable_numparse=True))
    typer.echo(f"{int(tests['agrees'].sum())} of {len(tests)} published t-tests reproduce to the printed precision")
