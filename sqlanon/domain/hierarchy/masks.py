"""Redaction: one more character replaced per level, compiled to portable SQL."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from sqlanon.domain.hierarchy.base import Hierarchy, check_level, null_safe
from sqlanon.errors import HierarchyError
from sqlanon.sql.nodes import as_expression, as_text, lit


@dataclass(frozen=True)
class MaskHierarchy(Hierarchy):
    """Redaction one character per level: 47677 → 4767* → 476** → … → *****.

    ``levels`` is the number of characters masked at the top level (the height). ``from_right``
    masks the end of the value (ZIP codes); ``from_right=False`` masks the start (47677 → *7677).
    Values keep their length: a value with fewer characters than the level is all ``char``
    (``12`` → ``1*`` → ``**`` → ``**``). NULL stays NULL below the top and is fully masked at the top
    (``*****`` for ``levels=5``), so that values of ``levels`` characters and NULL share one top.

    Example:
        >>> MaskHierarchy(5).describe()
        'mask up to 5 characters from the right with *'
    """

    levels: int
    from_right: bool = True
    char: str = "*"

    def __post_init__(self) -> None:
        if isinstance(self.levels, bool) or not isinstance(self.levels, int) or self.levels < 1:
            raise HierarchyError(f"levels must be an integer >= 1, got {self.levels!r}", path="levels")
        if not isinstance(self.char, str) or len(self.char) != 1:
            raise HierarchyError(f"the mask character must be exactly one character, got {self.char!r}",
                                 path="char")

    @property
    def height(self) -> int:
        return self.levels

    def expression(self, column: exp.Expression, level: int) -> exp.Expression:
        check_level(self, level)
        if level == 0:
            return column
        text = as_text(column)
        length = exp.Length(this=text.copy())
        stars = lit(self.char * level)
        if self.from_right:
            kept = exp.Substring(this=text.copy(), start=lit(1),
                                 length=exp.Sub(this=length.copy(), expression=lit(level)))
            masked = exp.Concat(expressions=[kept, stars], safe=False, coalesce=False)
        else:
            kept = exp.Substring(this=text.copy(), start=lit(level + 1))
            masked = exp.Concat(expressions=[stars.copy(), kept], safe=False, coalesce=False)
        short = exp.Substring(this=stars.copy(), start=lit(1), length=length.copy())
        value = exp.Case().when(exp.LTE(this=length, expression=lit(level)), short, copy=False).else_(
            masked, copy=False)
        if level == self.height:
            return exp.Case().when(exp.Is(this=column.copy(), expression=exp.Null()),
                                   lit(self.char * level), copy=False).else_(value, copy=False)
        return null_safe(column, value)

    def guarded_class_key(self, column: exp.Expression, level: int
                          ) -> tuple[exp.Expression, exp.Expression] | None:
        """Below the top, the label without its constant stars: the characters a value keeps, or
        the label itself for a value of at most ``level`` characters (built without concatenating).
        A kept part made only of mask characters, at most ``level`` long, would equal the label of
        a shorter value: the guard flags every value that might have one (between ``level`` and
        twice ``level`` characters long, its first kept character the mask character)."""
        check_level(self, level)
        if level in (0, self.height):
            return None
        text = as_text(column)
        length = exp.Length(this=text.copy())
        if self.from_right:
            kept = exp.Substring(this=text.copy(), start=lit(1),
                                 length=exp.Sub(this=length.copy(), expression=lit(level)))
            first_kept = exp.Substring(this=text.copy(), start=lit(1), length=lit(1))
        else:
            kept = exp.Substring(this=text.copy(), start=lit(level + 1))
            first_kept = exp.Substring(this=text.copy(), start=lit(level + 1), length=lit(1))
        short = exp.Substring(this=lit(self.char * level), start=lit(1), length=length.copy())
        key = exp.Case().when(exp.GT(this=length.copy(), expression=lit(level)), kept, copy=False).else_(
            short, copy=False)
        guard = as_expression(exp.and_(exp.GT(this=length.copy(), expression=lit(level)),
                                       exp.LTE(this=length.copy(), expression=lit(2 * level)),
                                       exp.EQ(this=first_kept, expression=lit(self.char)), copy=False))
        return key, guard

    def row_wise(self, level: int) -> bool:
        return True

    def describe(self) -> str:
        side = "right" if self.from_right else "left"
        return f"mask up to {self.levels} characters from the {side} with {self.char}"
