"""What ``afr --version`` prints: the package version and the git commit of the code that runs,
so a number in a report can be traced to the code that produced it."""

from __future__ import annotations

import subprocess

from afr_cli import __version__
from afr_cli.core.paths import PACKAGE_DIR, PROJECT_ROOT


def git_output(*args: str) -> str | None:
    """Output of a git command in the project root, or None when git or the repository is absent."""
    try:
        out = subprocess.run(["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def version_line() -> str:
    """'afr 0.1.0 (git 1a2b3c4d5e6f)', with ' (modified)' when the package's source has uncommitted
    changes, or '(not a git checkout)' for an installed copy."""
    commit = git_output("rev-parse", "--short=12", "HEAD")
    if commit is None:
        return f"afr {__version__} (not a git checkout)"
    dirty = git_output("status", "--porcelain", "--", str(PACKAGE_DIR))
    return f"afr {__version__} (git {commit}{', modified' if dirty else ''})"
