"""Skipping an ``afr report`` whose inputs are as the last build of the same kind left them.

A build is a function of what it reads. This module names that as one state digest and keeps,
in the export cache (afr_cli/store/cache.py; ``AFR_EXPORT_CACHE=off`` turns it off), one record
per kind of run (``Mode``: a build with its report names, ``--reps`` and ``--html``; ``--site-only``;
``--check``) and results root: the digest of the state a full run of that kind left behind and
the answer that run gives in that state (a build: nothing to write; a check: its lines). When a
later run finds the same digest, the answer is known and nothing is recomputed; anything else
(another digest, no record, a file that cannot be read, a cache that cannot be written) is the
full run as before, recorded again when it ends. ``AFR_REPORT_FULL=1`` forces the full run.

Why a skip is correct: the state digest covers everything a build reads and writes, so a skipped
output is the file already on disk, which is what the build left there in the same state, and
a build that ran again in it would write nothing (``afr report --check`` in CI holds the build to
that: a build of its own output is the same bytes). The digest is of:

- the results root, whole (stores, exports, SQLite working stores, summaries, reports, claims,
  the papers' page copies, the site): outputs are inputs, hashed as the build left them, so a
  changed or deleted output is another digest;
- the pages beside it (``README.md`` and ``docs/``), and the project's ``README.md``, ``docs/``,
  ``configs/``, ``datasets/`` (not the data cache) and the whole ``afr_cli`` package (its code,
  the papers' folders and pages): any edit to afr's code is a rebuild, which is simple and safe;
- every other file the full run opened (for reading or writing), directory it listed and SQLite
  database it connected to, as traced by an audit hook while it ran (``sys.addaudithook``), outside
  the Python installation, the export cache, ``/proc``, ``/sys``, ``/dev`` and ``--check``'s scratch
  copy: so a file a future block starts to read is in the next record without anyone listing it;
- the installed distributions (their names and versions), the Python version, and the ``AFR_*``,
  matplotlib, locale and time-zone environment variables.

A run is recorded only when nothing else changed the digested files while it ran (each file
that changed between its start and its end is one it wrote or removed itself); otherwise the next
run is a full one again. Hashing is xxh3-128 over the bytes (the results root and afr's package
are about 40 MB: a fraction of a second).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypeVar

import xxhash

from afr_cli.core.paths import PACKAGE_DIR, PROJECT_ROOT, data_cache_dir
from afr_cli.store.cache import CACHE_ENV, cache_dir, content_key, installed_distributions, read_entry, write_entry

KIND = "report-builds"  # the export cache's folder for these records
FORMAT = "report-build/1"  # bump when the digest's parts or a record's layout change
FULL_ENV = "AFR_REPORT_FULL"  # set (1, yes, on, true): every run is a full one (and recorded)
NOTHING_CHANGED = "nothing changed: every file afr report writes from {root} is current (none written)"
CHECK_SCRATCH = "afr-check-"  # prefix of ``afr report --check``'s scratch folder (publish/build.py)
ENVIRONMENT = ("AFR_", "MPL", "MATPLOTLIB", "LC_", "LANG", "TZ", "SOURCE_DATE_EPOCH", "PYTHONHASHSEED")
_SKIPPED_NAMES = frozenset({"__pycache__", ".git", ".pytest_cache", ".ruff_cache"})
_CHUNK = 1 << 20
_MISSING, _FOLDER = "-", "/"

T = TypeVar("T")


@dataclass(frozen=True)
class Mode:
    """One kind of ``afr report`` run: ``build`` (with its report names, ``--reps``, ``--html``),
    ``site`` (``--site-only``) or ``check`` (``--check``). A record answers for one mode only."""

    kind: str
    names: tuple[str, ...] = ()
    reps: int | None = None
    html: bool = False


class Unhashable(Exception):
    """A file of the state could not be read: the run is a full one and is not recorded."""


@dataclass
class Trace:
    """What a run touched, as the audit hook saw it: absolute paths read, written and listed."""

    reads: set[str] = field(default_factory=set)
    writes: set[str] = field(default_factory=set)
    listed: set[str] = field(default_factory=set)


class _Tracing:
    """The audit hook's one piece of process state: the trace it fills now (None: the hook does
    nothing) and whether it is installed. An audit hook is the process's (``sys.addaudithook``
    has no remove), so it is installed once and handed each traced run's ``Trace`` in turn; this
    holds no repository state and nothing read from disk."""

    active: Trace | None = None
    hooked: bool = False


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _audit(event: str, args: tuple) -> None:
    """The audit hook: inert unless a run is being traced (an installed hook cannot be removed)."""
    trace = _Tracing.active
    if trace is None:
        return
    try:
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int) or path is None:
                return
            writing = any(c in mode for c in "wax+") if isinstance(mode, str) else bool((flags or 0) & _WRITE_FLAGS)
            (trace.writes if writing else trace.reads).add(os.path.abspath(os.fsdecode(path)))
        elif event in ("os.listdir", "os.scandir"):
            # the import system lists the folders of sys.path to find modules and distributions:
            # not the build's input (the package's files and the distributions are digested)
            caller = sys._getframe(1).f_code.co_filename
            if caller.startswith("<frozen importlib") or f"importlib{os.sep}metadata" in caller:
                return
            if isinstance(args[0], (str, bytes, os.PathLike)):
                trace.listed.add(os.path.abspath(os.fsdecode(args[0])))
        elif event == "sqlite3.connect":
            if isinstance(args[0], (str, bytes, os.PathLike)):
                trace.reads.add(os.path.abspath(os.fsdecode(args[0])))
        elif event in ("os.remove", "os.rmdir", "os.mkdir", "shutil.rmtree", "os.rename", "os.truncate"):
            for path in args[:2] if event == "os.rename" else args[:1]:
                if isinstance(path, (str, bytes, os.PathLike)):
                    trace.writes.add(os.path.abspath(os.fsdecode(path)))
    except Exception:  # noqa: BLE001 - a hook must never break the run it watches
        trace.writes.add("<untraceable>")


def _traced(run: Callable[[], T]) -> tuple[T, Trace]:
    """``run()`` with every file it opens, writes, removes or lists recorded."""
    if not _Tracing.hooked:
        sys.addaudithook(_audit)
        _Tracing.hooked = True
    trace, outer = Trace(), _Tracing.active
    _Tracing.active = trace
    try:
        result = run()
    finally:
        _Tracing.active = outer
    return result, trace


# -- the state --------------------------------------------------------------------------------------
def declared(root: Path) -> list[Path]:
    """The folders and files every record digests, whatever the run traced (module docstring)."""
    root = Path(root).resolve()
    beside = [root.parent / "README.md", root.parent / "docs"]
    project = [PROJECT_ROOT / name for name in ("README.md", "docs", "configs", "datasets")]
    return list(dict.fromkeys([root, *beside, PACKAGE_DIR.resolve(), *(p.resolve() for p in project)]))


def _excluded() -> list[Path]:
    """Folders inside the declared ones that are derived, never read as an input: the caches."""
    folders = [data_cache_dir()]
    cache = cache_dir()
    if cache is not None:
        folders.append(cache)
    return [f.resolve() for f in folders]


def _within(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == f or path.is_relative_to(f) for f in folders)


def file_hash(path: Path) -> str:
    """xxh3-128 of a file's bytes, read in chunks (a working SQLite store can be large)."""
    digest = xxhash.xxh3_128()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def snapshot(root: Path) -> dict[str, str]:
    """Every declared file's hash and every declared folder (``/``), by absolute path; a declared
    path that does not exist is ``-``. ``Unhashable`` when a file cannot be read."""
    excluded, state = _excluded(), {}
    try:
        for top in declared(root):
            if top.is_file():
                state[str(top)] = file_hash(top)
            elif not top.is_dir():
                state[str(top)] = _MISSING
            for folder, subfolders, files in os.walk(top) if top.is_dir() else ():
                here = Path(folder)
                subfolders[:] = sorted(
                    d for d in subfolders if d not in _SKIPPED_NAMES and not _within(here / d, excluded)
                )
                state[folder] = _FOLDER
                for name in sorted(files):
                    if not name.endswith(".pyc"):
                        state[str(here / name)] = file_hash(here / name)
    except OSError as err:
        raise Unhashable(str(err)) from None
    return state


