"""Ctrl-C during ``afr run`` ends with our one line and nothing after it: workers ignore SIGINT,
joblib's "tasks cancelled" warning is ours to report, and loky's resource tracker (which outlives
an interrupted parent and may print cleanup warnings after our last line) writes to /dev/null."""

from __future__ import annotations

import os
import signal
import threading
import time
import warnings
from contextlib import contextmanager
from typing import Iterator

from joblib.externals.loky.backend import resource_tracker


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's KeyboardInterrupt would be: a run stops the same way (its
    workers stopped, its stored units counted in one line) and the process exits with 143."""

    exit_code = 143


def _raise_terminated(signum, frame) -> None:
    raise Terminated()


def sigterm_as_interrupt() -> None:
    """Make SIGTERM behave like Ctrl-C in this (the parent) process."""
    signal.signal(signal.SIGTERM, _raise_terminated)


PARENT_CHECK_SECONDS = 0.5
_exit_now = os._exit  # the real one: a unit's code may replace os._exit while it runs (afr_cli.plugins)


def quiet_worker() -> None:
    """Worker initializer: leave the terminal's process group and ignore SIGINT, so Ctrl-C reaches
    only the parent, which stops the workers itself (no 'Solver interrupted', no worker traceback);
    and watch the parent, so a worker exits within a second when its parent dies however it dies
    (SIGKILL leaves the parent no chance to stop its workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        os.setpgrp()
    except OSError:
        pass
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), name="afr-parent-watch", daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    """Poll the parent's PID: once this process is re-parented (its parent died), exit at once
    (os._exit: a worker holds nothing to save; the parent stores every unit)."""
    while True:
        time.sleep(PARENT_CHECK_SECONDS)
        if os.getppid() != parent:
            _exit_now(1)


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
