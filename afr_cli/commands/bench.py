"""``afr bench``: speed measured as ratios against a naive path timed in the same run."""

from __future__ import annotations

import json

import typer
from tabulate import tabulate

from afr_cli.errors import AfrInputError

FORMATS = ("table", "json")


def _emit(result: dict, fmt: str, lines: list[str]) -> None:
    if fmt not in FORMATS:
        raise AfrInputError(f"--format: {fmt!r} is not allowed; allowed: {', '.join(FORMATS)}")
    typer.echo(json.dumps(result, indent=2) if fmt == "json" else "\n".join(lines))


def register(app: typer.Typer) -> None:
    bench = typer.Typer(help="Benchmarks: ratios against a naive path measured in the same run.",
                        no_args_is_help=True)
    app.add_typer(bench, name="bench")

    @bench.command("qp")
    def qp(n: int = typer.Option(800, help="rows"), trees: int = typer.Option(100, "--trees", help="T"),
           repeats: int = typer.Option(5, help="timed repeats (median)"),
           fmt: str = typer.Option("table", "--format", help="table or json")) -> None:
        """Fresh n-form cvxpy+ECOS solve vs the compiled Gram form; every solver's time and gap."""
        from afr_cli.benchmarks.qp import run

        r = run(n, trees, repeats)
        rows = [(name, s["compiled_ms"], s["first_solve_ms"], s["status"], f"{s['objective_gap_to_ecos']:.2e}")
                for name, s in r["solvers"].items()]
        lines = [f"simplex least squares, T = {r['T']}, n = {r['n']} (median of {r['repeats']})",
                 f"fresh n-form cvxpy + {r['fresh_solver']}: {r['fresh_ms']:.1f} ms",
                 f"compiled Gram form + {r['compiled_solver']}: {r['compiled_ms']:.1f} ms",
                 f"ratio: {r['ratio']:.1f}x", "",
                 tabulate(rows, headers=["solver (compiled)", "ms", "first solve ms", "status", "objective gap to ECOS"])]
        _emit(r, fmt, lines)
