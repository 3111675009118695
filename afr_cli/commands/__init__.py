"""The commands, one module per command group, each command a plain module-level
function that afr_cli/cli.py registers; ``help_text`` and ``cli_docs`` are the help and the
command reference. May import every room below; nothing but afr_cli.cli imports them.
"""