def _covered(path: Path, tops: list[Path], excluded: list[Path]) -> bool:
    """Whether the snapshot already answers for ``path`` (inside a declared folder, not skipped)."""
    return (
        _within(path, tops)
        and not _within(path, excluded)
        and not (_SKIPPED_NAMES & set(path.parts))
        and path.suffix != ".pyc"
    )


def _ignored(path: Path) -> bool:
    """Whether a traced path is no input of a build: the Python installation and its packages
    (their versions are digested instead), the export cache, the kernel's files, a check's scratch."""
    prefixes = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    prefixes |= {Path("/proc"), Path("/sys"), Path("/dev")}
    cache = cache_dir()
    if cache is not None:
        prefixes.add(cache.resolve())
    if _within(path, prefixes) or {"site-packages", "dist-packages", "__pycache__"} & set(path.parts):
        return True  # (compiled modules are their source's, which the snapshot holds)
    scratch = Path(tempfile.gettempdir()).resolve()
    inside = path.relative_to(scratch).parts if path.is_relative_to(scratch) else ()
    return bool(inside) and inside[0].startswith(CHECK_SCRATCH)


def _extra_part(files: Iterable[str], folders: Iterable[str]) -> list[str]:
    """The traced files' hashes (``-`` when absent) and the traced folders' listings, in order."""
    parts = []
    try:
        for name in sorted(files):
            path = Path(name)
            parts += [name, file_hash(path) if path.is_file() else (_FOLDER if path.is_dir() else _MISSING)]
        for name in sorted(folders):
            path = Path(name)
            parts += [name + "/", "\n".join(sorted(os.listdir(path))) if path.is_dir() else _MISSING]
    except OSError as err:
        raise Unhashable(str(err)) from None
    return parts


