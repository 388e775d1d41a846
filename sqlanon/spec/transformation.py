"""The ``transformation`` section: the method, generalization levels, suppression and method settings."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlanon.errors import SpecError
from sqlanon.spec.search import SEARCH_STRATEGIES
from sqlanon.spec.values import check_metric_name, choose, number

SUPPRESSED_MODES = ("remove", "mask")
METHODS = ("generalization", "microaggregation", "noise")
SEARCH_KEYS = ("search", "metric", "time_limit")
"""The ``transformation`` keys of method generalization besides levels and suppression (read by
``anonymize``, checked for every verb)."""
MICROAGGREGATION_KEYS = ("algorithm", "k", "attributes", "statistic", "projection", "block_by", "block_size",
                         "key", "centroid", "gamma", "seed", "t", "p", "q", "r", "attribute",
                         "distance", "order")
"""Every ``transformation`` key some microaggregation algorithm reads (docs/spec.md)."""


@dataclass(frozen=True)
class Transformation:
    """How the data is transformed: generalization levels per quasi-identifier and suppression."""

    method: str = "generalization"
    levels: dict[str, int] = field(default_factory=dict)
    """quasi-identifier -> generalization level (0 = original; absent = 0)."""
    suppression_limit: float = 0.0
    """The share of rows that may be suppressed, in [0, 1]."""
    suppressed: str = "remove"
    """Rows of suppressed classes: ``remove`` them, or ``mask`` every quasi-identifier with ``*``."""
    options: dict[str, Any] = field(default_factory=dict)
    """Method-specific settings (search strategy, metric, ...) kept for the methods that read them."""

    def __post_init__(self) -> None:
        choose(self.method, METHODS, "transformation.method", "method")
        if not isinstance(self.levels, Mapping):
            raise SpecError("must map quasi-identifiers to levels", path="transformation.levels")
        for name, level in self.levels.items():
            if isinstance(level, bool) or not isinstance(level, int) or level < 0:
                raise SpecError(f"a level must be an integer >= 0, got {level!r}",
                                path=f"transformation.levels.{name}")
        object.__setattr__(self, "levels", dict(self.levels))
        object.__setattr__(self, "suppression_limit", number(
            self.suppression_limit, "transformation.suppression_limit", low=0, high=1))
        choose(self.suppressed, SUPPRESSED_MODES, "transformation.suppressed", "mode")
        if not isinstance(self.options, Mapping):
            raise SpecError("must be a mapping of setting names to values", path="transformation")
        object.__setattr__(self, "options", dict(self.options))
        if self.method == "generalization":
            self._check_search_options()

    def _check_search_options(self) -> None:
        """The keys ``anonymize`` reads, checked for every verb; other methods' keys are refused."""
        o = self.options
        for key in o:
            if key == "weights":
                raise SpecError("attribute weights are set per attribute (attributes.<name>.weight), not "
                                "under transformation", path="transformation.weights")
            if key not in SEARCH_KEYS:
                from sqlanon.methods.perturbation.options import NOISE_KEYS  # imports scipy: only on an error

                readers = (("noise", NOISE_KEYS), ("microaggregation", MICROAGGREGATION_KEYS))
                methods = [m for m, keys in readers if key in keys] or ["noise", "microaggregation"]
                raise SpecError(f"applies to method {' or '.join(methods)}, not generalization",
                                path=f"transformation.{key}")
        if "search" in o:
            choose(o["search"], SEARCH_STRATEGIES.names(), "transformation.search", "search strategy")
        if "time_limit" in o:
            t = o["time_limit"]
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
                raise SpecError(f"must be a number of seconds > 0, got {t!r}",
                                path="transformation.time_limit")
        if "metric" in o:
            check_metric_name(o["metric"], "transformation.metric")
