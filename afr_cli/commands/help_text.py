"""Help that reads as prose: how every ``--help`` of ``afr`` names its values and describes commands.

Typer, left alone, tags every value with its Python type in angle brackets (``--reps <int>``,
``--set <list[str]>``, a flag as ``<bool>``), writes a required argument as ``{config}`` in the usage
line, and keeps the line breaks of a docstring, so a command's description in ``afr --help`` (rich)
stops mid-sentence at the end of a source line, or is cut with ``...`` (plain). The root group of
the app is ``ProseGroup``: when typer builds the click command tree it rewrites every command once
-- values are named by what they are (``--reps N``, ``--set KEY=VALUE``, ``CONFIG``, ``[NAMES]...``),
flags take no tag, bounds read ``at least 1``, and each description is whole paragraphs -- so ``afr X --help`` in a
terminal, docs/cli.md (``afr_cli.commands.cli_docs``) and a test's ``CliRunner`` all print the same words.
"""

from __future__ import annotations

import re
from typing import Any

from typer.core import TyperArgument, TyperGroup, TyperOption

# Options whose value is best named by what it holds rather than by the option's name.
_VALUE_NAMES = {
    "--set": "KEY=VALUE",
    "--datasets": "NAMES",
    "--compare": "A B",
    "--scheduler": "ADDRESS",
    "--from": "DIR",
    "--at": "NAME=VALUE",
    "--root": "DIR",
    "--results": "DIR",
    "--store": "DIR",
    "--x": "PARAM",
    "--y": "PARAM",
    "--sweep": "PARAM",
    "--target": "COLUMN",
    "--drop": "COLUMN",
    "--sep": "CHAR",
    "--against": "SOLVER",
    "--workers": "COUNTS",
}


class ProseArgument(TyperArgument):
    """A positional argument shown as click shows one: its name in capitals (its metavar, with
    ``...`` when it repeats), ``[NAME]...`` in the usage line when it is optional, and no type tag."""

    def _usage_display_name(self) -> str:
        name = self.display_name_raw.removesuffix("...")
        if not self.required:
            name = f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    def _rich_display_name(self) -> str:
        return self.display_name_raw

    def display_type_rich(self, ctx: Any) -> str | None:
        return None


class ProseOption(TyperOption):
    """An option whose bounds read as words (``at least 1``), not as typer's ``x>=1``."""

    def _get_number_range_help_str(self) -> str | None:
        low, high = getattr(self, "min", None), getattr(self, "max", None)
        if low is None and high is None or (self.count and low == 0 and high is None):
            return None
        if high is None:
            return f"at least {low}"
        return f"at most {high}" if low is None else f"from {low} to {high}"


def value_name(param: Any) -> str:
    """The word that stands for an option's value in its help: ``N`` for a count, ``NUMBER`` for
    any other number, ``PATH`` for a path, ``A B`` or ``KEY=VALUE`` where the value has parts, else the
    option's own name in capitals (``--backend BACKEND``)."""
    long = next((o for o in param.opts if o.startswith("--")), param.opts[0])
    label = param.display_type(None).strip("<>")
    if long in _VALUE_NAMES and not (long in ("--at", "--workers") and label.startswith("int")):
        return _VALUE_NAMES[long]
    if label.startswith("int"):
        return "N"
    if label == "float":
        return "NUMBER"
    if label in ("path", "list[Path]"):
        return "PATH"
    return long.lstrip("-").replace("-", "_").upper()


def _prose_param(param: Any) -> None:
    """Name ``param``'s value in words; a flag gets none (an empty metavar hides ``<bool>``)."""
    if param.param_type_name == "argument":
        param.__class__ = ProseArgument  # same fields, click's way of naming it (no per-parameter class hook in typer)
        param.metavar = (param.metavar or param.name).strip("<>").upper() + ("..." if param.nargs != 1 else "")
        return
    if type(param) is TyperOption:
        param.__class__ = ProseOption  # same fields; only its bounds are worded
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        param.metavar = ""
    elif param.metavar is None or param.metavar.startswith("<"):
        param.metavar = value_name(param)


def _paragraphs(text: str) -> str:
    """``text`` with each paragraph's line breaks joined into spaces (a ``\\b`` paragraph, which
    click keeps verbatim, is left as it is)."""
    out = []
    for para in re.split(r"\n\s*\n", text.strip()):
        out.append(para if para.lstrip().startswith("\b") else " ".join(para.split()))
    return "\n\n".join(out)


def make_prose(command: Any) -> None:
    """Rewrite ``command`` and every subcommand below it in place (see the module doc); the short
    description in a group's list is the whole first paragraph, never cut."""
    for param in command.params:
        _prose_param(param)
    help_option = command.get_help_option(command.context_class(command, info_name=command.name))
    if help_option is not None:  # made once and cached by the command: --help is a flag like any other
        help_option.metavar = ""
    if command.help:
        command.help = _paragraphs(command.help)
    if not command.short_help and command.help:
        command.short_help = command.help.split("\n\n", 1)[0]
    for sub in getattr(command, "commands", {}).values():
        make_prose(sub)


class ProseGroup(TyperGroup):
    """The root group of the afr app: built by typer with every command below it, then made prose."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        make_prose(self)
