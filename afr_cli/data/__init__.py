"""The papers' 11 regression datasets: registry, cache of UCI files, fetch/verify and loading.

``load_dataset(name, data_seed=0)`` is the one entry experiments need; the rest serves
``afr datasets`` and tests.
"""

from afr_cli.data.cache import VerifyResult, cached_path, dataset_available, verify_all, verify_dataset
from afr_cli.data.fetch import FetchResult, fetch_all, fetch_dataset
from afr_cli.data.loaders import load_dataset
from afr_cli.data.registry import (
    DATASETS,
    DEFAULT_DATA_SEED,
    DatasetSpec,
    UciFile,
    canonical_name,
    get_spec,
)

__all__ = [
    "DATASETS",
    "DEFAULT_DATA_SEED",
    "DatasetSpec",
    "FetchResult",
    "UciFile",
    "VerifyResult",
    "cached_path",
    "canonical_name",
    "dataset_available",
    "fetch_all",
    "fetch_dataset",
    "get_spec",
    "load_dataset",
    "verify_all",
    "verify_dataset",
]
