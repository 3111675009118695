"""The paper folders' data files, parsed once: ``afr_cli.core.yaml_safe.load_yaml`` through the disk
cache of afr_cli.store.cache.

Every ``afr table`` orders its rows and columns by the papers' data files (afr_cli/papers/*/
paper.yaml, about 50 kB of YAML), and PyYAML's pure-Python loader (the duplicate-key check needs
it) takes about 0.1 s of CPU to read them: a tenth of the CPU budget of the whole command
(``afr bench interactive``'s target).
The data a text loads to depends only on the text, the loader's source and PyYAML's version,
so those are the key: an edited file is a new key, parsed afresh, never served stale. A text
that fails to load raises as before and caches nothing.
"""

from __future__ import annotations

from typing import Any

import yaml

from afr_cli.core.yaml_safe import load_yaml
from afr_cli.store.cache import cached, content_key, source_of

KIND = "yaml"  # the cache's folder for these entries


def load_yaml_cached(text: str, source: str) -> Any:
    """``load_yaml(text, source)``, served from the cache when the same text was loaded before."""
    key = content_key(KIND, yaml.__version__, source_of("afr_cli.core.yaml_safe"), text)
    return cached(KIND, key, lambda: load_yaml(text, source))
