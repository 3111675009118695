"""``--datasets A,B``: the names a run is limited to, checked against the config before it loads.

A name of a dataset the config lists as a file or loader entry stands for that whole entry; a
registered name (one of the papers' sets, spelt as ``afr datasets list`` allows) stands for
itself. Any other name is one line naming the option (not the config's ``datasets[0]``), with
"did you mean" and the config's own datasets, so ``--datasets Swiss`` for a dataset named
``swiss`` says ``did you mean 'swiss'?``. A name holding a control character is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from afr_cli.core.names import hint
from afr_cli.data.files import has_control
from afr_cli.data.registry import canonical_name
from afr_cli.errors import AfrInputError


def config_datasets(config: Path) -> list[Any]:
    """The config's ``datasets:`` entries as written (none when the file cannot be read: loading
    it reports that)."""
    from afr_cli.config.experiment import read_yaml_file

    try:
        raw = read_yaml_file(config, "config")
    except AfrInputError:
        return []
    entries = raw.get("datasets") if isinstance(raw, dict) else None
    return list(entries) if isinstance(entries, list) else []


def datasets_override(text: str, config: Path | None) -> list[str | dict]:
    """The ``datasets:`` value ``--datasets text`` stands for: each name as the config's own
    entry of that name, or a registered name; otherwise an AfrInputError naming ``--datasets``."""
    entries = config_datasets(config) if config is not None else []
    own = {e["name"]: e for e in entries if isinstance(e, dict) and isinstance(e.get("name"), str)}
    listed = [e if isinstance(e, str) else e.get("name") for e in entries]
    listed = [str(n) for n in listed if n is not None]
    out: list[str | dict] = []
    for name in (d.strip() for d in text.split(",")):
        if not name:
            continue
        if has_control(name):
            raise AfrInputError(f"--datasets: {name!r} is not allowed; a dataset name holds no control characters")
        if name in own:
            out.append(own[name])
            continue
        try:
            canonical_name(name)
        except AfrInputError:
            raise AfrInputError(
                f"--datasets: unknown dataset {name!r}; {hint(name, listed)}the config's datasets: "
                f"{', '.join(listed) or 'none'} (or a registered name, see `afr datasets list`)"
            ) from None
        out.append(name)
    return out
