"""Units on a Dask cluster: every task submitted to the cluster's workers by the distributed client.

Why not joblib's dask backend: joblib sizes its pool from the cluster's
threads, and when that is one (a single remote worker, a researcher's usual first step) it runs
every task in the calling process, so the cluster would sit idle while ``afr`` did all the work. Here
each task is a future on the cluster, whatever its size and whatever ``--jobs`` says; results
come back as they finish, in any order, and the caller (the only writer of the store) stores
each. A few tasks per worker thread are in flight at a time (the window follows the cluster as
workers join or leave), so a long run does not park thousands of pickled tasks on the scheduler.

Each task reports the worker that ran it, so a run can say where its units went
(``DaskUnits.where``). The worker's own setup for afr's units (``worker_setup``) is applied by
the first task a worker process runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any

from distributed import Client, as_completed, get_worker
from distributed.comm.addressing import parse_address, parse_host_port

from afr_cli.engine.worker_setup import prepare_worker
from afr_cli.errors import AfrInputError

IN_FLIGHT_PER_THREAD = 2  # one running and one queued on each worker thread: no thread waits for the next


def _on_worker(function: Callable[..., Any], args: tuple) -> tuple[str, Any]:
    """Run on a worker: the worker's address and ``function(*args)``."""
    prepare_worker()
    return get_worker().address, function(*args)


class DaskUnits:
    """A connection to a Dask scheduler that runs calls on its workers (a context manager: the
    client is closed on exit, which releases every task still pending)."""

    def __init__(self, address: str, timeout: str = "20s") -> None:
        self.address = address
        self.timeout = timeout
        self.client: Client | None = None
        self.ran_on: Counter[str] = Counter()  # worker address -> tasks it ran

    def __enter__(self) -> DaskUnits:
        try:
            scheme, location = parse_address(self.address)
            if scheme in ("tcp", "tls"):
                parse_host_port(location)  # a host without a port: refused before a client is made
            self.client = Client(self.address, timeout=self.timeout, set_as_default=False)
        except (OSError, ValueError, TypeError) as err:  # not an address, or unreachable (a timeout is an OSError)
            raise AfrInputError(
                f"--scheduler: cannot reach a Dask scheduler at {self.address!r} ({err}); allowed: the address "
                "of a running scheduler, e.g. tcp://127.0.0.1:8786 (dask scheduler prints it)"
            ) from None
        return self

    def __exit__(self, *exc: object) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    def threads(self) -> int:
        """The worker threads the cluster has now (at least one: tasks wait for a worker to join)."""
        return max(1, sum(self.client.nthreads().values()))

    def run_unordered(self, function: Callable[..., Any], calls: Iterable[tuple]) -> Iterator[Any]:
        """``function(*args)`` for each ``args`` of ``calls``, each on a worker; the results in the
        order they finish. A task's exception is raised here, as the task raised it."""
        calls = iter(calls)
        pending = as_completed(loop=self.client.loop)

        def submit(count: int) -> None:
            for args in islice(calls, max(0, count)):
                pending.add(self.client.submit(_on_worker, function, args, pure=False))

        submit(IN_FLIGHT_PER_THREAD * self.threads())
        for future in pending:
            worker, result = future.result()
            self.ran_on[worker] += 1
            future.release()
            yield result
            submit(IN_FLIGHT_PER_THREAD * self.threads() - pending.count())

    def where(self) -> str:
        """Where the tasks ran, for the run's last line: '8 tasks on 1 Dask worker (tcp://...)'
        ('' before any task has finished)."""
        if not self.ran_on:
            return ""
        tasks, workers = sum(self.ran_on.values()), len(self.ran_on)
        named = ", ".join(f"{w}: {n}" if workers > 1 else w for w, n in sorted(self.ran_on.items()))
        return f"{tasks} task{'s' * (tasks != 1)} on {workers} Dask worker{'s' * (workers != 1)} ({named})"
