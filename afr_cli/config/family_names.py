"""The one-line error of an unknown model family: the closest family, the families, and the
papers' ``best_of`` models that a family name is often mistaken for.

A paper's model such as SAT-RF is no family: its config writes it as ``best_of`` over models of
several families (``{id: sat-rf, best_of: [sat-rf-y, sat-rf-x, sat-rf-yx]}``). When the unknown
name is the id of such a model in one of the papers' configs (``configs/*.yaml``, read only to
word this error), the message says so and shows how to write it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from afr_cli.core.names import hint
from afr_cli.core.paths import PROJECT_ROOT
from afr_cli.errors import AfrInputError

PAPER_CONFIGS = PROJECT_ROOT / "configs"


def paper_best_of(configs: Path = PAPER_CONFIGS) -> dict[str, tuple[str, ...]]:
    """The papers' best_of models: id -> the families of its parts (first config that has it)."""
    from afr_cli.core.yaml_safe import load_yaml

    found: dict[str, tuple[str, ...]] = {}
    for path in sorted(configs.glob("*.yaml")):
        try:
            raw = load_yaml(path.read_text(encoding="utf-8"), str(path))
        except Exception:  # a config that does not read only loses its hint here
            continue
        models = raw.get("models") if isinstance(raw, dict) else None
        if not isinstance(models, list):
            continue
        family = {m.get("id"): m.get("family") for m in models if isinstance(m, dict)}
        for model in models:
            if isinstance(model, dict) and isinstance(model.get("best_of"), list) and model.get("id") not in found:
                found[str(model["id"])] = tuple(str(family.get(p) or p) for p in model["best_of"])
    return found


def unknown_family(name: str, where: str, families: Iterable[str]) -> AfrInputError:
    """The error for ``family: NAME`` naming no family: did you mean, a paper's best_of model of
    that name and how to write it, the families and the best_of models of the papers."""
    families = list(families)
    composites = paper_best_of()
    text = f"{where}: unknown model family {name!r}; "
    parts = composites.get(name) or composites.get(next((k for k in composites if k.casefold() == name.casefold()), ""))
    if parts:
        models = ", ".join(f"{{id: {p}, family: {p}}}" for p in parts)
        text += (
            f"{name!r} is a best_of model of the papers, not a family: write the models {models} and then "
            f"{{id: {name}, best_of: [{', '.join(parts)}]}}; "
        )
    else:
        text += hint(name, [*families, *composites])
    listed = ", ".join(f"{k} (best_of {'/'.join(v)})" for k, v in composites.items())
    return AfrInputError(
        f"{text}allowed: {', '.join(families)}, or module:Class for a family of your own"
        + (f"; the papers' best_of models, written with best_of: {listed}" if listed else "")
    )
