"""The registered families' hyperparameter names in registration order (the order the tables
print selected parameters in) without importing the families in a process that has not: the
families import scikit-learn, SciPy and cvxpy, seconds of CPU, and a table computes nothing
with them.

In a process that has imported ``afr_cli.models`` the names are read from its registry as it
stands (a family registered at run time included). Otherwise they come from the export cache
(afr_cli/store/cache.py) under the SHA-256 of every afr source file: a fresh process imports
exactly that registry, so the names are a function of the source, and any edit to it derives
them again (reading and hashing the package's source takes a few milliseconds).
"""

from __future__ import annotations

import sys
from pathlib import Path

from afr_cli.store.cache import cached, content_key

PACKAGE = Path(__file__).resolve().parents[1]


def _registered() -> tuple[str, ...]:
    from afr_cli.models import FAMILIES

    return tuple(dict.fromkeys(p.name for f in FAMILIES.values() for p in f.params))


def _package_source() -> list[bytes]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        out += [path.relative_to(PACKAGE).as_posix().encode(), path.read_bytes()]
    return out


def family_param_order() -> tuple[str, ...]:
    """Every registered family's hyperparameter names, in registration order."""
    if "afr_cli.models" in sys.modules:
        return _registered()
    return cached("code", content_key("family-param-order", *_package_source()), _registered)
