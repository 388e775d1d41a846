"""Microaggregation algorithms: how rows are partitioned into groups."""
