"""Transformation methods: each turns a spec's settings into a plan an engine runs."""
