"""What each paper prints and claims, read from its data file (``afr_cli/paper/<paper>.yaml``).

Everything the tables, reports, tests and the claims ledger know about a paper lives in that
file: its tables (captions, model aliases, other accepted names), its parameter rows, its
repetition count, the columns behind its printed t-tests, the reports that set our stores
beside it and its claims. Python code never names a paper, a family or an ensemble.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from afr_cli.bayesian import DEFAULT_ROPE
from afr_cli.errors import AfrInputError

PAPER_DIR = Path(__file__).resolve().parent
PAPER_KEYS = {"id", "order", "title", "text", "published", "reps", "stated_reps", "models", "bases", "param_rows", "axes",
              "tables", "ttests", "baselines", "reports", "claims", "agreement"}
REPORT_KEYS = {"name", "stores", "tables", "compare", "compare_metric", "compare_rope", "friedman"}


@dataclass(frozen=True)
class TableInfo:
    """One published table: its caption, the names it also answers to, and published model ids
    that stand for a different model of ours in it (``softmax`` -> ``softmax-y``)."""

    paper: str
    name: str
    caption: str
    aliases: dict[str, str]
    also: tuple[str, ...]

    @property
    def spec(self) -> str:
        return f"{self.paper}:{self.name}"


@dataclass(frozen=True)
class Report:
    """A committed report: stores under results/, the published tables set beside them, the
    paired comparisons (B against A) and the tables whose models get a Friedman test."""

    name: str
    paper: str
    stores: tuple[str, ...]
    papers: tuple[str, ...]
    compare: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    friedman: tuple[str, ...] = field(default_factory=tuple)
    compare_metric: str = "r2"  # the metric of the paired comparisons (the paper's own measure)
    compare_rope: float = DEFAULT_ROPE  # ROPE half-width of the Bayesian tests, in compare_metric's unit


@dataclass(frozen=True)
class Paper:
    """One paper's data file, parsed."""

    id: str
    order: int
    title: str
    text: str
    published: str
    reps: int
    models: tuple[str, ...]
    bases: tuple[str, ...]
    param_rows: dict[str, str]
    axes: dict[str, float]
    tables: dict[str, TableInfo]
    ttests: tuple[dict, ...]
    baselines: dict[str, dict]
    reports: tuple[Report, ...]
    claims: tuple[dict, ...]
    agreement: tuple[dict, ...] = ()
    # The repetitions the paper's text states, when they differ from ``reps`` (the protocol we
    # identified from its numbers): headlines use the stated count, the inferred one beside it.
    stated_reps: int | None = None


def _require(record: dict, key: str, where: str) -> Any:
    if key not in record:
        raise AfrInputError(f"{where}: {key}: missing")
    return record[key]


def _parse_report(raw: dict, paper: str, where: str) -> Report:
    unknown = set(raw) - REPORT_KEYS
    if unknown:
        raise AfrInputError(f"{where}: {sorted(unknown)[0]}: unknown key; allowed: {', '.join(sorted(REPORT_KEYS))}")
    return Report(str(_require(raw, "name", where)), paper, tuple(_require(raw, "stores", where)),
                  tuple(raw.get("tables", ())), tuple(tuple(pair) for pair in raw.get("compare", ())),
                  tuple(raw.get("friedman", ())), _compare_metric(raw, where), _compare_rope(raw, where))


def _compare_rope(raw: dict, where: str) -> float:
    rope = raw.get("compare_rope", DEFAULT_ROPE)
    if isinstance(rope, bool) or not isinstance(rope, (int, float)) or not rope >= 0:
        raise AfrInputError(f"{where}: compare_rope: {rope!r} is not allowed; allowed: a number >= 0 "
                            f"(half-width in compare_metric's unit; default {DEFAULT_ROPE})")
    return float(rope)


def _compare_metric(raw: dict, where: str) -> str:
    metric = raw.get("compare_metric", "r2")
    if metric not in ("r2", "mae", "rmse"):
        raise AfrInputError(f"{where}: compare_metric: {metric!r} is not allowed; allowed: r2, mae, rmse")
    return metric


