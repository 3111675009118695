"""The experiment config's schema, declared once: every section's keys with type, domain, default and doc.

One table (``SECTIONS``: the top level, ``protocol``, ``preprocess``, an entry of ``bases`` and an
entry of ``models``) drives everything that knows the config's keys: validation
(``afr_cli.config.experiment``), the keys ``--set`` accepts (:func:`section_at`), ``afr models``'s key
listing and the generated reference page docs/config.md (:func:`reference_markdown`).

A :class:`Key` of a plain type (an integer, a number, a choice, a name, an axis of numbers) is
checked here by :meth:`Key.check`, with the one-line message every config error has. A key
whose structure the table cannot state (the dataset list, a model's family, params and grid,
best_of, select_as, a base's kind parameters) has type ``CUSTOM``: its small validator lives in
``afr_cli.config.experiment`` and is handed to :func:`check_section` by key name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from afr_cli.core.bounds import INTEGER as INT
from afr_cli.core.bounds import REAL, Bound, Interval, Options, is_number
from afr_cli.core.path_rules import MAX_NAME_BYTES, name_problem
from afr_cli.data.files import MISSING
from afr_cli.errors import AfrInputError
from afr_cli.solvers.solve import DEFAULT_SOLVER, LOSSES, SOLVERS

# Key types
INTEGER = "integer"
NUMBER = "number"
CHOICE = "choice"
NAME = "name"  # a plain file name: the experiment's name, its store's folder under results/
ID = "id"  # a non-empty string: a label in stores and tables
TEXT = "text"  # free text or a path; null means "not given"
AXIS = "axis"  # a protocol axis: a non-empty list of distinct numbers (one number = a list of one)
SECTION = "section"  # a mapping whose keys are another Section (null = empty)
ENTRIES = "entries"  # a non-empty list of mappings, each with the keys of another Section
CUSTOM = "custom"  # structure checked by its own validator in afr_cli.config.experiment
# The largest seed: scikit-learn's random_state (the synthetic draws) takes 32 bits, and the derived
# seeds reduce a seed modulo 2**32, so a larger one would only repeat a smaller one's draws.
MAX_SEED = 2**32 - 1
SEEDS = Interval(INT, 0, MAX_SEED)


class _Required:
    """The default of a key that must be given."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()

SELECTIONS = ("inner-cv", "best-test")
SELECT_BY = ("r2", "mae", "rmse")
SEEDINGS = ("derived", "rep-index")
NOISE_ON = ("test", "train", "both")
SCALES = ("standard", "minmax", "none")
SYNTHETIC_NOISES = ("documented", "none")

Validator = Callable[[Any, str, dict], Any]


