"""The rows a microaggregation reads: a row key, the attributes' kinds, and one pull into numpy.

Row key: the columns of ``transformation.key`` when declared (they must be unique and non-NULL), else
a row number over all columns, ``ROW_NUMBER() OVER (ORDER BY every column)``, computed in the same way
wherever the source is read. Rows equal in every column are interchangeable, so the result does not
depend on how the database orders them among themselves. The records are pulled ``ORDER BY`` the key:
MDAV breaks ties by row order (as sdcMicro does), so the key fixes the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlglot import exp

from sqlanon.domain.factorize import group_ids
from sqlanon.domain.metrics.numeric import is_numeric_type
from sqlanon.engines.base import Engine
from sqlanon.errors import SpecError
from sqlanon.methods.microaggregation.records import NominalColumn, Records
from sqlanon.spec.schema import Spec
from sqlanon.sql.nodes import alias, as_expression, col, count_star, internal, lit

ROW = "sqlanon_row"
"""The synthetic row key when no key is declared (suffixed with ``_`` while a column has the name).
It is not ``__sa_``-prefixed because individual ranking reads it as a column; it never reaches the
output."""
NUMERIC, ORDINAL, NOMINAL = "numeric", "ordinal", "nominal"


@dataclass(frozen=True)
class RowKey:
    columns: tuple[str, ...]
    synthetic: bool

    @classmethod
    def of(cls, declared: Sequence[str], columns: Sequence[str]) -> RowKey:
        if declared:
            return cls(tuple(declared), False)
        name = ROW
        while name in columns:
            name += "_"
        return cls((name,), True)


def keyed_source(relation: exp.Expression, columns: Sequence[str], key: RowKey) -> exp.Expression:
    """``relation`` with the synthetic row key added (a subquery), or ``relation`` itself."""
    if not key.synthetic:
        return relation.copy()
    order = exp.Order(expressions=[exp.Ordered(this=col(c), nulls_first=False) for c in columns])
    number = alias(exp.Window(this=exp.RowNumber(), order=order), key.columns[0])
    return exp.select(*[col(c) for c in columns], number).from_(relation.copy())


def as_relation(query: exp.Expression, name: str) -> exp.Expression:
    """``query`` usable in FROM under the alias ``name``."""
    if isinstance(query, (exp.Table, exp.Subquery)):  # a subquery (aliased) takes the new alias
        return as_expression(exp.alias_(query.copy(), name, table=True, quoted=True))
    return as_expression(exp.alias_(exp.Subquery(this=query.copy()), name, quoted=True))


def attribute_kind(spec: Spec, name: str, sql_type: str) -> str:
    a = spec.attributes.get(name)
    if a is not None and a.type == "ordinal":
        return ORDINAL
    if a is not None and a.type in ("integer", "decimal"):
        return NUMERIC
    return NUMERIC if is_numeric_type(sql_type) else NOMINAL


def check_kinds(spec: Spec, attributes: Sequence[str], kinds: Mapping[str, str], *, nominal_ok: bool,
                algorithm: str) -> None:
    """Refuse attributes the algorithm cannot group (the message names the attribute)."""
    for i, a in enumerate(attributes):
        path = f"transformation.attributes[{i}]" if "attributes" in spec.transformation.options \
            else f"attributes.{a}"
        kind = kinds[a]
        attr = spec.attributes[a]
        if kind == ORDINAL and not attr.order:
            raise SpecError(f"ordinal attribute {a!r} needs its `order` (values lowest first) to be "
                            "ranked", path=f"attributes.{a}.order")
        if kind == NOMINAL:
            if attr.hierarchy is None:
                raise SpecError(f"{a!r} is not numeric (declare `type: integer`/`decimal` if it holds "
                                "numbers, or `type: ordinal` with an `order`); a nominal attribute "
                                "needs a hierarchy for its distance", path=path)
            if not nominal_ok:
                raise SpecError(f"{a!r} is nominal; algorithm {algorithm} groups numeric and ordinal "
                                "attributes only", path=path)


def count_nulls(engine: Engine, relation: exp.Expression, columns: Sequence[str]) -> dict[str, int]:
    """Per column, how many rows hold NULL (one query)."""
    if not columns:
        return {}
    counts = [alias(exp.Sum(this=exp.Case(ifs=[exp.If(this=exp.Is(this=col(c), expression=exp.Null()),
                                                      true=lit(1))], default=lit(0))), f"c{i}")
              for i, c in enumerate(columns)]
    row = engine.fetch(exp.select(count_star(), *counts).from_(as_relation(relation, internal("s"))))[1][0]
    return {c: int(v or 0) for c, v in zip(columns, row[1:])}


def refuse_nulls(engine: Engine, relation: exp.Expression, columns: Sequence[str], what: str,
                 paths: Mapping[str, str]) -> None:
    """NULLs cannot be grouped by distance: refuse them, naming the column and the count."""
    for c, n in count_nulls(engine, relation, columns).items():
        if n:
            raise SpecError(f"column {c!r} has {n} NULL value{'s' if n != 1 else ''}; {what} needs a "
                            "value in every row (impute or filter them first; nothing was written)",
                            path=paths.get(c, f"attributes.{c}"))


@dataclass
class Pulled:
    """The pulled rows, in key order."""

    keys: dict[str, np.ndarray]
    columns: dict[str, np.ndarray]

    @property
    def n(self) -> int:
        return len(next(iter(self.keys.values())))


def pull(engine: Engine, relation: exp.Expression, key: RowKey, columns: Sequence[str]) -> Pulled:
    """One query: the key and ``columns`` of every row, ``ORDER BY`` the key.

    Raises:
        SpecError: a declared key repeats (NULLs are refused before, by :func:`refuse_nulls`).
    """
    wanted = list(dict.fromkeys([*key.columns, *columns]))
    source = as_relation(relation, internal("s"))
    q = exp.select(*[alias(col(c), f"c{i}") for i, c in enumerate(wanted)]).from_(source) \
        .order_by(*[exp.Ordered(this=col(c), nulls_first=False) for c in key.columns])
    data = engine.fetch_numpy(q)
    arrays = {c: _plain(np.asarray(data[f"c{i}"])) for i, c in enumerate(wanted)}
    if not key.synthetic:
        ids, sizes = group_ids([arrays[c] for c in key.columns])
        repeated = sizes[ids] > 1
        if repeated.any():
            first = int(np.argmax(repeated))
            example = tuple(_python(arrays[c][first]) for c in key.columns)
            raise SpecError(f"the key ({', '.join(key.columns)}) is not unique: {int(repeated.sum())} rows "
                            f"share a value, e.g. {example!r}", path="transformation.key")
    return Pulled({c: arrays[c] for c in key.columns}, {c: arrays[c] for c in columns})


def _python(value: object) -> object:
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _plain(values: np.ndarray) -> np.ndarray:
    """A fetched column as a plain array; NULLs (masked entries) become None in an object array."""
    if isinstance(values, np.ma.MaskedArray):
        if not np.ma.getmaskarray(values).any():
            return np.asarray(values.data)
        return np.ma.filled(values.astype(object), None)
    return values


def numbers(values: np.ndarray, name: str) -> np.ndarray:
    """A pulled column as float64 (PostgreSQL's ``numeric`` arrives as ``Decimal`` objects)."""
    try:
        out = np.asarray(_plain(values), dtype=np.float64)
    except (TypeError, ValueError):
        raise SpecError(f"{name!r} holds values that are not numbers", path=f"attributes.{name}") from None
    if not np.isfinite(out).all():
        bad = int((~np.isfinite(out)).sum())
        raise SpecError(f"column {name!r} has {bad} NaN or infinite value{'s' if bad != 1 else ''}",
                        path=f"attributes.{name}")
    return out


def ranks(values: np.ndarray, order: Sequence[Any], name: str) -> np.ndarray:
    """Ordinal values as their 1-based rank in ``order`` (compared as text, as the spec lists them)."""
    position = {str(v): i + 1 for i, v in enumerate(order)}
    out = np.empty(len(values), dtype=np.float64)
    for i, v in enumerate(_plain(values).tolist()):
        r = position.get(str(v))
        if r is None:
            raise SpecError(f"value {v!r} of {name!r} is not in its order", path=f"attributes.{name}.order")
        out[i] = r
    return out


def nominal(values: np.ndarray, spec: Spec, name: str, distinct: Sequence[Any] | None = None
            ) -> NominalColumn:
    """Codes into the sorted distinct values (compared as text): those of ``values``, or ``distinct``
    (the column's distinct values over more rows than these, already sorted)."""
    plain = _plain(values).tolist()
    distinct = sorted(set(plain), key=str) if distinct is None else list(distinct)
    index = {v: i for i, v in enumerate(distinct)}
    codes = np.fromiter((index[v] for v in plain), dtype=np.int64, count=len(plain))
    return NominalColumn(codes, tuple(distinct), spec.attributes[name].hierarchy)


def records(pulled: Pulled, spec: Spec, attributes: Sequence[str], kinds: Mapping[str, str],
            sensitive: Sequence[str], sensitive_kinds: Mapping[str, str],
            distinct: Mapping[str, Sequence[Any]] | None = None) -> Records:
    """The :class:`Records` of the pulled rows: numeric and ordinal attributes in ``x``, nominal apart
    (coded into ``distinct[name]`` when given)."""
    distinct = distinct or {}
    numeric = [a for a in attributes if kinds[a] != NOMINAL]
    cols = [numbers(pulled.columns[a], a) if kinds[a] == NUMERIC
            else ranks(pulled.columns[a], spec.attributes[a].order or (), a) for a in numeric]
    x = np.column_stack(cols) if cols else np.empty((pulled.n, 0))
    nominals = {a: nominal(pulled.columns[a], spec, a, distinct.get(a)) for a in attributes
                if kinds[a] == NOMINAL}
    sens: dict[str, Any] = {}
    for s in sensitive:
        sens[s] = numbers(pulled.columns[s], s) if sensitive_kinds[s] == NUMERIC \
            else nominal(pulled.columns[s], spec, s, distinct.get(s))
    return Records(np.ascontiguousarray(x, dtype=np.float64), tuple(numeric), nominals, sens)
