"""The engine: runs what a config says, unit by unit, and stores each unit as it ends.

``runner`` (``afr run``: schedule, workers, store), ``protocol`` (one unit: split, CV over the grid,
fit, solve, score), ``tasks`` (which units compute together), ``shared_work``, ``forest_cache`` and
``seeds`` (fit each distinct forest once, the same numbers for any number of workers),
``experiment_data`` and ``split_targets`` (an experiment's arrays, and splits R² cannot score),
``preflight`` (what a run would trip on), ``plugin_faults`` (a plugin's exit named), ``messages``
and ``cell_forest`` (one cell's forest as a Decision Machine). May import config and every library
floor below it; never tables, publish or the commands.
"""
