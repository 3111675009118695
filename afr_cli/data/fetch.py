"""Fetch UCI files into the cache from a local mirror or the UCI archive, checked before they land.

A file is written to a temporary name in the cache dir and renamed only after its size and sha256
match the registry, so the cache never holds a partial or wrong file.
"""

from __future__ import annotations

import http.client
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from afr_cli.core.paths import data_mirror_dir
from afr_cli.data.cache import cached_path, mismatch, verify_dataset
from afr_cli.data.registry import UciFile, get_spec, resolve_names
from afr_cli.errors import AfrInputError

DOWNLOAD_TIMEOUT_S = 30


@dataclass(frozen=True)
class FetchResult:
    """What fetching one dataset did: fetched, replaced (a corrupted copy), present, or builtin."""

    name: str
    file: str
    path: Path | None
    action: str
    origin: str


def _source_dir(explicit: Path | None) -> Path | None:
    """The directory to copy from: ``explicit`` (--from), else AFR_DATA_MIRROR, else None (UCI)."""
    if explicit is not None:
        if not explicit.is_dir():
            raise AfrInputError(f"{explicit}: --from must be a directory holding the UCI files")
        return explicit
    mirror = data_mirror_dir()
    if mirror is not None and not mirror.is_dir():
        raise AfrInputError(f"AFR_DATA_MIRROR={mirror}: not a directory; unset it or point it at the UCI files")
    return mirror


def _read_source(uci_file: UciFile, source_dir: Path | None) -> tuple[bytes, str]:
    """The candidate bytes and where they came from: ``source_dir``/file or the UCI URL."""
    if source_dir is not None:
        src = source_dir / uci_file.name
        if not src.is_file():
            raise AfrInputError(f"{src}: no such file; the mirror {source_dir} must hold {uci_file.name}")
        try:
            return src.read_bytes(), str(src)
        except OSError as err:
            raise AfrInputError(f"{src}: cannot read it ({err.strerror or err})") from None
    try:
        with urllib.request.urlopen(uci_file.url, timeout=DOWNLOAD_TIMEOUT_S) as response:
            data = response.read(uci_file.size + 1)  # one byte more reveals an oversized file
    except (urllib.error.URLError, http.client.HTTPException, OSError) as err:
        reason = getattr(err, "reason", err)
        raise AfrInputError(
            f"{uci_file.name}: could not download {uci_file.url} ({reason}); "
            "fetch from a local copy with `afr datasets fetch --from DIR` or set AFR_DATA_MIRROR"
        ) from None
    return data, uci_file.url


def _write_atomically(data: bytes, dest: Path) -> None:
    """Write ``data`` to a temporary file beside ``dest``, then rename it into place."""
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes 0600; cached data files are meant to be shared
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fetch_dataset(name: str, source_dir: Path | None = None) -> FetchResult:
    """Bring one UCI set's file into the cache (no-op for sklearn/synthetic or a verified copy).

    ``source_dir`` wins over ``AFR_DATA_MIRROR``; with neither, the file is downloaded from UCI.
    """
    spec = get_spec(name)
    if spec.file is None:
        return FetchResult(spec.name, "", None, "builtin", f"{spec.source}, nothing to fetch")
    state = verify_dataset(spec.name)
    dest = cached_path(spec.file)
    if state.status == "ok":
        return FetchResult(spec.name, spec.file.name, dest, "present", str(dest))
    source_dir = _source_dir(source_dir)
    data, origin = _read_source(spec.file, source_dir)
    problem = mismatch(data, spec.file)
    if problem:
        raise AfrInputError(f"{origin}: {problem} for {spec.name}; nothing was written to {dest.parent}")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(data, dest)
    except OSError as err:
        raise AfrInputError(f"{dest}: cannot write to the dataset cache ({err.strerror or err})") from None
    action = "replaced" if state.status == "bad" else "fetched"
    return FetchResult(spec.name, spec.file.name, dest, action, origin)


def fetch_all(names: list[str] | tuple[str, ...] | None = None, source_dir: Path | None = None) -> list[FetchResult]:
    """Fetch ``names`` (default: every UCI set) into ``data_cache_dir()``; stops at the first error."""
    source = _source_dir(None if source_dir is None else Path(source_dir))  # fail before any copy
    return [fetch_dataset(name, source) for name in resolve_names(names)]
