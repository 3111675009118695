"""afr: reproduce and extend the experiments of the attention-based forest papers."""

__version__ = "0.1.0"
