"""Faults a run meets while it runs, with live processes: SIGTERM and SIGKILL of the
parent (no worker survives it), two runs on one store (the second refuses naming the first's PID;
a dead holder's lock is taken over; no unit is computed twice), a plugin failing inside a unit,
and storage faults (a file-size limit, a full disk) that end in one line, leave only whole units
and resume to exactly the rows of an uninterrupted run."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from conftest import afr_bin, run_afr

pytestmark = pytest.mark.slow

SLOW = {  # units of a fraction of a second each: long enough to stop a run in its middle
    "name": "slow",
    "seed": 3,
    "protocol": {"reps": 400, "inner_folds": 2},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 20, "min_samples_leaf": 5}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "a", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5, 1.0], "tau": [0.1, 1.0, 10.0]}},
    ],
}

FAILING_FAMILY = '''
import os
import time

from afr_cli.models.abrf import EpsABRFFamily


class FailsOnRep(EpsABRFFamily):
    """eps-ABRF that raises in every unit while FAIL_PLUGIN=1 (a bug its author then fixes), exits
    with FAIL_PLUGIN=exit, and takes a fifth of a second per call with FAIL_PLUGIN=slow (a run that
    is surely still going when a test acts on it, however fast the machine)."""

    name = "fails-on-rep"

    def features(self, rows, design):
        if os.environ.get("FAIL_PLUGIN") == "1":
            raise ValueError("the plugin's own bug")
        if os.environ.get("FAIL_PLUGIN") == "exit":
            os._exit(0)
        if os.environ.get("FAIL_PLUGIN") == "slow":
            time.sleep(0.2)
        return super().features(rows, design)
'''


def _config(tmp: Path, name: str = "c.yaml", **changes) -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump({**SLOW, **changes}))
    return path


def _start(tmp: Path, config: Path, out: str, *extra: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [afr_bin(), "run", str(config), "--out", out, "-q", *extra],
        cwd=tmp,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run(tmp: Path, config: Path, out: str, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``afr run`` to its end, as a child of this process's fork server (conftest.run_afr): for
    the runs no test signals or watches while they run."""
    return run_afr("run", str(config), "--out", out, "-q", *extra, cwd=tmp, env={**os.environ, **(env or {})})


def _units(store: Path) -> int:
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30) as conn:
            return conn.execute("SELECT count(*) FROM units").fetchone()[0]
    except sqlite3.Error:
        return 0


