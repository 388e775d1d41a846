"""The settings of ``method: m_invariance``, read from the spec's ``publishing`` section."""

from __future__ import annotations

from dataclasses import dataclass

from sqlanon.errors import SpecError
from sqlanon.spec.schema import Spec


@dataclass(frozen=True)
class MInvarianceSettings:
    m: int
    key: str
    sensitive: str
    state: str | None
    """Where the releases are recorded (None: nothing kept)."""
    invariant: bool = True
    """Keep every person's signature (mode m_invariance); else each release is m-unique on its own."""
    group_column: str = "group_id"
    counterfeit_column: str = "counterfeits"

    def summary(self) -> dict[str, object]:
        return {"method": "m_invariance", "m": self.m, "key": self.key, "sensitive": self.sensitive,
                "mode": "m_invariance" if self.invariant else "independent",
                **({"state": self.state} if self.state is not None else {})}


def m_invariance_settings(spec: Spec) -> MInvarianceSettings:
    """The validated settings; one-line errors naming the key."""
    p = spec.publishing
    if p is None or p.m is None or p.key is None:
        raise SpecError("method m_invariance reads `publishing: {mode: m_invariance, m: 2, key: COLUMN, "
                        "state: NAME}` (mode independent, without state, for one release on its own)",
                        path="publishing")
    t = spec.transformation
    if t.options:
        key = next(iter(t.options))
        raise SpecError(f"method m_invariance has no transformation setting {key!r}; its settings are "
                        "in the publishing section", path=f"transformation.{key}")
    if t.levels:
        raise SpecError("method m_invariance generalizes each group to its own ranges; it has no "
                        "generalization levels", path="transformation.levels")
    if t.suppression_limit:
        raise SpecError("method m_invariance suppresses no rows (it adds counterfeits)",
                        path="transformation.suppression_limit")
    if spec.privacy:
        raise SpecError("method m_invariance makes every group m-unique by `publishing.m`; it checks no "
                        "other privacy model: remove the privacy section", path="privacy")
    sensitive = spec.sensitive
    if len(sensitive) != 1:
        found = ", ".join(sensitive) or "none"
        raise SpecError(f"method m_invariance publishes one sensitive attribute; declare exactly one "
                        f"attribute with role sensitive (found {found})", path="attributes")
    if p.key in spec.quasi_identifiers or p.key == sensitive[0]:
        raise SpecError(f"the key {p.key!r} names persons; it cannot be a quasi-identifier or the "
                        "sensitive attribute", path="publishing.key")
    return MInvarianceSettings(p.m, p.key, sensitive[0], p.state, p.mode == "m_invariance",
                               p.group_column, p.counterfeit_column)
