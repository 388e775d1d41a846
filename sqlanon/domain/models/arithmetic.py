"""Arithmetic on sqlglot trees, with the parentheses sqlglot does not add to trees built by hand."""

from __future__ import annotations

from sqlglot import exp


def _wrap(e: exp.Expression) -> exp.Expression:
    return exp.Paren(this=e) if isinstance(e, (exp.Binary, exp.Neg)) else e


def add(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    """``a + b`` with operands parenthesized (sqlglot does not add parentheses to built trees)."""
    return exp.Add(this=_wrap(a), expression=_wrap(b))


def sub(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Sub(this=_wrap(a), expression=_wrap(b))


def mul(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Mul(this=_wrap(a), expression=_wrap(b))


def div(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Div(this=_wrap(a), expression=_wrap(b))
