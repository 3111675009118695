"""Seeds derived from names and indices: stable across runs, machines and worker counts."""

from __future__ import annotations

import zlib

import numpy as np


def derive_seed(*parts: int | str) -> int:
    """A 32-bit seed from names and indices (stable across runs, machines and worker counts)."""
    words = [zlib.crc32(p.encode()) if isinstance(p, str) else int(p) % 2**32 for p in parts]
    return int(np.random.SeedSequence(words).generate_state(1)[0])
