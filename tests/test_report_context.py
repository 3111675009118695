"""The report context (afr_cli/publish/context.py): one ``afr report`` builds one context from the
results root and hands it down, so every store is read once however many steps need it; and
nothing in publish/ or catalogue/ keeps a module-global cache of what it read."""

from __future__ import annotations

import ast
import shutil
from collections import Counter
from pathlib import Path

import pytest

from afr_cli.catalogue import knowledge
from afr_cli.catalogue.published import published_table
from afr_cli.publish import build, context
from afr_cli.publish.context import ReportContext
from afr_cli.publish.site import SITE

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "afr_cli"
STORES = ("satrf_softmax/none", "satrf_softmax/standard")  # two small committed exports, two reports


def _root(tmp_path: Path) -> Path:
    """A scratch results root holding two small committed stores (their exports only)."""
    root = tmp_path / "results"
    for store in STORES:
        shutil.copytree(REPO / "results" / store / "export", root / store / "export")
    return root


@pytest.fixture
def counted(monkeypatch):
    """Counts the contexts built and the stores the context opens, by directory."""
    opened: Counter[Path] = Counter()
    built: list[ReportContext] = []
    real_open, real_init = context.open_existing, ReportContext.__init__

    def open_counted(directory):
        opened[Path(directory).resolve()] += 1
        return real_open(directory)

    def init_counted(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        built.append(self)

    monkeypatch.setattr(context, "open_existing", open_counted)
    monkeypatch.setattr(ReportContext, "__init__", init_counted)
    return opened, built


@pytest.mark.slow
def test_one_report_builds_one_context_and_reads_each_store_once_and_so_does_its_check(tmp_path, counted):
    opened, built = counted
    root = _root(tmp_path)
    written = build.write_all(root, html=True)  # summaries, reports, ledgers, pages and the site
    assert (root / "satrf_softmax" / "none" / "summary.md") in written and (root / SITE / "index.html").is_file()
    assert len(built) == 1
    assert opened == {(root / s).resolve(): 1 for s in STORES}  # each needed by several steps, read once
    assert built[0].reads == opened
    # the same context again (a restricted view of the same root): nothing is read a second time
    build.write_all(root, ["satrf_softmax/none"], reps=1, ctx=built[0])
    assert len(built) == 1 and opened == {(root / s).resolve(): 1 for s in STORES}
    # afr report --check: one context for every view it regenerates in its scratch copy
    built.clear()
    opened.clear()
    assert build.stale_outputs(root) == []  # the same bytes as just written
    assert len(built) == 1 and sorted(opened.values()) == [1, 1]
    again = ReportContext(root)  # a new context starts empty: no module-global state carried over
    assert again.reads == Counter() and again.store(STORES[0]) is not None and sum(again.reads.values()) == 1


def test_a_view_is_computed_once_and_each_caller_gets_its_own_copy(tmp_path):
    ctx = ReportContext(_root(tmp_path))
    first = ctx.report_frames("satrf_softmax/none", 2)
    first.loc[:, "r2"] = float("nan")  # a caller that changes its frame changes no one else's
    second = ctx.report_frames("satrf_softmax/none", 2)
    assert second["r2"].notna().all() and sorted(second.rep.unique()) == [0, 1]
    assert sum(ctx.reads.values()) == 1


def test_the_catalogue_is_a_snapshot_and_reads_each_published_file_once(monkeypatch):
    from afr_cli.catalogue import published

    known = knowledge.Catalogue.read(tuple(knowledge.package_folders()))
    reads = Counter()
    real = published._read_file

    def counting(path, keys):
        reads[path] += 1
        return real(path, keys)

    monkeypatch.setattr(published, "_read_file", counting)
    for spec in ("satrf:2", "satrf:3", "larf:3", "satrf:2", "agboost:II"):
        assert len(published_table(spec, known)) > 0
    assert len(reads) == len(known.papers) and set(reads.values()) == {1}  # each published.csv once
    assert len(published_table("satrf:2", knowledge.Catalogue.read(known.folders))) > 0  # a new catalogue reads
    assert reads[known.paper("satrf").folder / "published.csv"] == 2
    assert knowledge.catalogue() is knowledge.catalogue()  # the process's, until a folder is added


MUTATORS = {"append", "extend", "insert", "pop", "clear", "update", "setdefault", "add", "remove", "discard"}


def _module_level_caches(text: str, name: str) -> list[str]:
    """The global caches of a file's ``text``: a module-level container the module fills or empties
    (``X[k] = v``, ``X.update(...)``, ``X.clear()``, ``global X``), and a function it memoizes with
    functools (``cache``, ``lru_cache``). A constant table (a container nothing changes) is not one."""
    tree = ast.parse(text)
    containers = set()
    for node in tree.body:
        value = getattr(node, "value", None)
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if isinstance(value, (ast.Dict, ast.List, ast.Set)) or (
            isinstance(value, ast.Call) and getattr(value.func, "id", "") in ("dict", "list", "set", "Counter")
        ):
            containers |= {t.id for t in targets if isinstance(t, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            target = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            target = node.func.value
        else:
            target = None
        if isinstance(target, ast.Name) and target.id in containers:
            found.append(f"{name}: {target.id} changed at line {node.lineno}")
        if isinstance(node, ast.Global):
            found.append(f"{name}: global {', '.join(node.names)}")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += [
                f"{name}: @{ast.unparse(d)} {node.name}" for d in node.decorator_list if "cache" in ast.unparse(d)
            ]
    return found


def test_no_module_level_cache_remains_in_publish_or_catalogue():
    """A constant table (an upper-case name bound to a literal) is fine; a private mutable
    container or a functools memo of repository state is not."""
    files = [*sorted((PACKAGE / "publish").rglob("*.py")), *sorted((PACKAGE / "catalogue").glob("*.py"))]
    found = [f for path in files for f in _module_level_caches(path.read_text(encoding="utf-8"), path.name)]
    assert found == []
    # what the old code held is found: frames._LOADED, studies._MODULES, page_words._SHOWN, knowledge's
    # @cache papers() and its _EXTRA_FOLDERS list, published's @cache readers
    old = (
        "_LOADED: dict[Path, StoreFrames | None] = {}\n_EXTRA_FOLDERS: list[Path] = []\nVERDICTS = ['a']\n"
        "def load_store(key):\n    _LOADED[key] = 1\n"
        "def forget_loaded():\n    _LOADED.clear()\n"
        "def add_paper_folder(folder):\n    _EXTRA_FOLDERS.append(folder)\n    return VERDICTS[0]\n"
        "@cache\ndef papers(): ...\n@lru_cache(maxsize=None)\ndef _read_ttests(): ...\n"
    )
    assert len(_module_level_caches(old, "old")) == 5