@dataclass(frozen=True)
class Key:
    """One config key: its type, doc, default and, for a plain value, the values it allows.

    An INTEGER, NUMBER or CHOICE key holds a ``bound`` (``afr_cli.core.bounds``: an Interval of
    integers or numbers, or Options), the same declaration family parameters hold; an AXIS key
    holds the bound of each of its numbers. ``shape`` says in words what a SECTION, ENTRIES or
    CUSTOM key holds; ``default_doc`` how the default reads where it is not a plain value.
    """

    name: str
    type: str
    doc: str
    default: Any = REQUIRED
    bound: Bound | None = None
    section: Section | None = None
    shape: str = ""
    default_doc: str = ""

    def __post_init__(self) -> None:
        wanted = {INTEGER: Interval, NUMBER: Interval, AXIS: Interval, CHOICE: Options}.get(self.type)
        if wanted is not None and not isinstance(self.bound, wanted):
            raise TypeError(f"key {self.name} of type {self.type} needs a bound of type {wanted.__name__}")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def choices(self) -> tuple:
        """The values a CHOICE key allows (empty for another key)."""
        return self.bound.values if isinstance(self.bound, Options) else ()

    def allowed(self) -> str:
        """The domain as a user reads it: 'an integer >= 1', 'r2, mae, rmse', ..."""
        if self.type in (INTEGER, NUMBER, CHOICE):
            return self.bound.allowed()
        if self.type == AXIS:
            return f"a list of distinct numbers {self.bound.range_text()}".strip()
        if self.type == NAME:
            return (
                f"a plain file name (no '/', '\\', '.' or '..', no control characters, at most {MAX_NAME_BYTES} bytes)"
            )
        if self.type == ID:
            return "a non-empty string"
        if self.type == TEXT:
            return "text"
        return self.shape

    def show_default(self) -> str:
        """The default as the reference page shows it."""
        if self.default_doc:
            return self.default_doc
        if self.required:
            return "required"
        if self.type in (SECTION, ENTRIES):
            return "(see below)" if self.type == SECTION else "required"
        if isinstance(self.default, tuple):
            return "[" + ", ".join(f"{v:g}" for v in self.default) + "]"
        if self.default is None:
            return "null"
        return f"{self.default:g}" if is_number(self.default) else str(self.default)

    def check(self, value: Any, where: str) -> Any:
        """The value of a plain-typed key, or one AfrInputError naming ``where`` and the domain."""
        if self.type in (INTEGER, NUMBER, CHOICE):
            return self.bound.check(value, where)
        if self.type == NAME:  # the store's folder under results/: it must stay there (afr_cli.core.path_rules)
            problem = name_problem(value)
            if problem is not None:
                raise AfrInputError(f"{where}: {problem}; allowed: {self.allowed()}")
            return value
        if self.type == ID:
            if not isinstance(value, str) or not value.strip():
                raise AfrInputError(f"{where}: must be {self.allowed()}")
            return value
        if self.type == TEXT:
            if value is not None and not isinstance(value, str):
                raise AfrInputError(f"{where}: {value!r} is not allowed; must be text")
            return value
        if self.type == AXIS:
            return self._axis(value, where)
        raise TypeError(f"key {self.name} of type {self.type} is checked by its own validator")

    def _axis(self, value: Any, where: str) -> tuple[float, ...]:
        """A list of distinct numbers (one number reads as a list of one), each within the bound."""
        values = value if isinstance(value, list) else [value]
        if not values:
            raise AfrInputError(f"{where}: must be a non-empty list of numbers {self.bound.range_text()}")
        checked = tuple(self.bound.check(v, f"{where}[{j}]") for j, v in enumerate(values))
        if len(set(values)) != len(values):
            raise AfrInputError(f"{where}: a value is listed twice")
        return checked


@dataclass(frozen=True)
class Section:
    """A mapping of the config: its place (``title``), what it is, and its keys in checking order.
    ``extra`` names the keys beyond the table (a base's kind parameters), which its validator checks."""

    title: str
    doc: str
    keys: tuple[Key, ...]
    extra: str = ""

    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.keys)

    def __getitem__(self, name: str) -> Key:
        for key in self.keys:
            if key.name == name:
                return key
        raise KeyError(f"{self.title} has no key {name!r}")


PROTOCOL = Section(
    "protocol",
    "The papers' protocol: repeated random splits, an inner cross-validation over "
    "each model's grid, and optional axes (training fractions, noise levels).",
    (
        Key("reps", INTEGER, "repetitions of the random split (the papers: 100)", 100, bound=Interval(INT, 1)),
        Key(
            "test_fraction",
            NUMBER,
            "share of rows in each repetition's test set",
            0.2,
            bound=Interval(REAL, 0, 1, closed="neither"),
        ),
        Key(
            "inner_folds",
            INTEGER,
            "folds of the inner cross-validation that picks each model's grid point",
            3,
            bound=Interval(INT, 2),
        ),
        Key(
            "selection",
            CHOICE,
            "how a grid point is chosen: by inner CV, or the best on the test set (an "
            "oracle, for the papers that report one)",
            "inner-cv",
            bound=Options(SELECTIONS),
        ),
        Key(
            "select_by",
            CHOICE,
            "the metric the selection maximises (r2) or minimises (mae, rmse)",
            "r2",
            bound=Options(SELECT_BY),
        ),
        Key(
            "seeding",
            CHOICE,
            "derived: every seed derived from (seed, dataset, rep[, stage, base]); rep-index: "
            "the papers' own seeding, by the repetition's index",
            "derived",
            bound=Options(SEEDINGS),
        ),
        Key(
            "train_fractions",
            AXIS,
            "axis: training fractions, each a unit of its own (the rest is the test set; not with test_fraction)",
            (),
            bound=Interval(REAL, 0, 1, closed="neither"),
            default_doc="[] (one split at 1 - test_fraction)",
        ),
        Key(
            "noise_eta",
            AXIS,
            "axis: Gaussian noise levels eta, each a unit of its own (noise sd = eta times the training part's std)",
            (0.0,),
            bound=Interval(REAL, 0),
        ),
        Key(
            "noise_on",
            CHOICE,
            "where the noise is added: test features, training targets, or both",
            "test",
            bound=Options(NOISE_ON),
        ),
        Key(
            "fold_assignment",
            INTEGER,
            "which assignment of a repetition's training rows to the inner folds: 0, the seeding's "
            "own; k >= 1, another one drawn from a seed derived from (seed, dataset, rep, k). No "
            "paper states its assignment: other values measure how far it moves a cell",
            0,
            bound=Interval(INT, 0),
        ),
    ),
)

