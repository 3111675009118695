"""Plugin and loader faults, each a real ``afr`` process: no failure exits 0, and each is
one line naming the plugin or loader and the call, with no traceback.

Every case runs one plugin file (``fam.py``, named in the config's ``plugins:``, its family and
ensemble used by their registered names as docs/tutorial-own-family.md does) or a loader, told by
the environment variable ``MODE`` how to fail: raise, ``sys.exit(0)``, ``os._exit(0)``, kill its
own process, return predictions of the wrong shape or no feature column; at import, construction,
inside a unit or when called; under ``afr validate``, ``afr run`` and ``afr reproduce``; at
``--jobs 1`` and ``--jobs 2``.

A failure found before anything is computed (import, construction, a loader) is exit 2 and
leaves every file as it was. A failure inside a unit is exit 1: the store the run opened holds no
unit and names the failure in its run history (a killed worker's line is not recorded there), and
nothing else is written. The cases run two at a
time as children of one process that imported afr once (tests/afr_forkserver.py); the signals
(Ctrl-C exits 130, SIGTERM 143, each with one line, in every phase) need live processes.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from afr_forkserver import Invocation, run_afr_forked
from conftest import ROOT, afr_bin

pytestmark = pytest.mark.slow

PLUGIN = '''
import os
import sys
import time
from pathlib import Path

from afr_cli.ensembles import get_ensemble
from afr_cli.family_api import EpsABRFFamily

MODE = os.environ.get("MODE", "")


def _act(where):
    """Fail as MODE says when MODE names ``where``."""
    if MODE == where + "-raise":
        raise ValueError("plugin bug at " + where)
    if MODE == where + "-exit0":
        sys.exit(0)
    if MODE == where + "-osexit0":
        os._exit(0)
    if MODE == where + "-kill":
        os.kill(os.getpid(), 9)
    if MODE == where + "-sleep":
        Path(os.environ["MARK"]).write_text("started")
        time.sleep(120)


_act("import")


class Mine(EpsABRFFamily):
    name = "mine"

    def __init__(self):
        _act("construct")
        super().__init__()

    def features(self, rows, design):
        _act("features")
        return super().features(rows, design)

    def predict(self, feats, mixing, theta):
        pred = super().predict(feats, mixing, theta)
        return pred.reshape(-1, 1) if MODE == "predict-column" else pred


class MyForest(type(get_ensemble("rf"))):
    name = "my-forest"

    def __init__(self):
        _act("forest-construct")
        super().__init__()

    def fit(self, *args, **kwargs):
        _act("forest-fit")
        return super().fit(*args, **kwargs)


def load():
    _act("load")
    import numpy as np
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(60, random_state=0)
    return (np.zeros((60, 0)) if MODE == "load-no-columns" else X), y
'''

# A loader of its own module (not a plugins: file), found on PYTHONPATH, that exits while imported.
LOADER_MODULE = """
import os
import sys

if os.environ.get("MODE") == "loader-module-import-exit0":
    sys.exit(0)


def load():
    raise AssertionError("never called")
