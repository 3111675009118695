"""What every process that runs afr's units needs first: glibc's allocator set to keep large
blocks, once per process (a loky worker, a Dask worker, afr's own process with ``--jobs 1``).

Why: glibc maps every block above its mmap threshold fresh from the kernel and unmaps it when
freed, so each of its pages faults in again, zero-filled, on first touch; freed memory at the top
of the heap beyond the trim threshold goes back to the kernel too. A process starts at 128 KiB;
glibc's adaptive rule raises the threshold only to the largest mapped block freed so far (and trim
to twice that), so a process keeps mapping, trimming and faulting whatever is larger. afr's units
allocate and free such arrays by the thousand (attention tensors, Gram matrices, leaf statistics).
Measured on satrf_rf, larf_rf, dm_soft and agboost_dt units, the thresholds set against left as
the process starts (docs/speed.md, "Dask"; ``afr bench dask``'s places): minor page faults per
task fell from thousands to a handful. Dask's nanny makes it worse: it starts every worker with
``MALLOC_TRIM_THRESHOLD_=65536``, and setting any ``MALLOC_*_`` threshold switches the adaptive rule
off (satrf_rf units 1.2-1.5x the CPU with the variable).

``prepare_allocator`` sets the two thresholds to where the adaptive rule would end for large arrays
(mmap above 32 MiB, the rule's ceiling on 64-bit; trim above twice that), whatever the
environment. The cost is memory: a process keeps up to 64 MiB of freed memory at the top of its
heap instead of handing it back, and blocks up to 32 MiB are served from the heap (peak RSS of a
unit's process: within a few MiB of the unprepared one's, docs/speed.md). Not on glibc, nothing
is changed. Where memory is placed never changes a computed bit (tests/test_worker_allocator.py:
the rows are the same either way).
"""

from __future__ import annotations

import ctypes
import platform

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)
MMAP_THRESHOLD = 32 * 2**20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit: where its adaptive rule stops
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # the adaptive rule keeps trim at twice the mmap threshold

_prepared: dict[str, bool] = {}  # this process's outcome, once: {"allocator": whether thresholds were set}


def prepare_allocator() -> bool:
    """Set this process's glibc thresholds for afr's units, once (later calls return the first
    one's outcome at no cost); True when they were set (False: not glibc, or mallopt refused)."""
    if "allocator" not in _prepared:
        _prepared["allocator"] = platform.libc_ver()[0] == "glibc" and _set_thresholds()
    return _prepared["allocator"]


def allocator_prepared() -> bool:
    """Whether ``prepare_allocator`` has set this process's thresholds (a test asks a worker)."""
    return _prepared.get("allocator", False)


def _set_thresholds() -> bool:
    try:
        libc = ctypes.CDLL(None)  # the C library this process already runs on
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
