"""The papers' protocol for one unit (dataset, base, repetition), shared by every model.

Per repetition: an 80/20 split (seeded by ``UnitSeeds``: derived from (seed, dataset, rep), or
the papers' own rep-index seeding); on the 80 %,
k-fold CV over each model's grid; then the 80 % is refit and every grid point is scored on
the 20 %. A forest is fitted once per (rep, fold, base) and shared by all models and grid
points; each family's features are built once per design point and reused across the
mixing sweep (eps, gamma). Seeds depend only on names and indices, never on scheduling, so
results are identical whatever the number of workers.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from afr_cli.config.experiment import Base, Experiment, ModelConfig
from afr_cli.core.plugin_registry import checked_predictions
from afr_cli.engine import forest_fit
from afr_cli.engine.seeds import derive_seed
from afr_cli.engine.shared_work import SharedWork
from afr_cli.ensembles import FittedEnsemble
from afr_cli.errors import SolverError
from afr_cli.models import get_family
from afr_cli.solvers.memo import SolveMemo
from afr_cli.solvers.solve import SolveResult
from afr_cli.store import UnitRecord

REFIT = -1  # the stage index of "fit on the whole 80 %, score on the 20 %"


# preprocess.scale: feature scalers fitted on each stage's training rows (targets are never scaled)
class _Scalers(Mapping):
    """scale name -> scikit-learn scaler class, imported when a run scales (``afr validate`` reads
    the protocol's splits but must not import scikit-learn, which imports scipy.stats)."""

    _NAMES = {"standard": "StandardScaler", "minmax": "MinMaxScaler"}

    def __getitem__(self, scale: str) -> type:
        import sklearn.preprocessing

        return getattr(sklearn.preprocessing, self._NAMES[scale])

    def __iter__(self) -> Iterator[str]:
        return iter(self._NAMES)

    def __len__(self) -> int:
        return len(self._NAMES)


SCALERS: Mapping[str, type] = _Scalers()


def split_indices(n: int, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) row indices of one repetition's split."""
    perm = np.random.default_rng(seed).permutation(n)
    n_test = max(1, int(round(test_fraction * n)))
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def metrics(y: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    """R^2, MAE and RMSE of predictions."""
    res = y - pred
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float(res @ res) / ss_tot if ss_tot > 0 else float("nan")
    return {"r2": r2, "mae": float(np.abs(res).mean()), "rmse": float(np.sqrt((res @ res) / len(y)))}


@dataclass
class _Stage:
    """One fit-and-score stage: a CV fold or the final refit."""

    index: int
    train: np.ndarray
    query: np.ndarray


class _PointScores:
    """Scores of one model's grid points over the stages, and its solver log."""

    def __init__(self, points: list[dict]):
        self.points = points
        self.cv = [[] for _ in points]  # per point: metrics of each CV fold
        self.test: list[dict | None] = [None] * len(points)
        self.status: Counter = Counter()
        self.solves: list[list[list]] = [[] for _ in points]  # per point: one solve_entry per stage
        self.seconds = 0.0

    def cv_mean(self, i: int, metric: str) -> float:
        vals = [m[metric] for m in self.cv[i]]
        return float(np.mean(vals)) if vals and all(np.isfinite(vals)) else float("nan")


class UnitSeeds:
    """The seeds of one unit. ``derived`` (default): every seed is derived from (seed, dataset,
    rep[, stage, base]). ``rep-index``: the papers' code as identified from their baseline
    columns: ``train_test_split(..., random_state=rep)`` and forests seeded with ``rep``
    (the inner folds are not identifiable from the papers; they use ``rep`` too). A
    ``protocol.fold_assignment`` k >= 1 draws the inner folds from a seed derived from (seed,
    dataset, rep, k) instead, under either seeding; the split and the forests stay."""

    def __init__(self, exp: Experiment, dataset: str, base: Base, rep: int, train_fraction: float | None = None):
        self.exp, self.dataset, self.base, self.rep = exp, dataset, base, rep
        self.by_index = exp.protocol.seeding == "rep-index"
        # a protocol axis of training fractions adds the fraction (in %) to every seed; without
        # one, seeds are exactly as before. The noise level never enters: noisy and clean units
        # of a repetition share their split and forests (paired).
        self.axis = () if train_fraction is None else (round(train_fraction * 100, 6),)
        self.test_fraction = exp.protocol.test_fraction if train_fraction is None else 1.0 - train_fraction
        self.split = rep if self.by_index else derive_seed(exp.seed, dataset, rep, *self.axis)
        self.folds = rep if self.by_index else derive_seed(exp.seed, dataset, rep, *self.axis, "folds")
        if exp.protocol.fold_assignment:  # another assignment of the rows to the inner folds
            self.folds = derive_seed(exp.seed, dataset, rep, *self.axis, "folds", exp.protocol.fold_assignment)

    def split_rows(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(train, test) rows; rep-index keeps train_test_split's order, as the papers' code fit it."""
        if self.by_index:
            from sklearn.model_selection import train_test_split  # the papers' own split

            return train_test_split(np.arange(n), test_size=self.test_fraction, random_state=self.rep)
        return split_indices(n, self.test_fraction, self.split)

    def forest(self, stage: int) -> int:
        if self.by_index:
            return self.rep
        return derive_seed(self.exp.seed, self.dataset, self.rep, *self.axis, stage, self.base.id)

    def noise(self, stage: int) -> np.random.Generator:
        """The noise draws of one stage (independent of the noise level: eta only scales them)."""
        return np.random.default_rng(derive_seed(self.exp.seed, self.dataset, self.rep, *self.axis, stage, "noise"))


def add_noise(
    exp: Experiment, eta: float, rng: np.random.Generator, Xtr: np.ndarray, ytr: np.ndarray, Xq: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(training targets, query features) with N(0, (eta sigma)^2) noise where ``noise_on`` says:
    query features (sigma_j = feature j's std on the training part), training targets (sigma =
    the training targets' std), or both; the scored targets stay clean. eta = 0 changes nothing."""
    if eta == 0.0:
        return ytr, Xq
    where = exp.protocol.noise_on
    feature_noise = rng.standard_normal(Xq.shape)
    target_noise = rng.standard_normal(ytr.shape)
    if where in ("test", "both"):
        Xq = Xq + feature_noise * (eta * Xtr.std(axis=0, ddof=1))
    if where in ("train", "both"):
        ytr = ytr + target_noise * (eta * ytr.std(ddof=1))
    return ytr, Xq


def scale_rows(scale: str, Xtr: np.ndarray, Xq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The training and query rows under ``preprocess.scale``, fitted on the training rows only."""
    if scale == "none":
        return Xtr, Xq
    scaler = SCALERS[scale]().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xq)


@dataclass(frozen=True)
class FinalStage:
    """One unit's final stage refit outside a run: the scaled rows, their targets and the ensemble."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    ensemble: FittedEnsemble


def refit_final_stage(exp: Experiment, dataset: str, base: Base, rep: int, X: np.ndarray, y: np.ndarray) -> FinalStage:
    """The ensemble of (dataset, base, rep)'s final stage (fit on the training part, scored on the
    test part), refit exactly as ``run_unit`` fits it at the config's own split and without noise."""
    seeds = UnitSeeds(exp, dataset, base, rep)
    train, test = seeds.split_rows(len(y))
    Xtr, Xte = scale_rows(exp.scale, X[train], X[test])
    return FinalStage(Xtr, y[train], Xte, y[test], forest_fit.fit_forest(base, Xtr, y[train], seeds.forest(REFIT)))


def needs_inner_cv(exp: Experiment) -> bool:
    """Whether a model chooses by inner CV: some choice to make, and selection is not best-test
    (which reads the test scores every grid point gets anyway). Otherwise inner CV is skipped."""
    if exp.protocol.selection == "best-test":
        return False
    return any(m.best_of or len(m.grid_points()) > 1 for m in exp.models)


def run_unit(
    exp: Experiment,
    dataset: str,
    base: Base,
    rep: int,
    X: np.ndarray,
    y: np.ndarray,
    train_fraction: float | None = None,
    noise_eta: float = 0.0,
    shared: SharedWork | None = None,
) -> UnitRecord:
    """All models of the experiment on one (dataset, base, repetition) at one point of the protocol
    axes (training fraction: None = 1 - test_fraction; noise level eta); nothing is written here.
    ``shared``: the work this unit shares with the other units of its task (``afr_cli.engine.tasks``);
    None: its own (identical problems solved once within the unit).

    Noise, when eta > 0, goes into every stage alike (inner-CV validation folds as the test rows),
    so the inner CV selects under the conditions it is scored in."""
    t_unit, cpu_unit = time.perf_counter(), time.process_time()
    shared = shared if shared is not None else SharedWork()
    seeds = UnitSeeds(exp, dataset, base, rep, train_fraction)
    train, test = seeds.split_rows(len(y))
    from sklearn.model_selection import KFold

    folds = KFold(exp.protocol.inner_folds, shuffle=True, random_state=seeds.folds)
    stages = [_Stage(i, train[tr], train[va]) for i, (tr, va) in enumerate(folds.split(train))]
    if not needs_inner_cv(exp):  # inner CV would only cost forest fits and solves
        stages = []
    stages.append(_Stage(REFIT, train, test))

    trainable = [m for m in exp.models if m.best_of == ()]
    scores = {m.id: _PointScores(m.grid_points()) for m in trainable}
    forest_seconds = 0.0
    for stage in stages:
        Xtr, ytr, Xq, yq = X[stage.train], y[stage.train], X[stage.query], y[stage.query]
        ytr, Xq = add_noise(exp, noise_eta, seeds.noise(stage.index), Xtr, ytr, Xq)
        Xtr, Xq = scale_rows(exp.scale, Xtr, Xq)
        t0 = time.perf_counter()
        stats, train_rows = shared.training(base, seeds.forest(stage.index), Xtr, ytr)
        forest_seconds += time.perf_counter() - t0
        query_rows = stats.rows(Xq)
        for model in trainable:
            _score_model(model, scores[model.id], stage, train_rows, query_rows, ytr, yq, shared.memo)

    selected: dict[str, dict] = {}
    for model in sorted(trainable, key=lambda m: m.select_as is not None):  # chooser before follower
        at = selected[model.select_as]["params"] if model.select_as else None
        selected[model.id] = _selected_row(model, scores[model.id], exp, f"{dataset} / {base.id} / rep {rep}", at)
    results, grid = [], []
    for model in exp.models:
        if model.best_of:
            results.append(_best_of_row(model, results, exp))
            continue
        results.append(selected[model.id])
        grid.extend(_grid_rows(model, scores[model.id]))
    stored_fraction = round(1.0 - exp.protocol.test_fraction, 10) if train_fraction is None else train_fraction
    return UnitRecord(
        dataset,
        base.id,
        rep,
        seeds.split,
        len(train),
        len(test),
        forest_seconds,
        time.perf_counter() - t_unit,
        results,
        grid,
        {"train_fraction": stored_fraction, "noise_eta": noise_eta},
        cpu_seconds=time.process_time() - cpu_unit,
    )


def _score_model(
    model: ModelConfig,
    s: _PointScores,
    stage: _Stage,
    train_rows,
    query_rows,
    ytr: np.ndarray,
    yq: np.ndarray,
    memo: SolveMemo,
) -> None:
    """Every grid point of one model on one stage; features are reused across mixing values, and
    a problem solved before in the unit (or its task) is not solved again (``memo``)."""
    t0 = time.perf_counter()
    family = get_family(model.family)
    design_names = family.design_names()
    for i, point in enumerate(s.points):
        design = {
            k: point[k] for k in design_names if k in point
        }  # a parameter left at its unrecorded default is absent
        mixing = {k: v for k, v in point.items() if k not in design_names}
        feats_train = family.features(train_rows, design)
        feats_query = family.features(query_rows, design)
        problem = family.training_problem(feats_train, ytr, mixing)
        theta = None
        if problem is not None:
            try:
                result, _ = memo.solve(problem, loss=model.loss, solver=model.solver, remember=family.repeats_problems)
            except SolverError:
                s.status["failed"] += 1
                _record(s, i, stage, None)
                continue
            theta = result.theta
            s.status[f"{result.solver}:{result.status}"] += 1
            s.solves[i].append(solve_entry(stage.index, result))
            if result.fell_back:
                s.status["fallbacks"] += 1
        _record(
            s,
            i,
            stage,
            metrics(yq, checked_predictions(model.family, family.predict(feats_query, mixing, theta), len(yq))),
        )
    s.seconds += time.perf_counter() - t0


def solve_entry(stage: int, result: SolveResult) -> list:
    """One solve, compactly: [stage, solver, status, objective (10 significant digits), ms], plus
    the failed attempts ("SOLVER: status; ...") when it fell back."""
    entry = [stage, result.solver, result.status, float(f"{result.objective:.10g}"), round(result.seconds * 1000, 2)]
    if result.fell_back:
        entry.append("; ".join(f"{a['solver']}: {a['status']}" for a in result.attempts[:-1]))
    return entry


def _record(s: _PointScores, i: int, stage: _Stage, m: dict | None) -> None:
    nan = {"r2": float("nan"), "mae": float("nan"), "rmse": float("nan")}
    if stage.index == REFIT:
        s.test[i] = m or nan
    else:
        s.cv[i].append(m or nan)


def _better(metric: str):
    """Key whose minimum is the best score (R^2 larger is better, errors smaller)."""
    return (lambda v: -v) if metric == "r2" else (lambda v: v)


def _select(s: _PointScores, exp: Experiment) -> int:
    """Index of the chosen grid point: best mean inner-CV score, or best test score (best-test)."""
    metric = exp.protocol.select_by
    key = _better(metric)
    if len(s.points) == 1 or exp.protocol.selection == "best-test":
        values = [t[metric] if t else float("nan") for t in s.test]
    else:
        values = [s.cv_mean(i, metric) for i in range(len(s.points))]
    finite = [i for i, v in enumerate(values) if np.isfinite(v)]
    if not finite:
        raise SolverError("every grid point of a model failed to solve")
    return min(finite, key=lambda i: (key(values[i]), i))


def _selected_row(model: ModelConfig, s: _PointScores, exp: Experiment, where: str, at: dict | None = None) -> dict:
    """The model's row at its chosen grid point, or at ``at`` (the point its select_as model chose)."""
    try:
        i = _select(s, exp) if at is None else s.points.index(at)
    except SolverError as err:
        raise SolverError(f"{where}, model {model.id}: {err} ({dict(s.status)})") from None
    row = {
        "model": model.id,
        **s.test[i],
        "params": s.points[i],
        "selection": exp.protocol.selection,
        "cv_score": s.cv_mean(i, exp.protocol.select_by),
        "solver_status": dict(s.status),
        "seconds": s.seconds,
    }
    return _no_per_rep_choice(row) if exp.protocol.selection == "best-test" and len(s.points) > 1 else row


def _no_per_rep_choice(row: dict) -> dict:
    """best-test chooses one grid point over the repetitions (afr_cli/tables/selection.py), never
    per repetition: the row records no choice and no metrics; tables read the grid rows."""
    return {**row, "r2": float("nan"), "mae": float("nan"), "rmse": float("nan"), "params": {}}


def _best_of_row(model: ModelConfig, rows: list[dict], exp: Experiment) -> dict:
    """The component with the best inner-CV score (or test score under best-test), copied."""
    metric = exp.protocol.select_by
    key = _better(metric)
    parts = [r for r in rows if r["model"] in model.best_of]
    use_test = exp.protocol.selection == "best-test"
    best = min(parts, key=lambda r: key(r[metric] if use_test else r["cv_score"]))
    status = Counter()
    for r in parts:
        status.update(r["solver_status"])
    row = {
        **best,
        "model": model.id,
        "params": {"component": best["model"], **best["params"]},
        "solver_status": dict(status),
        "seconds": sum(r["seconds"] for r in parts),
    }
    return _no_per_rep_choice(row) if use_test else row


def _grid_rows(model: ModelConfig, s: _PointScores) -> list[dict]:
    return [
        {
            "model": model.id,
            "point": point,
            "cv_r2": s.cv_mean(i, "r2"),
            "cv_mae": s.cv_mean(i, "mae"),
            "test_r2": s.test[i]["r2"],
            "test_mae": s.test[i]["mae"],
            "test_rmse": s.test[i]["rmse"],
            "solves": s.solves[i],
        }
        for i, point in enumerate(s.points)
    ]
