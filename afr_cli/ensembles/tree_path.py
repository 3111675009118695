"""Which path fits and applies scikit-learn's trees: ``fast`` (the default) or ``sklearn``.

Both give the same bytes (tests/test_fast_trees.py); ``fast`` skips scikit-learn's per-tree
Python overhead (``afr_cli.ensembles.fast_trees``), ``sklearn`` calls scikit-learn's own
``fit``/``apply``/``predict`` as they are and stays the reference. The path is chosen by name
(``afr run/reproduce/bench floor --trees``, ``shared_work.Speedups.fast_trees``), never by a
config key, so it changes no config hash and no stored row. It is held in a context variable
set around a fit (``use_tree_path``); a fitted ensemble remembers the path it was fitted on and
applies and predicts on that path wherever it goes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from afr_cli.errors import AfrInputError

FAST, SKLEARN = "fast", "sklearn"
TREE_PATHS = (FAST, SKLEARN)

_PATH: ContextVar[str] = ContextVar("afr_tree_path", default=FAST)


def current_tree_path() -> str:
    """The path fits take here (``fast`` unless ``use_tree_path`` says otherwise)."""
    return _PATH.get()


def fast_trees() -> bool:
    """Whether fits here take the fast path."""
    return _PATH.get() == FAST


@contextmanager
def use_tree_path(path: str) -> Iterator[None]:
    """Fit on ``path`` (``fast`` or ``sklearn``) inside the block."""
    token = _PATH.set(check_tree_path(path))
    try:
        yield
    finally:
        _PATH.reset(token)


def check_tree_path(path: str, where: str = "--trees") -> str:
    """``path`` when it names a tree path; otherwise an AfrInputError listing them."""
    if path not in TREE_PATHS:
        raise AfrInputError(f"{where}: {path!r} is not allowed; allowed: {', '.join(TREE_PATHS)}")
    return path
