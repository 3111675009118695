"""Benchmarks behind `afr bench`: each times a fast path against a naive one in the same run."""
