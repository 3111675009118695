"""The plain forest (RF or ERT): scikit-learn's own prediction, no attention, nothing trained."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from afr_cli.forests import RowTensors
from afr_cli.models.base import Family


class ForestFamily(Family):
    name = "forest"
    summary = "the base ensemble itself (RF or ERT): the tables' baseline column"
    params = ()

    def features(self, rows: RowTensors, design: Mapping[str, float]) -> np.ndarray:
        return rows.memo(("forest-predict",), lambda: rows.stats.forest.predict(rows.X))

    def training_problem(self, feats, y, mixing):
        return None

    def predict(self, feats: np.ndarray, mixing, theta) -> np.ndarray:
        return feats
