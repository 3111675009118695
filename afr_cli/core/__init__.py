"""The ground floor: what every other room may import, and which imports none of them.

``paths`` and ``path_rules`` (where afr keeps things, and what a user's names may be),
``yaml_safe`` (strict YAML), ``params`` (the one declaration of a bound, shared by family
parameters and config keys), ``durations``, ``quiet_interrupt`` (signals), ``plugin_registry``
(``module:Class`` plugins) and ``version``. May import afr_cli.errors and the package root only.
"""
