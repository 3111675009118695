"""The one solver layer's parts: problem types (``problems``), acceptance checks (``checks``)
and one module per backend (``dense_qp``, ``highs``, ``cvxpy_backend``). ``afr_cli.solvers.solve``
chooses among them and is what the rest of the package calls."""
