"""Probabilistic k-anonymity by individual ranking of the confidential attributes (book section 5.5).

The release runs in DuckDB (and PostgreSQL); its guarantee is checked on the result against the
original table: quasi-identifiers unchanged row by row, every released confidential value shared by
at least k rows whose original values are consecutive in the attribute's order, so an intruder who
locates a record by its quasi-identifiers singles out its original value with probability <= 1/k.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.errors import SpecError
from sqlanon.methods.microaggregation.algorithms.probabilistic import probabilistic_k_anonymity
from sqlanon.sql.render import render

QIS = ["zip \"code\"", "âge; --"]
CONFIDENTIAL = ["pay'", "debt"]


def release(engine, frame: pd.DataFrame, confidential, k, dialect="duckdb") -> pd.DataFrame:
    q = probabilistic_k_anonymity("people", list(frame.columns), confidential, k, key=["id"])
    names, rows = engine.fetch_script(render(q, dialect))
    return pd.DataFrame(rows, columns=names).sort_values("id").reset_index(drop=True)


def load_duck(duck, frame: pd.DataFrame) -> None:
    duck.con.register("people_frame", frame)
    duck.con.execute("CREATE OR REPLACE TABLE people AS SELECT * FROM people_frame")
    duck.con.unregister("people_frame")


def people(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": np.arange(n),
        QIS[0]: rng.integers(10000, 10050, n),
        QIS[1]: rng.integers(18, 90, n),
        CONFIDENTIAL[0]: rng.integers(0, 40, n) * 100,   # many ties
        CONFIDENTIAL[1]: np.round(rng.lognormal(8, 1, n), 2),
    })


def reidentification_bound(original: pd.DataFrame, released: pd.DataFrame, attribute: str) -> float:
    """The largest chance, over records, of picking a record's original value among its group's.

    Groups are the rows sharing a released value; the intruder knows the group's original values (a
    multiset) and picks one uniformly: the chance is (copies of the target's value) / group size.
    Also asserts that each group's original values are contiguous in the attribute's order.
    """
    worst = 0.0
    order = np.sort(original[attribute].to_numpy())
    for _, rows in released.groupby(attribute).groups.items():
        values = original.loc[rows, attribute].to_numpy()
        lo, hi = values.min(), values.max()
        inside = ((order > lo) & (order < hi)).sum()
        assert inside == ((values > lo) & (values < hi)).sum(), "group not contiguous in rank"
        for v in values:
            worst = max(worst, float((values == v).sum()) / len(values))
    return worst


def test_guarantee_on_a_table(duck):
    frame = people(500, 1)
    load_duck(duck, frame)
    k = 5
    out = release(duck, frame, CONFIDENTIAL, k)
    assert list(out.columns) == list(frame.columns)
    pd.testing.assert_frame_equal(out[["id", *QIS]], frame[["id", *QIS]], check_dtype=False)
    for a in CONFIDENTIAL:
        sizes = out.groupby(a).size()
        assert sizes.min() >= k
        # distinct values: the intruder's chance is exactly 1/group size
        if a == "debt":
            assert reidentification_bound(frame, out, a) <= 1 / k
        else:
            reidentification_bound(frame, out, a)
        # the mean of every group is preserved, so the attribute's total is too
        assert out[a].sum() == pytest.approx(frame[a].sum(), rel=1e-12)
    # the quasi-identifiers alone are not k-anonymous: this is not k-anonymity
    assert out.groupby(QIS).size().min() < k


def test_lemma_10_1_vector(duck):
    """Seed 000 Lemma 10.1 (digest §4.7): 1..10 with k = 3, then x = 1 changed to 11."""
    frame = pd.DataFrame({"id": range(10), "q": range(10), "x": np.arange(1, 11, dtype=float)})
    load_duck(duck, frame)
    q = probabilistic_k_anonymity("people", ["id", "q", "x"], ["x"], 3, key=["id"])
    first = dict(duck.fetch_script(render(q, "duckdb"))[1][i][::2] for i in range(10))
    assert [first[i] for i in range(10)] == [2.0] * 3 + [5.0] * 3 + [8.5] * 4
    x = frame["x"].to_numpy()
    masked = np.array([first[i] for i in range(10)])
    assert ((x - masked) ** 2).sum() == pytest.approx(9.0)
    assert ((x - x.mean()) ** 2).sum() == pytest.approx(82.5)
    assert ((x - masked) ** 2).sum() / ((x - x.mean()) ** 2).sum() == pytest.approx(0.10909, abs=5e-6)
    frame.loc[0, "x"] = 11.0
    load_duck(duck, frame)
    second = dict(duck.fetch_script(render(q, "duckdb"))[1][i][::2] for i in range(10))
    assert sorted(set(second.values())) == [3.0, 6.0, 9.5]
    centroids = np.array([3.0, 6.0, 9.5]) - np.array([2.0, 5.0, 8.5])
    assert np.abs(centroids).sum() == pytest.approx(3.0) and 3.0 <= 10 / 3


@settings(max_examples=40)
@given(st.lists(st.tuples(st.integers(0, 3), st.floats(-1e3, 1e3, allow_nan=False, width=32)),
                min_size=2, max_size=40), st.integers(2, 6))
def test_property_each_value_shared_by_k_and_contiguous(rows, k):
    from sqlanon.engines.duckdb import DuckDBEngine

    if k > len(rows):
        k = len(rows)
    frame = pd.DataFrame({"id": range(len(rows)), "qi": [r[0] for r in rows],
                          "s": [float(r[1]) for r in rows]})
    duck = DuckDBEngine()
    try:
        load_duck(duck, frame)
        out = release(duck, frame, ["s"], k)
    finally:
        duck.close()
    assert (out["qi"] == frame["qi"]).all()
    assert out.groupby("s").size().min() >= k
    reidentification_bound(frame, out, "s")
    # plain pandas oracle: sorted by (value, id), runs of k, remainder to the last run
    ordered = frame.sort_values(["s", "id"])
    run = np.minimum(np.arange(len(frame)) // k, len(frame) // k - 1)
    means = ordered.groupby(run)["s"].transform("mean").to_numpy()
    expected = pd.Series(means, index=ordered["id"].to_numpy()).sort_index().to_numpy()
    assert out["s"].to_numpy() == pytest.approx(expected, rel=1e-12, abs=1e-9)


def test_bad_arguments():
    with pytest.raises(SpecError, match="needs at least one confidential attribute"):
        probabilistic_k_anonymity("t", ["a", "b"], [], 3)
    with pytest.raises(SpecError, match="needs at least one confidential attribute"):
        probabilistic_k_anonymity("t", ["a", "b"], "b", 3)
    with pytest.raises(SpecError, match=r"'c' is not a column of the source"):
        probabilistic_k_anonymity("t", ["a", "b"], ["c"], 3)
    with pytest.raises(SpecError, match="k must be an integer >= 2"):
        probabilistic_k_anonymity("t", ["a", "b"], ["b"], 1)


@pytest.mark.parametrize("dialect", ["postgres", "spark", "snowflake", "bigquery", "trino"])
def test_renders_for_every_dialect(dialect):
    q = probabilistic_k_anonymity("people", ["id", *QIS, *CONFIDENTIAL], CONFIDENTIAL, 4, key=["id"])
    assert "ROW_NUMBER" in render(q, dialect).upper()


@pytest.mark.postgres
def test_postgres_gives_the_duckdb_release(duck):
    from sqlanon.engines.postgres import PostgresEngine
    from tests.pg_server import PostgresServer, PostgresUnavailable

    try:
        server = PostgresServer().start()
    except PostgresUnavailable as e:
        pytest.fail(str(e), pytrace=False)
    pg = PostgresEngine(server.create_schema("probabilistic"))
    try:
        frame = people(200, 4)
        load_duck(duck, frame)
        expected = release(duck, frame, CONFIDENTIAL, 4)
        pg.execute_script('CREATE TABLE people (id integer, "zip ""code""" integer, "âge; --" integer, '
                   '"pay\'" integer, debt double precision)')
        pg.insert_rows("people", [tuple(int(v) if i < 4 else float(v) for i, v in enumerate(r))
                                  for r in frame.itertuples(index=False)])
        got = release(pg, frame, CONFIDENTIAL, 4, dialect="postgres")
        pd.testing.assert_frame_equal(got, expected, check_dtype=False, rtol=1e-12)
    finally:
        pg.close()
        server.stop()
