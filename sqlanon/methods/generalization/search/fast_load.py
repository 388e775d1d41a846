"""The in-memory search's load: the frequency table read from the engine, its QIs as leaf codes.

Two reads: with every QI's hierarchy a table, one GROUP BY of the source on integer leaf codes
(:func:`fetch_coded`); otherwise the raw frequency table with each QI as its hierarchy key, coded
here (:func:`fetch_keys`, through Arrow for large tables). Sensitive attributes come along raw, with
their order keys and hierarchy keys where the models need them (:func:`loading_query`).
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlglot import exp

from sqlanon.compile.checks import N
from sqlanon.domain.factorize import code_dtype, factorize, factorize_text
from sqlanon.domain.hierarchy.base import Hierarchy, HierarchyTable
from sqlanon.domain.models.ordering import order_key
from sqlanon.errors import HierarchyError, InternalError
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.search.fast_classes import LeafCounts
from sqlanon.methods.generalization.search.fetch_arrow import fetch_factorized
from sqlanon.sql.nodes import alias, as_double, as_expression, col, internal

ARROW_LOAD_MIN_ROWS = 50_000
"""From this many raw frequency rows, text keys are fetched and coded as Arrow (fetch_arrow.py): below,
coding them in Python costs less than importing pyarrow does."""


def nulls(a: np.ndarray) -> np.ndarray | None:
    """Where a fetched column is NULL (the mask of the masked array DuckDB returns then), None where
    no value is: read without ``np.ma``, whose first use imports ``numpy.ma`` (milliseconds a run)."""
    mask = getattr(a, "mask", None)
    return np.broadcast_to(mask, a.shape) if mask is not None and mask.any() else None


def objects(a: np.ndarray) -> np.ndarray:
    """A fetched column as an object array with None for NULL."""
    mask = nulls(a)
    if mask is None:
        return np.asarray(a, dtype=object)
    out = np.array(a.data, dtype=object)
    out[mask] = None
    return out


def value_numbers(values: np.ndarray, nvals: int, numbers: np.ndarray) -> np.ndarray:
    """Each value code's number (NaN for NULL), from the codes and numbers of the frequency rows."""
    out = np.full(nvals, np.nan)
    column = np.ma.filled(np.ma.asarray(numbers, dtype=np.float64), np.nan)
    out[values] = column
    return out


def sensitive_tree(ev: Evaluator, a: str, values: np.ndarray, nvals: int, keys: np.ndarray
                   ) -> list[np.ndarray]:
    """The sensitive hierarchy over the values present: per level 1..H, a 0/1 matrix from the
    nodes one level down (values first) to the nodes at that level."""
    h = ev.p.sensitive_hierarchies[a]
    table_ = h.table()
    if table_ is None:
        raise InternalError(f"the hierarchy of sensitive attribute {a!r} is not a table")
    key_of = [None] * nvals
    for v, k in zip(values.tolist(), keys.tolist()):
        key_of[v] = k
    missing = sorted({repr(k) for k in key_of if k not in table_.mapping})
    if missing:
        raise HierarchyError(f"{len(missing)} value(s) of sensitive attribute {a!r} are missing "
                             f"from its hierarchy: {', '.join(missing[:5])}",
                             source=getattr(h, "source", None))
    below = np.arange(nvals)  # node (one level down) of each value
    steps = []
    for level in range(1, table_.height + 1):
        labels = [table_.mapping[k][level] for k in key_of]
        up, _ = factorize(np.array(labels, dtype=object))
        m = np.zeros((int(below.max()) + 1, int(up.max()) + 1), dtype=np.int64)
        m[below, up] = 1
        steps.append(m)
        below = up
    return steps


@dataclass(frozen=True)
class CodedLevels:
    """One quasi-identifier coded per level of its hierarchy (lists indexed by level)."""

    codes: list[np.ndarray]
    """Every frequency row's label code, in the narrowest type holding the level's labels."""
    radix: list[int]
    """The number of labels."""
    weighted: list[int]
    """Σ over the table's rows of their label's hierarchy rows."""
    label_counts: list[np.ndarray]
    """Per label code: the hierarchy rows under the label."""
    leaves: LeafCounts