def digest(state: dict[str, str], files: Iterable[str] = (), folders: Iterable[str] = ()) -> str:
    """The state digest: the snapshot, the traced extras, the libraries and the environment."""
    environment = sorted(
        (k, v) for k, v in os.environ.items() if k.startswith(ENVIRONMENT) and k not in (CACHE_ENV, FULL_ENV)
    )
    flat = [part for item in sorted(state.items()) for part in item]
    return content_key(FORMAT, installed_distributions(), json.dumps(environment), *flat, *_extra_part(files, folders))


# -- the records ------------------------------------------------------------------------------------
def slot(root: Path, mode: Mode) -> str:
    """The key of the record for ``mode`` over ``root`` (as given and resolved, from this folder)."""
    return content_key(FORMAT, json.dumps(asdict(mode)), str(root), str(Path(root).resolve()), os.getcwd())


def forced() -> bool:
    """Whether ``AFR_REPORT_FULL`` asks for the full run."""
    return os.environ.get(FULL_ENV, "").strip().lower() in ("1", "yes", "on", "true")


def remembered(root: Path, mode: Mode) -> list[str] | None:
    """The answer recorded for ``mode`` over ``root`` when the state's digest is the record's
    (a build's answer is ``[]``: nothing to write), else None: the run must be a full one."""
    if forced() or cache_dir() is None:
        return None
    payload = read_entry(KIND, slot(root, mode))
    if payload is None:
        return None
    try:
        record = json.loads(payload.decode("utf-8"))
        files, folders, answer = record["files"], record["folders"], record["answer"]
        if not all(isinstance(x, str) for x in (*files, *folders, *answer, record["digest"])):
            return None
        now = digest(snapshot(root), files, folders)
    except (ValueError, KeyError, TypeError, Unhashable):
        return None
    return list(answer) if now == record["digest"] else None


def remember(
    root: Path,
    mode: Mode,
    run: Callable[[], T],
    answer: Callable[[T], list[str]],
    wrote: Callable[[T], Iterable[Path]] = lambda _: (),
    also: Iterable[Mode] = (),
) -> T:
    """``run()``, the full run of ``mode``, traced; when it returns, the state it left is digested
    and recorded with ``answer(result)`` for ``mode`` (and for each mode of ``also`` whose answer
    in that state is the same: a full build with ``--html`` answers for the build without it and
    for ``--site-only``). ``wrote(result)`` names the files the run says it wrote or removed. Not
    recorded when the cache is off, a file cannot be read, or a file changed while the run ran that
    the run did not write itself."""
    if cache_dir() is None:
        return run()
    try:
        before = snapshot(root)
    except Unhashable:
        return run()
    result, trace = _traced(run)
    try:
        after = snapshot(root)
    except Unhashable:
        return result
    touched = trace.writes | {os.path.abspath(p) for p in wrote(result)}
    if "<untraceable>" in touched:
        return result
    resolved = {str(Path(p).resolve()) for p in touched} | touched
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    if changed - resolved:
        return result  # someone else changed an input while the run ran: the next run is full
    tops, excluded = [Path(p).resolve() for p in declared(root)], _excluded()

    def outside(paths: Iterable[str]) -> list[str]:
        kept = {str(Path(p).resolve()) for p in paths}
        return sorted(p for p in kept if not _covered(Path(p), tops, excluded) and not _ignored(Path(p)))

    files, folders = outside(trace.reads | trace.writes), outside(trace.listed)
    try:
        state = digest(after, files, folders)
    except Unhashable:
        return result
    record = json.dumps(
        {"digest": state, "files": files, "folders": folders, "answer": list(answer(result))}, sort_keys=True
    ).encode("utf-8")
    for each in (mode, *also):
        write_entry(KIND, slot(root, each), record)
    return result
