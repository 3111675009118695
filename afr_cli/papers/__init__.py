"""Content only: one folder per paper (``<id>/paper.yaml``, ``published.csv``, ``page.md`` and
``studies.py``, the study code publish loads by path), and ``ttests.csv`` (the t-tests printed in
the papers' texts). As code, the studies sit on the floor above publish (afr_cli/layers.py): they may import
publish and everything below it. The library that reads these files is afr_cli/catalogue/.
"""
