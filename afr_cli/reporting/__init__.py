"""The report layer: decides what each page of a results root holds, a paper's and any experiment
of the root's own alike, from the report context built from that root; publish/ renders it.

Imports: publish/ and the floors below it (tables, analysis, store, catalogue); never papers/'
study code (publish loads it by path), reproduction/ or commands/, which build on this layer.
"""