def code_levels(table_: HierarchyTable, leaf: np.ndarray, uniques: list[Any], row_n: np.ndarray
                ) -> CodedLevels:
    """The frequency rows' leaves (``leaf``, indices into ``uniques``) coded at every level of
    ``table_``; ``row_n``: the rows each frequency row stands for."""
    codes, radix, weighted, counts, labels_of_leaf = [], [], [], [], []
    leaf_rows = np.bincount(leaf, weights=row_n, minlength=len(uniques)).astype(np.int64)
    defining = table_.leaf_rows(uniques)  # per leaf, the file row that defines it
    index = leaf.astype(np.intp)  # once: numpy widens a narrower index on every gather
    for level in range(table_.height + 1):
        label_codes, labels = table_.level_codes(level)
        per_leaf = label_codes[defining].astype(np.int32)
        lc = table_.label_counts(level)
        codes.append(per_leaf.astype(code_dtype(len(labels)))[index])
        labels_of_leaf.append(per_leaf)
        radix.append(len(labels))
        counts.append(lc)
        weighted.append(int(np.dot(leaf_rows, lc[per_leaf])) if len(uniques) else 0)
    return CodedLevels(codes, radix, weighted, counts, LeafCounts(uniques, leaf_rows, labels_of_leaf))


def sensitive_columns(ev: Evaluator, data: dict[str, np.ndarray], sens: Sequence[str], ordered: Set[str],
                      hierarchical: Set[str], numeric: Set[str], row_n: np.ndarray
                      ) -> tuple[dict[str, tuple[np.ndarray, int, np.ndarray]], dict[str, list[np.ndarray]],
                                 dict[str, np.ndarray]]:
    """Per sensitive attribute read with the frequency rows: (value codes, number of values, each
    value's count over the table); its hierarchy over the values where read as a tree; and each
    value's number where read as numbers."""
    sensitive: dict[str, tuple[np.ndarray, int, np.ndarray]] = {}
    trees: dict[str, list[np.ndarray]] = {}
    numbers: dict[str, np.ndarray] = {}
    for j, a in enumerate(sens):
        if a in ordered:
            okeys = objects(data[f"o{j}"])
            present = sorted({k for k in okeys if k is not None})
            rank = {k: r for r, k in enumerate(present)}
            values = np.array([rank[k] if k is not None else len(present) for k in okeys], dtype=np.int64)
            nvals = len(present) + (1 if any(k is None for k in okeys) else 0)
        else:
            values, uniq = factorize(objects(data[f"s{j}"]))
            values = values.astype(np.int64)
            nvals = len(uniq)
        global_counts = np.bincount(values, weights=row_n, minlength=nvals).astype(np.int64)
        sensitive[a] = (values, nvals, global_counts)
        if a in hierarchical:
            trees[a] = sensitive_tree(ev, a, values, nvals, objects(data[f"h{j}"]))
        if a in numeric:
            numbers[a] = value_numbers(values, nvals, data[f"x{j}"])
    return sensitive, trees, numbers


