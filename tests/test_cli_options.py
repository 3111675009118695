"""The CLI's shape: every command a plain module-level function of its group's module,
each shared option's bound declared once (afr_cli/commands/options.py) and met by every command
that takes the option, and RunOptions keyword-only with the backend checked where it is made.

The bounds are checked in process: a bound is a typer callback, run while the command line is
parsed, so ``afr X --reps 0`` raises before the command's body (or any missing argument) is
reached, and nothing is computed. One real subprocess checks what the user sees."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest
import typer
from afr_forkserver import Invocation, run_afr_forked
from conftest import assert_one_line_error
from typer.testing import CliRunner

from afr_cli.cli import app
from afr_cli.commands.options import FAST_TREES
from afr_cli.engine.runner import RunOptions
from afr_cli.ensembles.tree_path import FAST, TREE_PATHS
from afr_cli.errors import AfrInputError

ROOT = Path(__file__).resolve().parents[1]


def _commands() -> dict[tuple[str, ...], object]:
    """Every runnable command of the afr app by its path (``("bench", "fusion")``)."""
    found: dict[tuple[str, ...], object] = {}

    def walk(command, path: tuple[str, ...]) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands is None:
            found[path] = command
            return
        for name, sub in subcommands.items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return found


def _taking(option: str) -> list[tuple[str, ...]]:
    return sorted(path for path, c in _commands().items() if any(option in p.opts for p in c.params))


def _refusal(args: list[str]) -> str:
    """The AfrInputError that parsing ``afr ARGS`` raises (the test fails if it raises none)."""
    result = CliRunner().invoke(app, args)
    assert isinstance(result.exception, AfrInputError), (args, result.exit_code, result.output, result.exception)
    return str(result.exception)


def test_every_command_is_a_module_level_function_of_a_command_module():
    commands = _commands()
    assert len(commands) >= 34  # the 34 commands and subcommands of docs/cli.md
    for path, command in commands.items():
        function = inspect.unwrap(command.callback)
        assert function.__module__.startswith("afr_cli.commands."), path
        assert function.__qualname__ == function.__name__, (path, function.__qualname__)  # not nested


def test_report_validate_and_models_have_modules_of_their_own():
    commands = _commands()
    for name in ("report", "validate", "models", "run"):
        assert inspect.unwrap(commands[(name,)].callback).__module__ == f"afr_cli.commands.{name}"


def test_every_command_taking_reps_refuses_zero_in_the_same_words():
    takers = _taking("--reps")
    assert takers == [
        ("bench", "dask"),
        ("bench", "fusion"),
        ("bench", "slurm"),
        ("bench", "steps"),
        ("bench", "unit"),
        ("plot", "curve"),
        ("report",),
        ("reproduce",),
        ("run",),
        ("table",),
    ]
    for path in takers:
        assert _refusal([*path, "--reps", "0"]) == "--reps: 0 is not allowed; an integer >= 1", path


@pytest.mark.parametrize("value", ["0", "-2"])
def test_every_command_taking_jobs_refuses_a_count_joblib_cannot_use(value):
    takers = _taking("--jobs")
    assert takers == [("fidelity", "preprocessing"), ("regress",), ("reproduce",), ("run",)]
    for path in takers:
        for option in ("--jobs", "-j"):
            message = _refusal([*path, option, value])
            assert message == f"--jobs: {value} is not allowed; a positive count or -1 for all cores", path


@pytest.mark.parametrize(
    "args, message",
    [
        (["bench", "larf", "--max-m", "0"], "--max-m: 0 is not allowed; an integer >= 1"),
        (["bench", "dm", "--train", "19"], "--train: 19 is not allowed; an integer >= 20"),
        (["bench", "floor", "--rep", "-1"], "--rep: -1 is not allowed; an integer >= 0"),
        (["bench", "trees", "--repeats", "0"], "--repeats: 0 is not allowed; an integer >= 1"),
        (["bench", "fusion", "--cache-mb", "0"], "--cache-mb: 0 is not allowed; an integer >= 1"),
        (["bench", "interactive", "--runs", "0"], "--runs: 0 is not allowed; an integer >= 1"),
    ],
)
def test_a_bench_bound_names_its_own_option(args, message):
    assert _refusal(args) == message


def test_the_trees_default_is_the_engines_fast_path():
    assert FAST_TREES == FAST and FAST in TREE_PATHS
    for path in _taking("--trees"):
        if path[0] != "bench" or path[1] == "floor":  # bench qp/satrf/larf/dm: --trees is a count
            (trees,) = [p for p in _commands()[path].params if "--trees" in p.opts]
            assert trees.default == FAST, path


def test_run_options_are_keyword_only_and_check_the_backend_when_made():
    with pytest.raises(TypeError):
        RunOptions(1)  # type: ignore[misc]
    assert RunOptions(jobs=2, progress=False).jobs == 2
    with pytest.raises(AfrInputError, match="^--backend: 'spark' is not allowed; allowed: loky, dask$"):
        RunOptions(backend="spark")
    with pytest.raises(AfrInputError, match="^--backend dask needs --scheduler ADDRESS"):
        RunOptions(backend="dask")
    assert RunOptions(backend="dask", scheduler="tcp://127.0.0.1:8786").scheduler == "tcp://127.0.0.1:8786"


@pytest.mark.slow
def test_a_bound_is_one_line_and_exit_2_for_the_user(tmp_path):
    cases = [
        (
            ("run", str(ROOT / "configs" / "quickstart.yaml"), "--reps", "0"),
            "--reps: 0 is not allowed; an integer >= 1",
        ),
        (("regress", "-j", "0"), "--jobs: 0 is not allowed; a positive count or -1 for all cores"),
        (
            ("reproduce", "larf", "--plan", "--backend", "spark"),
            "--backend: 'spark' is not allowed; allowed: loky, dask",
        ),
    ]
    procs = run_afr_forked([Invocation(args, tmp_path, dict(os.environ)) for args, _ in cases])
    for (_, needle), proc in zip(cases, procs):
        assert_one_line_error(proc, needle)
    assert not list(tmp_path.iterdir())  # nothing written
