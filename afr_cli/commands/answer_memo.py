"""A command's whole answer (what it wrote to stdout and stderr), memoized in the export cache.

``afr table``, ``afr table --compare`` and ``afr status`` on the committed stores are run dozens
of times an hour, and each is a function of what it reads: the exports of the stores it shows
(or, for ``--compare`` without ``--results`` and for ``afr status`` without stores, of every
store it looks through), afr's own package (its code and the papers' data files it holds), the
installed libraries, and the command's options. Computing the answer imports pandas, numpy and
scipy and decodes the exports; replaying it imports none of them, which keeps each of these
commands within twice the CPU of ``python -c "import pandas"`` (``afr bench interactive``). So the first run writes its
output as always and records it; a later run with the same inputs replays the record, byte for
byte, in the order it was written across the two streams.

The key (afr_cli/store/cache.py's ``content_key``, so the cache format and the Python version are
in it too) is the SHA-256 of: the command and its options after parsing; the working directory;
the ``AFR_*`` environment variables other than the cache's own; every file of the ``afr_cli``
package (name and bytes, ``__pycache__`` left out); the names of the installed distributions
(``*.dist-info``: name and version) on ``sys.path``; and each store read, by the path shown and
the fingerprint of its export (every file's bytes: ``afr_cli.store.discover.export_fingerprint``).
Anything changed is another key, so a changed export is read again, never served stale. Hashing
all of it takes tens of milliseconds, against the hundreds an answer costs to compute.

What is never memoized: a command that reads a working SQLite store (a running ``afr run`` may be
writing it: its answer is computed live, as the store's own readers do), a command that failed
(its error is computed again, and nothing it wrote is kept), and whatever its caller does not
declare a function of the inputs (``afr status`` while a run's progress, which depends on the
clock, is shown). ``AFR_EXPORT_CACHE=off`` turns the memo off with the rest of the cache.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from afr_cli.store.cache import CACHE_ENV, cache_dir, content_key, installed_distributions, read_entry, write_entry
from afr_cli.store.discover import export_fingerprint

ANSWER_KIND = "answers"  # the cache folder's kind for recorded answers
ANSWER_FORMAT = "answer-memo/1"  # bump when the key's parts or an entry's layout change
PACKAGE = Path(__file__).resolve().parents[1]  # afr_cli/: its code and its data files
STREAMS = ("out", "err")


class _Recorder(io.TextIOBase):
    """A text stream that writes through to ``stream`` and records what it wrote: the command's
    output still appears as it is written, and the record is its exact text."""

    def __init__(self, stream, name: str, chunks: list[list[str]]) -> None:
        super().__init__()
        self._stream, self._name, self._chunks = stream, name, chunks

    @property
    def encoding(self):  # what click checks before writing text to a stream
        return getattr(self._stream, "encoding", None)

    @property
    def errors(self):
        return getattr(self._stream, "errors", None)

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # click probes a stream with bytes to learn it is a text one
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._stream.write(text)
        self._chunks.append([self._name, text])
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()


def package_files() -> list[bytes | str]:
    """Every file of the afr_cli package, as (relative name, bytes) parts, in name order."""
    parts: list[bytes | str] = []
    for folder, subfolders, files in os.walk(PACKAGE):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            path = Path(folder) / name
            parts += [path.relative_to(PACKAGE).as_posix(), path.read_bytes()]
    return parts


def store_parts(directories: Iterable[str | Path]) -> list[str] | None:
    """Each store's path as shown and its export's fingerprint, or None when one of them is not a
    fixed export (a working store, or nothing readable): such an answer is computed live."""
    parts = []
    for directory in directories:
        fingerprint = export_fingerprint(directory)
        if fingerprint is None:
            return None
        parts += [str(directory), fingerprint]
    return parts


def answer_key(command: str, options: dict[str, object], stores: list[str] | None) -> str | None:
    """The key of ``command``'s answer with these parsed ``options`` over these ``stores``
    (:func:`store_parts`), or None when it is not to be memoized (``stores`` None, or the cache off)."""
    if stores is None or cache_dir() is None:
        return None
    # the AFR_* settings, but not where the cache is: no part of any answer
    environment = sorted((k, v) for k, v in os.environ.items() if k.startswith("AFR_") and k != CACHE_ENV)
    return content_key(
        ANSWER_FORMAT,
        command,
        json.dumps(options, sort_keys=True, default=str),
        os.getcwd(),
        json.dumps(environment),
        installed_distributions(),
        *package_files(),
        *stores,
    )


def _replayed(key: str) -> bool:
    """Write the answer recorded under ``key``; False (nothing written) when there is none that
    reads back whole."""
    payload = read_entry(ANSWER_KIND, key)
    if payload is None:
        return False
    try:
        chunks = json.loads(payload.decode("utf-8"))["chunks"]
        if not all(isinstance(c, list) and len(c) == 2 and c[0] in STREAMS and isinstance(c[1], str) for c in chunks):
            return False
    except (ValueError, KeyError, TypeError):
        return False
    for name, text in chunks:
        stream = sys.stdout if name == "out" else sys.stderr
        stream.write(text)
        stream.flush()
    return True


def answered(key: str | None, compute: Callable[[], bool]) -> None:
    """The answer recorded under ``key`` replayed; or, when there is none (or ``key`` is None),
    ``compute()`` run, its output written as it goes and, when it returns True (its answer is a
    function of the key's inputs), recorded under ``key`` for the next run. An exception from
    ``compute`` propagates and nothing is recorded."""
    if key is None or sys.stdout is None or sys.stderr is None:
        compute()
        return
    if _replayed(key):
        return
    chunks: list[list[str]] = []
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Recorder(saved[0], "out", chunks), _Recorder(saved[1], "err", chunks)
    try:
        keep = compute()
    finally:
        sys.stdout, sys.stderr = saved
    if keep:
        write_entry(ANSWER_KIND, key, json.dumps({"chunks": chunks}).encode("ascii"))