def _children(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    """The pids still running (a zombie, dead but not yet reaped, counts as gone)."""
    out = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.add(pid)
    return out


def _wait_for(condition, timeout: float = 240.0, every: float = 0.2) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(every)
    return False


def _workers_running(proc: subprocess.Popen, store: Path) -> set[int]:
    """Wait until the run has stored a unit and started its workers; their pids."""
    assert _wait_for(lambda: _units(store) >= 1 and len(_children(proc.pid)) >= 2 or proc.poll() is not None)
    assert proc.poll() is None, proc.communicate()
    return _children(proc.pid)


def _rows(store: Path) -> list[tuple]:
    """The stored results without their timings: what an uninterrupted run must reproduce."""
    with sqlite3.connect(store) as conn:
        return conn.execute(
            "SELECT dataset, base, model, rep, r2, mae, rmse, params, selection, cv_score "
            "FROM results ORDER BY dataset, base, model, rep"
        ).fetchall()


def test_sigterm_stops_the_run_like_ctrl_c_and_its_workers(tmp_path):
    proc = _start(tmp_path, _config(tmp_path), "s", "--jobs", "2")
    workers = _workers_running(proc, tmp_path / "s" / "store.sqlite")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    lines = [line for line in err.splitlines() if line.strip()]
    assert proc.returncode == 143, err
    assert len(lines) == 1 and lines[0].startswith("interrupted: ") and "resumes" in lines[0], err
    assert _wait_for(lambda: not _alive(workers), timeout=10), _alive(workers)


def test_no_worker_survives_its_parent_killed(tmp_path):
    proc = _start(tmp_path, _config(tmp_path), "s", "--jobs", "2")
    workers = _workers_running(proc, tmp_path / "s" / "store.sqlite")
    proc.kill()
    proc.wait(timeout=30)
    assert _wait_for(lambda: not _alive(workers), timeout=10), subprocess.run(
        ["ps", "-o", "pid,ppid,cmd", "-p", ",".join(map(str, _alive(workers)))], capture_output=True, text=True
    ).stdout


def test_one_writer_per_store_and_a_dead_holders_lock_is_taken_over(tmp_path):
    (tmp_path / "fails.py").write_text(FAILING_FAMILY)
    config = _config(
        tmp_path,
        protocol={**SLOW["protocol"], "reps": 60},
        models=[
            {"id": "rf", "family": "forest"},
            {"id": "p", "family": "fails:FailsOnRep", "grid": {"eps": [0.0, 1.0]}},
        ],
    )
    env = {"PYTHONPATH": os.pathsep.join(filter(None, (str(tmp_path), os.environ.get("PYTHONPATH"))))}
    first = _start(tmp_path, config, "s", "--jobs", "1", env={**env, "FAIL_PLUGIN": "slow"})
    store = tmp_path / "s" / "store.sqlite"
    assert _wait_for(lambda: _units(store) >= 1 or first.poll() is not None)
    assert first.poll() is None, first.communicate()  # slow units: the holder is still running
    second = run_afr("run", str(config), "--out", "s", "--jobs", "1", "-q", cwd=tmp_path, env={**os.environ, **env})
    lines = [line for line in second.stderr.splitlines() if line.strip()]
    assert second.returncode == 2 and len(lines) == 1, second.stderr
    assert f"PID {first.pid}" in lines[0] and "store.sqlite.lock" in lines[0], lines[0]
    first.kill()  # the holder dies holding the lock: the kernel releases it
    first.wait(timeout=30)
    stored = _units(store)
    third = run_afr("run", str(config), "--out", "s", "--jobs", "1", "-q", cwd=tmp_path, env={**os.environ, **env})
    assert third.returncode == 0, third.stderr
    assert f"{stored} already stored, {60 - stored} to run" in third.stdout, third.stdout
    assert _units(store) == 60  # every unit once: the primary key would refuse a second copy anyway


def test_a_lock_file_of_a_dead_process_is_taken_over(tmp_path):
    config = _config(tmp_path, protocol={**SLOW["protocol"], "reps": 1})
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "store.sqlite.lock").write_text("999999\n")  # no process holds it
    proc = run_afr("run", str(config), "--out", "s", "--jobs", "1", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    holder = (tmp_path / "s" / "store.sqlite.lock").read_text().strip()
    assert holder.isdigit() and holder != "999999"  # the run took the lock and wrote its own pid


def test_a_plugin_failing_in_a_unit_ends_the_run_in_one_line_and_the_rerun_resumes(tmp_path):
    (tmp_path / "fails.py").write_text(FAILING_FAMILY)
    config = _config(
        tmp_path,
        protocol={"reps": 2, "inner_folds": 2},
        models=[{"id": "p", "family": "fails:FailsOnRep", "grid": {"eps": [0.0, 1.0]}}],
    )
    env = {
        "PYTHONPATH": os.pathsep.join(filter(None, (str(tmp_path), os.environ.get("PYTHONPATH")))),
        "FAIL_PLUGIN": "1",
    }
    for jobs in ("1", "2"):
        proc = _run(tmp_path, config, "s", "--jobs", jobs, env=env)
        err = proc.stderr
        lines = [line for line in err.splitlines() if line.strip()]
        assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in err, err
        assert "unit Friedman1 / RF@20 / rep " in lines[0] and "'fails:FailsOnRep'" in lines[0], lines[0]
        assert "the plugin's own bug" in lines[0]
        # it ends with the command that resumes once the plugin is fixed: the one typed, -q as --quiet
        assert lines[0].endswith(f"rerunning the command resumes: afr run {config} --out s --quiet --jobs {jobs}")
    for jobs in ("1", "2"):  # os._exit in a unit: caught in the process running it, never a silent exit 0
        proc = _run(tmp_path, config, "s", "--jobs", jobs, env={**env, "FAIL_PLUGIN": "exit"})
        err = proc.stderr
        lines = [line for line in err.splitlines() if line.strip()]
        assert proc.returncode == 1 and len(lines) == 1 and "os._exit(0)" in lines[0], err
    from afr_cli.store import ResultsStore

    runs = ResultsStore(tmp_path / "s").manifest()["runs"]
    assert "fails:FailsOnRep" in runs[-1]["failed"] and "fails:FailsOnRep" in runs[-2]["failed"]
    fixed = _run(tmp_path, config, "s", "--jobs", "1", env={**env, "FAIL_PLUGIN": "0"})
    assert fixed.returncode == 0, fixed.stderr
    assert _units(tmp_path / "s" / "store.sqlite") == 2


def _limit_file_size(size: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return apply


def test_a_file_size_limit_is_one_line_and_the_resume_is_exact(tmp_path):
    config = _config(tmp_path, protocol={"reps": 8, "inner_folds": 2})
    clean = run_afr("run", str(config), "--out", "clean", "--jobs", "1", "-q", cwd=tmp_path)
    assert clean.returncode == 0, clean.stderr
    limited = subprocess.run(
        [afr_bin(), "run", str(config), "--out", "s", "--jobs", "1", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=_limit_file_size(48 * 1024),
    )
    lines = [line for line in limited.stderr.splitlines() if line.strip()]
    assert limited.returncode == 1 and len(lines) == 1 and "Traceback" not in limited.stderr, limited.stderr
    assert "s/store.sqlite" in lines[0] and "cannot store unit" in lines[0], lines[0]
    assert not (tmp_path / "s" / "store.sqlite-journal").exists()
    assert 0 < _units(tmp_path / "s" / "store.sqlite") < 8
    resumed = run_afr("run", str(config), "--out", "s", "--jobs", "1", "-q", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert _rows(tmp_path / "s" / "store.sqlite") == _rows(tmp_path / "clean" / "store.sqlite")


def _can_mount_tmpfs() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    return (
        subprocess.run(
            ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], capture_output=True
        ).returncode
        == 0
    )


@pytest.mark.skipif(not _can_mount_tmpfs(), reason="needs root and unshare -m to mount a small tmpfs")
def test_a_full_disk_is_one_line_naming_the_store(tmp_path):
    config = _config(tmp_path, protocol={"reps": 8, "inner_folds": 2})
    (tmp_path / "disk").mkdir()
    script = 'mount -t tmpfs -o size=48k tmpfs "$0" && exec "$@"'
    proc = subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            script,
            str(tmp_path / "disk"),
            afr_bin(),
            "run",
            str(config),
            "--out",
            str(tmp_path / "disk" / "s"),
            "--jobs",
            "1",
            "-q",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "store.sqlite" in lines[0] and "disk is full" in lines[0], lines[0]
