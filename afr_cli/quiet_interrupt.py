"""Ctrl-C during ``afr run`` ends with our one line and nothing after it: workers ignore SIGINT,
joblib's "tasks cancelled" warning is ours to report, and loky's resource tracker (which outlives
an interrupted parent and may print cleanup warnings after our last line) writes to /dev/null."""

from __future__ import annotations

import os
import signal
import warnings
from contextlib import contextmanager
from typing import Iterator

from joblib.externals.loky.backend import resource_tracker


def quiet_worker() -> None:
    """Worker initializer: leave the terminal's process group and ignore SIGINT, so Ctrl-C reaches
    only the parent, which stops the workers itself (no 'Solver interrupted', no worker traceback)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.setpgrp()
    except OSError:
        pass


def start_quiet_resource_tracker() -> None:
    """Start loky's resource tracker (once per process) with its stderr on /dev/null."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            resource_tracker.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@contextmanager
def cancelled_tasks_unannounced() -> Iterator[None]:
    """joblib warns about the tasks it cancels on an interrupt; the run's own message counts them."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*tasks which were still being processed",
                                category=UserWarning)
        yield


@contextmanager
def interrupts_ignored() -> Iterator[None]:
    """Ignore Ctrl-C inside the block (counting what is stored, writing the export): cutting
    those short would lose a message or half-write an export, never save time."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
