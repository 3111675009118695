"""Figures: ``plots`` (weight surfaces and heat maps refit from a config) and
``curves`` (a metric against a parameter). May import the engine and the floors below it.
"""
