"""Uniform doubles with full precision (Mironov's U*) and fair signs, from raw random bits."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def uniform_full_precision(rng: np.random.Generator, size: int) -> np.ndarray:
    """Uniform draws on (0, 1) where every double u is drawn with probability ulp(u).

    This is the U* of Mironov 2012 §5.2: the binade [2^-e, 2^(1-e)) is chosen with probability
    2^-e (e − 1 = the length of a run of random zero bits), then its 52 mantissa bits uniformly,
    and the double is assembled from its bits. ``rng.random()`` instead returns multiples of 2^-53 and
    never the small doubles whose logarithms the Laplace tail needs. Binades below 2^-1022
    (probability 2^-1021) are folded into the lowest normal one.
    """
    return full_precision_bits(rng, rng.bit_generator.random_raw(size))


def full_precision_bits(rng: np.random.Generator, raw: np.ndarray) -> np.ndarray:
    # Each 64-bit word gives U*'s 52 mantissa bits (its top bits), the start of the zero run that
    # picks the binade (bits 1..11), and a spare bit 0 (the Laplace sampler's sign).
    run = (raw >> np.uint64(1)) & np.uint64(0x7FF)
    field = binade_fields(run, rng.bit_generator.random_raw, width=11)
    return ((field << np.uint64(52)) | (raw >> np.uint64(12))).view(np.float64)


def binade_fields(words: np.ndarray, more: Callable[[int], np.ndarray], width: int = 64
                  ) -> np.ndarray:
    """The exponent fields of U*: 1023 − e where e − 1 counts the trailing zero bits of ``words``
    (each holding ``width`` random bits, higher bits 0), continued into ``more(k)`` fresh 64-bit
    words while all of them are zero; at least 1."""
    lowest = words & (~words + np.uint64(1))                        # lowest set bit, 0 if none
    # A power of two converts to a double exactly, its exponent field being 1023 + its position p;
    # U*'s exponent field is then 1023 − (p + 1) = 2045 − that field.
    field = np.uint64(2045) - (lowest.astype(np.float64).view(np.uint64) >> np.uint64(52))
    empty = np.flatnonzero(lowest == 0)                             # probability 2^-width each
    zeros = np.full(empty.size, width, dtype=np.int64)              # trailing zeros seen so far
    while empty.size:
        extra = more(empty.size)
        low = extra & (~extra + np.uint64(1))
        found = low != 0
        position = (low[found].astype(np.float64).view(np.uint64) >> np.uint64(52)).astype(np.int64) - 1023
        field[empty[found]] = np.maximum(1022 - zeros[found] - position, 1).astype(np.uint64)
        empty, zeros = empty[~found], zeros[~found] + 64
    return field


def random_signs(rng: np.random.Generator, size: int) -> np.ndarray:
    """Independent fair ±1.0 draws."""
    return np.where(rng.bit_generator.random_raw(size) >> np.uint64(63), 1.0, -1.0)
