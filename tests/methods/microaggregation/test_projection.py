"""Projection microaggregation in SQL equals a plain numpy re-implementation; it renders everywhere."""

from __future__ import annotations

import numpy as np
import pytest
import sqlglot
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.microaggregation.algorithms.projection import axis_of, projection_axis, projection_query
from sqlanon.sql.nodes import alias, col, lit
from sqlanon.sql.render import render

DIALECTS = ["duckdb", "postgres", "spark", "snowflake", "bigquery", "trino"]


def oracle(x: np.ndarray, ids: np.ndarray, k: int, projection: str, statistic: str) -> np.ndarray:
    """Standardize; score by the z-score sum or the first principal component (unit eigenvector of
    the correlation matrix, positive sum, or for a zero sum a positive first entry); runs of k in (score, id)
    order, the remainder joining the last run; each attribute replaced by its run's mean or median."""
    mean, sd = x.mean(axis=0), x.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    z = (x - mean) / sd
    if projection == "zscore" or x.shape[1] == 1:
        score = z.sum(axis=1)
    else:
        corr = np.cov(z, rowvar=False, bias=True)
        values, vectors = np.linalg.eigh(corr)
        v = vectors[:, np.argmax(values)]
        first = v[np.abs(v) > 1e-12][0]
        positive = v.sum() > 0 if abs(v.sum()) > 1e-12 else first > 0  # a zero sum: first entry > 0
        score = z @ (v if positive else -v)
    order = np.lexsort((ids, score))
    n = len(x)
    out = np.empty_like(x)
    for g in range(n // k):
        rows = order[g * k:(g + 1) * k] if g < n // k - 1 else order[g * k:]
        out[rows] = x[rows].mean(axis=0) if statistic == "mean" else np.median(x[rows], axis=0)
    return out


def eigengap_ok(x: np.ndarray) -> bool:
    """The first principal component is well defined (else any unit vector of the top eigenspace is)."""
    sd = x.std(axis=0)
    if (sd == 0).any() or x.shape[1] == 1:
        return True
    values = np.sort(np.linalg.eigvalsh(np.corrcoef(x, rowvar=False)))
    return values[-1] - values[-2] > 1e-3


def score_gap_ok(x: np.ndarray, projection: str) -> bool:
    """No two rows with different values have scores within rounding of each other."""
    from sqlanon.methods.microaggregation.algorithms.projection import scores

    s = scores(x, axis_of(x, projection))
    order = np.argsort(s)
    gaps = np.diff(s[order])
    same = np.all(np.diff(x[order], axis=0) == 0, axis=1)
    return bool(np.all(same | (gaps > 1e-9 * (1 + np.abs(s).max()))))


def load(engine: DuckDBEngine, x: np.ndarray, ids: np.ndarray) -> list[str]:
    names = ["id", *[f"x{j}" for j in range(x.shape[1])]]
    rows = [tuple([int(i), *map(float, r)]) for i, r in zip(ids, x)]
    source = exp.values([tuple(lit(v) for v in r) for r in rows], alias="v",
                        columns=[f"c{i}" for i in range(len(names))])
    types = ["bigint"] + ["double"] * x.shape[1]
    engine.create_table_as("t", exp.select(*[alias(exp.cast(col(f"c{i}", "v"), exp.DataType.build(t)), c)
                                             for i, (c, t) in enumerate(zip(names, types))]).from_(source),
                           replace=True)
    return names


def run(engine: DuckDBEngine, names: list[str], k: int, projection: str, statistic: str) -> np.ndarray:
    attributes = names[1:]
    source = exp.Table(this=exp.to_identifier("t", quoted=True))
    axis = projection_axis(engine, source, attributes, projection)
    q = projection_query("t", names, attributes, k, axis, key=["id"], statistic=statistic)
    got = engine.con.execute(render(q, "duckdb") + ' ORDER BY "id"').fetchnumpy()
    return np.column_stack([got[a] for a in attributes])


values = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=32)


@st.composite
def tables(draw):
    m = draw(st.integers(1, 4))
    n = draw(st.integers(2, 30))
    pool = draw(st.lists(st.lists(values, min_size=m, max_size=m), min_size=1, max_size=n))
    rows = draw(st.lists(st.sampled_from(range(len(pool))), min_size=n, max_size=n))  # copies too
    x = np.array([pool[i] for i in rows], dtype=np.float64)
    ids = np.array(draw(st.permutations(list(range(n)))))
    k = draw(st.integers(2, max(2, n)))
    return x, ids, min(k, n)


@settings(max_examples=60)
@given(tables(), st.sampled_from(["pca", "zscore"]), st.sampled_from(["mean", "median"]))
@example(data=(np.array([[0.0, 0.0]] * 22 + [[-1.0, 3.0]]), np.arange(23), 2), projection="pca",
         statistic="mean")  # component (1, -1)/sqrt(2): sums to 0, signed by its first entry
def test_projection_equals_numpy(data, projection, statistic):
    x, ids, k = data
    assume(eigengap_ok(x) and score_gap_ok(x, projection))
    with DuckDBEngine() as engine:
        names = load(engine, x, ids)
        got = run(engine, names, k, projection, statistic)
    want = oracle(x, ids, k, projection, statistic)[np.argsort(ids)]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_two_clusters_along_the_first_component():
    """Points on a line y = 2x: the projection order is the order along the line."""
    x = np.array([[i, 2.0 * i] for i in [5, 1, 4, 2, 3, 0]], dtype=float)
    ids = np.arange(6)
    with DuckDBEngine() as engine:
        names = load(engine, x, ids)
        got = run(engine, names, 3, "pca", "mean")
    # order along the line: 0,1,2 | 3,4,5 -> means (1, 2) and (4, 8)
    assert got.tolist() == [[4.0, 8.0], [1.0, 2.0], [4.0, 8.0], [1.0, 2.0], [4.0, 8.0], [1.0, 2.0]]


def test_axis_is_signed_and_unit():
    rng = np.random.default_rng(5)
    base = rng.normal(size=200)
    x = np.column_stack([base, -base + 0.1 * rng.normal(size=200), base + rng.normal(size=200)])
    axis = axis_of(x, "pca")
    c = np.asarray(axis.weights) * x.std(axis=0)
    assert np.linalg.norm(c) == pytest.approx(1.0)
    assert c.sum() > 0


@pytest.mark.parametrize("dialect", DIALECTS)
def test_query_renders_and_parses_for_every_dialect(dialect):
    from sqlanon.methods.microaggregation.algorithms.projection import Axis

    q = projection_query("t", ["id", "a", "b"], ["a", "b"], 3, Axis((1.5, -2.0), (0.5, 0.25)), key=["id"],
                         statistic="median")
    sql = render(q, dialect)
    assert sqlglot.parse_one(sql, read=dialect) is not None
    assert "ROW_NUMBER()" in sql.upper()
