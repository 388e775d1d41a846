"""The ``transformation`` section: the method, generalization levels, suppression and method settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlanon.errors import SpecError
from sqlanon.spec.methods import METHODS
from sqlanon.spec.values import choose, number

SUPPRESSED_MODES = ("remove", "mask")


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
        choose(self.method, METHODS.names(), "transformation.method", "method")
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
        METHODS.get(self.method).check_transformation(self)
