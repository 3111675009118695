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
in order. Invocations that need something a fork cannot give (a mount namespace, another
interpreter) still run as real subprocesses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# What every command's start-up imports anyway (the command line, the config loader and the
# runner, and through them scikit-learn and the solvers): imported once, in the server.
PRELOAD = ("afr_cli.cli", "afr_cli.config.experiment", "afr_cli.engine.runner", "afr_cli.store")


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
    invocations: list[Invocation], jobs: int = 2, timeout: float = 900
) -> list[subprocess.CompletedProcess]:
    """Run every invocation as a child of one forking server, ``jobs`` at a time; each one's exit
    code, stdout and stderr as ``subprocess.run(..., capture_output=True, text=True)`` gives them."""
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
            [sys.executable, __file__, str(jobs)],
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


def _server_env() -> dict[str, str]:
    """The test's environment (as a real ``afr`` run from it would see it)."""
    return dict(os.environ)


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


def _serve(jobs: int) -> None:
    """Read every request (JSON lines on stdin), fork a child per request, ``jobs`` at a time, and
    print ``INDEX EXITCODE`` as each ends. A child returns from here by raising SystemExit."""
    import importlib

    # sys.path as the console script has it: its own directory first, then PYTHONPATH, then the rest.
    sys.path[0] = str(Path(afr_script()).parent)
    own = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    server_path = [p for p in sys.path[1:] if p not in own]
    for name in PRELOAD:
        importlib.import_module(name)
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
    _serve(int(sys.argv[1]))