"""

BASE = {"kind": "rf", "n_estimators": 3, "min_samples_leaf": 5}
FAMILY = {  # the tutorial's way: the plugin file's family by its registered name
    "name": "own",
    "seed": 1,
    "plugins": ["fam.py"],
    "protocol": {"reps": 1, "inner_folds": 2},
    "datasets": ["Friedman1"],
    "bases": [BASE],
    "models": [{"id": "m", "family": "mine", "grid": {"eps": [0.0, 1.0]}}],
}
ENSEMBLE = {**FAMILY, "bases": [{**BASE, "kind": "my-forest"}], "models": [{"id": "rf", "family": "forest"}]}
LOADER = {**FAMILY, "datasets": [{"name": "L", "loader": "fam:load"}], "models": [{"id": "rf", "family": "forest"}]}
OWN_LOADER = {**LOADER, "plugins": [], "datasets": [{"name": "L", "loader": "own_loader:load"}]}


@dataclass(frozen=True)
class Case:
    name: str
    config: dict
    mode: str
    command: str  # validate, run or reproduce
    jobs: int = 1
    code: int = 2  # 2: refused before anything is computed; 1: a fault inside a unit
    needles: tuple[str, ...] = ()

    def args(self) -> tuple[str, ...]:
        if self.command == "validate":
            return ("validate", "c.yaml")
        if self.command == "run":
            return ("run", "c.yaml", "--out", "s", "--jobs", str(self.jobs), "-q")
        return ("reproduce", "c.yaml", "--root", "R", "--jobs", str(self.jobs), "-q", "--no-site")


def _both(name: str, config: dict, mode: str, needles: tuple[str, ...], jobs: int = 1) -> list[Case]:
    return [
        Case(f"{name}-validate", config, mode, "validate", needles=needles),
        Case(f"{name}-run", config, mode, "run", jobs, needles=needles),
    ]


UNIT = ("'mine' (fam.Mine)", "unit Friedman1 / RF@3 / rep 0")
CASES = [
    # -- refused before anything is computed: exit 2, every file as it was -------------------------
    *_both("plugin-file-import-exit0", FAMILY, "import-exit0", ("plugins[0]", "fam.py", "exit(0)", "imported")),
    *_both("plugin-file-import-os-exit", FAMILY, "import-osexit0", ("fam.py", "os._exit(0)"), jobs=2),
    *_both("plugin-file-import-raises", FAMILY, "import-raise", ("fam.py", "ValueError", "plugin bug at import")),
    Case("plugin-file-import-exit0-reproduce", FAMILY, "import-exit0", "reproduce", needles=("fam.py", "exit(0)")),
    *_both(
        "registered-family-construction-raises",
        FAMILY,
        "construct-raise",
        ("'mine' (fam.Mine)", "construction", "plugin bug at construct"),
        jobs=2,
    ),
    *_both("registered-family-construction-exit0", FAMILY, "construct-exit0", ("'mine'", "construction", "exit(0)")),
    Case(
        "registered-ensemble-construction-os-exit",
        ENSEMBLE,
        "forest-construct-osexit0",
        "validate",
        needles=("'my-forest' (fam.MyForest)", "os._exit(0)"),
    ),
    *_both("loader-exit0", LOADER, "load-exit0", ("loader fam:load", "exit(0)", "called")),
    *_both("loader-os-exit", LOADER, "load-osexit0", ("loader fam:load", "os._exit(0)"), jobs=2),
    Case("loader-exit0-reproduce", LOADER, "load-exit0", "reproduce", needles=("loader fam:load", "exit(0)")),
    *_both(
        "loader-module-exits-while-imported",
        OWN_LOADER,
        "loader-module-import-exit0",
        ("loader own_loader:load", "exit(0)", "imported"),
    ),
    *_both("loader-no-feature-columns", LOADER, "load-no-columns", ("loader fam:load", "feature column")),
    Case(
        "module-plugin-exits-while-imported",
        {**FAMILY, "plugins": ["own_loader"]},
        "loader-module-import-exit0",
        "validate",
        needles=("plugins[0]", "'own_loader'", "exit(0)", "imported"),
    ),
    # -- a fault inside a unit: exit 1, no unit stored, nothing written outside the store ----------
    *(
        Case(
            f"registered-family-features-{how}-jobs{jobs}",
            FAMILY,
            f"features-{how}",
            "run",
            jobs,
            1,
            (*UNIT, "Mine.features", said),
        )
        for how, said, job_counts in (
            ("raise", "plugin bug at features", (1, 2)),
            ("exit0", "exit(0)", (1, 2)),
            ("osexit0", "os._exit(0)", (1,)),
        )  # os._exit in a worker: test_faults.py
        for jobs in job_counts
    ),
    *(
        Case(
            f"registered-family-predict-column-jobs{jobs}",
            FAMILY,
            "predict-column",
            "run",
            jobs,
            1,
            (*UNIT, "predict returned shape (40, 1)", "shape (40,)"),
        )
        for jobs in (1, 2)
    ),
    Case(
        "registered-ensemble-fit-exit0",
        ENSEMBLE,
        "forest-fit-exit0",
        "run",
        1,
        1,
        ("'my-forest' (fam.MyForest)", "MyForest.fit", "exit(0)"),
    ),
    Case("registered-family-features-exit0-reproduce", FAMILY, "features-exit0", "reproduce", 1, 1, (*UNIT, "exit(0)")),
    Case("worker-killed-in-a-unit", FAMILY, "features-kill", "run", 2, 1, ("worker process died", "'mine'")),
]


def _digest(root: Path) -> dict[str, str | None]:
    """Every path below root: a file's SHA-256, None for a directory."""
    return {
        str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def _setup(tmp: Path, config: dict) -> None:
    """The case's folder: the config and its plugin file; the loader module in a folder of its own
    on PYTHONPATH (importing it writes __pycache__ there, not into the folder compared)."""
    (tmp / "fam.py").write_text(PLUGIN)
    (tmp / "c.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    modules = _modules(tmp)
    modules.mkdir(exist_ok=True)
    (modules / "own_loader.py").write_text(LOADER_MODULE)


def _modules(tmp: Path) -> Path:
    return tmp.parent / f"{tmp.name}-modules"


def _env(tmp: Path, mode: str) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(_modules(tmp)), os.environ.get("PYTHONPATH")) if p)
    return {
        **os.environ,
        "MPLBACKEND": "Agg",
        "PYTHONPATH": path,
        "COLUMNS": "80",
        "MODE": mode,
        "MARK": str(tmp.parent / f"{tmp.name}-started"),
    }


