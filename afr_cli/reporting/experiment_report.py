"""What an experiment's report holds, from its store alone, as Markdown (``<store>/report.md``)
that the site renders into the experiment's page.

Per base of the store: the models × datasets table of the selection metric (mean over the
repetitions with the 95 % Nadeau-Bengio corrected interval of the Bayesian correlated t-test,
ρ = the split's test fraction), the mean ranks with the Friedman test, the post-hoc cliques
(Nemenyi's critical difference and Wilcoxon-Holm) and the critical-difference diagram, the answer
of ``afr table --compare`` for every pair of models (a matrix, each answer in full under it), and
how many repetitions each pair's answer needs (the rule's verdict on the first 5, 10, 20, 30, 50
and all repetitions, and the count it settles at), and the hyperparameters chosen most often.
Every number comes from the statistics of
afr_cli/analysis and afr_cli/tables; nothing here decides a winner.
"""

from __future__ import annotations

import math
from itertools import combinations
from pathlib import Path

import pandas as pd

from afr_cli.analysis.bayesian import correlated_ttest
from afr_cli.analysis.posthoc import wilcoxon_holm
from afr_cli.analysis.rope import DEFAULT_ROPE
from afr_cli.analysis.stats import friedman_nemenyi
from afr_cli.catalogue.knowledge import ALPHA
from afr_cli.errors import AfrInputError
from afr_cli.publish.context import ReportContext
from afr_cli.publish.markdown import table
from afr_cli.publish.outfiles import write_if_changed
from afr_cli.reporting.experiments import Experiment
from afr_cli.reporting.held import held_section
from afr_cli.store import open_existing
from afr_cli.tables import compare_models, results_in_view
from afr_cli.tables.compare_answer import answer_sentence
from afr_cli.tables.compare_decision import stability, verdict_words
from afr_cli.tables.format import METRIC_NAMES, format_param, format_value
from afr_cli.tables.friedman import RankedSide, cd_figure, save_svg
from afr_cli.tables.summary import param_modes, with_axes_in_dataset

REPORT = "report.md"
LEVEL = 0.95
AT_LEAST = 2  # datasets a ranking needs, and models


def _order(values, wanted: list[str]) -> list[str]:
    """``values`` (unique) in the config's order, any the config does not list after them."""
    present = list(dict.fromkeys(str(v) for v in values))
    return [w for w in wanted if w in present] + [v for v in present if v not in wanted]


def _config_order(root: Path, exp: Experiment) -> tuple[list[str], list[str]]:
    """The config's dataset names and model ids, in its order (from the store's manifest)."""
    config = open_existing(root / exp.store).manifest().get("config") or {}
    datasets = [d.get("name") if isinstance(d, dict) else d for d in config.get("datasets") or []]
    models = [m.get("id") for m in config.get("models") or [] if isinstance(m, dict)]
    return [str(d) for d in datasets if d], [str(m) for m in models if m]


def _cell(scores: pd.Series, metric: str, rho: float) -> str:
    """One model on one dataset: the mean over repetitions and its corrected interval (ρ = the
    test fraction of the splits)."""
    values = scores.dropna().to_numpy(dtype=float)
    if not values.size:
        return "—"
    test = correlated_ttest(values, rho, level=LEVEL)
    mean = format_value(float(values.mean()), metric)
    if math.isnan(test.ci_low):
        return f"{mean} (1 rep)"
    return f"{mean} [{format_value(test.ci_low, metric)}, {format_value(test.ci_high, metric)}]"


def score_table(results: pd.DataFrame, metric: str, datasets: list[str], models: list[str]) -> str:
    """The models × datasets table of one base: mean [95 % corrected interval] per cell."""
    rows = []
    for dataset in datasets:
        on = results[results["dataset"] == dataset]
        cells = [dataset]
        for model in models:
            part = on.loc[on["model"] == model]
            rho = float(part["test_fraction"].iloc[0]) if "test_fraction" in part and len(part) else 0.0
            cells.append(_cell(part[metric].astype(float), metric, rho))
        rows.append(cells)
    return table(["dataset", *models], rows, ["---"] + ["---:"] * len(models))


def _describe(friedman) -> str:
    def p(value: float) -> str:
        return "n/a" if math.isnan(value) else f"{value:.3g}"

    return (
        f"Friedman χ² = {friedman.chi2:.2f}, p = {p(friedman.p)}; Iman-Davenport F = "
        f"{friedman.iman_davenport_f:.2f}, p = {p(friedman.iman_davenport_p)}; Nemenyi CD = {friedman.cd:.2f} "
        f"at α = {friedman.alpha:g}, over {friedman.n} datasets"
    )


def _groups(cliques: list[tuple[str, ...]]) -> str:
    return "; ".join("{" + ", ".join(c) + "}" for c in cliques) or "none (every pair differs)"


