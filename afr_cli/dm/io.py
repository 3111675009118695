"""A decision machine on disk: one .npz (numpy's zip of arrays), readable without afr.

Keys: ``features`` (each internal node's feature, i.e. S in index form) and ``n_features``,
``t``, B as COO triplets ``B_row``/``B_col``/``B_sign`` with ``n_leaves``, ``v``,
``intercept``, ``average_trees`` and ``format``. Loading re-validates everything.
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from afr_cli.errors import AfrInputError

FORMAT = "afr-decision-machine-1"
KEYS = (
    "format",
    "features",
    "n_features",
    "t",
    "B_row",
    "B_col",
    "B_sign",
    "n_leaves",
    "v",
    "intercept",
    "average_trees",
)


def write(
    path: str | os.PathLike,
    S: sp.csr_matrix,
    t,
    B: sp.csr_matrix,
    v,
    intercept: float,
    average_trees: bool,
    extra: dict | None = None,
) -> None:
    """Write atomically (a temporary file renamed into place: never half-written); ``extra``
    arrays are stored beside the machine's (``read`` ignores them)."""
    path = Path(path)
    coo = B.tocoo()
    arrays = dict(
        format=np.array(FORMAT),
        features=S.indices.astype(np.int64),
        n_features=np.int64(S.shape[1]),
        t=np.asarray(t),
        B_row=coo.row.astype(np.int64),
        B_col=coo.col.astype(np.int64),
        B_sign=coo.data.astype(np.int8),
        n_leaves=np.int64(B.shape[0]),
        v=np.asarray(v),
        intercept=np.float64(intercept),
        average_trees=np.bool_(average_trees),
    )
    clash = set(extra or {}) & set(arrays)
    if clash:
        raise AfrInputError(f"{path}: extra: {sorted(clash)[0]} is a key of the machine itself; allowed: other names")
    arrays.update({k: np.asarray(a) for k, a in (extra or {}).items()})
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, **arrays)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read(path: str | os.PathLike) -> dict:
    """The constructor's arguments (S, t, B, v, intercept, average_trees) from a saved machine."""
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [k for k in KEYS if k not in data.files]
            if missing:
                raise AfrInputError(f"{path}: {missing[0]}: missing; allowed: a file written by DecisionMachine.save")
            a = {k: data[k] for k in KEYS}
    except (OSError, ValueError, zipfile.BadZipFile) as err:
        raise AfrInputError(
            f"{path}: cannot read ({type(err).__name__}: {err}); allowed: a .npz written by DecisionMachine.save"
        ) from None
    if str(a["format"]) != FORMAT:
        raise AfrInputError(f"{path}: format: {str(a['format'])!r}; allowed: {FORMAT}")
    N, m, L = len(a["features"]), int(a["n_features"]), int(a["n_leaves"])
    try:
        S = sp.csr_matrix((np.ones(N, dtype=np.int8), a["features"], np.arange(N + 1)), shape=(N, m))
        B = sp.csr_matrix((a["B_sign"], (a["B_row"], a["B_col"])), shape=(L, N), dtype=np.int8)
    except ValueError as err:
        raise AfrInputError(f"{path}: S or B: {err}; allowed: a file written by DecisionMachine.save") from None
    return dict(S=S, t=a["t"], B=B, v=a["v"], intercept=float(a["intercept"]), average_trees=bool(a["average_trees"]))
