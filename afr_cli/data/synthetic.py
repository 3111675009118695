"""Draw the scikit-learn datasets: the bundled Diabetes set and the five seeded synthetic sets.

The generator and its parameters (noise levels included) come from the registry; the data seed is
passed as ``random_state`` so one seed always gives the same draw.
"""

from __future__ import annotations

import numpy as np

from afr_cli.data.registry import DatasetSpec

NOISES = ("documented", "none")


def draw(spec: DatasetSpec, data_seed: int, noise: str = "documented") -> tuple[np.ndarray, np.ndarray]:
    """X, y from ``spec.generator``; synthetic sets use ``random_state=data_seed``, Diabetes ignores it.

    ``noise="none"`` drops the registry's noise level and keeps the generator's default (no
    noise; make_sparse_uncorrelated has its own fixed noise): the setting under which the
    papers' baseline columns are reproduced exactly (datasets/README.md).
    """
    import sklearn.datasets

    function = getattr(sklearn.datasets, spec.generator)
    params = dict(spec.params)
    if noise == "none":
        params.pop("noise", None)
    if spec.source == "sklearn":
        X, y = function(return_X_y=True, **params)
    else:
        X, y = function(random_state=data_seed, **params)
    return np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
