"""``load_dataset``: one dataset as float64 arrays, checked against the registry's shape.

UCI files are read only from the cache and only after their checksum matches; a missing file is
fetched from ``AFR_DATA_MIRROR`` when one is set, never downloaded silently.
"""

from __future__ import annotations

import numpy as np

from afr_cli.core.params import is_integer
from afr_cli.core.paths import data_mirror_dir
from afr_cli.data.cache import cached_path, read_verified, verify_dataset
from afr_cli.data.fetch import fetch_dataset
from afr_cli.data.readers import READERS
from afr_cli.data.registry import DEFAULT_DATA_SEED, DatasetSpec, UciFile, get_spec
from afr_cli.data.synthetic import NOISES, draw
from afr_cli.errors import AfrInputError

_MAX_SEED = 2**32 - 1  # numpy's RandomState accepts seeds in [0, 2**32 - 1]


def _check_seed(name: str, data_seed: int) -> None:
    if not is_integer(data_seed):
        raise AfrInputError(f"{name}: data_seed must be an integer in [0, {_MAX_SEED}], got {data_seed!r}")
    if not 0 <= int(data_seed) <= _MAX_SEED:
        raise AfrInputError(f"{name}: data_seed {data_seed} is outside [0, {_MAX_SEED}]")


def _load_uci(spec: DatasetSpec, uci_file: UciFile) -> tuple[np.ndarray, np.ndarray]:
    """Read a UCI set from the cache (fetching from AFR_DATA_MIRROR if it is missing)."""
    if data_mirror_dir() is not None and verify_dataset(spec.name).status == "missing":
        fetch_dataset(spec.name)
    data = read_verified(spec.name)
    path = cached_path(uci_file)
    try:
        table = READERS[uci_file.format](data).to_numpy(dtype=np.float64)
    except (ValueError, TypeError) as err:
        raise AfrInputError(f"{path}: cannot parse {spec.name} as numbers ({err})") from None
    if table.shape != (spec.n, spec.m + 1):
        raise AfrInputError(
            f"{path}: parsed {table.shape[0]} rows x {table.shape[1]} columns, "
            f"expected {spec.n} x {spec.m + 1} ({spec.m} features + target) for {spec.name}"
        )
    return np.ascontiguousarray(table[:, :-1]), np.ascontiguousarray(table[:, -1])


def load_dataset(
    name: str, data_seed: int = DEFAULT_DATA_SEED, noise: str = "documented"
) -> tuple[np.ndarray, np.ndarray]:
    """X (n, m) and y (n,) as float64 for a registry dataset.

    Synthetic sets are drawn with ``random_state=data_seed`` (default 0), so a seed fixes the draw,
    with the registry's noise level (``noise="documented"``) or none (``"none"``); Diabetes and the
    UCI sets are fixed data and ignore both.
    """
    if noise not in NOISES:
        raise AfrInputError(f"noise {noise!r} is not allowed; allowed: {', '.join(NOISES)}")
    spec = get_spec(name)
    _check_seed(spec.name, data_seed)
    if spec.file is not None:
        X, y = _load_uci(spec, spec.file)
    else:
        X, y = draw(spec, int(data_seed), noise)
    if X.shape != (spec.n, spec.m) or y.shape != (spec.n,):
        raise AfrInputError(f"{spec.name}: got X {X.shape} and y {y.shape}, the registry says n={spec.n}, m={spec.m}")
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise AfrInputError(f"{spec.name}: the data contain missing or non-finite values")
    return X, y
