"""Noise: differential-privacy mechanisms and classical perturbation (noise, swapping, PRAM, condensation)."""

from sqlanon.noise.rng import ReproducibleNoiseWarning, make_rng

__all__ = ["ReproducibleNoiseWarning", "make_rng"]
