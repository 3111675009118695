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

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from afr_cli.analysis.rope import DEFAULT_ROPE
from afr_cli.core.bounds import REAL, Interval
from afr_cli.core.params import is_integer, is_number
from afr_cli.core.path_rules import name_problem
from afr_cli.errors import AfrInputError
from afr_cli.store.yaml_cache import load_yaml_cached  # parsed once per content: 0.1 s of CPU saved on every command

PAPERS_DIR = Path(__file__).resolve().parents[1] / "papers"  # the papers' content folders, afr_cli/papers/<id>/
PROJECT_DIR = PAPERS_DIR.parent.parent  # the checkout: the package's papers name its configs/ from here
DATA_FILE, PAGE_FILE = "paper.yaml", "page.md"
PAPER_KEYS = {
    "id",
    "order",
    "title",
    "text",
    "published",
    "reps",
    "stated_reps",
    "models",
    "bases",
    "param_rows",
    "axes",
    "tables",
    "ttests",
    "baselines",
    "reports",
    "claims",
    "agreement",
    "page",
    "experiments",
    "outputs",
    "studies",
    "explanations",
}
REPORT_KEYS = {
    "name",
    "stores",
    "tables",
    "compare",
    "compare_metric",
    "compare_rope",
    "friedman",
    "friedman_alpha",
    "also_reps",
}
EXPERIMENT_KEYS = {"config", "reps", "out", "set", "datasets", "label"}
OUTPUT_KEYS = {"afr", "stdout", "reps", "label"}
EXPLANATION_KEYS = {"kind", "store", "suffix", "cause", "test", "choice"}
EXPLANATION_KINDS = ("spread", "code", "cause")
STUDY_KEYS = {"name", "function", "block", "cache", "show", "digits", "formats"}
TABLE_KEYS = {"caption", "aliases", "also"}
ROOT_MARK = "{root}"  # an output path's placeholder for the results root
UNDER_ROOT = "a relative path under the results root (no '..', not absolute)"
STUDIES_FILE = "studies.py"  # a paper folder's study functions


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


ALPHA = 0.05  # the papers' significance level, the post-hoc tests' default
FRIEDMAN_ALPHA = Interval(REAL, 0, 1, closed="neither")  # a report's post-hoc significance level


@dataclass(frozen=True)
class Explanation:
    """A store that recomputes some published cells another way, consulted for a cell our text
    reading misses: ``spread``, under another value of a protocol choice the paper leaves open;
    ``code``, under the authors' code reading; ``cause``, with a cause of the miss removed (named
    in ``cause`` and checked by the test ``test``, ``tests/<file>.py::<function>``). The store's
    model ids are the published ones followed by ``suffix``. A spread names the value it takes in
    ``choice`` (``folds 1``): the column its cells are shown under beside ours; a code reading run
    under such a value names it too, and one without a choice is the code reading shown beside
    ours."""

    kind: str
    store: str
    suffix: str = ""
    cause: str = ""
    test: str = ""
    choice: str = ""


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
    friedman_alpha: float = ALPHA  # the significance level of the post-hoc tests (Nemenyi, Wilcoxon-Holm)


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
    explanations: tuple[Explanation, ...] = ()

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


def under_root_problem(value: object) -> str | None:
    """What keeps ``value`` from naming a path under the results root, or None: it must be a
    non-empty relative path with no '..' part (a paper folder never writes outside its root)."""
    if not isinstance(value, str) or not value.strip():
        return "must be a non-empty path"
    if "\x00" in value or "\\" in value:
        return f"{value!r} contains a NUL byte or a backslash"
    path = Path(value)
    if path.is_absolute():
        return f"{value!r} is absolute"
    if ".." in path.parts or value.strip() in (".", "./"):
        return f"{value!r} leaves the results root" if ".." in path.parts else f"{value!r} is the root itself"
    return None


def _under_root(value: object, where: str, key: str) -> str:
    """``value`` as a path under the results root, or a one-line error naming the key."""
    problem = under_root_problem(value)
    if problem:
        raise AfrInputError(f"{where}: {key}: {problem}; allowed: {UNDER_ROOT}")
    return str(value)


