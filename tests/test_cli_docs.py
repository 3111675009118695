"""docs/cli.md is every command's --help, generated at a fixed width: the committed page is current,
the same text whatever the terminal, and `afr docs cli --check` fails on a stale page."""

from __future__ import annotations

import os

import typer
from conftest import run_afr

from afr_cli.cli import app
from afr_cli.commands.cli_docs import CLI_REFERENCE_FILE, cli_reference


def _reference() -> str:
    return cli_reference(typer.main.get_command(app))


def test_committed_cli_reference_is_current():
    assert CLI_REFERENCE_FILE.read_text(encoding="utf-8") == _reference(), "regenerate it: afr docs cli"


def test_every_command_has_its_section():
    text = _reference()
    for path in (
        "afr run",
        "afr reproduce",
        "afr table",
        "afr report",
        "afr docs cli",
        "afr datasets info",
        "afr bench unit",
        "afr plot curve",
    ):
        assert f"\n## {path}\n" in text
    assert "--compare" in text.split("\n## afr table\n")[1].split("\n## ")[0]


def test_reference_does_not_depend_on_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "30")
    narrow = _reference()
    monkeypatch.setenv("COLUMNS", "250")
    assert _reference() == narrow
    assert "╭" not in narrow  # click's plain formatter, never typer's rich panels


def test_check_fails_on_a_stale_page(tmp_path):
    stale = tmp_path / "cli.md"
    stale.write_text("# old\n", encoding="utf-8")
    env = {**os.environ, "COLUMNS": "60"}
    bad = run_afr("docs", "cli", "--check", "--out", str(stale), env=env)
    assert bad.returncode == 1 and "stale" in bad.stderr
    assert stale.read_text(encoding="utf-8") == "# old\n"
    assert run_afr("docs", "cli", "--out", str(stale), env=env).returncode == 0
    assert stale.read_text(encoding="utf-8") == _reference()
    ok = run_afr("docs", "cli", "--check", "--out", str(stale), env=env)
    assert ok.returncode == 0


def test_the_reference_names_no_path_of_this_machine():
    """A default that is a project path is shown relative: the page must read the same in any clone."""
    import typer

    from afr_cli.cli import app
    from afr_cli.commands.cli_docs import cli_reference
    from afr_cli.core.paths import PROJECT_ROOT

    text = cli_reference(typer.main.get_command(app))
    assert str(PROJECT_ROOT) not in text
