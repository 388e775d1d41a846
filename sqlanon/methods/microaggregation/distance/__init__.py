"""Distances between records and between value distributions, for microaggregation."""