@dataclass
class Outcome:
    proc: subprocess.CompletedProcess
    before: dict
    after: dict
    tmp: Path


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, Outcome]:
    prepared = []
    for case in CASES:
        tmp = tmp_path_factory.mktemp(case.name)
        _setup(tmp, case.config)
        prepared.append((case, tmp, Invocation(case.args(), tmp, _env(tmp, case.mode)), _digest(tmp)))
    procs = run_afr_forked([invocation for _, _, invocation, _ in prepared], jobs=2)
    return {
        case.name: Outcome(proc, before, _digest(tmp), tmp) for (case, tmp, _, before), proc in zip(prepared, procs)
    }


def _one_line(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1, proc.stderr
    return lines[0]


def _store_files(tmp: Path) -> list[Path]:
    return [p for p in tmp.rglob("store.sqlite")]


def test_the_corpus_has_twenty_cases_over_every_command_and_both_job_counts():
    assert len(CASES) >= 20 and len({c.name for c in CASES}) == len(CASES)
    assert {c.command for c in CASES} == {"validate", "run", "reproduce"}
    assert {c.jobs for c in CASES if c.command == "run"} == {1, 2}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_a_plugin_or_loader_fault_is_one_line_and_never_exit_0(case: Case, outcomes: dict[str, Outcome]):
    outcome = outcomes[case.name]
    line = _one_line(outcome.proc)
    assert outcome.proc.returncode == case.code, (outcome.proc.returncode, outcome.proc.stderr)
    assert line.startswith("error: "), line
    for needle in case.needles:
        assert needle in line, (needle, line)
    if case.code == 2:
        assert outcome.after == outcome.before, "a refusal must leave every file as it was"
        return
    stores = _store_files(outcome.tmp)  # the store the run opened: no unit, the failure in its history
    assert len(stores) == 1, stores
    with sqlite3.connect(stores[0]) as conn:
        assert conn.execute("SELECT count(*) FROM units").fetchone()[0] == 0
    conn.close()
    if "worker process died" not in line:  # a unit's failure is recorded where afr status reads it
        from afr_cli.store import ResultsStore

        assert ResultsStore(stores[0].parent).manifest()["runs"][-1]["failed"] == line.removeprefix("error: ")
    outside = {k: v for k, v in outcome.after.items() if not k.startswith(("s", "R"))}
    assert outside == outcome.before, "nothing is written outside the store"


# -- signals: live processes, each signalled once it is surely in the phase named ---------------


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has installed its SIGTERM handler (afr's, so it will print its line)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


def _signalled(
    tmp: Path, args: tuple[str, ...], mode: str, sig: int, ready, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    # Ctrl-C's SIGINT at its default: a shell starting the tests as a background job ignores it, and
    # Python keeps an ignored SIGINT ignored (as afr does: nohup and background jobs stay immune).
    proc = subprocess.Popen(
        [afr_bin(), *args],
        cwd=cwd or tmp,
        env=_env(tmp, mode),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    end = time.monotonic() + 120
    while not ready(proc) and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


# (name, config, command, MODE, signal, code, the line's start, its phase). Both signals take one
# path in every command (afr_cli.cli), so each phase is held by one of them; a run's own loop is
# tests/test_faults.py's (SIGTERM) and tests/test_engine.py's (Ctrl-C).
SIGNAL_CASES = [
    (
        "sigterm-in-a-loader-validate",
        LOADER,
        ("validate", "c.yaml"),
        "load-sleep",
        signal.SIGTERM,
        143,
        "terminated: afr validate stopped by SIGTERM",
        "loader fam:load",
    ),
    (
        "ctrl-c-in-a-loader-run",
        LOADER,
        ("run", "c.yaml", "--out", "s", "-q", "--jobs", "1"),
        "load-sleep",
        signal.SIGINT,
        130,
        "interrupted: afr run stopped by Ctrl-C",
        "loader fam:load",
    ),
    (
        "sigterm-importing-a-plugin-validate",
        FAMILY,
        ("validate", "c.yaml"),
        "import-sleep",
        signal.SIGTERM,
        143,
        "terminated: afr validate stopped by SIGTERM",
        "importing c.yaml: plugins[0] (fam.py)",
    ),
    (
        "ctrl-c-in-a-loader-reproduce",
        LOADER,
        ("reproduce", "c.yaml", "--root", "R", "-q", "--no-site"),
        "load-sleep",
        signal.SIGINT,
        130,
        "interrupted: afr reproduce stopped by Ctrl-C",
        "loader fam:load",
    ),
]


@pytest.mark.parametrize(
    "name,config,args,mode,sig,code,start,phase", [pytest.param(*c, id=c[0]) for c in SIGNAL_CASES]
)
def test_a_signal_in_every_phase_is_one_line_and_its_exit_code(
    tmp_path, name, config, args, mode, sig, code, start, phase
):
    _setup(tmp_path, config)
    before = _digest(tmp_path)
    proc = _signalled(tmp_path, args, mode, sig, lambda p: Path(_env(tmp_path, mode)["MARK"]).exists())
    line = _one_line(proc)
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert line.startswith(start) and phase in line, line
    assert _digest(tmp_path) == before, "a command stopped before it computed anything writes nothing"


@pytest.mark.parametrize("sig,code,word", [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")])
def test_a_signal_while_building_reports_is_one_line(tmp_path, sig, code, word, monkeypatch):
    """``afr report --check`` regenerates every page in a scratch copy (about a minute): a signal
    once afr's handlers are installed stops it with one line naming the command."""
    monkeypatch.setenv("AFR_REPORT_FULL", "1")  # a check recorded for this state would answer at once
    proc = _signalled(
        tmp_path,
        ("report", "--check"),
        "",
        sig,
        lambda p: _catches_sigterm(p.pid) and time.sleep(1.0) is None,
        cwd=ROOT,
    )
    line = _one_line(proc)
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert line.startswith(f"{word}: afr report stopped by"), line


def test_an_exit_no_guard_caught_is_still_one_line_and_exit_1(monkeypatch, capsys):
    """The last net: a SystemExit escaping a command (code of the user's that afr did not wrap,
    a library it called) is never afr's exit 0."""
    from afr_cli import cli

    def exits():
        raise SystemExit(0)

    monkeypatch.setattr(cli, "_run_app", exits)
    monkeypatch.setattr("sys.argv", ["afr", "run", "c.yaml"])
    monkeypatch.setattr(cli, "sigterm_as_interrupt", lambda: None)  # the test process keeps its handlers
    with pytest.raises(SystemExit) as ended:
        cli.main()
    assert ended.value.code == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: afr run: ") and "exit(0)" in lines[0], lines