def narrowed(codes: np.ndarray, distinct: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``distinct`` values in the narrowest type holding them."""
    return codes.astype(code_dtype(len(distinct))), distinct


def fetch_keys(ev: Evaluator, qis: Sequence[str], sens: list[str], ordered: set[str],
               hierarchical: set[str], fits: Sequence[str] = (), numeric: Set[str] = frozenset()
               ) -> tuple[dict[str, np.ndarray], list[np.ndarray], list[list]]:
    """Read the raw frequency table with each QI as its hierarchy key (text), factorized here;
    ``fits``: the persons' fit levels, read as ``f0``, ``f1``, ..."""
    p = ev.p
    proj = [alias(p.hierarchies[a].key(col(a)), f"q{i}") for i, a in enumerate(qis)]
    proj += [alias(col(f), f"f{i}") for i, f in enumerate(fits)]
    names = [f"q{i}" for i in range(len(qis))]
    if not sens and not fits and ev.engine.capabilities.arrow_in \
            and ev.engine.row_count(ev.freq.name) >= ARROW_LOAD_MIN_ROWS:  # coded by Arrow
        count = exp.cast(exp.Sum(this=col(N)), exp.DataType.build("bigint"))
        q = loading_query(ev, proj, sens, ordered, hierarchical, None, count, ev.freq.copy(), numeric)
        counts, factorized = fetch_factorized(ev.engine, q, names, "n")
        data = {"n": counts}
    else:
        q = loading_query(ev, proj, sens, ordered, hierarchical, None, exp.Sum(this=col(N)), ev.freq.copy(),
                          numeric)
        data = ev.engine.fetch_numpy(q)
        factorized = [narrowed(*factorize_text(objects(data.pop(name)))) for name in names]
    leaves, keys = [], []
    for i, a in enumerate(qis):
        leaf, uniques = factorized[i]
        known = ev.hierarchy_table(a).leaves  # once: a lookup per value costs seconds on 100,000
        if not all(map(known.__contains__, uniques)):
            missing = [u for u in uniques if u not in known]
            raise HierarchyError(f"{len(missing)} value(s) of attribute {a!r} are missing from the "
                                 f"hierarchy: {', '.join(map(repr, missing[:5]))}")
        leaves.append(leaf)
        keys.append(list(uniques))
    return data, leaves, keys


CODED_BUILT_MAX_LEAVES = 10_000
"""The most leaves a hierarchy built over the data may have for the load through leaf codes: its
code table is sent row by row (a file's table goes as Arrow), more is cheaper coded by Arrow."""


def codes_in_sql(h: Hierarchy, table_: HierarchyTable) -> bool:
    """Whether the load may read the attribute as integer leaf codes (:func:`fetch_coded`): a file's
    table, or a table built over the data that is small and has no NULL leaf (a NULL value joins
    no code, which the coded load reports as a value the hierarchy lacks)."""
    if h.table() is not None:
        return True
    return table_.domain_size <= CODED_BUILT_MAX_LEAVES and None not in table_.leaves


def fetch_coded(ev: Evaluator, qis: Sequence[str], sens: list[str], ordered: set[str],
                hierarchical: set[str], fits: Sequence[str] = (), numeric: Set[str] = frozenset()
                ) -> tuple[dict[str, np.ndarray], list[np.ndarray], list[list]]:
    """One GROUP BY of the source on integer leaf codes (a join per QI with its leaf list).

    Only integers cross to Python, and the raw frequency table is never built: on a large table
    this is one scan as cheap as a plain GROUP BY of the QIs (bench/README.md).
    """
    p = ev.p
    src = internal("src")
    proj, joins, keys = [], [], []
    for i, a in enumerate(qis):
        h = p.hierarchies[a]
        codes, leaf_keys = ev.leaf_codes(a)
        keys.append(leaf_keys)
        name = f"k{i}"
        joins.append((exp.alias_(codes.copy(), name, table=True, quoted=True),
                      exp.EQ(this=col("leaf", name), expression=h.key(col(a, src)))))
        proj.append(alias(col("code", name), f"q{i}"))
    proj += [alias(col(f, src), f"f{i}") for i, f in enumerate(fits)]
    q = loading_query(ev, proj, sens, ordered, hierarchical, src, exp.Count(this=exp.Star()),
                      as_expression(exp.alias_(ev.counted.copy(), src, table=True, quoted=True)), numeric)
    for rel, on in joins:
        q = q.join(rel, on=on, join_type="left", copy=False)
    data = ev.engine.fetch_numpy(q)
    leaves = []
    for i, a in enumerate(qis):
        column = data.pop(f"q{i}")  # each fetched column freed once narrowed
        if nulls(column) is not None:
            ev.validate_coverage(p.source, [a])  # names the values the hierarchy lacks
            raise HierarchyError(f"attribute {a!r} has values missing from its hierarchy")
        leaves.append(np.asarray(column).astype(code_dtype(len(keys[i]))))
    return data, leaves, keys


def loading_query(ev: Evaluator, proj: list[exp.Expression], sens: list[str], ordered: set[str],
                  hierarchical: set[str], src: str | None, count: exp.Expression,
                  source: exp.Expression, numeric: Set[str] = frozenset()) -> exp.Select:
    """The loading query: QI projections, raw sensitive values, their order keys, hierarchy keys
    and numbers where the statistics read them, a count."""
    p = ev.p
    proj = proj + [alias(col(a, src), f"s{j}") for j, a in enumerate(sens)]
    proj += [alias(order_key(a, col(a, src), p.value_order, p.column_types, p.attribute_types,
                             ev.engine.dialect.sqlglot, what=f"the ordered distance of {a!r}"), f"o{j}")
             for j, a in enumerate(sens) if a in ordered]
    proj += [alias(p.sensitive_hierarchies[a].key(col(a, src)), f"h{j}")
             for j, a in enumerate(sens) if a in hierarchical]
    proj += [alias(as_double(col(a, src)), f"x{j}") for j, a in enumerate(sens) if a in numeric]
    q = exp.select(*proj, alias(count, "n")).from_(source)
    if proj:
        q = q.group_by(*[e.this.copy() for e in proj])
    return q