def ranking_section(
    results: pd.DataFrame, metric: str, datasets: list[str], models: list[str], diagram: Path, title: str
) -> list[str]:
    """Mean ranks, the Friedman test, both post-hoc groupings and the CD diagram (written to
    ``diagram``); or the one line saying why the store allows no ranking."""
    scores = results.pivot_table(index="dataset", columns="model", values=metric, aggfunc="mean")
    scores = scores.reindex(index=[d for d in datasets if d in scores.index], columns=models).dropna()
    if len(scores) < AT_LEAST or len(models) < AT_LEAST:
        return [
            f"No ranking: the Friedman test needs at least {AT_LEAST} datasets and {AT_LEAST} models that all "
            f"hold a score; this base has {len(scores)} dataset{'s' * (len(scores) != 1)} with every model's score "
            f"and {len(models)} model{'s' * (len(models) != 1)}."
        ]
    friedman = friedman_nemenyi(scores, metric == "r2", ALPHA)
    pairwise = wilcoxon_holm(scores.loc[:, list(friedman.models)], friedman.mean_ranks, ALPHA)
    order = sorted(range(len(friedman.models)), key=lambda i: friedman.mean_ranks[i])
    ranks = table(
        ["model", "mean rank (1 = best)"],
        [[friedman.models[i], f"{friedman.mean_ranks[i]:.2f}"] for i in order],
        ["---", "---:"],
    )
    figure = cd_figure(RankedSide(scores, friedman, pairwise), title)
    save_svg(figure, diagram)
    import matplotlib.pyplot as plt

    plt.close(figure)
    return [
        ranks,
        _describe(friedman) + ".",
        f"Groups within one critical difference (Nemenyi, no significant difference inside a group): "
        f"{_groups(friedman.cliques())}.",
        f"Groups no two of which differ (Wilcoxon signed-rank per pair, Holm-adjusted, α = {ALPHA:g}): "
        f"{_groups(pairwise.cliques())}.",
        f"![critical-difference diagram, {title}]({diagram.name})",
    ]


def _verdict_words(answer: str) -> str:
    """The answer's opening phrase (who, how), as a matrix cell shows it; the full answer is below."""
    clause = answer.split(": ", 1)[-1]
    cut = min((i for i in (clause.find(" ("), clause.find(", ")) if i > 0), default=len(clause))
    return clause[:cut].rstrip(".")


def pair_section(results: pd.DataFrame, metric: str, models: list[str], rope: float = DEFAULT_ROPE) -> list[str]:
    """The answer of ``afr table --compare A B`` for every pair (B after A in the config's order):
    a matrix of their opening phrases, then each answer in full."""
    if len(models) < AT_LEAST:
        return [f"No pair to compare: this base holds {len(models)} model."]
    answers: dict[tuple[str, str], str] = {}
    for a, b in combinations(models, 2):
        try:
            answers[(a, b)] = answer_sentence(compare_models(results, a, b, metric, rope))
        except AfrInputError as err:
            answers[(a, b)] = f"Answer: not compared ({err})"
    rows = [
        [f"**{a}**", *(_verdict_words(answers[(a, b)]) if (a, b) in answers else "" for b in models[1:])]
        for a in models[:-1]
    ]
    listed = [f"- `{b}` against `{a}`: {text.split(': ', 1)[-1]}" for (a, b), text in answers.items()]
    return [table(["A \\ B", *models[1:]], rows), "\n".join(listed)]


def stability_section(results: pd.DataFrame, metric: str, models: list[str], rope: float = DEFAULT_ROPE) -> list[str]:
    """For every pair (B after A in the config's order), the decision rule's verdict on the first 5,
    10, 20, 30, 50 and all stored repetitions and the count from which it no longer changes
    (``afr table --compare A B --stability``, one row per pair)."""
    rows: list[tuple[str, str, dict[int, str], str]] = []
    for a, b in combinations(models, 2):
        try:
            steps = stability(results, a, b, metric, rope)
        except AfrInputError:
            continue
        for s in steps:
            settle = "does not settle" if s.settles is None else f"settles at {s.settles}"
            rows.append((a, b, {n: verdict_words(d, a, b) for n, d in s.steps}, settle))
    if not rows:
        return []
    counts = sorted({n for *_, cells, _ in rows for n in cells})
    return [
        "The answer's verdict by the decision rule on the first N repetitions (the stored indices 0..N−1, "
        'paired; P is the probability of the verdict\'s event). "settles at N": from N repetitions on, the '
        'verdict is the one on all of them; "does not settle": it changes at the last count. A verdict that '
        "settles late, or not at all, needs more repetitions than the store holds to be trusted.",
        table(
            ["A", "B", *[f"{n} reps" for n in counts], "settles"],
            [[f"`{a}`", f"`{b}`", *[cells.get(n, "") for n in counts], settle] for a, b, cells, settle in rows],
        ),
    ]


