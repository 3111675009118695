"""What a Dask worker process needs before it runs afr's units: glibc's allocator given back the
large-block behaviour a plain process has.

Why: Dask's nanny starts every worker process with ``MALLOC_TRIM_THRESHOLD_=65536`` in its
environment (``distributed.nanny.pre-spawn-environ``, to hand freed memory back to the system
sooner). Setting any of glibc's ``MALLOC_*_`` thresholds also switches off its adaptive mmap
threshold, so every array above 128 KiB is mapped fresh from the kernel and unmapped when freed,
and each of its pages faults in again, zero-filled, on first touch. afr's units allocate and free
such arrays by the thousand (attention tensors, Gram matrices, leaf statistics): measured on
satrf_rf's Yacht and Concrete units in one process (``afr run --jobs 1``), the variable alone cost
1.2-1.5x the CPU (docs/speed.md, "Dask"). ``prepare_worker`` sets the two thresholds to where
glibc's adaptive rule takes them for large arrays (mmap above 32 MiB, the rule's ceiling on
64-bit; trim above twice that), once per process. A worker started without the variable, or not
on glibc, is left as it is. Where memory is placed never changes a computed bit (the rows are
the same as with ``--jobs 1``: tests/test_dask_backend.py). Setting them in every process (loky
workers, afr's own) was measured too and is not done: fewer page faults, no steady CPU saving
(docs/speed.md, "Dask").
"""

from __future__ import annotations

import ctypes
import os
import platform

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)
MMAP_THRESHOLD = 32 * 2**20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit: where its adaptive rule stops
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # the adaptive rule keeps trim at twice the mmap threshold
FIXED_BY_ENVIRONMENT = (
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_TOP_PAD_",
    "MALLOC_MMAP_MAX_",
)  # any of these, set, switches glibc's adaptive mmap threshold off for the process

_prepared: dict[str, bool] = {}  # this process's outcome, once: {"allocator": whether thresholds were set}


def allocator_fixed_by_environment() -> bool:
    """Whether this process runs on glibc with its adaptive mmap threshold switched off by the
    environment (a Dask nanny's worker does)."""
    return platform.libc_ver()[0] == "glibc" and any(name in os.environ for name in FIXED_BY_ENVIRONMENT)


def prepare_worker() -> bool:
    """Give this worker process glibc's large-block behaviour back, once (later calls return the
    first one's outcome at no cost); True when the thresholds were set."""
    if "allocator" not in _prepared:
        _prepared["allocator"] = allocator_fixed_by_environment() and set_thresholds()
    return _prepared["allocator"]


def set_thresholds() -> bool:
    """Set the two thresholds in this process now, whatever its environment; True when glibc took
    both. Only for a Dask worker under its nanny's variable (``prepare_worker``) and for
    ``afr bench dask``'s place that measures them in a plain loky worker: in a process started
    without the variable they saved no CPU that held up when measured (docs/speed.md, "Dask")."""
    try:
        libc = ctypes.CDLL(None)  # the C library this process already runs on
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