def parse_paper(raw: dict, where: str) -> Paper:
    """A paper's data file as a ``Paper``; a one-line error naming the file and key otherwise."""
    if not isinstance(raw, dict):
        raise AfrInputError(f"{where}: not a mapping of paper keys")
    unknown = set(raw) - PAPER_KEYS
    if unknown:
        raise AfrInputError(f"{where}: {sorted(unknown)[0]}: unknown key; allowed: {', '.join(sorted(PAPER_KEYS))}")
    paper = str(_require(raw, "id", where))
    tables = {}
    for name, info in (raw.get("tables") or {}).items():
        info = info or {}
        tables[str(name)] = TableInfo(paper, str(name), str(info.get("caption", "")),
                                      dict(info.get("aliases", {})), tuple(str(a) for a in info.get("also", ())))
    axes = {k: float((v or {}).get("scale", 1.0)) for k, v in (raw.get("axes") or {}).items()}
    return Paper(
        id=paper, order=int(raw.get("order", 99)), title=str(raw.get("title", paper)), text=str(raw.get("text", "")),
        published=str(_require(raw, "published", where)), reps=int(raw.get("reps", 10)),
        models=tuple(raw.get("models", ())), bases=tuple(raw.get("bases", ())),
        param_rows=dict(raw.get("param_rows", {})), axes=axes, tables=tables,
        ttests=tuple(raw.get("ttests", ())), baselines=dict(raw.get("baselines", {})),
        reports=tuple(_parse_report(r, paper, f"{where}: reports") for r in raw.get("reports", ())),
        claims=tuple(raw.get("claims", ())), agreement=tuple(raw.get("agreement", ())),
        stated_reps=int(raw["stated_reps"]) if raw.get("stated_reps") is not None else None)


@lru_cache(maxsize=None)
def papers() -> tuple[Paper, ...]:
    """Every paper's data file in this folder, in the order their ``order`` keys give."""
    out = []
    for path in sorted(PAPER_DIR.glob("*.yaml")):
        with open(path, encoding="utf-8") as fh:
            out.append(parse_paper(yaml.safe_load(fh), str(path.relative_to(PAPER_DIR.parent.parent))))
    return tuple(sorted(out, key=lambda p: (p.order, p.id)))


def paper(paper_id: str) -> Paper:
    """The data of one paper by id; an unknown id is an input error listing the known ones."""
    for p in papers():
        if p.id == paper_id:
            return p
    raise AfrInputError(f"unknown paper {paper_id!r}; allowed: {', '.join(p.id for p in papers())}")


def table_info(spec: str) -> TableInfo | None:
    """The table a ``paper:table`` spec names (case-insensitive; a table's other names too)."""
    paper_id, _, name = spec.strip().partition(":")
    for p in papers():
        if p.id.lower() != paper_id.lower():
            continue
        for info in p.tables.values():
            if name.lower() in (n.lower() for n in (info.name, *info.also)):
                return info
    return None


def reports() -> tuple[Report, ...]:
    """Every committed report, in the papers' order."""
    return tuple(r for p in papers() for r in p.reports)


def _ordered_union(lists) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for items in lists:
        seen.update(dict.fromkeys(items))
    return tuple(seen)


def model_order() -> tuple[str, ...]:
    """The order models appear in our tables: each paper's list, in the papers' order."""
    return _ordered_union(p.models for p in papers())


def base_order() -> tuple[str, ...]:
    """Every base id of the papers' data, each once, in the order the data files first list them."""
    return _ordered_union(p.bases for p in papers())


def param_rows() -> dict[str, str]:
    """Published parameter row (eps_opt, tau0, ...) -> our hyperparameter, over all papers."""
    return {row: ours for p in papers() for row, ours in p.param_rows.items()}


def unit_axes() -> dict[str, float]:
    """Unit axes beyond (dataset, base, rep) some published tables have -> scale of ours to theirs."""
    return {axis: scale for p in papers() for axis, scale in p.axes.items()}


def paper_reps(spec_or_paper: str) -> int:
    """How many repetitions the paper's published means are over."""
    return paper(spec_or_paper.partition(":")[0].lower()).reps


def baseline_sources() -> dict[tuple[str, str], tuple[str, str]]:
    """(base id, ensemble kind) -> (published table, model) holding the papers' plain column for
    it. The kind tells bases of one id apart: "ERT" is a forest in LARF, a GBM's learner in AGBoost."""
    return {(base, src["kind"]): (src["table"], src["model"]) for p in papers() for base, src in p.baselines.items()}


def expected_baselines() -> dict[tuple[str, str, str], float]:
    """(base id, kind, dataset) -> the value our plain model is expected at where a known gap to
    the paper is documented (Boston), instead of the published one."""
    return {(base, src["kind"], dataset): float(value) for p in papers() for base, src in p.baselines.items()
            for dataset, value in (src.get("expected") or {}).items()}
