"""What each paper prints, claims and needs, read from its folder (``afr_cli/papers/<id>/``).

A paper is one folder: ``paper.yaml`` (its data file), ``published.csv`` (the published cells)
and ``page.md`` (its narrative page, with generated blocks). Everything the tables, reports,
tests, the claims ledger and ``afr reproduce`` know about a paper lives in that data file: its
tables (captions, model aliases, other accepted names), its parameter rows, its repetition
count, the columns behind its printed t-tests, the reports that set our stores beside it, its
claims, the experiments it needs (configs and repetition counts) and the figures and extra
tables drawn from them. Python code never names a paper, a family or an ensemble.

The package's folders are found by glob (``afr_cli/papers/*/paper.yaml``); a folder anywhere
else joins them through ``add_paper_folder`` (``afr reproduce path/to/my_paper/``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from afr_cli.bayesian import DEFAULT_ROPE
from afr_cli.errors import AfrInputError
from afr_cli.params import is_integer, is_number

PAPERS_DIR = Path(__file__).resolve().parent
DATA_FILE, PAGE_FILE = "paper.yaml", "page.md"
PAPER_KEYS = {"id", "order", "title", "text", "published", "reps", "stated_reps", "models", "bases", "param_rows", "axes",
              "tables", "ttests", "baselines", "reports", "claims", "agreement", "page", "experiments", "outputs",
              "studies"}
REPORT_KEYS = {"name", "stores", "tables", "compare", "compare_metric", "compare_rope", "friedman", "also_reps"}
EXPERIMENT_KEYS = {"config", "reps", "out", "set", "datasets", "label"}
OUTPUT_KEYS = {"afr", "stdout", "reps", "label"}
STUDY_KEYS = {"name", "function", "block", "cache", "show", "digits", "formats"}
STUDIES_FILE = "studies.py"  # a paper folder's study functions
_EXTRA_FOLDERS: list[Path] = []  # paper folders outside the package, in the order they were added


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
    also_reps: tuple[int, ...] = ()  # also written on repetitions 0..N-1 (results/<report>/reps<N>/)
    compare_rope: float = DEFAULT_ROPE  # ROPE half-width of the Bayesian tests, in compare_metric's unit


@dataclass(frozen=True)
class ExperimentSpec:
    """One experiment a paper needs: a config run at a repetition count, with optional ``--set``
    overrides, a dataset subset and a store directory of its own (``out``, under the results
    root; the config's ``name`` otherwise)."""

    config: Path
    reps: int
    out: str | None = None
    sets: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    label: str = ""

    def store(self) -> str:
        """The store's directory under the results root: ``out``, else the config's ``name``."""
        if self.out:
            return self.out
        try:
            with open(self.config, encoding="utf-8") as fh:
                raw = yaml.safe_load(fh)
        except (OSError, yaml.YAMLError) as err:
            raise AfrInputError(f"{self.config}: cannot read the experiment's config ({err})") from None
        if not isinstance(raw, dict) or not raw.get("name"):
            raise AfrInputError(f"{self.config}: name: missing; the store directory follows from it")
        return str(raw["name"])


@dataclass(frozen=True)
class OutputSpec:
    """A figure or an extra table drawn after the experiments: one ``afr`` command (or several,
    whose outputs are joined by a blank line) with ``{root}`` (the results root) and ``{reps}``
    (``--reps`` when given, else this entry's ``reps``) filled in; its standard output goes to
    ``stdout`` when given (a path under the root, also with placeholders)."""

    commands: tuple[tuple[str, ...], ...]
    stdout: str | None = None
    reps: int | None = None
    label: str = ""


@dataclass(frozen=True)
class Study:
    """One analysis of a paper beyond its tables: a function of the folder's ``studies.py`` that
    returns a frame, rendered by ``afr report`` into the generated block ``block`` of the page that
    quotes it (floats at ``digits`` decimals, or by the Python format spec ``formats`` gives a
    column, e.g. ``+.3f``, ``.2g``). With ``cache`` (a csv under results/) the study is expensive:
    only ``afr report --studies`` runs it and writes that file; otherwise its frame is read from
    the committed csv. ``show`` names a cheap function of the same file that turns the study's
    frame into the one shown (a pivot, a ranking) or into Markdown text (a sentence, bullets)."""

    paper: str
    name: str
    function: str
    block: str
    cache: str | None = None
    show: str | None = None
    digits: int = 3
    formats: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Paper:
    """One paper's folder, parsed: its data file's keys, and where its files are."""

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
    folder: Path | None = None  # the paper's folder (None for a data file parsed on its own)
    page: Path | None = None  # its narrative page with generated blocks, when it has one
    experiments: tuple[ExperimentSpec, ...] = ()
    outputs: tuple[OutputSpec, ...] = ()
    studies: tuple[Study, ...] = ()
    # The repetitions the paper's text states, when they differ from ``reps`` (the protocol we
    # identified from its numbers): headlines use the stated count, the inferred one beside it.
    stated_reps: int | None = None

    @property
    def studies_file(self) -> Path:
        """Where the paper's study functions live: ``studies.py`` in its folder."""
        return (self.folder or PAPERS_DIR / self.id) / STUDIES_FILE

    @property
    def data_file(self) -> str:
        """The data file as a reader finds it: relative to the project inside the package."""
        return _shown(self.folder / DATA_FILE) if self.folder else f"{self.id}.yaml"


def _shown(path: Path) -> str:
    """A path relative to the project root when it is inside the package, else as it is."""
    try:
        return str(path.relative_to(PAPERS_DIR.parent.parent))
    except ValueError:
        return str(path)


def _require(record: dict, key: str, where: str) -> Any:
    if key not in record:
        raise AfrInputError(f"{where}: {key}: missing")
    return record[key]


def _parse_report(raw: dict, paper: str, where: str) -> Report:
    _unknown_keys(raw, REPORT_KEYS, where)
    return Report(str(_require(raw, "name", where)), paper, tuple(_require(raw, "stores", where)),
                  tuple(raw.get("tables", ())), tuple(tuple(pair) for pair in raw.get("compare", ())),
                  tuple(raw.get("friedman", ())), _compare_metric(raw, where),
                  tuple(int(n) for n in raw.get("also_reps", ())), _compare_rope(raw, where))


def _compare_rope(raw: dict, where: str) -> float:
    rope = raw.get("compare_rope", DEFAULT_ROPE)
    if not is_number(rope) or not rope >= 0:
        raise AfrInputError(f"{where}: compare_rope: {rope!r} is not allowed; allowed: a number >= 0 "
                            f"(half-width in compare_metric's unit; default {DEFAULT_ROPE})")
    return float(rope)


def _unknown_keys(raw: dict, allowed: set[str], where: str) -> None:
    unknown = set(raw) - allowed
    if unknown:
        raise AfrInputError(f"{where}: {sorted(unknown)[0]}: unknown key; allowed: {', '.join(sorted(allowed))}")


def _positive_int(raw: dict, key: str, where: str) -> int:
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise AfrInputError(f"{where}: {key}: {value!r} is not allowed; an integer >= 1")
    return value


def _parse_experiment(raw: Any, folder: Path | None, where: str) -> ExperimentSpec:
    """An ``experiments`` entry; its config is the folder's own file when one of that name is
    there, else the path as written, from the working directory (the package's papers name the
    top-level ``configs/``)."""
    if not isinstance(raw, dict):
        raise AfrInputError(f"{where}: not a mapping; allowed keys: {', '.join(sorted(EXPERIMENT_KEYS))}")
    _unknown_keys(raw, EXPERIMENT_KEYS, where)
    config = Path(str(_require(raw, "config", where)))
    if folder is not None and not config.is_absolute() and (folder / config).is_file():
        config = folder / config
    _require(raw, "reps", where)
    datasets = raw.get("datasets") or ()
    return ExperimentSpec(config, _positive_int(raw, "reps", where), str(raw["out"]) if raw.get("out") else None,
                          tuple(str(s) for s in raw.get("set") or ()),
                          tuple(str(d) for d in ([datasets] if isinstance(datasets, str) else datasets)),
                          str(raw.get("label", "")))


def _parse_output(raw: Any, where: str) -> OutputSpec:
    """An ``outputs`` entry: ``afr`` is one command's arguments, or a list of commands."""
    if not isinstance(raw, dict):
        raise AfrInputError(f"{where}: not a mapping; allowed keys: {', '.join(sorted(OUTPUT_KEYS))}")
    _unknown_keys(raw, OUTPUT_KEYS, where)
    command = _require(raw, "afr", where)
    commands = command if command and all(isinstance(c, list) for c in command) else [command]
    if not all(isinstance(c, list) and c for c in commands):
        raise AfrInputError(f"{where}: afr: not a list of arguments (or of such lists)")
    return OutputSpec(tuple(tuple(str(a) for a in c) for c in commands),
                      str(raw["stdout"]) if raw.get("stdout") else None,
                      _positive_int(raw, "reps", where) if "reps" in raw else None, str(raw.get("label", "")))


def _compare_metric(raw: dict, where: str) -> str:
    metric = raw.get("compare_metric", "r2")
    if metric not in ("r2", "mae", "rmse"):
        raise AfrInputError(f"{where}: compare_metric: {metric!r} is not allowed; allowed: r2, mae, rmse")
    return metric


def parse_paper(raw: dict, where: str, folder: Path | None = None) -> Paper:
    """A paper's data file as a ``Paper`` (its files looked up in ``folder``); a one-line error
    naming the file and key otherwise."""
    if not isinstance(raw, dict):
        raise AfrInputError(f"{where}: not a mapping of paper keys")
    _unknown_keys(raw, PAPER_KEYS, where)
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
        folder=folder, page=_page(raw, folder, where),
        experiments=tuple(_parse_experiment(e, folder, f"{where}: experiments[{i}]")
                          for i, e in enumerate(raw.get("experiments") or ())),
        outputs=tuple(_parse_output(o, f"{where}: outputs[{i}]") for i, o in enumerate(raw.get("outputs") or ())),
        studies=tuple(_parse_study(r, paper, f"{where}: studies") for r in raw.get("studies", ()) or ()),
        stated_reps=int(raw["stated_reps"]) if raw.get("stated_reps") is not None else None)


