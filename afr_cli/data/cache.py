"""The local cache of UCI files: where each file lives and whether its bytes are the registry's.

Every read goes through a sha256 and size check, so a corrupted or replaced file is never used.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from afr_cli.core.paths import data_cache_dir
from afr_cli.data.registry import UciFile, get_spec, resolve_names
from afr_cli.errors import AfrInputError


@dataclass(frozen=True)
class VerifyResult:
    """The state of one dataset's cached file: ok, missing, bad, or builtin (nothing to check)."""

    name: str
    file: str
    path: Path | None
    status: str
    detail: str

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "builtin")


def cached_path(uci_file: UciFile) -> Path:
    """Where ``uci_file`` lives in the cache (``AFR_DATA_CACHE`` or datasets/cache)."""
    return data_cache_dir() / uci_file.name


def mismatch(data: bytes, uci_file: UciFile) -> str | None:
    """None if ``data`` has the registry's size and sha256, else a one-line description of both."""
    digest = hashlib.sha256(data).hexdigest()
    if len(data) == uci_file.size and digest == uci_file.sha256:
        return None
    return (
        f"sha256 {digest} ({len(data)} bytes) does not match the registry's {uci_file.sha256} ({uci_file.size} bytes)"
    )


def _check(name: str) -> tuple[VerifyResult, bytes]:
    """Verify one dataset's cached file and hand back the bytes that were checked (b"" if none)."""
    spec = get_spec(name)
    if spec.file is None:
        return VerifyResult(spec.name, "", None, "builtin", f"{spec.source}, no file to verify"), b""
    path = cached_path(spec.file)
    if not path.is_file():
        return VerifyResult(spec.name, spec.file.name, path, "missing", f"{path}: not in the cache"), b""
    data = path.read_bytes()
    problem = mismatch(data, spec.file)
    if problem:
        return VerifyResult(spec.name, spec.file.name, path, "bad", f"{path}: {problem}"), b""
    return VerifyResult(spec.name, spec.file.name, path, "ok", f"{path}: sha256 ok"), data


def verify_dataset(name: str) -> VerifyResult:
    """Check the cached file of one dataset against the registry (sklearn/synthetic: builtin)."""
    return _check(name)[0]


def verify_all(names: list[str] | tuple[str, ...] | None = None) -> list[VerifyResult]:
    """Verify the cached files of ``names`` (default: every UCI set); never raises on a bad file."""
    return [verify_dataset(name) for name in resolve_names(names)]


def dataset_available(name: str) -> bool:
    """True if the dataset can be loaded now: always for sklearn/synthetic, a verified file for UCI."""
    return verify_dataset(name).ok


def read_verified(name: str) -> bytes:
    """The checked bytes of a UCI set's cached file; a missing or corrupted file is an error.

    The bytes returned are the very bytes hashed, so a file changed after the check is never parsed.
    """
    result, data = _check(name)
    if result.status == "missing":
        raise AfrInputError(
            f"{result.path}: {result.name} is not in the cache; run `afr datasets fetch {result.name}` "
            "(or `afr datasets fetch --from DIR`), or set AFR_DATA_MIRROR"
        )
    if result.status == "bad":
        raise AfrInputError(
            f"{result.detail}; refusing to load {result.name}, re-fetch it with `afr datasets fetch {result.name}`"
        )
    return data
