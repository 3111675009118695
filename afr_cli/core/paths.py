"""Where afr keeps things on disk: the project root, the dataset cache, the results stores."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # afr_cli/ (this file is afr_cli/core/paths.py)
PROJECT_ROOT = PACKAGE_DIR.parent


def data_cache_dir() -> Path:
    """The git-ignored cache for fetched UCI files (``AFR_DATA_CACHE`` overrides it)."""
    env = os.environ.get("AFR_DATA_CACHE")
    return Path(env) if env else PROJECT_ROOT / "datasets" / "cache"


def data_mirror_dir() -> Path | None:
    """A local mirror of the UCI files (``AFR_DATA_MIRROR``), or None to use the UCI archive."""
    env = os.environ.get("AFR_DATA_MIRROR")
    return Path(env) if env else None