def params_section(results: pd.DataFrame, datasets: list[str], models: list[str]) -> str:
    """The hyperparameters chosen most often per dataset and model (a model without a grid: none)."""
    modes = param_modes(results)
    if modes.empty:
        return "No model of this base selects a hyperparameter."
    rows = []
    for model in models:
        part = modes[modes["model"] == model]
        for dataset in [d for d in datasets if d in set(part["dataset"])]:
            chosen = part[part["dataset"] == dataset]
            rows.append(
                [
                    model,
                    dataset,
                    ", ".join(f"{p} = {format_param(v)}" for p, v in zip(chosen["param"], chosen["value"])),
                ]
            )
    return table(["model", "dataset", "chosen most often over the repetitions"], rows)


def _figures(folder: Path) -> list[str]:
    """Figures drawn for the experiment (``<store>/figures/*.png``, e.g. by ``afr plot --out``)."""
    found = sorted((folder / "figures").glob("*.png")) if (folder / "figures").is_dir() else []
    return [f"![{f.stem}](figures/{f.name})" for f in found]


def experiment_markdown(ctx: ReportContext, exp: Experiment) -> tuple[str, dict[Path, bool]]:
    """The experiment's report as Markdown and the diagrams it draws (path -> written)."""
    frames = ctx.stored(exp.store)
    results = results_in_view(frames.results, frames.grid, "stored", None, frames.select_by)
    if "train_fraction" in results.columns:  # ρ of each cell's split, kept when the axis becomes the dataset's label
        results = results.assign(test_fraction=(1.0 - results["train_fraction"].astype(float)).round(10))
    results = with_axes_in_dataset(results)
    metric = frames.select_by if frames.select_by in METRIC_NAMES else "r2"
    name = METRIC_NAMES.get(metric, metric)
    datasets, models = _config_order(ctx.root, exp)
    folder = ctx.directory(exp.store)
    parts = [
        f"# Experiment `{exp.name}`",
        exp.description or f"The config `{exp.config_name}`.",
        held_section(ctx, [exp.store], f"afr run CONFIG --out {ctx.shown_store(exp.store)}"),
        f"Written by `afr report` from the store alone; the models ranked and compared on {name} "
        f"(the metric the config selects by), higher {'is better' if metric == 'r2' else 'is worse'}. "
        f"The other metrics per cell: `{ctx.shown_store(exp.store)}/summary.md`, or `afr table --results "
        f"{ctx.shown_store(exp.store)} --metric mae`.",
    ]
    diagrams: dict[Path, bool] = {}
    bases = list(dict.fromkeys(results["base"]))
    for base in bases:
        on = results[results["base"] == base]
        shown_datasets = _order(on["dataset"], datasets)
        shown_models = _order(on["model"], models)
        diagram = folder / f"cd-{''.join(c if c.isalnum() else '_' for c in str(base))}.svg"
        where = f" (base {base})" if len(bases) > 1 else f" (base {base})"
        parts += [
            f"## Scores{where}",
            f"{name}: the mean over the repetitions and, in brackets, its {LEVEL:.0%} interval corrected for the "
            "overlap of the training sets (Nadeau-Bengio; ρ = the test fraction).",
            score_table(on, metric, shown_datasets, shown_models),
            f"## Ranks, the Friedman test and the critical differences{where}",
            *ranking_section(on, metric, shown_datasets, shown_models, diagram, f"{exp.name}, {base}, {name}"),
            f"## Every pair of models{where}",
            f"Row A, column B: the answer of `afr table --compare A B` on {name} (ROPE ±{DEFAULT_ROPE:g}), "
            "its opening words in the cell and in full below.",
            *pair_section(on, metric, shown_models),
            f"## How many repetitions each answer needs{where}",
            *(stability_section(on, metric, shown_models) or ["No pair of models to compare."]),
            f"## The hyperparameters selected{where}",
            params_section(on, shown_datasets, shown_models),
        ]
        if diagram.is_file():
            diagrams[diagram] = True
    figures = _figures(folder)
    if figures:
        parts += ["## Figures", *figures]
    return "\n\n".join(parts) + "\n", diagrams


def write_experiment_report(ctx: ReportContext, exp: Experiment) -> list[Path]:
    """``<store>/report.md`` and its diagrams; the files whose bytes changed."""
    folder = ctx.directory(exp.store)
    before = {p: p.read_bytes() for p in folder.glob("cd-*.svg")}
    text, diagrams = experiment_markdown(ctx, exp)
    written = [p for p in diagrams if before.get(p) != p.read_bytes()]
    if write_if_changed(folder / REPORT, text):
        written.append(folder / REPORT)
    return written