def _root_path(value: object, where: str, key: str) -> str:
    """An output's path (``stdout``, ``--out``): ``{root}/`` then a path under the root."""
    text = str(value)
    if not text.startswith(ROOT_MARK + "/"):
        raise AfrInputError(
            f"{where}: {key}: {text!r} is not under the results root; allowed: '{ROOT_MARK}/' then {UNDER_ROOT}"
        )
    _under_root(text[len(ROOT_MARK) + 1 :], where, key)
    return text


def _list(raw: dict, key: str, where: str) -> list:
    """A list-valued key (absent or null: empty), or a one-line error."""
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise AfrInputError(f"{where}: {key}: {type(value).__name__} {_short(value)} is not allowed; allowed: a list")
    return value


def _mapping(raw: dict, key: str, where: str) -> dict:
    """A mapping-valued key (absent or null: empty), or a one-line error."""
    value = raw.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise AfrInputError(
            f"{where}: {key}: {type(value).__name__} {_short(value)} is not allowed; allowed: a mapping"
        )
    return value


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _scalar(value: object) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _strings(raw: dict, key: str, where: str) -> tuple[str, ...]:
    """A list of names (numbers read as their text), or a one-line error."""
    items = _list(raw, key, where)
    bad = next((v for v in items if not _scalar(v)), None)
    if bad is not None:
        raise AfrInputError(f"{where}: {key}: {_short(bad)} is not allowed; allowed: a list of names")
    return tuple(str(v) for v in items)


def _mappings(raw: dict, key: str, where: str) -> tuple[dict, ...]:
    """A list of mappings (``claims``, ``ttests``, ``agreement``), or a one-line error."""
    items = _list(raw, key, where)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise AfrInputError(f"{where}: {key}[{i}]: {_short(item)} is not allowed; allowed: a mapping")
    return tuple(items)


def _integer(raw: dict, key: str, where: str, default: int | None, low: int) -> int | None:
    """An integer key >= ``low`` (``default`` when absent or null), or a one-line error."""
    value = raw.get(key)
    if value is None:
        return default
    if not is_integer(value) or isinstance(value, bool) or value < low:
        raise AfrInputError(f"{where}: {key}: {_short(value)} is not allowed; allowed: an integer >= {low}")
    return int(value)


def _text(raw: dict, key: str, where: str, default: str) -> str:
    value = raw.get(key, default)
    if not _scalar(value):
        raise AfrInputError(f"{where}: {key}: {_short(value)} is not allowed; allowed: text")
    return str(value)


def _pairs(raw: dict, where: str) -> tuple[tuple[str, str], ...]:
    """A report's ``compare``: pairs [A, B] of model names."""
    pairs = _list(raw, "compare", where)
    for pair in pairs:
        if not isinstance(pair, list) or len(pair) != 2 or not all(_scalar(m) for m in pair):
            raise AfrInputError(f"{where}: compare: {_short(pair)} is not allowed; allowed: pairs [A, B] of models")
    return tuple((str(a), str(b)) for a, b in pairs)


def _parse_report(raw: Any, paper: str, where: str) -> Report:
    if not isinstance(raw, dict):
        raise AfrInputError(
            f"{where}: {_short(raw)} is not allowed; allowed: a mapping of {', '.join(sorted(REPORT_KEYS))}"
        )
    _unknown_keys(raw, REPORT_KEYS, where)
    name = _under_root(_require(raw, "name", where), where, "name")
    _require(raw, "stores", where)
    stores = tuple(_under_root(s, where, "stores") for s in _strings(raw, "stores", where))
    also = tuple(_integer({"also_reps": n}, "also_reps", where, None, 1) for n in _list(raw, "also_reps", where))
    return Report(
        name,
        paper,
        stores,
        _strings(raw, "tables", where),
        _pairs(raw, where),
        _strings(raw, "friedman", where),
        _compare_metric(raw, where),
        also,
        _compare_rope(raw, where),
        FRIEDMAN_ALPHA.check(raw.get("friedman_alpha", ALPHA), where, "friedman_alpha"),
    )


def _compare_rope(raw: dict, where: str) -> float:
    rope = raw.get("compare_rope", DEFAULT_ROPE)
    if not is_number(rope) or not rope >= 0:
        raise AfrInputError(
            f"{where}: compare_rope: {rope!r} is not allowed; allowed: a number >= 0 "
            f"(half-width in compare_metric's unit; default {DEFAULT_ROPE})"
        )
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


