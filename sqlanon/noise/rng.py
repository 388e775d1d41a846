"""The random generator every noise step draws from."""

from __future__ import annotations

import secrets
import warnings

import numpy as np

from sqlanon.errors import SpecError


class ReproducibleNoiseWarning(UserWarning):
    """Noise was drawn from a user-given seed: anyone who knows the seed can subtract it."""


def make_rng(seed: int | None = None) -> np.random.Generator:
    """A numpy generator (PCG64) for noise.

    Without a seed the 128-bit state comes from the operating system's cryptographic source
    (:mod:`secrets`), so the noise cannot be guessed from a clock or a counter. PCG64 itself is a
    statistical generator, not a cryptographic one; what protects the output is that its seed is
    secret and unguessable.

    With an integer seed the draws are reproducible and a :class:`ReproducibleNoiseWarning` is
    emitted: the output is then *not* private against whoever knows the seed.

    Raises:
        SpecError: ``seed`` is not a non-negative integer.
    """
    if seed is None:
        return np.random.Generator(np.random.PCG64(secrets.randbits(128)))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise SpecError(f"the seed must be a non-negative integer, got {type(seed).__name__}",
                        path="seed")
    if seed < 0:
        raise SpecError(f"the seed must be a non-negative integer, got {seed}", path="seed")
    warnings.warn(
        "noise drawn from a fixed seed is reproducible: it is not private against anyone who "
        "knows the seed; omit the seed for a cryptographically seeded generator",
        ReproducibleNoiseWarning, stacklevel=2)
    return np.random.Generator(np.random.PCG64(int(seed)))
