"""Studies that are not one paper's: ``preprocessing`` (how the features are scaled,
against the published baselines). May import the engine, config, the catalogue and analysis.
"""
