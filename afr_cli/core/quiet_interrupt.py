"""Ctrl-C during ``afr run`` ends with our one line and nothing after it: workers ignore SIGINT,
joblib's "tasks cancelled" warning is ours to report, and loky's resource tracker (which outlives
an interrupted parent and may print cleanup warnings after our last line) writes to /dev/null.
Outside the run's loop (loading data, validating, building reports) the signal handlers remember
which signal came and ``doing`` what the command was doing, so the command line prints one line
for either signal in every phase (``stopped_line``)."""

from __future__ import annotations

import os
import signal
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's KeyboardInterrupt would be: a run stops the same way (its
    workers stopped, its stored units counted in one line) and the process exits with 143."""

    exit_code = 143


# The signals this process was stopped by, each with what the command was doing when it came
# (the ``doing`` blocks are left while the interrupt unwinds, before the line is printed).
_RECEIVED: list[tuple[str, str | None]] = []
_DOING: list[str] = []  # what the command is doing now, innermost last ("loading dataset L (loader m:f)")


def _raise_terminated(signum, frame) -> None:
    _RECEIVED.append(("SIGTERM", _DOING[-1] if _DOING else None))
    raise Terminated()


def _raise_interrupted(signum, frame) -> None:
    _RECEIVED.append(("Ctrl-C", _DOING[-1] if _DOING else None))
    raise KeyboardInterrupt()


def sigterm_as_interrupt() -> None:
    """Make SIGTERM behave like Ctrl-C in this (the parent) process, and remember which of the two
    arrived: Typer turns an interrupt it sees into a bare exit 130, and the command line then says
    which signal stopped it, and where. A SIGINT ignored at start (``nohup``, a background job)
    stays ignored."""
    signal.signal(signal.SIGTERM, _raise_terminated)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _raise_interrupted)


def received_signal() -> tuple[str, str | None] | None:
    """('SIGTERM' or 'Ctrl-C', what the command was doing then) of the last signal that stopped
    this process, or None."""
    return _RECEIVED[-1] if _RECEIVED else None


@contextmanager
def doing(what: str) -> Iterator[None]:
    """Name what the command is doing inside the block (loading a dataset, calling a loader), so
    the line printed when a signal stops it there says where it stopped."""
    _DOING.append(what)
    try:
        yield
    finally:
        _DOING.pop()


def stopped_line(command: str, received: tuple[str, str | None] | None) -> tuple[str, int]:
    """The one line and exit code of a command stopped by a signal outside a run's loop: 143 for
    SIGTERM, 130 for Ctrl-C (also when no handler saw it: a KeyboardInterrupt raised by code);
    what it was doing when the signal came, if it said."""
    name, what = received or ("Ctrl-C", None)
    terminated = name == "SIGTERM"
    where = f" while {what}" if what else ""
    return (
        f"{'terminated' if terminated else 'interrupted'}: {command} stopped by {name}{where}",
        Terminated.exit_code if terminated else 130,
    )


PARENT_CHECK_SECONDS = 0.5
_exit_now = os._exit  # the real one: a unit's code may replace os._exit while it runs (afr_cli.core.plugin_registry)


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
    from joblib.externals.loky.backend import resource_tracker  # here: only a run needs joblib (0.2 s)

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
        warnings.filterwarnings("ignore", message=r".*tasks which were still being processed", category=UserWarning)
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
