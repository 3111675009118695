"""The dataset registry: the papers' 11 datasets as typed records, read once from registry.yaml.

Keeping the facts (sizes, checksums, URLs, citations, noise levels) in YAML keeps them in one
reviewable place; this module only parses them and resolves user-typed names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from afr_cli.core.names import hint
from afr_cli.errors import AfrInputError

REGISTRY_FILE = Path(__file__).resolve().parent / "registry.yaml"
SOURCES = ("sklearn", "synthetic", "uci")
FILE_FORMATS = ("semicolon_header", "whitespace", "excel", "tab")
GENERATORS = {
    "sklearn": ("load_diabetes",),
    "synthetic": (
        "make_friedman1",
        "make_friedman2",
        "make_friedman3",
        "make_regression",
        "make_sparse_uncorrelated",
    ),
}
DEFAULT_DATA_SEED = 0


@dataclass(frozen=True)
class UciFile:
    """One raw UCI file: where it comes from and the bytes it must have."""

    name: str
    url: str
    sha256: str
    size: int
    format: str


@dataclass(frozen=True)
class DatasetSpec:
    """A registry record: m features, n rows, where the data comes from, licence and citation.

    ``generator``/``params`` name the sklearn.datasets function for sklearn and synthetic sets;
    ``file`` describes the raw file for UCI sets.
    """

    name: str
    m: int
    n: int
    source: str
    licence: str
    citation: str
    note: str = ""
    generator: str | None = None
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    file: UciFile | None = None


def _key(name: str) -> str:
    """Lookup key: case-insensitive, ignoring spaces, underscores and hyphens."""
    return "".join(ch for ch in name.lower() if ch not in " _-")


def _require(record: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = record.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise AfrInputError(f"{REGISTRY_FILE}: {where}.{key}: expected {kind.__name__}, got {value!r}")
    return value


def _parse_file(record: Mapping[str, Any], where: str) -> UciFile:
    if not isinstance(record, Mapping):
        raise AfrInputError(f"{REGISTRY_FILE}: {where}.file: expected a mapping")
    fmt = _require(record, "format", str, f"{where}.file")
    if fmt not in FILE_FORMATS:
        raise AfrInputError(f"{REGISTRY_FILE}: {where}.file.format: {fmt!r} is not one of {', '.join(FILE_FORMATS)}")
    return UciFile(
        name=_require(record, "name", str, f"{where}.file"),
        url=_require(record, "url", str, f"{where}.file"),
        sha256=_require(record, "sha256", str, f"{where}.file").lower(),
        size=_require(record, "size", int, f"{where}.file"),
        format=fmt,
    )


def _parse_spec(record: Any, index: int) -> DatasetSpec:
    where = f"[{index}]"
    if not isinstance(record, Mapping):
        raise AfrInputError(f"{REGISTRY_FILE}: {where}: expected a mapping")
    source = _require(record, "source", str, where)
    if source not in SOURCES:
        raise AfrInputError(f"{REGISTRY_FILE}: {where}.source: {source!r} is not one of {', '.join(SOURCES)}")
    uci = source == "uci"
    if uci != ("file" in record) or uci == ("generator" in record):
        raise AfrInputError(f"{REGISTRY_FILE}: {where}: a uci set needs 'file' and no 'generator'; others the reverse")
    generator = record.get("generator")
    if not uci and generator not in GENERATORS[source]:
        raise AfrInputError(
            f"{REGISTRY_FILE}: {where}.generator: {generator!r} is not one of {', '.join(GENERATORS[source])}"
        )
    return DatasetSpec(
        name=_require(record, "name", str, where),
        m=_require(record, "m", int, where),
        n=_require(record, "n", int, where),
        source=source,
        licence=_require(record, "licence", str, where),
        citation=_require(record, "citation", str, where),
        note=record.get("note", ""),
        generator=generator,
        params=MappingProxyType(dict(record.get("params") or {})),
        file=_parse_file(record["file"], where) if uci else None,
    )


def _load_registry() -> dict[str, DatasetSpec]:
    records = yaml.safe_load(REGISTRY_FILE.read_text(encoding="utf-8"))
    if not isinstance(records, list):
        raise AfrInputError(f"{REGISTRY_FILE}: expected a list of dataset records")
    specs = [_parse_spec(record, i) for i, record in enumerate(records)]
    return {spec.name: spec for spec in specs}


DATASETS: dict[str, DatasetSpec] = _load_registry()
_BY_KEY = {_key(name): name for name in DATASETS}


def canonical_name(name: str) -> str:
    """The registry spelling of ``name`` ("friedman 1" -> "Friedman1"); unknown names are an error."""
    found = _BY_KEY.get(_key(str(name)))
    if found is None:
        raise AfrInputError(f"unknown dataset {name!r}; {hint(str(name), DATASETS)}allowed: {', '.join(DATASETS)}")
    return found


def get_spec(name: str) -> DatasetSpec:
    """The registry record for ``name`` (matched case-insensitively, ignoring spaces, _ and -)."""
    return DATASETS[canonical_name(name)]


def resolve_names(names: list[str] | tuple[str, ...] | None) -> list[str]:
    """Canonical names for ``names`` without duplicates; None or empty means every UCI set."""
    if names:
        return list(dict.fromkeys(canonical_name(name) for name in names))
    return [spec.name for spec in DATASETS.values() if spec.source == "uci"]
