"""The papers, one folder each: its studies (studies.py, functions that return frames) beside its data."""
