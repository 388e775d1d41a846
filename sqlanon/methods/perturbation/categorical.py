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
from dataclasses import dataclass
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
from sqlanon.methods.perturbation.pram import category_codes, pram_codes
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


MAX_BRANCHES = 4096
"""The most non-zero transition probabilities applied as ``CASE`` branches (a value's branches are
tried in order, so a large matrix costs each row that much); larger matrices are applied in numpy
where the engine can join the released values back to their rows."""


@dataclass(frozen=True)
class Transitions:
    """One attribute's categories, transition matrix and guarantee."""

    attribute: str
    categories: list[Any]
    matrix: np.ndarray
    guarantee: dict[str, Any] | None


def transitions(opts: NoiseOptions, rng: np.random.Generator, counts: Callable[[str], dict[Any, int]]
                ) -> list[Transitions]:
    """The transitions of each attribute (its categories from the spec, or from its values for
    invariant PRAM), checked against the values' counts."""
    kind, p = opts.mechanism, opts.params
    make = CATEGORY_TRANSITIONS.get(kind)
    out = []
    for a in opts.attributes:
        values = counts(a)
        cats, matrix, held = make(p, a, values, rng)
        _check_values(kind, a, values, cats)
        out.append(Transitions(a, list(cats), matrix, held))
    return out


def in_sql(settings: list[Transitions]) -> bool:
    """Whether the matrices are small enough to apply as ``CASE`` expressions."""
    return sum(int(np.count_nonzero(t.matrix)) for t in settings) <= MAX_BRANCHES


def categorical_draw(settings: list[Transitions], key: RowKey, types: dict[str, str], dialect: str) -> Draw:
    """The transitions applied in SQL to one uniform per value, drawn by row position."""
    exprs: dict[str, exp.Expression] = {}
    for i, t in enumerate(settings):
        released = _released(t.attribute, t.categories, t.matrix, col(noise_column(i), VALUES))
        exprs[t.attribute] = exp.cast(released, exp.DataType.build(types[t.attribute], dialect=dialect))
    m = len(settings)

    def make(g: np.random.Generator) -> Callable[[int], dict[str, Any]]:
        def batches(n: int) -> dict[str, Any]:
            return {noise_column(i): g.random(n) for i in range(m)}
        return batches

    draws = RowDraws(make, key)
    schema = pa.schema([(noise_column(i), pa.float64()) for i in range(m)])
    return Draw(schema, draws.at(0), exprs, _guarantees(settings), _described(settings),
                independent=draws.at)


def categorical_in_numpy(settings: list[Transitions], rng: np.random.Generator,
                         data: dict[str, np.ndarray], types: dict[str, str], dialect: str) -> Draw:
    """The transitions applied in numpy to the values read (:func:`pram_codes`), for matrices too
    large for SQL; the released values go back to their rows as a join."""
    columns: dict[str, Any] = {}
    described = _described(settings)
    for t in settings:
        values = [None if v is None or (isinstance(v, float) and v != v) else v
                  for v in _plain(data[t.attribute])]
        codes = category_codes(values, t.categories)
        released = pram_codes(codes, t.matrix, rng)
        present = codes >= 0
        k = len(t.categories)
        described[t.attribute]["crossed"] = np.bincount(codes[present] * k + released[present],
                                                        minlength=k * k).reshape(k, k)
        columns[t.attribute] = pa.array([t.categories[c] if c >= 0 else None for c in released.tolist()])
    schema = pa.schema([(noise_column(i), columns[t.attribute].type) for i, t in enumerate(settings)])
    exprs: dict[str, exp.Expression] = {t.attribute: exp.cast(col(noise_column(i), VALUES),
                                   exp.DataType.build(types[t.attribute], dialect=dialect))
             for i, t in enumerate(settings)}
    offset = {"done": 0}

    def batches(n: int) -> dict[str, Any]:
        start = offset["done"]
        offset["done"] += n
        return {noise_column(i): columns[t.attribute].slice(start, n) for i, t in enumerate(settings)}

    return Draw(schema, batches, exprs, _guarantees(settings), described)


def _plain(values: np.ndarray) -> list[Any]:
    """Python values with NULL as None (DuckDB returns NULLs masked)."""
    if isinstance(values, np.ma.MaskedArray):
        return [None if missing else v for v, missing in
                zip(values.data.tolist(), np.ma.getmaskarray(values).tolist())]
    return list(values.tolist())


def _guarantees(settings: list[Transitions]) -> dict[str, Any]:
    return {t.attribute: t.guarantee for t in settings if t.guarantee is not None}


def _described(settings: list[Transitions]) -> dict[str, dict[str, Any]]:
    return {t.attribute: {"categories": t.categories, "matrix": t.matrix} for t in settings}


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
        # a category of probability 0 adds nothing to the sum: the branch before it already took u
        picks = [exp.If(this=exp.LT(this=u.copy(), expression=exact_double(float(t))), true=lit(cats[j]))
                 for j, t in enumerate(cumulative[k][:-1]) if matrix[k, j] > 0]
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
        if "crossed" in setting:  # applied in numpy: counted there
            out[a] = categorical_figures(setting["categories"], setting["crossed"], setting["matrix"],
                                         mechanism)
            continue
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
