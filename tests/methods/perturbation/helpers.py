"""Seeded generators without the reproducibility warning, for tests."""

from __future__ import annotations

import warnings

import numpy as np

from sqlanon.methods.rng import ReproducibleNoiseWarning, make_rng


def seeded(seed: int) -> np.random.Generator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        return make_rng(seed)
