"""The statistics of `afr table --compare`, memoized in the export cache.

Every test a comparison runs is a function of its arguments alone: the paired t-test, Wilcoxon,
the effect sizes and the correlated t-test are closed form, and the Bayesian signed-rank test,
the bootstrap of the effect intervals and the hierarchical test's Gibbs sampler are seeded. The
sampler was about half of the CPU of ``afr table --compare`` on the committed stores, and the
others need scipy (scipy.special, and scipy.optimize for the d_z interval), whose import costs
about as much as pandas': all of it spent again on every call for the same answer. So each result
is kept in the export cache (afr_cli/store/cache.py) and a later call with the same arguments reads
it back without importing scipy.

The key of an entry is the SHA-256 of everything the result depends on: the function's module and
name; every argument after binding (defaults included, so the hierarchical test's draws, burn-in,
seed and level and the signed-rank test's samples and seed are in it), an array by its dtype,
shape and bytes (the differences exactly as computed, in order), a float by its exact hex form;
the source of every module of afr_cli/analysis/ (the code that computes the result, the sampler's
included); and the numpy and scipy versions (their random streams and special functions). Any
change to one of them is another key, so nothing stale is served.

The hierarchical test's summary is a small JSON (``hierarchical`` entries: a reader can open it);
the other results are pickles (``tests`` entries), as the cache's frames are. A hit gives the very
floats a miss computes (JSON writes a float so that it reads back bit for bit), so the output is
byte for byte the same. A damaged or unreadable entry is recomputed without a word, and a cache
that cannot be written only costs the computing time (afr_cli/store/cache.py). A function that
raises (bad input) keeps nothing.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from afr_cli.analysis import hierarchical
from afr_cli.analysis.hierarchical import HierarchicalResult, result_from_json, result_to_json
from afr_cli.store.cache import cached, content_key

HIERARCHICAL_KIND = "hierarchical"  # the cache folder's kind for the hierarchical test's JSON
TESTS_KIND = "tests"  # ... and for every other test's pickled result
MEMO_FORMAT = "compare-memo/1"  # bump when the key's parts or an entry's layout change
ANALYSIS = Path(hierarchical.__file__).resolve().parent  # afr_cli/analysis: the code of every test

T = TypeVar("T")


@cache
def code_version() -> str:
    """A digest of the code behind every result: the source of each module of afr_cli/analysis/
    and the numpy and scipy versions (read once per process)."""
    import scipy  # the package only (its version): none of its modules

    parts: list[bytes | str] = [f"numpy {np.__version__}", f"scipy {scipy.__version__}"]
    for path in sorted(ANALYSIS.glob("*.py")):
        parts += [path.name, path.read_bytes()]
    return content_key(*parts)


def encoded(value: object) -> bytes:
    """``value`` as bytes that differ whenever the value differs: an array (or Series) by dtype,
    shape and content, a float by its exact hex form, a sequence element by element. TypeError for
    anything else (it could not be keyed safely)."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return f"const {value!r}".encode()
    if isinstance(value, (int, np.integer)):
        return f"int {int(value)}".encode()
    if isinstance(value, (float, np.floating)):
        return f"float {float(value).hex()}".encode()
    if isinstance(value, str):
        return b"str " + value.encode("utf-8")
    if isinstance(value, (np.ndarray, pd.Series)):
        array = np.ascontiguousarray(value.to_numpy() if isinstance(value, pd.Series) else value)
        if array.dtype.kind not in "biuf":
            raise TypeError(f"cannot key an array of dtype {array.dtype}")
        return f"array {array.dtype.str} {array.shape} ".encode() + array.tobytes()
    if isinstance(value, (list, tuple)):
        items = [encoded(v) for v in value]
        return f"seq {len(items)} ".encode() + b"".join(len(i).to_bytes(8, "little") + i for i in items)
    raise TypeError(f"cannot key a {type(value).__name__}")


def memo_key(function: Callable, *args: object, **kwargs: object) -> str:
    """The cache key of ``function(*args, **kwargs)`` (module docstring)."""
    bound = inspect.signature(function).bind(*args, **kwargs)
    bound.apply_defaults()
    parts: list[bytes | str] = [MEMO_FORMAT, code_version(), f"{function.__module__}.{function.__qualname__}"]
    for name, value in bound.arguments.items():
        parts += [name, encoded(value)]
    return content_key(*parts)


def memoized(function: Callable[..., T], *args: object, **kwargs: object) -> T:
    """``function(*args, **kwargs)``, read from the export cache when it ran before on the same
    arguments and code (a pickled ``tests`` entry); the same result, the same exception."""
    key = memo_key(function, *args, **kwargs)
    return cached(TESTS_KIND, key, lambda: function(*args, **kwargs))


def _dumps(result: HierarchicalResult) -> bytes:
    return json.dumps(result_to_json(result), sort_keys=True).encode("utf-8")


def _loads(payload: bytes) -> HierarchicalResult:
    return result_from_json(json.loads(payload.decode("utf-8")))


def memo_hierarchical_test(
    diffs: Sequence[ArrayLike],
    rho: float | Sequence[float],
    rope: float,
    samples: int,
    burn_in: int,
    seed: int,
    level: float = 0.95,
) -> HierarchicalResult:
    """:func:`afr_cli.analysis.hierarchical.hierarchical_test` (same arguments, same result, same
    ValueError on bad input), its summary kept as a small JSON (a ``hierarchical`` entry)."""
    rows = [np.asarray(d, dtype=float) for d in diffs]  # keyed as the sampler reads them
    args = (rows, rho, rope, samples, burn_in, seed, level)
    key = memo_key(hierarchical.hierarchical_test, *args)
    return cached(HIERARCHICAL_KIND, key, lambda: hierarchical.hierarchical_test(*args), _dumps, _loads)
