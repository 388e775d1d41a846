"""Microaggregation: records are grouped and their values replaced by a group statistic."""
