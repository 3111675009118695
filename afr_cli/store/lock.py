"""One writer per store: ``afr run`` holds an exclusive ``flock`` on ``store.sqlite.lock`` beside the
store while it computes units, and a second run on the same store refuses, naming the holder's PID.

Refusing (not waiting) because a second run on a store that is being computed is almost always
a mistake (the same command in two terminals, a scheduler retrying a job that is still alive):
waiting would hide it and then find every unit done; refusing says at once who holds the store.
The lock is the kernel's: it is released when its holder exits however it exits (SIGKILL, a
crash, a power cut of the process), so a lock left by a dead process is simply taken over; the
PID written inside the file is only for the message. The file stays after the run; only a lock
file this run created beside a store it never created (a run refused before writing anything) is
removed, so a refusal leaves nothing behind. The file is removed while still locked, and a run
that takes a lock checks that its file is still the one at the path (else it takes the new one),
so two runs never hold locks on two different files. ``results/**/store.sqlite*`` is git-ignored.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from afr_cli.errors import AfrInputError

LOCK_SUFFIX = ".lock"


class StoreLock:
    """The write lock of the store ``store_path``; ``acquire`` takes it (or raises), ``release`` or
    leaving the ``with`` block gives it back. Acquiring twice in one process is a no-op."""

    def __init__(self, store_path: str | Path):
        self.store = Path(store_path)
        self.path = Path(f"{store_path}{LOCK_SUFFIX}")
        self._fd: int | None = None
        self._created = False

    def acquire(self) -> None:
        """Take the lock, or a one-line AfrInputError naming the PID of the run holding it."""
        if self._fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            created = not self.path.exists() and not self.store.exists()
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as err:
                holder = _read_pid(fd)
                os.close(fd)
                if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise AfrInputError(f"{self.path}: cannot lock the results store ({err.strerror})") from None
                who = f"PID {holder}" if holder else "another process"
                raise AfrInputError(
                    f"{self.path}: another afr run ({who}) is writing this store; wait for it to "
                    f"end, or use --out DIR for a store of your own"
                ) from None
            if _same_file(fd, self.path):
                break
            os.close(fd)  # the previous holder removed the file it locked: lock the one at the path
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        self._created = created

    def release(self) -> None:
        """Give the lock back; a lock file this run created beside no store is removed first."""
        if self._fd is not None:
            if self._created and not self.store.exists():
                self.path.unlink(missing_ok=True)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> StoreLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _same_file(fd: int, path: Path) -> bool:
    """Whether the open ``fd`` is still the file at ``path`` (not removed or replaced since)."""
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None
