"""``afr reproduce``: ``pipeline`` (plan a paper's experiments, run them, write its
reports), ``checks`` (everything a paper folder must get right, checked before anything is
computed) and ``plan_costs`` (what each experiment is expected to cost). May import publish, the
engine, config, the catalogue and the floors below them.
"""