def _parse_study(raw: dict, paper: str, where: str) -> Study:
    """A ``studies`` entry; a one-line error naming the key otherwise."""
    if not isinstance(raw, dict):
        raise AfrInputError(f"{where}: not a mapping of study keys; allowed: {', '.join(sorted(STUDY_KEYS))}")
    _unknown_keys(raw, STUDY_KEYS, where)
    name = str(_require(raw, "name", where))
    digits = raw.get("digits", 3)
    if not is_integer(digits) or not 0 <= digits <= 12:
        raise AfrInputError(f"{where}: {name}: digits: {digits!r} is not allowed; allowed: an integer 0-12")
    formats = raw.get("formats") or {}
    if not isinstance(formats, dict):
        raise AfrInputError(f"{where}: {name}: formats: not a mapping; allowed: column -> format spec (e.g. '+.3f')")
    for column, spec in formats.items():
        try:
            format(1.5, str(spec))
        except ValueError:
            raise AfrInputError(f"{where}: {name}: formats: {column}: {spec!r} is not a number format; "
                                f"allowed: a Python format spec such as '.3f', '+.3f', '.2g'") from None
    cache, show = raw.get("cache"), raw.get("show")
    return Study(paper, name, str(raw.get("function", name)), str(_require(raw, "block", where)),
                 str(cache) if cache else None, str(show) if show else None, digits,
                 {str(k): str(v) for k, v in formats.items()})