def _config_path(value: object, folder: Path | None, where: str) -> Path:
    """Where an experiment's config is, never read from the working directory: an absolute path
    as it is; a relative one is the folder's own file when the folder has it, else a file of afr's
    checkout (the package's papers name the top-level ``configs/``), else an error naming both."""
    if not isinstance(value, str) or not value.strip():
        raise AfrInputError(f"{where}: config: {_short(value)} is not allowed; allowed: a config file's path")
    config = Path(value)
    if config.is_absolute():
        return config
    places = [folder] if folder is not None and folder.resolve() not in package_folders() else []
    places.append(PROJECT_DIR)
    for place in places:
        if (place / config).is_file():
            return place / config
    raise AfrInputError(
        f"{where}: config: {value!r} is no file of {' nor of '.join(_shown(p) for p in places)}; "
        f"allowed: a config file in the paper folder, or one of afr's configs/"
    )


def _parse_experiment(raw: Any, folder: Path | None, where: str) -> ExperimentSpec:
    """An ``experiments`` entry; its config is the folder's own file when one of that name is
    there, else a file of afr's checkout (the package's papers name the top-level ``configs/``),
    never a path from the working directory (``_config_path``)."""
    if not isinstance(raw, dict):
        raise AfrInputError(f"{where}: not a mapping; allowed keys: {', '.join(sorted(EXPERIMENT_KEYS))}")
    _unknown_keys(raw, EXPERIMENT_KEYS, where)
    config = _config_path(_require(raw, "config", where), folder, where)
    _require(raw, "reps", where)
    datasets = raw.get("datasets")
    datasets = _strings({"datasets": [datasets] if isinstance(datasets, str) else datasets}, "datasets", where)
    out = _under_root(raw["out"], where, "out") if raw.get("out") is not None else None
    return ExperimentSpec(
        config,
        _positive_int(raw, "reps", where),
        out,
        _strings(raw, "set", where),
        datasets,
        _text(raw, "label", where, ""),
    )


def _parse_output(raw: Any, where: str) -> OutputSpec:
    """An ``outputs`` entry: ``afr`` is one command's arguments, or a list of commands."""
    if not isinstance(raw, dict):
        raise AfrInputError(f"{where}: not a mapping; allowed keys: {', '.join(sorted(OUTPUT_KEYS))}")
    _unknown_keys(raw, OUTPUT_KEYS, where)
    command = _require(raw, "afr", where)
    commands = (
        command if isinstance(command, list) and command and all(isinstance(c, list) for c in command) else [command]
    )
    if not all(isinstance(c, list) and c and all(_scalar(a) for a in c) for c in commands):
        raise AfrInputError(f"{where}: afr: not a list of arguments (or of such lists)")
    for c in commands:  # what a command writes (--out) stays under the root too
        for flag, value in zip(c, c[1:]):
            if flag == "--out":
                _root_path(value, where, "afr: --out")
        for arg in c:
            if str(arg).startswith("--out="):
                _root_path(str(arg)[len("--out=") :], where, "afr: --out")
    stdout = _root_path(raw["stdout"], where, "stdout") if raw.get("stdout") is not None else None
    return OutputSpec(
        tuple(tuple(str(a) for a in c) for c in commands),
        stdout,
        _positive_int(raw, "reps", where) if "reps" in raw else None,
        _text(raw, "label", where, ""),
    )


def _compare_metric(raw: dict, where: str) -> str:
    metric = raw.get("compare_metric", "r2")
    if metric not in ("r2", "mae", "rmse"):
        raise AfrInputError(f"{where}: compare_metric: {metric!r} is not allowed; allowed: r2, mae, rmse")
    return metric