DATASET = Section(
    "datasets[]",
    "A dataset of your own, in place of a registered name: a file "
    "(`{name, file, target}`) or a loader (`{name, loader}`). `afr datasets info FILE --target COL` "
    "shows what afr reads from a file and prints the entry that fixes every problem it has; "
    "docs/datasets.md explains each key.",
    (
        Key(
            "name",
            ID,
            "its label in stores and tables; it seeds the splits as a registered name does (not a "
            "registered dataset's name, no '/')",
        ),
        Key(
            "file",
            CUSTOM,
            "a CSV, TSV or Parquet file, relative to the config file; its sha256 is kept in the store's manifest",
            shape="a path",
            default_doc="required (unless loader)",
        ),
        Key(
            "target", CUSTOM, "the column to predict (numbers)", shape="a column name", default_doc="required with file"
        ),
        Key(
            "sep",
            CUSTOM,
            "the delimiter of a text file",
            None,
            shape="one character, e.g. ',' ';' or '\\t'",
            default_doc="detected among , ; TAB |",
        ),
        Key(
            "features",
            CUSTOM,
            "the columns used as features (not with drop)",
            None,
            shape="a list of column names",
            default_doc="every column but the target and drop",
        ),
        Key(
            "drop", CUSTOM, "columns not used (text columns, ids)", (), shape="a list of column names", default_doc="[]"
        ),
        Key(
            "encode",
            CUSTOM,
            "text (categorical) feature columns as numbers: onehot (one 0/1 column per category) or "
            "ordinal (one column of codes 0, 1, ...) for every text column, or a mapping column: onehot | "
            "ordinal | [categories in order]; categories from every row of the file, sorted; a missing cell "
            "is all zeros (onehot) or a missing value (ordinal); recorded in the store's manifest",
            None,
            shape="onehot, ordinal or a mapping",
            default_doc="null (a text column is an error)",
        ),
        Key(
            "missing",
            CHOICE,
            "a row with a missing value (NaN, an empty cell) in a used column: error stops "
            "naming it; drop-rows leaves it out, counted by `afr datasets info` and in the store's manifest "
            "(rows_dropped)",
            "error",
            bound=Options(MISSING),
        ),
        Key(
            "loader",
            CUSTOM,
            "module:function returning (X, y), instead of file; a module.py beside the config "
            "is found without plugins:",
            None,
            shape="module:function",
            default_doc="null",
        ),
    ),
)

PREPROCESS = Section(
    "preprocess",
    "Feature scaling, fitted on each stage's training rows (targets are never scaled).",
    (Key("scale", CHOICE, "the feature scaler", "standard", bound=Options(SCALES)),),
)

BASE = Section(
    "bases[]",
    "One base ensemble the models attend over.",
    (
        Key(
            "kind",
            CUSTOM,
            "a registered ensemble (rf, ert, dt, gbm-dt, gbm-ert; see `afr models`) or module:Class of your own",
            shape="an ensemble name or module:Class",
        ),
        Key(
            "id",
            ID,
            "its label in stores and tables",
            None,
            default_doc="the kind in capitals, with @T for a non-default tree count (RF, RF@400)",
        ),
    ),
    extra="the parameters of its kind (`afr models` lists them, with their domains and defaults)",
)

