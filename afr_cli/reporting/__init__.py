"""The report layer: decides what each page of a results root holds (a paper's, an experiment's)."""
