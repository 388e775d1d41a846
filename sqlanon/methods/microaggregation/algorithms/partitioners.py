"""The built-in partitioners of the microaggregation pipeline: MDAV, V-MDAV and optimal univariate.

Each adapts an algorithm of its own module to the registry's contract (records in, one group number
per row out); the algorithms themselves, and their sources, are documented there.
"""

from __future__ import annotations

import numpy as np

from sqlanon.errors import SpecError
from sqlanon.methods.microaggregation.algorithms.mdav import mdav as mdav_labels
from sqlanon.methods.microaggregation.algorithms.registry import ALGORITHMS
from sqlanon.methods.microaggregation.algorithms.univariate import optimal_univariate as univariate_labels
from sqlanon.methods.microaggregation.algorithms.vmdav import vmdav as vmdav_labels
from sqlanon.methods.microaggregation.records import Records


@ALGORITHMS.register("mdav")
def mdav(records: Records, k: int) -> np.ndarray:
    """sdcMicro's MDAV (:mod:`sqlanon.methods.microaggregation.algorithms.mdav`)."""
    return mdav_labels(records.x, k)


@ALGORITHMS.register("vmdav")
def vmdav(records: Records, k: int, gamma: float = 0.2) -> np.ndarray:
    """V-MDAV with gain factor ``gamma`` (:mod:`sqlanon.methods.microaggregation.algorithms.vmdav`)."""
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not gamma >= 0:
        raise SpecError(f"gamma must be a number >= 0, got {gamma!r}", path="transformation.gamma")
    return vmdav_labels(records.x, k, float(gamma))


@ALGORITHMS.register("optimal_univariate", per_attribute=True)
def optimal_univariate(records: Records, k: int) -> np.ndarray:
    """Hansen–Mukherjee optimal univariate microaggregation of the one attribute in ``records``."""
    if records.x.shape[1] != 1:
        raise SpecError(f"optimal_univariate groups one attribute at a time, got {records.x.shape[1]}",
                        path="transformation.attributes")
    return univariate_labels(records.x[:, 0], k)