MODEL = Section(
    "models[]",
    "One model: a family with fixed hyperparameters and grids, or the best of models above it.",
    (
        Key("id", ID, "its label in stores and tables"),
        Key(
            "family",
            CUSTOM,
            "a registered family (see `afr models`) or module:Class of your own",
            shape="a family name or module:Class",
            default_doc="required (unless best_of)",
        ),
        Key(
            "params",
            CUSTOM,
            "fixed hyperparameters of the family",
            {},
            shape="a mapping: hyperparameter -> value",
            default_doc="each hyperparameter's default",
        ),
        Key(
            "grid",
            CUSTOM,
            "hyperparameters searched by the selection (design ones vary slowest)",
            {},
            shape="a mapping: hyperparameter -> non-empty list of distinct values",
            default_doc="{}",
        ),
        Key("loss", CHOICE, "the training loss of the attention problem", "l2", bound=Options(LOSSES)),
        Key(
            "solver",
            CHOICE,
            "the solver of this model's problems (l1 cannot use OSQP)",
            None,
            bound=Options(SOLVERS, upper=True),
            default_doc="the experiment's solver",
        ),
        Key(
            "best_of",
            CUSTOM,
            "ids of two or more models above; per repetition, the component with the best "
            "inner-CV score (with id only)",
            (),
            shape="a list of model ids",
            default_doc="[]",
        ),
        Key(
            "select_as",
            CUSTOM,
            "the id of another model over the same grid, whose selected grid point this model is evaluated at",
            None,
            shape="a model id",
        ),
    ),
)

TOP = Section(
    "top level",
    "An experiment: one YAML file. Unknown keys are errors, in the file and in `--set` alike.",
    (
        Key("name", NAME, "the experiment; its store is results/<name>/"),
        Key("description", TEXT, "free text, kept in the store's manifest", None),
        Key(
            "variant_of",
            TEXT,
            "the experiment this one re-runs with one choice changed (a model's reading, a protocol "
            "choice such as protocol.fold_assignment): `afr table --compare` without --results leaves "
            "its store out where another store holds the same models; kept in the manifest, no unit changes",
            None,
        ),
        Key(
            "plugins",
            CUSTOM,
            "Python files (relative to the config) or modules to import first; the families "
            "and ensembles they define are then known by name to every command",
            (),
            shape="a list of files or modules",
        ),
        Key(
            "seed",
            INTEGER,
            "splits, folds and forests derive their seeds from (seed, dataset, rep, fold, base)",
            0,
            bound=SEEDS,
        ),
        Key("data_seed", INTEGER, "the draw of the synthetic datasets (once per experiment)", 0, bound=SEEDS),
        Key(
            "synthetic_noise",
            CHOICE,
            "documented: the synthetic sets with the registry's noise levels; none: "
            "the generators' defaults (no noise but Sparse's own), as the papers' baselines",
            "documented",
            bound=Options(SYNTHETIC_NOISES),
        ),
        Key("protocol", SECTION, "the protocol", {}, section=PROTOCOL, shape="a mapping (see protocol)"),
        Key(
            "datasets",
            CUSTOM,
            "the datasets: registered names (see `afr datasets list`; names match ignoring "
            "case, spaces, '_' and '-'), {name, file, target} mappings (CSV, TSV or Parquet; optional sep, features "
            "or drop, and missing) or {name, loader: module:function} mappings (see datasets[])",
            shape="a non-empty list of dataset names or mappings",
        ),
        Key("preprocess", SECTION, "feature preprocessing", {}, section=PREPROCESS, shape="a mapping (see preprocess)"),
        Key("solver", CHOICE, "the default solver of every model", DEFAULT_SOLVER, bound=Options(SOLVERS, upper=True)),
        Key("bases", ENTRIES, "the base ensembles", section=BASE, shape="a non-empty list of mappings (see bases[])"),
        Key("models", ENTRIES, "the models", section=MODEL, shape="a non-empty list of mappings (see models[])"),
        Key(
            "results",
            TEXT,
            "the store's directory, from where afr starts; when no store is there, one at that path "
            "beside the config or in a folder above it is resumed (see docs/datasets.md)",
            None,
            default_doc="results/<name>",
        ),
    ),
)

SECTIONS = (TOP, PROTOCOL, DATASET, PREPROCESS, BASE, MODEL)


