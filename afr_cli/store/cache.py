"""A content-addressed disk cache of what is derived from a committed export: its decoded frames
(``ExportedStore.frame``) and its holdings (``afr_cli.store.holdings``), so that an export is
decoded once and every later ``afr table``, ``afr table --compare`` or ``afr status`` reads the
derived form instead of decompressing and parsing the xz CSV again. ``afr table
--compare`` also keeps here the result of each test it ran (closed form or seeded, each is a
function of its arguments: afr_cli/tables/compare_memo.py; the hierarchical test's as a small JSON),
and those commands keep their whole answer here too (what they printed, replayed while nothing
they read has changed: afr_cli/commands/answer_memo.py), so that a repeated one loads no pandas.

Where: ``.cache/exports/`` in the project root (git-ignored; ``AFR_EXPORT_CACHE`` names another
folder, and ``AFR_EXPORT_CACHE=off`` turns the cache off). Not under ``results/``: that folder
is measured against its size budget (``afr export --sizes`` counts every file in it) and walked
for stores, and a cache is neither. The committed exports stay exactly as they are: nothing is
written beside them.

Keys: an entry's key is the SHA-256 of everything its value is a function of: the bytes of the
export files it was derived from (never their path, size or time stamp, so a changed export is a
new key and is never served stale, and a moved or copied one still hits), the source of the
modules that derive it, the Python and pandas versions, and ``CACHE_FORMAT``. Hashing every
committed export takes about 30 ms, far below decoding one.

Entries: ``<kind>/<key[:2]>/<key>``, holding a header line, the SHA-256 of the payload and the
payload; written to a temporary file in the same folder and renamed into place, so a reader sees
the whole entry or none. An entry that cannot be read, is truncated, or whose payload does not
match its digest is a miss (removed, and rebuilt by the caller), never an error; a cache that
cannot be written (read-only, full disk) is only slower. The payloads are pickles (JSON where
the caller says so, :func:`cached`): the cache folder is trusted as the project folder is
(anyone who can write it can change afr's code).
Entries read are touched, and when the folder outgrows ``LIMIT_BYTES`` the least recently used
go first.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from afr_cli.core.paths import PROJECT_ROOT

CACHE_ENV = "AFR_EXPORT_CACHE"  # another folder for the cache, or "off"
CACHE_FORMAT = "afr-export-cache/1"  # bump when an entry's layout changes
LIMIT_BYTES = 1 << 30  # the cache trims itself (least recently used first) above this
TRIM_TO = 0.8  # ... down to this share of it, so the writes after a trim do not each trim again
_MAGIC = CACHE_FORMAT.encode() + b"\n"
_DIGEST = 64  # hex characters of a SHA-256

T = TypeVar("T")


def cache_dir() -> Path | None:
    """The cache folder, or None when ``AFR_EXPORT_CACHE=off``."""
    env = os.environ.get(CACHE_ENV)
    if env is not None and env.strip().lower() in ("off", "0", "no", "false"):
        return None
    return Path(env) if env else PROJECT_ROOT / ".cache" / "exports"


def content_key(*parts: bytes | str) -> str:
    """The SHA-256 of ``parts`` (each length-prefixed, so no two sequences of parts collide) with
    the cache format and the Python version: the key of an entry derived from exactly them."""
    digest = hashlib.sha256()
    for part in (CACHE_FORMAT, sys.version, *parts):
        data = part.encode("utf-8") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def installed_distributions() -> str:
    """The installed distributions on ``sys.path`` (their metadata folders' names, which carry the
    name and version), one per line in order: part of a key whose value depends on the libraries
    (a memoized answer, a report build's record)."""
    names: set[str] = set()
    for entry in sys.path:
        try:
            names.update(n for n in os.listdir(entry or ".") if n.endswith((".dist-info", ".egg-info")))
        except OSError:  # a zip, a missing folder
            continue
    return "\n".join(sorted(names))


def source_of(*modules: str) -> bytes:
    """The source bytes of afr modules (``afr_cli.store.export``, ...): part of a key, so an
    entry made by other decoding code is not served."""
    out = []
    for name in modules:
        module = sys.modules[name]
        out.append(Path(module.__file__).read_bytes())
    return b"\0".join(out)


def _entry_path(kind: str, key: str) -> Path | None:
    root = cache_dir()
    return None if root is None else root / kind / key[:2] / key


def read_entry(kind: str, key: str) -> bytes | None:
    """The payload stored under (``kind``, ``key``), or None: absent, unreadable or damaged (a
    damaged entry is removed)."""
    path = _entry_path(kind, key)
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(_MAGIC)
    digest, payload = data[head : head + _DIGEST], data[head + _DIGEST + 1 :]
    if (
        not data.startswith(_MAGIC)
        or data[head + _DIGEST : head + _DIGEST + 1] != b"\n"
        or hashlib.sha256(payload).hexdigest().encode() != digest
    ):
        _remove(path)
        return None
    try:
        os.utime(path)  # recently used: trimmed last
    except OSError:
        pass
    return payload


def write_entry(kind: str, key: str, payload: bytes) -> bool:
    """Store ``payload`` under (``kind``, ``key``) atomically (temporary file, then rename);
    False when the cache is off or cannot be written (afr then works as without it)."""
    path = _entry_path(kind, key)
    if path is None:
        return False
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=path.parent)
        entry = _MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
        with os.fdopen(fd, "wb") as handle:
            handle.write(entry)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            _remove(Path(tmp))
        return False
    _note_written(path.parent.parent.parent, len(entry))
    return True


