"""Many ``afr`` invocations, each its own process, without each paying afr's start-up.

The bad-input corpora run about a hundred ``afr`` commands; a fresh ``afr`` spends one to three
seconds importing (scikit-learn, SciPy, pandas) before it reads its first argument. Here one
server process starts as the console script would (the same interpreter, sys.path and
environment), imports the command line and the modules its commands load, and then forks one
child per invocation. The child is the invocation's process: it takes the invocation's working
directory, environment (its PYTHONPATH put on sys.path where a fresh interpreter puts it) and
``sys.argv``, reads stdin from /dev/null, writes stdout and stderr to files, and ends as the
console script does (``sys.exit(main())`` through the interpreter's normal exit). What the tests
check stays at the process boundary: the child's exit status and the bytes it wrote to stderr.

``run_afr_forked(invocations, jobs)`` returns a ``subprocess.CompletedProcess`` per invocation,
in order. ``run_one(invocation, timeout)`` runs one invocation through a server kept open for the
whole test session (one per pytest process, so one per xdist worker): tests/conftest.py's
``run_afr`` uses it, so the suite's hundreds of single ``afr`` commands pay the start-up once per
worker instead of once per command. What the server itself printed while importing (nothing,
normally) is put before each child's own output, as a real process would print it. A mount
namespace (read-only directories) is given to the whole batch by starting its server inside one
(``run_afr_forked(..., under=...)``). Invocations that need something a fork cannot give (another
interpreter, a process limit set before it starts, a live process to signal) still run as real
subprocesses.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# What every command's start-up imports anyway (the command line, the config loader and the
# runner, and through them pandas and the solvers): imported once, in the server. Then the
# libraries afr imports only when a command runs, which a child would otherwise import afresh
# (about a second of its CPU): the command line's parameter parsing (pydantic), scikit-learn and
# SciPy's statistics (any run or table), the progress display. Only third-party modules: afr's
# own modules a command loads late stay loaded by the child, as the console script loads them.
PRELOAD = ("afr_cli.cli", "afr_cli.config.experiment", "afr_cli.engine.runner", "afr_cli.store")
LIBRARIES = ("typer._adapters", "sklearn.base", "scipy.stats", "rich.progress")


@dataclass(frozen=True)
class Invocation:
    """One ``afr ARGS`` run in ``cwd`` with exactly the environment ``env``."""

    args: tuple[str, ...]
    cwd: Path
    env: dict[str, str]


def afr_script() -> str:
    """The installed console script (its directory is sys.path[0] of a real ``afr``)."""
    return str(Path(sys.executable).parent / "afr")


def run_afr_forked(
    invocations: list[Invocation], jobs: int = 2, timeout: float = 900, under: tuple[str, ...] = ()
) -> list[subprocess.CompletedProcess]:
    """Run every invocation as a child of one forking server, ``jobs`` at a time; each one's exit
    code, stdout and stderr as ``subprocess.run(..., capture_output=True, text=True)`` gives them.

    ``under`` is a command the server starts under, one that ends by exec'ing the arguments after
    it (``unshare -m sh -c 'mount ... && exec "$@"' DIR``: a mount namespace in which DIR is
    read-only): every child is then in what that command set up, as an ``afr`` started under it is."""
    with tempfile.TemporaryDirectory(prefix="afr-forks-") as scratch:
        requests = []
        for i, inv in enumerate(invocations):
            out, err = Path(scratch) / f"{i}.out", Path(scratch) / f"{i}.err"
            requests.append(
                {
                    "args": [afr_script(), *inv.args],
                    "cwd": str(inv.cwd),
                    "env": inv.env,
                    "out": str(out),
                    "err": str(err),
                }
            )
        server = subprocess.run(
            [*under, sys.executable, __file__, str(jobs)],
            input="\n".join(map(json.dumps, requests)),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_server_env(),
        )
        if server.returncode != 0:
            raise RuntimeError(f"the afr fork server failed ({server.returncode}): {server.stderr[-3000:]}")
        codes = {int(i): int(code) for i, code in (line.split() for line in server.stdout.splitlines())}
        assert sorted(codes) == list(range(len(invocations))), server.stdout
        return [
            subprocess.CompletedProcess(r["args"], codes[i], Path(r["out"]).read_text(), Path(r["err"]).read_text())
            for i, r in enumerate(requests)
        ]


class _Server:
    """A fork server answering one invocation at a time for as long as the test process lives.

    Protocol: the server prints ``ready`` once it has imported PRELOAD (its own stdout and stderr of
    that phase went to files, read here once), then for each request line it prints the child's pid
    and, when the child ends, its exit code."""

    def __init__(self) -> None:
        self.scratch = tempfile.TemporaryDirectory(prefix="afr-forks-")
        preload_out, preload_err = Path(self.scratch.name) / "preload.out", Path(self.scratch.name) / "preload.err"
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "stream", str(preload_out), str(preload_err)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=_SESSION_ENV,
        )
        self.pending = b""
        self.count = 0
        try:
            ready = self._line(None)
        except RuntimeError:
            ready = None
        if ready != "ready":
            raise RuntimeError(f"the afr fork server did not start: {preload_err.read_text()[-3000:]}")
        self.preload = (preload_out.read_text(), preload_err.read_text())

    def _line(self, deadline: float | None) -> str | None:
        """The server's next line, or None when ``deadline`` (time.monotonic()) passes first."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([fd], [], [], wait)[0]:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError(f"the afr fork server ended (exit {self.proc.wait()})")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode()

    def run(self, invocation: Invocation, timeout: float) -> subprocess.CompletedProcess:
        self.count += 1
        out, err = Path(self.scratch.name) / f"{self.count}.out", Path(self.scratch.name) / f"{self.count}.err"
        args = [afr_script(), *invocation.args]
        request = {"args": args, "cwd": str(invocation.cwd), "env": invocation.env, "out": str(out), "err": str(err)}
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        pid = int(self._line(None))
        code = self._line(time.monotonic() + timeout)
        timed_out = code is None
        if timed_out:  # as subprocess.run does: kill the process, collect what it wrote, raise
            os.kill(pid, signal.SIGKILL)
            code = self._line(None)
        stdout, stderr = self.preload[0] + out.read_text(), self.preload[1] + err.read_text()
        out.unlink()
        err.unlink()
        if timed_out:
            raise subprocess.TimeoutExpired(args, timeout, output=stdout, stderr=stderr)
        return subprocess.CompletedProcess(args, int(code), stdout, stderr)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.scratch.cleanup()


