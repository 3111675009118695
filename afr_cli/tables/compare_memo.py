"""The hierarchical Bayesian test of `afr table --compare`, memoized in the export cache (issue 35).

The test's Gibbs sampler (afr_cli/analysis/hierarchical.py) is seeded, so its answer is a
function of its inputs alone; it was about half of the CPU of ``afr table --compare`` on the
committed stores, spent again on every call for the same answer. Its summary is kept in the
export cache (afr_cli/store/cache.py, kind ``hierarchical``) as a small JSON, under the SHA-256 of
everything the answer depends on: the bytes of each dataset's differences (as float64, in order),
the ρ values, the ROPE, the number of draws, the burn-in, the seed, the credible level, the
sampler's own source, and the numpy and scipy versions (their random streams and special
functions). Any change to one of them is another key, so nothing stale is served; a hit gives the
very floats a miss computes (JSON writes a float so that it reads back bit for bit), so the output
is byte for byte the same. A damaged or unreadable entry is recomputed, and a cache that cannot
be written only costs the sampler's time (afr_cli/store/cache.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache

import numpy as np
from numpy.typing import ArrayLike

from afr_cli.analysis.hierarchical import HierarchicalResult, hierarchical_test, result_from_json, result_to_json
from afr_cli.store.cache import cached, content_key, source_of

KIND = "hierarchical"  # the cache folder's kind for these entries
MEMO_FORMAT = "hierarchical-memo/1"  # bump when the key's parts or the JSON's layout change


@cache
def _code() -> tuple[bytes, str, str]:
    """The sampler's source and the numpy and scipy versions: part of every key."""
    import scipy

    return source_of("afr_cli.analysis.hierarchical"), np.__version__, scipy.__version__


def memo_key(
    diffs: Sequence[ArrayLike],
    rho: float | Sequence[float],
    rope: float,
    samples: int,
    burn_in: int,
    seed: int,
    level: float,
) -> str:
    """The cache key of :func:`hierarchical_test` on these arguments (module docstring)."""
    rows = [np.ascontiguousarray(np.asarray(d, dtype=float).ravel()) for d in diffs]
    rhos = np.ascontiguousarray(np.asarray(rho, dtype=float).ravel())
    source, numpy_version, scipy_version = _code()
    return content_key(
        MEMO_FORMAT,
        source,
        numpy_version,
        scipy_version,
        f"rows {len(rows)}",
        *(r.tobytes() for r in rows),
        f"rho {np.ndim(rho)}",
        rhos.tobytes(),
        float(rope).hex(),
        f"samples {samples} burn-in {burn_in} seed {seed}",
        float(level).hex(),
    )


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
    ValueError on bad input, which is never kept), read from the export cache when it ran before
    on the same inputs."""
    key = memo_key(diffs, rho, rope, samples, burn_in, seed, level)
    return cached(KIND, key, lambda: hierarchical_test(diffs, rho, rope, samples, burn_in, seed, level), _dumps, _loads)