def _page(raw: dict, folder: Path | None, where: str) -> Path | None:
    """The page the data file declares (``page``, a file of the folder), which must exist."""
    if "page" not in raw or folder is None:
        return None
    page = folder / str(raw["page"])
    if not page.is_file():
        raise AfrInputError(f"{where}: page: {raw['page']!r} is not a file of {_shown(folder)}")
    return page


def read_paper_folder(folder: str | Path) -> Paper:
    """One paper folder (a directory holding ``paper.yaml``), parsed."""
    folder = Path(folder).resolve()
    data_file = folder / DATA_FILE
    if not data_file.is_file():
        raise AfrInputError(f"{_shown(folder)}: not a paper folder (no {DATA_FILE} in it)")
    try:
        with open(data_file, encoding="utf-8") as fh:
            raw = yaml.safe_load(fh)
    except yaml.YAMLError as err:
        raise AfrInputError(f"{_shown(data_file)}: not valid YAML ({str(err).splitlines()[0]})") from None
    return parse_paper(raw, _shown(data_file), folder)


def package_folders() -> list[Path]:
    """The package's paper folders: every ``afr_cli/papers/*/`` that holds a ``paper.yaml``."""
    return sorted(path.parent for path in PAPERS_DIR.glob(f"*/{DATA_FILE}"))


@lru_cache(maxsize=None)
def papers() -> tuple[Paper, ...]:
    """Every paper: the package's folders and those added from outside, in ``order`` order."""
    out = [read_paper_folder(folder) for folder in [*package_folders(), *_EXTRA_FOLDERS]]
    seen: dict[str, Path | None] = {}
    for p in out:
        if p.id in seen:
            raise AfrInputError(f"{p.data_file}: id: {p.id!r} is already the id of {_shown(seen[p.id])}")
        seen[p.id] = p.folder
    return tuple(sorted(out, key=lambda p: (p.order, p.id)))


def add_paper_folder(folder: str | Path) -> Paper:
    """Make a paper folder outside the package known to every reader (tables, reports, claims,
    ``afr reproduce``) for the rest of the process; returns it. Adding a folder twice is a no-op."""
    resolved = Path(folder).resolve()
    if resolved in package_folders() or resolved in _EXTRA_FOLDERS:
        return next(p for p in papers() if p.folder == resolved)
    read_paper_folder(resolved)  # its one-line error, before it joins the others
    _EXTRA_FOLDERS.append(resolved)
    papers.cache_clear()
    try:
        return next(p for p in papers() if p.folder == resolved)
    except AfrInputError:
        _EXTRA_FOLDERS.remove(resolved)
        papers.cache_clear()
        raise


def reference_stores() -> dict[str, Paper]:
    """Store directory (under the results root) -> the paper whose experiments declare it: the
    stores whose exports are committed. An experiment whose config cannot be read is left out."""
    out = {}
    for p in papers():
        for experiment in p.experiments:
            try:
                out.setdefault(experiment.store(), p)
            except AfrInputError:
                continue
    return out


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


def is_reference_store(directory: str | Path, root: str | Path = "results") -> bool:
    """Whether a store directory is one a paper folder's experiments declare under the results
    ``root``: a reference store, whose export is committed (``afr run`` writes it only for these)."""
    target = Path(directory).resolve()
    return any((Path(root) / name).resolve() == target for name in reference_stores())
