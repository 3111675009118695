"""The commands afr prints as hints are the user's own command, every option as given: rebuilt
from the parsed options (afr_cli/commands/options.py ``given_command``) and quoted for the shell
(afr_cli/engine/messages.py). The Ctrl-C hint followed literally is tested end to end in
tests/test_engine.py (an interrupted two-worker run resumed by the printed line)."""

from __future__ import annotations

import shlex

import typer
from typer.testing import CliRunner

from afr_cli.commands.options import given_command
from afr_cli.engine.messages import failed_message, interrupted_message, shell_line, with_option


def _typed(args: list[str], leave_out: tuple[str, ...] = ()) -> list[str]:
    """What given_command rebuilds inside a command shaped like `afr run` from ``args``."""
    app = typer.Typer()
    seen: list[list[str]] = []

    @app.command()
    def run(
        ctx: typer.Context,
        config: str = typer.Argument(...),
        reps: int | None = typer.Option(None, "--reps"),
        jobs: int = typer.Option(-1, "--jobs", "-j"),
        datasets: str | None = typer.Option(None, "--datasets"),
        set_: list[str] = typer.Option([], "--set"),
        fresh: bool = typer.Option(False, "--fresh"),
        quiet: bool = typer.Option(False, "--quiet", "-q"),
        until: tuple[str, str] | None = typer.Option(None, "--until-decided"),
    ) -> None:
        seen.append(given_command(ctx, leave_out))

    @app.command()
    def other() -> None:  # two commands: `run` is a subcommand, as in afr
        pass

    result = CliRunner().invoke(app, ["run", *args])
    assert result.exit_code == 0, result.output
    return seen[0]


def test_the_command_is_rebuilt_with_every_option_given_in_order_long_names_and_paths_as_typed():
    args = ["my dir/cfg.yaml", "-j", "2", "--set", "seed=5", "--reps", "15", "--set", "protocol.inner_folds=3", "-q"]
    got = _typed(args)
    assert got == [
        "afr",
        "run",
        "my dir/cfg.yaml",
        "--jobs",
        "2",
        "--set",
        "seed=5",
        "--set",
        "protocol.inner_folds=3",
        "--reps",
        "15",
        "--quiet",
    ]
    assert shlex.split(shell_line(got)) == got  # the printed line gives the shell back the same words
    assert "'my dir/cfg.yaml'" in shell_line(got)


def test_defaults_are_not_spelled_out_and_a_left_out_option_is_dropped():
    assert _typed(["c.yaml"]) == ["afr", "run", "c.yaml"]
    assert _typed(["c.yaml", "--fresh", "--datasets", "A,B"], ("fresh",)) == [
        "afr",
        "run",
        "c.yaml",
        "--datasets",
        "A,B",
    ]


def test_an_option_of_two_values_is_given_once_with_both():
    got = _typed(["c.yaml", "--until-decided", "rf", "my model", "--reps", "30"])
    assert got == ["afr", "run", "c.yaml", "--until-decided", "rf", "my model", "--reps", "30"]
    assert shell_line(got) == "afr run c.yaml --until-decided rf 'my model' --reps 30"


def test_one_option_is_changed_where_it_stands_or_appended():
    cmd = ["afr", "run", "c.yaml", "--reps", "15", "--out", "x"]
    assert with_option(cmd, "--reps", "30") == ["afr", "run", "c.yaml", "--reps", "30", "--out", "x"]
    assert with_option(cmd, "--jobs", "2") == [*cmd, "--jobs", "2"]
    assert with_option(cmd, "--out", None) == ["afr", "run", "c.yaml", "--reps", "15"]


def test_interrupt_and_failure_lines_end_with_the_exact_command():
    cmd = ["afr", "run", "c.yaml", "--reps", "15", "--set", "name=a b"]
    line = interrupted_message("store", 3, 30, cmd)
    assert line.endswith("missing ones: afr run c.yaml --reps 15 --set 'name=a b'")
    assert shlex.split(line.split("missing ones: ", 1)[1]) == cmd
    failed = failed_message("unit x failed: boom; rerunning the command resumes", cmd)
    assert failed.endswith("resumes: afr run c.yaml --reps 15 --set 'name=a b'")