def parse_paper(raw: dict, where: str, folder: Path | None = None) -> Paper:
    """A paper's data file as a ``Paper`` (its files looked up in ``folder``); a one-line error
    naming the file and key otherwise."""
    if not isinstance(raw, dict):
        raise AfrInputError(f"{where}: not a mapping of paper keys; allowed: {', '.join(sorted(PAPER_KEYS))}")
    _unknown_keys(raw, PAPER_KEYS, where)
    paper = _require(raw, "id", where)
    problem = name_problem(paper)
    if problem:
        raise AfrInputError(
            f"{where}: id: {problem}; allowed: a plain file name (it names the paper's folder under the results root)"
        )
    published = _under_root(_require(raw, "published", where), where, "published")
    return Paper(
        id=paper,
        order=_integer(raw, "order", where, 99, 0),
        title=_text(raw, "title", where, paper),
        text=_text(raw, "text", where, ""),
        published=published,
        reps=_integer(raw, "reps", where, 10, 1),
        models=_strings(raw, "models", where),
        bases=_strings(raw, "bases", where),
        param_rows={str(k): str(v) for k, v in _mapping(raw, "param_rows", where).items()},
        axes=_axes(raw, where),
        tables=_tables(raw, paper, where),
        ttests=_mappings(raw, "ttests", where),
        baselines=_baselines(raw, where),
        reports=tuple(
            _parse_report(r, paper, f"{where}: reports[{i}]") for i, r in enumerate(_list(raw, "reports", where))
        ),
        claims=_claims(raw, where),
        agreement=_mappings(raw, "agreement", where),
        folder=folder,
        page=_page(raw, folder, where),
        experiments=tuple(
            _parse_experiment(e, folder, f"{where}: experiments[{i}]")
            for i, e in enumerate(_list(raw, "experiments", where))
        ),
        outputs=tuple(_parse_output(o, f"{where}: outputs[{i}]") for i, o in enumerate(_list(raw, "outputs", where))),
        studies=tuple(_parse_study(r, paper, f"{where}: studies") for r in _list(raw, "studies", where)),
        stated_reps=_integer(raw, "stated_reps", where, None, 1),
        explanations=tuple(
            _parse_explanation(e, f"{where}: explanations[{i}]")
            for i, e in enumerate(_list(raw, "explanations", where))
        ),
    )


TEST_NAME = re.compile(r"tests/[\w/]+\.py::\w+")


def _parse_explanation(raw: Any, where: str) -> Explanation:
    """One entry of ``explanations``; a cause names what it removes and the test that checks it."""
    if not isinstance(raw, dict):
        raise AfrInputError(f"{where}: not a mapping; allowed keys: {', '.join(sorted(EXPLANATION_KEYS))}")
    _unknown_keys(raw, EXPLANATION_KEYS, where)
    kind = _require(raw, "kind", where)
    if kind not in EXPLANATION_KINDS:
        raise AfrInputError(f"{where}: kind: {_short(kind)} is not allowed; allowed: {', '.join(EXPLANATION_KINDS)}")
    store = _under_root(_require(raw, "store", where), where, "store")
    cause, test = _text(raw, "cause", where, ""), _text(raw, "test", where, "")
    if kind == "cause" and not (cause and TEST_NAME.fullmatch(test)):
        raise AfrInputError(
            f"{where}: a cause needs cause: (what it removes) and test: (tests/<file>.py::<function>, the test "
            f"that checks it); got cause {_short(cause)}, test {_short(test)}"
        )
    if kind != "cause" and (cause or test):
        raise AfrInputError(f"{where}: cause and test are allowed only with kind: cause")
    choice = _text(raw, "choice", where, "")
    if kind == "spread" and not choice:
        raise AfrInputError(f"{where}: a spread needs choice: (the value it takes, e.g. 'folds 1')")
    if kind == "cause" and choice:
        raise AfrInputError(f"{where}: choice is allowed only with kind: spread or code")
    return Explanation(kind, store, _text(raw, "suffix", where, ""), cause, test, choice)


def _tables(raw: dict, paper: str, where: str) -> dict[str, TableInfo]:
    """``tables``: a mapping of table name -> its caption, aliases and other names."""
    tables = {}
    for name, info in _mapping(raw, "tables", where).items():
        at = f"{where}: tables: {name}"
        if info is None:
            info = {}
        if not isinstance(info, dict):
            raise AfrInputError(
                f"{at}: {_short(info)} is not allowed; allowed: a mapping of {', '.join(sorted(TABLE_KEYS))}"
            )
        _unknown_keys(info, TABLE_KEYS, at)
        aliases = {str(k): str(v) for k, v in _mapping(info, "aliases", at).items()}
        tables[str(name)] = TableInfo(
            paper, str(name), _text(info, "caption", at, ""), aliases, _strings(info, "also", at)
        )
    return tables


def _axes(raw: dict, where: str) -> dict[str, float]:
    """``axes``: unit axis -> {scale: number}."""
    axes = {}
    for name, info in _mapping(raw, "axes", where).items():
        scale = _mapping({"axis": info}, "axis", f"{where}: axes: {name}").get("scale", 1.0)
        if not is_number(scale) or isinstance(scale, bool):
            raise AfrInputError(f"{where}: axes: {name}: scale: {_short(scale)} is not allowed; allowed: a number")
        axes[str(name)] = float(scale)
    return axes