def section_at(path: list[str]) -> Section | None:
    """The section a dotted config path leads to (``[]`` the top level, ``["protocol"]``,
    ``["models", "1"]`` a model entry), or None where the table declares no keys (under a grid)."""
    section: Section | None = TOP
    parts = list(path)
    while parts and section is not None:
        part = parts.pop(0)
        key = next((k for k in section.keys if k.name == part), None)
        if key is None or key.section is None:
            return None
        if key.type == ENTRIES:
            if not parts or not parts[0].isdigit():
                return None
            parts.pop(0)
        section = key.section
    return section


def check_known(section: Section, node: Any, src: str, where: str, extra: tuple[str, ...] = ()) -> None:
    """``node`` is a mapping holding only the section's keys (and ``extra`` ones)."""
    allowed = sorted(section.names() + tuple(extra))
    if not isinstance(node, dict):
        raise AfrInputError(f"{src}: {where or 'top level'}: must be a mapping with keys {', '.join(allowed)}")
    for name in node:
        if name not in allowed:
            at = f"{where}.{name}" if where else str(name)
            raise AfrInputError(f"{src}: {at}: unknown key; allowed: {', '.join(allowed)}")


def check_section(
    section: Section, node: Any, src: str, where: str = "", validators: Mapping[str, Validator] | None = None
) -> dict[str, Any]:
    """Every key of a section checked in table order, defaults filled in: {name: value}.

    A key named in ``validators`` is checked by that function, called as
    ``validator(value, src, done)`` with ``done`` the values checked before it; a required key
    that is absent (or null) is a "missing" error first. A SECTION key without a validator is
    checked as its own section. The first problem raises AfrInputError.
    """
    validators = validators or {}
    check_known(section, node, src, where)
    done: dict[str, Any] = {}
    for key in section.keys:
        at = f"{where}.{key.name}" if where else key.name
        value = node.get(key.name)
        if value is None and key.required:
            raise AfrInputError(f"{src}: {at}: missing (required)")
        if key.type == SECTION and value is None:
            value = {}
        if key.name in validators:
            done[key.name] = validators[key.name](value, src, done)
        elif key.type == SECTION:
            done[key.name] = check_section(key.section, value, src, at)
        elif key.type in (CUSTOM, ENTRIES):
            raise TypeError(f"{section.title}.{key.name} needs a validator")
        elif key.name not in node or (value is None and key.type == TEXT):
            done[key.name] = key.default
        else:
            done[key.name] = key.check(value, f"{src}: {at}")
    return done


def key_rows() -> list[tuple[str, str, str, str]]:
    """(key, allowed, default, what it is) for every key of every section, as ``afr models`` lists them."""
    rows = []
    for section in SECTIONS:
        prefix = "" if section is TOP else f"{section.title}."
        for key in section.keys:
            rows.append((prefix + key.name, key.allowed(), key.show_default(), key.doc))
        if section.extra:
            rows.append((prefix + "<parameter>", section.extra, "", ""))
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def reference_markdown(appendix: str = "") -> str:
    """The config reference page (docs/config.md): one table per section, from ``SECTIONS``;
    ``appendix`` (markdown) follows them (the registered families' and ensembles' parameters)."""
    lines = [
        "# Config reference",
        "",
        "<!-- generated from afr_cli/config/schema.py by `afr docs config`; do not edit by hand -->",
        "",
        "An experiment is one YAML file; `afr validate FILE` checks it, `afr run FILE` runs it, and "
        "`--set KEY=VALUE` (a YAML value, e.g. `--set protocol.reps=10` or "
        "`--set models.1.grid.eps=[0.25]`) overrides one key. Every bad value is one line naming the "
        "file, the key and what is allowed, with exit code 2.",
        "",
    ]
    for section in SECTIONS:
        lines += [
            f"## {section.title}",
            "",
            section.doc,
            "",
            "| key | allowed | default | what it is |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| `{k.name}` | {_cell(k.allowed())} | {_cell(k.show_default())} | {_cell(k.doc)} |" for k in section.keys
        ]
        if section.extra:
            lines += ["", f"Besides these keys: {section.extra}."]
        lines.append("")
    if appendix:
        lines += [appendix.rstrip(), ""]
    return "\n".join(lines)
