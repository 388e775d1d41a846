"""``method: anatomy`` settings, read from the spec's ``transformation`` section (docs/local-recoding.md)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlanon.errors import SpecError
from sqlanon.spec.schema import Spec

ANATOMY_KEYS = ("l", "seed", "group_column", "sensitive_table")
SENSITIVE_SUFFIX = "__sensitive"
"""The sensitive table is ``<output name>__sensitive`` unless ``transformation.sensitive_table`` names it."""
COUNT_COLUMN = "count"


@dataclass(frozen=True)
class AnatomySettings:
    l: int  # noqa: E741 -- the paper's l
    sensitive: str
    seed: int | None = None
    group_column: str = "group_id"
    sensitive_table: str | None = None

    def summary(self) -> dict[str, object]:
        return {"method": "anatomy", "l": self.l, "sensitive": self.sensitive,
                "group_column": self.group_column, **({"seed": self.seed} if self.seed is not None else {})}


def _name(options: dict[str, object], key: str, default: str | None) -> str | None:
    value = options.get(key, default)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"must be a non-empty name, got {value!r}", path=f"transformation.{key}")
    return value


def anatomy_settings(spec: Spec) -> AnatomySettings:
    """The validated settings; one-line errors naming the key."""
    t = spec.transformation
    o = t.options
    for key in o:
        if key not in ANATOMY_KEYS:
            raise SpecError(f"method anatomy has no setting {key!r}; it reads {', '.join(ANATOMY_KEYS)}",
                            path=f"transformation.{key}")
    if "l" not in o:
        raise SpecError("method anatomy needs `l`, the number of distinct sensitive values per group "
                        "(an integer >= 2)", path="transformation.l")
    l = o["l"]  # noqa: E741
    if isinstance(l, bool) or not isinstance(l, int) or l < 2:
        raise SpecError(f"must be an integer >= 2, got {l!r}", path="transformation.l")
    seed = o.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise SpecError(f"must be a non-negative integer, got {seed!r}", path="transformation.seed")
    if t.levels:
        raise SpecError("method anatomy publishes the quasi-identifiers unchanged; it has no "
                        "generalization levels", path="transformation.levels")
    if t.suppression_limit:
        raise SpecError("method anatomy suppresses no rows", path="transformation.suppression_limit")
    if spec.privacy:
        raise SpecError("method anatomy makes every group l-diverse by its own `transformation.l`; "
                        "it checks no other privacy model: remove the privacy section",
                        path="privacy")
    sensitive = spec.sensitive
    if len(sensitive) != 1:
        found = f"{len(sensitive)}: {', '.join(sensitive)}" if sensitive else "none"
        raise SpecError(f"method anatomy publishes one sensitive attribute apart from the "
                        f"quasi-identifiers; declare exactly one attribute with role sensitive "
                        f"(found {found}; give the others role insensitive or anonymize them in "
                        "separate runs)", path="attributes")
    group = _name(o, "group_column", "group_id")
    assert group is not None
    if group in spec.attributes:
        raise SpecError(f"{group!r} is an attribute of the spec; choose another name for the group "
                        "column", path="transformation.group_column")
    if COUNT_COLUMN in (group, sensitive[0]):
        raise SpecError(f"the sensitive table has a column {COUNT_COLUMN!r}; the group column and the "
                        f"sensitive attribute need other names", path="transformation.group_column"
                        if group == COUNT_COLUMN else f"attributes.{sensitive[0]}")
    return AnatomySettings(l, sensitive[0], seed, group, _name(o, "sensitive_table", None))
