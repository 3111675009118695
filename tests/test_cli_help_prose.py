"""Every ``--help`` reads as prose: no Python type tags in angle brackets
(``<int>``, ``<list[str]>``, ``<bool>``), no brace placeholders in a usage line (``{config}``), and
no description broken mid-sentence -- neither cut with ``...`` in docs/cli.md's command lists nor
split at a source line break in the terminal's panels. And ``afr models`` gives every registered
family and ensemble a description of its own."""

from __future__ import annotations

import os
import re
from collections import Counter

import pytest
import typer
from typer.testing import CliRunner

from afr_cli.cli import app
from afr_cli.commands.cli_docs import cli_reference

TYPE_TAG = re.compile(r"<(?:int|float|str|bool|path|Path|datetime|list\[[^\]]*\]|[a-z]+ range|\w+(?:,\w+)+)>")
BRACE = re.compile(r"\{[A-Za-z_]+\}")


def _paths(command, path=()):
    """Every command path of the app (the root first), as ``afr X Y --help`` would name it."""
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        if not sub.hidden:
            yield from _paths(sub, (*path, name))


COMMANDS = dict(_paths(typer.main.get_command(app)))
PATHS = list(COMMANDS)
GROUPS = [path for path, command in COMMANDS.items() if getattr(command, "commands", None)]


def _terminal_help(path: tuple[str, ...], width: int, monkeypatch) -> str:
    """``afr PATH --help`` as a terminal of ``width`` columns shows it (typer's rich panels; typer
    reads the width once, at import, so it is set on the module)."""
    import typer.rich_utils

    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", width)
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_walk_reaches_every_command():
    assert len(PATHS) > 30 and ("run",) in PATHS and ("datasets", "info") in PATHS and ("bench", "unit") in PATHS


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(("afr", *p)))
def test_terminal_help_has_no_type_tags_or_brace_placeholders(path, monkeypatch):
    text = _terminal_help(path, 250, monkeypatch)
    assert not TYPE_TAG.findall(text), TYPE_TAG.findall(text)
    usage = next(line for line in text.splitlines() if "Usage:" in line)
    assert not BRACE.search(usage), usage


def test_cli_reference_has_no_type_tags_braces_or_cut_descriptions():
    text = cli_reference(typer.main.get_command(app))
    assert not TYPE_TAG.findall(text), sorted(set(TYPE_TAG.findall(text)))
    assert "x>=" not in text and "<=x" not in text and "[at least 1]" in text  # bounds in words
    usages = [line for line in text.splitlines() if line.startswith("Usage:")]
    assert len(usages) == len(PATHS) and not [u for u in usages if BRACE.search(u)]
    assert not [
        line
        for line in text.splitlines()
        if line.rstrip().endswith("...") and "Usage:" not in line and not line.rstrip().endswith("]...")
    ]


@pytest.mark.parametrize("path", GROUPS, ids=lambda p: " ".join(("afr", *p)))
def test_every_commands_description_is_one_unbroken_paragraph_in_the_terminal(path, monkeypatch):
    """At a width where every description fits on its row, each row of the commands panel starts
    with a command's name: a row without one is a description continued after a hard line break."""
    text = _terminal_help(path, 1000, monkeypatch)
    panel = text.split("Commands")[1].split("╰")[0]
    rows = [line.strip("│ ").rstrip() for line in panel.splitlines()[1:] if line.strip("│ ").strip()]
    assert rows and all(re.match(r"[a-z][a-z-]* {2,}\S", row) for row in rows), rows


def test_every_model_family_and_ensemble_has_a_description_of_its_own():
    from afr_cli.config.experiment import families_help
    from afr_cli.ensembles import ensembles_help

    for rows in (families_help(), ensembles_help()):
        counts = Counter(summary for _, summary, _ in rows)
        assert not [name for name, summary, _ in rows if counts[summary] > 1]


def test_satrf_variants_say_what_their_self_attention_compares():
    from afr_cli.models.satrf import satrf_family

    y, x, yx, y2 = (satrf_family(v, h).summary for v, h in (("y", 1), ("x", 1), ("yx", 1), ("y", 2)))
    assert "predictions" in y and "(y_i - y_k)^2" in y and "||A_i - A_k||^2" not in y
    assert "||A_i - A_k||^2" in x and "predictions" not in x and "leaves x falls in" in x
    assert "(y_i - y_k)^2 / ||A_i - A_k||^2" in yx
    assert "2 stacked" in y2 and "2 heads" in y2


@pytest.mark.slow
@pytest.mark.parametrize("args", [("run", "--help"), ("models",)], ids=["help", "models"])
def test_output_into_a_closed_pipe_ends_quietly_not_as_a_plugins_exit(args):
    """``afr X | head`` stops reading early: afr exits 1 without blaming a plugin for the exit."""
    import subprocess

    from conftest import afr_bin

    read, write = os.pipe()
    os.close(read)  # the reader is gone before afr writes a byte
    try:
        done = subprocess.run([afr_bin(), *args], stdout=write, stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write)
    assert done.returncode == 1 and done.stderr == "", done.stderr