def _baselines(raw: dict, where: str) -> dict[str, dict]:
    """``baselines``: base id -> a mapping with ``kind``, ``table`` and ``model``."""
    out = {}
    for base, source in _mapping(raw, "baselines", where).items():
        at = f"{where}: baselines: {base}"
        source = _mapping({"b": source}, "b", at)
        for key in ("kind", "table", "model"):
            _require(source, key, at)
        _mapping(source, "expected", at)
        out[str(base)] = source
    return out


def _claims(raw: dict, where: str) -> tuple[dict, ...]:
    """``claims``: mappings, each with an ``id`` given once and a ``test``."""
    claims, seen = _mappings(raw, "claims", where), set()
    for i, claim in enumerate(claims):
        at = f"{where}: claims[{i}]"
        claim_id = _require(claim, "id", at)
        _require(claim, "test", f"{where}: claims: {claim_id}")
        if claim_id in seen:
            raise AfrInputError(f"{where}: claims: {claim_id}: id given twice; allowed: one claim per id")
        seen.add(claim_id)
    return claims


def _parse_study(raw: Any, paper: str, where: str) -> Study:
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
            raise AfrInputError(
                f"{where}: {name}: formats: {column}: {spec!r} is not a number format; "
                f"allowed: a Python format spec such as '.3f', '+.3f', '.2g'"
            ) from None
    cache, show = raw.get("cache"), raw.get("show")
    if cache is not None:
        _under_root(cache, f"{where}: {name}", "cache")
    return Study(
        paper,
        name,
        str(raw.get("function", name)),
        str(_require(raw, "block", where)),
        str(cache) if cache else None,
        str(show) if show else None,
        digits,
        {str(k): str(v) for k, v in formats.items()},
    )


def _page(raw: dict, folder: Path | None, where: str) -> Path | None:
    """The page the data file declares (``page``, a file of the folder), which must exist."""
    if "page" not in raw or folder is None:
        return None
    _under_root(raw["page"], where, "page")  # a file of the folder: a relative path without '..'
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
        raw = load_yaml_cached(data_file.read_text(encoding="utf-8"), _shown(data_file))
    except UnicodeDecodeError as err:
        raise AfrInputError(
            f"{_shown(data_file)}: not a UTF-8 text file (byte {err.start}: {err.reason}); "
            f"allowed: a paper's data file is UTF-8 YAML text"
        ) from None
    except OSError as err:
        raise AfrInputError(f"{_shown(data_file)}: cannot read the paper's data file ({err.strerror})") from None
    except yaml.YAMLError as err:
        raise AfrInputError(f"{_shown(data_file)}: not valid YAML ({str(err).splitlines()[0]})") from None
    return parse_paper(raw, _shown(data_file), folder)


def package_folders() -> list[Path]:
    """The package's paper folders: every ``afr_cli/papers/*/`` that holds a ``paper.yaml``."""
    return sorted(path.parent for path in PAPERS_DIR.glob(f"*/{DATA_FILE}"))


