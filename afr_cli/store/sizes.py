"""How big the committed exports are, per repetition, and extrapolated to a repetition count:
the measurement behind the README's size budget for ``results/`` (``afr export --sizes``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from afr_cli.errors import AfrInputError
from afr_cli.store.export import EXPORT_DIR, EXPORT_MANIFEST, ExportedStore, has_export
from afr_cli.store.reader import find_stores

RESULTS_BUDGET_MB = 30  # what results/ (exports, reports, figures, site) is held to, at the papers' repetitions


@dataclass
class ExportSize:
    directory: Path
    reps: float  # mean stored repetitions per (dataset, base)
    fixed_bytes: int  # manifest.json: does not grow with repetitions
    table_bytes: int  # the compressed tables: grow in proportion to repetitions

    def at(self, reps: int) -> float:
        return self.fixed_bytes + self.table_bytes * reps / self.reps


def export_sizes(root: Path) -> list[ExportSize]:
    """Every export below ``root`` with its size split into a fixed and a per-repetition part."""
    out = []
    for directory in find_stores(root):
        if not has_export(directory):
            continue
        units = ExportedStore(directory).done_units()
        pairs = len({(d, b) for d, b, _ in units})
        files = list((directory / EXPORT_DIR).iterdir())
        fixed = sum(f.stat().st_size for f in files if f.name == EXPORT_MANIFEST)
        tables = sum(f.stat().st_size for f in files if f.name != EXPORT_MANIFEST)
        out.append(ExportSize(directory, len(units) / pairs if pairs else 0.0, fixed, tables))
    return out


def other_bytes(root: Path) -> int:
    """Everything under ``root`` git would commit besides the exports (reports, figures): the
    part that does not grow with repetitions. Stores (git-ignored) are not counted."""
    return sum(
        p.stat().st_size
        for p in Path(root).rglob("*")
        if p.is_file() and EXPORT_DIR not in p.relative_to(root).parts and not p.name.startswith("store.sqlite")
    )


def render_sizes(root: Path, reps: int = 100, as_stored: list[Path] | None = None) -> str:
    """The ``afr export --sizes`` table: each export's size, per repetition and extrapolated to
    ``reps``; the exports in ``as_stored`` (studies committed at their own counts) stay as they are."""
    sizes = export_sizes(root)
    kept = {Path(p).resolve() for p in as_stored or []}
    resolved = {s.directory: s.directory.resolve() for s in sizes}
    unknown = kept - set(resolved.values())
    if unknown:
        raise AfrInputError(f"--as-stored: {', '.join(sorted(map(str, unknown)))}: no export below {root}")
    as_is = {d: r in kept for d, r in resolved.items()}

    def projected(s: ExportSize) -> float:
        return s.fixed_bytes + s.table_bytes if as_is[s.directory] else s.at(reps)

    rows = [
        [
            str(s.directory),
            f"{s.reps:g}",
            f"{(s.fixed_bytes + s.table_bytes) / 1e6:.2f}",
            f"{s.table_bytes / s.reps / 1e3:.1f}" if s.reps else "-",
            (f"{projected(s) / 1e6:.2f}" + (" (as stored)" if as_is[s.directory] else "")) if s.reps else "-",
        ]
        for s in sizes
    ]
    now = sum(s.fixed_bytes + s.table_bytes for s in sizes)
    later = sum(projected(s) for s in sizes if s.reps)
    rows.append(["all exports", "", f"{now / 1e6:.2f}", "", f"{later / 1e6:.2f}"])
    other = other_bytes(root)
    table = tabulate(rows, headers=["export", "reps", "MB now", "kB per rep", f"MB at {reps} reps"], tablefmt="simple")
    return (
        f"{table}\n\nother committed files under {root} (reports, figures): {other / 1e6:.2f} MB\n"
        f"{root}/ now: {(now + other) / 1e6:.2f} MB; at {reps} repetitions "
        f"{f'(but {len(kept)} export(s) as stored)' if kept else 'everywhere'}: {(later + other) / 1e6:.2f} MB "
        f"(budget {RESULTS_BUDGET_MB} MB)"
    )