# Per cache folder, what this process knows it holds: its bytes at this process's last scan plus
# what the process wrote since. A write scans the folder (``trim``) only the first time and when
# that sum passes the limit, not every time: a scan lists every entry, and a run that writes
# thousands of entries into a folder of thousands paid a listing per write (quadratic). Other
# processes' writes are not counted, so the folder may pass the limit by what they wrote until one
# of them, or this process, next scans.
_known_bytes: dict[Path, int] = {}


def _note_written(root: Path, size: int) -> None:
    """Count ``size`` bytes written under ``root``; trim the folder when the count passes the limit."""
    known = _known_bytes.get(root)
    if known is None or known + size > LIMIT_BYTES:
        _known_bytes[root] = trim(root, LIMIT_BYTES, down_to=int(LIMIT_BYTES * TRIM_TO))
    else:
        _known_bytes[root] = known + size


def _pickled(value: object) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def cached(
    kind: str,
    key: str,
    build: Callable[[], T],
    dumps: Callable[[T], bytes] = _pickled,
    loads: Callable[[bytes], T] = pickle.loads,
) -> T:
    """The value stored under (``kind``, ``key``), or ``build()``, stored for the next caller.
    ``dumps``/``loads`` turn a value into a payload and back (pickle unless given: a small JSON
    for what a person may want to read, such as a hierarchical test's summary). A payload that
    ``loads`` refuses (any exception) is a miss like any damaged entry: removed and rebuilt."""
    payload = read_entry(kind, key)
    if payload is not None:
        try:
            return loads(payload)
        except Exception:  # noqa: BLE001 - any failure to decode is a damaged entry: rebuild it
            path = _entry_path(kind, key)
            if path is not None:
                _remove(path)
    value = build()
    write_entry(kind, key, dumps(value))
    return value


def trim(root: Path, limit: int = LIMIT_BYTES, down_to: int | None = None) -> int:
    """When the cache holds more than ``limit`` bytes, remove the least recently used entries until
    it holds at most ``down_to`` (default: the limit; a temporary file a killed writer left behind
    counts as an entry used when it was written); returns the bytes it then holds (0 when the
    folder cannot be listed)."""
    entries = []
    try:
        for path in root.glob("*/*/*"):
            stat = path.stat()
            entries.append((stat.st_mtime, stat.st_size, path))
    except OSError:
        return 0
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return total
    floor = limit if down_to is None else min(down_to, limit)
    for _, size, path in sorted(entries, key=lambda e: (e[0], str(e[2]))):
        _remove(path)
        total -= size
        if total <= floor:
            break
    return total


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
