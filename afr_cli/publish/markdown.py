"""The Markdown the generated blocks are written in, one way everywhere: a table, and a number in
short scientific notation."""

from __future__ import annotations


def table(headers: list[str], rows: list[list[str]], align: list[str] | None = None) -> str:
    """A Markdown table of text cells; ``align``: each column's marker row cell (``---`` left,
    ``---:`` right), left by default. Cells are written as given (escape a ``|`` in one first)."""
    marks = align or ["---"] * len(headers)
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(marks) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def short_exponent(x: float, spec: str = "+.0e") -> str:
    """``x`` formatted by ``spec`` without the exponent's leading zero (-4e-9, not -4e-09; 1e-9 by
    ``g``); a number ``spec`` writes without an exponent stays as it is."""
    mantissa, _, exponent = format(x, spec).partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else mantissa
