"""docs/tutorial-own-family.md runs as printed: its files (blocks with title="FILE", the same as
docs/own-family/) are written to an empty directory and its console commands run there, with
2 repetitions; commands with printed output print exactly that."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

TUTORIAL = ROOT / "docs" / "tutorial-own-family.md"
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.S | re.M)


def blocks() -> list[tuple[str, str, str]]:
    """(language, info after it, text) of every fenced block of the tutorial, in order."""
    return [(m[1], m[2].strip(), m[3]) for m in BLOCK.finditer(TUTORIAL.read_text(encoding="utf-8"))]


def commands(text: str) -> list[tuple[str, list[str]]]:
    """A console block's ``$ command`` lines, each with the output lines printed under it."""
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def test_the_tutorials_files_are_the_ones_in_docs_own_family():
    files = {re.search(r'title="([^"]+)"', info)[1]: text for _, info, text in blocks() if "title=" in info}
    assert set(files) == {"make_data.py", "l1_family.py", "own.yaml"}
    for name, text in files.items():
        assert (ROOT / "docs" / "own-family" / name).read_text(encoding="utf-8") == text, name


@pytest.mark.slow
def test_the_tutorial_runs_as_printed(tmp_path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    ran: dict[str, str] = {}
    for language, info, text in blocks():
        if "title=" in info:
            (tmp_path / re.search(r'title="([^"]+)"', info)[1]).write_text(text, encoding="utf-8")
        elif language == "console":
            for command, printed in commands(text):
                proc = subprocess.run(
                    command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
                )
                assert proc.returncode == 0, (command, proc.stderr)
                if printed:
                    assert proc.stdout.splitlines() == printed, command
                ran[command] = proc.stdout
    table = ran["afr table --results results/own-family --compare eps-abrf l1-abrf"]
    excerpt = next(text for language, _, text in blocks() if language == "text")
    row = next(line for line in excerpt.splitlines() if line.startswith("| MyDiabetes"))
    numbers = re.findall(r"-?\d+\.\d+", row)
    assert len(numbers) == 3 and all(n in table for n in numbers), table
    assert "Traceback" not in table


def test_the_readme_tour_runs_the_tutorials_files():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for line in (
        "python docs/own-family/make_data.py",
        "afr run docs/own-family/own.yaml --reps 2",
        "afr table --results results/own-family --compare eps-abrf l1-abrf",
        "afr report own-family",  # an experiment's report by its store's name (tests/test_site.py runs it)
    ):
        assert line in readme
    assert "docs/tutorial-own-family.md" in readme
