"""A figure's caption in words, read from the ``afr plot`` command that draws it: what is plotted,
on which data and at which setting, so a page names a figure by what it shows, not by its file."""

from __future__ import annotations

import re
from collections.abc import Sequence

_METRIC = {"rmse": "RMSE", "mae": "MAE", "r2": "R²"}
_SYMBOL = {"tau": "τ", "eps": "ε", "kappa": "κ", "gamma": "γ", "delta": "δ", "lambda": "λ", "eta": "η"}


def _values(command: Sequence[str], option: str) -> list[str]:
    """Every value given to ``option`` in ``command``, in order."""
    return [command[i + 1] for i, word in enumerate(command[:-1]) if word == option]


def _one(command: Sequence[str], option: str, default: str) -> str:
    found = _values(command, option)
    return found[0] if found else default


def _listed(words: Sequence[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _base(base: str) -> str:
    """A base forest's id in words: ``RF-msl1`` is an RF whose leaves may hold a single sample."""
    match = re.fullmatch(r"(\w+?)-msl(\d+)", base)
    if match is None:
        return f"base forest {base}"
    return f"base forest {match.group(1)} with min_samples_leaf = {match.group(2)}"


def figure_caption(command: Sequence[str]) -> str:
    """The caption of the figure ``command`` (an ``afr`` command's words, ``afr`` itself optional)
    draws; for a command this module does not know, its words after ``--out`` dropped."""
    words = list(command[1:] if command and command[0] == "afr" else command)
    dataset = _one(words, "--dataset", "")
    models = _values(words, "--model")
    if words[:2] == ["plot", "curve"]:
        metric = _METRIC.get(_one(words, "--metric", "rmse"), _one(words, "--metric", "rmse"))
        eta = float(_one(words, "--noise-eta", "0"))
        noise = "no noise" if eta == 0 else f"noise of level η = {eta:g}"
        base = _one(words, "--base", "")
        return (
            f"{metric} against the training fraction on {dataset}"
            + (f", {_base(base)}" if base else "")
            + f", {noise}: the mean over the repetitions of {_listed(models)} (the first dash-dot, as the reference), "
            "each with ±1 standard deviation over the repetitions as a dotted outline in its colour."
        )
    if words[:2] == ["plot", "surface"]:
        metric = _METRIC.get(_one(words, "--metric", "r2"), _one(words, "--metric", "r2"))
        score = "test score" if _one(words, "--score", "test") == "test" else "mean inner-CV score"
        pairs = [
            f"{_SYMBOL.get(y, y)} against {_SYMBOL.get(x, x)} ({m})"
            for m, x, y in zip(models, _values(words, "--x"), _values(words, "--y"))
        ]
        return f"{metric} ({score}) over a grid of two parameters on {dataset}, one heat map each: {_listed(pairs)}."
    head = words[: words.index("--out")] if "--out" in words else words
    return "Drawn by afr " + " ".join(head) + "."


_SELECTION = {"stored": "the run's own selection", "best-test": "the best grid point on the test set"}


def table_title(commands: Sequence[Sequence[str]]) -> str:
    """The title of an extra table ``afr table`` commands draw (one or several joined), in words:
    which table, from which stores, under which selection."""
    parts = []
    for command in commands:
        words = list(command[1:] if command and command[0] == "afr" else command)
        stores = _listed([path.replace("{root}/", "") for path in _values(words, "--results")] or ["results"])
        selection = _SELECTION.get(_one(words, "--selection", "stored"), _one(words, "--selection", "stored"))
        paper = _one(words, "--paper", "")
        compare = words[words.index("--compare") + 1 : words.index("--compare") + 3] if "--compare" in words else []
        if paper:
            parts.append(f"Table {paper.partition(':')[2]} of the paper beside ours from {stores} ({selection})")
        elif compare:
            parts.append(f"{compare[1]} against {compare[0]} on {stores}")
        else:
            metric = _METRIC.get(_one(words, "--metric", "r2"), "every metric")
            parts.append(f"{metric} of every model of {stores} ({selection})")
    return "; ".join(parts)