@dataclass(frozen=True)
class Catalogue:
    """Every known paper, read from its folders once when the catalogue is made, and the papers'
    data files read once for it (``read_once``: the published tables, the printed t-tests).

    An immutable snapshot: a folder added later makes a new catalogue (``with_folder``), so a
    catalogue never changes under a reader that holds it. A report build takes one
    (``afr_cli.publish.context.ReportContext``) and passes it down; the lower floors (tables,
    commands) ask ``catalogue()`` for the process's current one.
    """

    folders: tuple[Path, ...]  # the package's paper folders, then those added, in that order
    papers: tuple[Paper, ...]  # in ``order`` order
    files: dict = field(default_factory=dict, compare=False, repr=False)  # what read_once read, by key

    @classmethod
    def read(cls, folders: tuple[Path, ...]) -> Catalogue:
        """The papers of ``folders``, each folder read once; a one-line error for a bad folder or an id twice."""
        out = [read_paper_folder(folder) for folder in folders]
        seen: dict[str, Path | None] = {}
        for p in out:
            if p.id in seen:
                raise AfrInputError(f"{p.data_file}: id: {p.id!r} is already the id of {_shown(seen[p.id])}")
            seen[p.id] = p.folder
        return cls(tuple(folders), tuple(sorted(out, key=lambda p: (p.order, p.id))))

    def with_folder(self, folder: Path) -> Catalogue:
        """This catalogue and one more paper folder (itself when the folder is already known)."""
        if folder in self.folders:
            return self
        return Catalogue.read((*self.folders, folder))

    def read_once(self, key: Any, reader: Callable[[], Any]) -> Any:
        """``reader()`` the first time ``key`` is asked for, kept for this catalogue's life."""
        if key not in self.files:
            self.files[key] = reader()
        return self.files[key]

    def paper(self, paper_id: str) -> Paper:
        """The data of one paper by id; an unknown id is an input error listing the known ones."""
        for p in self.papers:
            if p.id == paper_id:
                return p
        raise AfrInputError(f"unknown paper {paper_id!r}; allowed: {', '.join(p.id for p in self.papers)}")

    def table_info(self, spec: str) -> TableInfo | None:
        """The table a ``paper:table`` spec names (case-insensitive; a table's other names too)."""
        paper_id, _, name = spec.strip().partition(":")
        for p in self.papers:
            if p.id.lower() != paper_id.lower():
                continue
            for info in p.tables.values():
                if name.lower() in (n.lower() for n in (info.name, *info.also)):
                    return info
        return None

    def reports(self) -> tuple[Report, ...]:
        """Every committed report, in the papers' order."""
        return tuple(r for p in self.papers for r in p.reports)

    def reference_stores(self) -> dict[str, Paper]:
        """Store directory (under the results root) -> the paper whose experiments declare it: the
        stores whose exports are committed. An experiment whose config cannot be read is left out."""
        out = {}
        for p in self.papers:
            for experiment in p.experiments:
                try:
                    out.setdefault(experiment.store(), p)
                except AfrInputError:
                    continue
        return out


class _Current:
    """The process's current catalogue: read on first use, replaced (never edited) when a paper
    folder is added. The one piece of state the catalogue keeps, because the floors below the
    report build (tables, commands) ask for the papers without being handed a catalogue."""

    catalogue: Catalogue | None = None


def catalogue() -> Catalogue:
    """The process's catalogue: the package's paper folders and those added (``add_paper_folder``)."""
    if _Current.catalogue is None:
        _Current.catalogue = Catalogue.read(tuple(package_folders()))
    return _Current.catalogue


def forget_added_folders() -> None:
    """Back to the package's paper folders only (a test that added one takes it away again)."""
    _Current.catalogue = None


def papers() -> tuple[Paper, ...]:
    """Every paper: the package's folders and those added from outside, in ``order`` order."""
    return catalogue().papers


def add_paper_folder(folder: str | Path) -> Paper:
    """Make a paper folder outside the package known to every reader (tables, reports, claims,
    ``afr reproduce``) for the rest of the process; returns it. Adding a folder twice is a no-op."""
    resolved = Path(folder).resolve()
    grown = catalogue().with_folder(resolved)  # its one-line error, before it joins the others
    _Current.catalogue = grown
    return next(p for p in grown.papers if p.folder == resolved)


def reference_stores() -> dict[str, Paper]:
    """Store directory (under the results root) -> the paper whose experiments declare it: the
    stores whose exports are committed. An experiment whose config cannot be read is left out."""
    return catalogue().reference_stores()


def paper(paper_id: str) -> Paper:
    """The data of one paper by id; an unknown id is an input error listing the known ones."""
    return catalogue().paper(paper_id)


def table_info(spec: str) -> TableInfo | None:
    """The table a ``paper:table`` spec names (case-insensitive; a table's other names too)."""
    return catalogue().table_info(spec)


def reports() -> tuple[Report, ...]:
    """Every committed report, in the papers' order."""
    return catalogue().reports()


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
    return {
        (base, src["kind"], dataset): float(value)
        for p in papers()
        for base, src in p.baselines.items()
        for dataset, value in (src.get("expected") or {}).items()
    }


def is_reference_store(directory: str | Path, root: str | Path = "results") -> bool:
    """Whether a store directory is one a paper folder's experiments declare under the results
    ``root``: a reference store, whose export is committed (``afr run`` writes it only for these)."""
    target = Path(directory).resolve()
    return any((Path(root) / name).resolve() == target for name in reference_stores())
