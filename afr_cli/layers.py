"""The floors of afr_cli/, bottom first: the one declaration of which room may import which.

A room is a package directly under afr_cli/ (``engine``, ``publish`` ...) or a top-level module
(``errors``, ``family_api``, ``cli``); ``afr_cli`` itself is the package root. A module may
import from its own room and from rooms on lower floors only: never up, never sideways to
another room on its own floor. tests/test_import_graph.py checks every import in the source,
those inside functions included, against this order, by file and by room, and that no room is
missing from it; docs/design.md's module map follows the same floors.

Why this order: the ground (errors, core) knows nothing of experiments; the library floors
(statistics, solvers, store, data, trees, models) know nothing of configs; the engine runs what
a config says; figures, studies and tables read what the engine stored; publish renders pages;
the papers' study code computes what their pages quote; the report layer decides what every page
holds (a paper's, an experiment's) and drives publish; the reproduction builds on it; the
commands sit on top.
"""

from __future__ import annotations

FLOORS: tuple[tuple[str, ...], ...] = (
    ("afr_cli", "errors", "layers"),  # the package root (its version), the error types, this order
    ("core",),  # paths, safe YAML, bounds, durations, signals, the plugin registry
    ("analysis", "solvers", "store", "data", "dm", "ensembles"),  # pure libraries
    ("models", "catalogue"),  # the families over the solver layer; the papers' published data
    ("family_api", "config", "tables"),  # the plugin API; experiments as configs; result tables
    ("engine",),  # the protocol, the runner, tasks, shared work, caches
    ("figures", "studies"),  # plots and the preprocessing study over the engine
    ("publish",),  # reports, claims, pages, the site
    ("papers",),  # each paper's study code (loaded by path from its folder)
    ("reporting",),  # what each page holds, for a paper and for any experiment of the root
    ("reproduction",),  # `afr reproduce`'s pipeline
    ("benchmarks",),  # `afr bench`'s measurements
    ("commands",),  # one module per command group
    ("cli",),  # the entry point
)


def floor_of(room: str) -> int:
    """The floor number of a room (0 = bottom); KeyError for a room the order does not declare."""
    for number, rooms in enumerate(FLOORS):
        if room in rooms:
            return number
    raise KeyError(room)
