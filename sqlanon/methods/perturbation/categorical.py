"""PRAM, invariant PRAM and randomized response applied in SQL, from one uniform draw per value.

Each value of category k is replaced by category l, the first whose cumulative transition
probability p_k0 + … + p_kl exceeds the value's uniform draw u (the last category when none does:
the rows' sums are 1 up to rounding); NULL stays NULL. This is
:func:`~sqlanon.methods.perturbation.pram.pram_codes` written as ``CASE`` expressions, so the
engine applies it where it reads the rows, and the draws u ignore the values: they are drawn by
row position (:mod:`row_stream`), like additive noise, and every engine, Spark's partitions included,
releases the same table for the same seed. The categories and their counts come from one
``GROUP BY`` per attribute; the quality figures from a count of (original, released) pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.engines.base import Engine
from sqlanon.engines.row_values import SOURCE, VALUES, schema_name
from sqlanon.errors import SpecError
from sqlanon.methods.perturbation.draws import Draw, exact_double, noise_column
from sqlanon.methods.perturbation.options import NoiseOptions
from sqlanon.methods.perturbation.per_row_mechanisms import CATEGORY_TRANSITIONS
from sqlanon.methods.perturbation.quality import categorical_figures
from sqlanon.methods.perturbation.row_stream import RowDraws
from sqlanon.methods.rng import RowKey
from sqlanon.sql.nodes import alias, col, internal, lit, table

ORIGINAL = internal("o")
RELEASED = internal("r")
COUNT = internal("n")


def value_counts(engine: Engine, relation: exp.Table, attribute: str) -> dict[Any, int]:
    """Each value of the column (NULL as None) -> how many rows hold it."""
    c = col(attribute)
    q = exp.select(alias(c, ORIGINAL), alias(exp.Count(this=exp.Star()), COUNT)) \
        .from_(table(relation.name, schema_name(relation))).group_by(c.copy())
    return {v: int(n) for v, n in engine.fetch(q)[1]}


def categorical_draw(opts: NoiseOptions, key: RowKey, rng: np.random.Generator,
                     counts: Callable[[str], dict[Any, int]], types: dict[str, str], dialect: str) -> Draw:
    """The transitions of each attribute (its categories from the spec, or from its values for
    invariant PRAM), checked against the values, as a draw of one uniform per value."""
    kind, p = opts.mechanism, opts.params
    transitions = CATEGORY_TRANSITIONS.get(kind)
    exprs: dict[str, exp.Expression] = {}
    guarantee: dict[str, Any] = {}
    categorical: dict[str, dict[str, Any]] = {}
    for i, a in enumerate(opts.attributes):
        values = counts(a)
        cats, matrix, held = transitions(p, a, values, rng)
        if held is not None:
            guarantee[a] = held
        _check_values(kind, a, values, cats)
        categorical[a] = {"categories": list(cats), "matrix": matrix}
        released = _released(a, cats, matrix, col(noise_column(i), VALUES))
        exprs[a] = exp.cast(released, exp.DataType.build(types[a], dialect=dialect))
    m = len(opts.attributes)

    def make(g: np.random.Generator) -> Callable[[int], dict[str, Any]]:
        def batches(n: int) -> dict[str, Any]:
            return {noise_column(i): g.random(n) for i in range(m)}
        return batches

    draws = RowDraws(make, key)
    schema = pa.schema([(noise_column(i), pa.float64()) for i in range(m)])
    return Draw(schema, draws.at(0), exprs, guarantee, categorical, independent=draws.at)


def _check_values(kind: str, attribute: str, values: dict[Any, int], cats: Sequence[Any]) -> None:
    """Refuse categories of mixed types or listed twice, and values outside them."""
    where = f"transformation.{CATEGORY_TRANSITIONS.traits(kind)['listed_under']}.{attribute}"
    if len({isinstance(c, str) for c in cats}) > 1:
        raise SpecError(f"the categories of {attribute!r} mix types; list them all as text or all as "
                        "numbers", path=where)
    if len(set(cats)) != len(cats):
        raise SpecError(f"the categories listed for {attribute!r} must be distinct", path=where)
    listed = set(cats)
    unknown = sum(n for v, n in values.items() if v is not None and v == v and v not in listed)
    if unknown:
        raise SpecError(f"{unknown} value(s) are not among the {len(cats)} categories listed for "
                        f"{attribute!r}", path=where)


def _released(attribute: str, cats: Sequence[Any], matrix: np.ndarray, u: exp.Expression
              ) -> exp.Expression:
    """``CASE value WHEN category k THEN <draw from row k> ... END`` (NULL and NaN match none)."""
    cumulative = np.cumsum(matrix, axis=1)
    cumulative[:, -1] = 1.0
    rows = []
    for k, c in enumerate(cats):
        picks = [exp.If(this=exp.LT(this=u.copy(), expression=exact_double(float(t))), true=lit(cats[j]))
                 for j, t in enumerate(cumulative[k][:-1])]
        draw = exp.Case(ifs=picks, default=lit(cats[-1])) if picks else lit(cats[-1])
        rows.append(exp.If(this=exp.EQ(this=col(attribute, SOURCE), expression=lit(c)), true=draw))
    return exp.Case(ifs=rows)


def categorical_quality(engine: Engine, pairs: exp.Select, draw: Draw, mechanism: str
                        ) -> dict[str, Any]:
    """Per attribute, from ``pairs`` (each row's original and released value, under
    :func:`original_name` and :func:`released_name`): the figures of
    :func:`~sqlanon.methods.perturbation.quality.categorical_figures`."""
    out = {}
    for i, (a, setting) in enumerate(draw.categorical.items()):
        o, r = col(original_name(i)), col(released_name(i))
        q = exp.select(alias(o, ORIGINAL), alias(r, RELEASED), alias(exp.Count(this=exp.Star()), COUNT)) \
            .from_(pairs.subquery(internal("p"))) \
            .where(exp.Not(this=exp.Is(this=o.copy(), expression=exp.Null()))).group_by(o.copy(), r.copy())
        cats = setting["categories"]
        code = {c: j for j, c in enumerate(cats)}
        crossed = np.zeros((len(cats), len(cats)), dtype=np.int64)
        for original, released, n in engine.fetch(q)[1]:
            if original in code and released in code:
                crossed[code[original], code[released]] += int(n)
        out[a] = categorical_figures(cats, crossed, setting["matrix"], mechanism)
    return out


def original_name(i: int) -> str:
    return internal(f"co{i}")


def released_name(i: int) -> str:
    return internal(f"cr{i}")