_server: _Server | None = None


def run_one(invocation: Invocation, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run one invocation as a child of this process's long-lived fork server (started on first
    use, ended when this process exits); like ``subprocess.run(..., capture_output=True,
    text=True, timeout=timeout)``, it raises ``subprocess.TimeoutExpired`` after killing a child
    that outlives ``timeout``."""
    global _server
    if _server is None or _server.proc.poll() is not None:
        _server = _Server()
        atexit.register(_server.close)
    return _server.run(invocation, timeout)


def _server_env() -> dict[str, str]:
    """The test's environment (as a real ``afr`` run from it would see it)."""
    return dict(os.environ)


# The session's environment, taken when the tests start (before any test changes os.environ): the
# long-lived server imports in it; each child then takes its own invocation's environment.
_SESSION_ENV = dict(os.environ)


def _become(request: dict, server_path: list[str]) -> None:
    """Make this forked child the invocation's process: streams, directory, environment, sys.path, argv."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    for fd, name in ((1, "out"), (2, "err")):
        target = os.open(request[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    entries = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [sys.path[0], *entries, *server_path]
    sys.argv[:] = request["args"]


def _preload() -> list[str]:
    """Import PRELOAD as the console script would (sys.path: its own directory first, then
    PYTHONPATH, then the rest); the sys.path a child puts after its own PYTHONPATH."""
    import importlib

    sys.path[0] = str(Path(afr_script()).parent)
    own = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    server_path = [p for p in sys.path[1:] if p not in own]
    for name in (*PRELOAD, *LIBRARIES):
        importlib.import_module(name)
    # Everything imported so far is the children's shared, read-only start: moved out of the cyclic
    # collector's reach, a child neither copies those pages when a collection touches them nor
    # walks them again when its interpreter exits (the pattern gc.freeze documents for forking).
    gc.freeze()
    return server_path


def _stream(preload_out: str, preload_err: str) -> None:
    """Serve one request at a time until stdin closes: print the child's pid when it starts and
    its exit code when it ends. The import phase writes to the two files given, then stdout is
    the protocol's again. A child returns from here by raising SystemExit."""
    protocol = os.dup(1)
    for fd, name in ((1, preload_out), (2, preload_err)):
        target = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    server_path = _preload()
    main = sys.modules["afr_cli.cli"].main
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(protocol, 1)
    os.close(protocol)
    print("ready", flush=True)
    while line := sys.stdin.buffer.readline():
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _become(request, server_path)
            sys.exit(main())  # the console script's last line; unwinds to the interpreter's exit
        print(pid, flush=True)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), flush=True)


def _serve(jobs: int) -> None:
    """Read every request (JSON lines on stdin), fork a child per request, ``jobs`` at a time, and
    print ``INDEX EXITCODE`` as each ends. A child returns from here by raising SystemExit."""
    server_path = _preload()
    main = sys.modules["afr_cli.cli"].main
    pending = [json.loads(line) for line in sys.stdin.read().splitlines() if line.strip()]
    order = list(range(len(pending)))
    running: dict[int, int] = {}
    while order or running:
        while order and len(running) < jobs:
            index = order.pop(0)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _become(pending[index], server_path)
                sys.exit(main())  # the console script's last line; unwinds to the interpreter's exit
            running[pid] = index
        pid, status = os.wait()
        print(running.pop(pid), os.waitstatus_to_exitcode(status), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "stream":
        _stream(sys.argv[2], sys.argv[3])
    else:
        _serve(int(sys.argv[1]))
