"""The one error type users see: a bad input, reported in one line with exit code 2."""

from __future__ import annotations


class AfrInputError(Exception):
    """A user's input (file, key, value) is not acceptable; the message is one line.

    The CLI prints ``error: <message>`` to stderr and exits with code 2, no traceback.
    Messages name the file, the key and what is allowed, e.g.
    ``configs/x.yaml: models[1].grid.eps: 1.5 is outside [0, 1]``.
    """

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class SolverError(RuntimeError):
    """Every solver tried for an attention problem failed: there are no weights to use."""
