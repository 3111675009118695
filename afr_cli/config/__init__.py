"""Experiments as configs: what a YAML file may say and the object it becomes.

``experiment`` (``Experiment``, ``load_experiment``), ``schema`` (every key with its bound and
one-line message), ``plugin_files`` (families and ensembles of the user's own, from files a config
names) and ``key_docs`` (the key reference ``afr docs config`` prints). May import the library
floors (models, ensembles, solvers, data, store, core); never the engine that runs a config.
"""
