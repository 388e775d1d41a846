"""A transformation's released rows as one SELECT, and what it does to the columns it does not
transform (identifiers by their action, undeclared columns copied and noted)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from sqlanon.compile.identifiers import identifier_expression
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import DialectProfile
from sqlanon.sql.nodes import alias


@dataclass
class OutputQuery:
    """The output statement and what it does to each column."""

    query: exp.Select
    dropped: list[str] = field(default_factory=list)
    """Identifier columns left out."""
    undeclared: list[str] = field(default_factory=list)
    """Source columns the spec does not mention, copied unchanged."""
    types: dict[str, exp.DataType] = field(default_factory=dict)
    """Source column types: an identifier is hashed in its type's canonical text."""
    rows: int | None = None
    """The number of rows the statement returns, when the method knows it from what it checked
    (the rows it picks by key): a table written from it need not be counted again."""

    def released(self, spec: Spec, name: str, value: exp.Expression,
                 target: DialectProfile) -> exp.Expression | None:
        """Column ``name`` (read as ``value``) as released when no transformation rewrites it:
        identifiers by their action (None, and noted, when dropped), undeclared columns copied and
        noted."""
        attribute = spec.attributes.get(name)
        released: exp.Expression | None = value
        if attribute is not None and attribute.role == "identifier":
            released = identifier_expression(attribute, value, target, spec.path, self.types.get(name))
        elif attribute is None:
            self.undeclared.append(name)
        if released is None:
            self.dropped.append(name)
            return None
        return alias(released, name)

    @property
    def warnings(self) -> list[str]:
        if not self.undeclared:
            return []
        names = ", ".join(self.undeclared)
        return [(f"columns not declared in the spec were copied unchanged: {names} (declare them, "
                 "e.g. as identifier to drop them, or as insensitive)")]
