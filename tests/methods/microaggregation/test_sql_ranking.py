"""Individual ranking in SQL equals a plain-Python implementation of the same rule (DuckDB, PostgreSQL)."""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter

import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError
from sqlanon.methods.microaggregation.algorithms.one_sort_ranking import one_sort_ranking
from sqlanon.methods.microaggregation.algorithms.sql_ranking import individual_ranking
from sqlanon.sql.dialects import profile, stored_case
from sqlanon.sql.nodes import alias, col, lit, table
from sqlanon.sql.render import render

DIALECTS = ["duckdb", "postgres", "spark", "snowflake", "bigquery", "trino"]
HOSTILE = ['we"ird', "x'; DROP TABLE t; --", "größe ✓", "semi;colon", "back`tick"]


def reference(rows, columns, attribute, k, key, statistic="mean"):
    """The rule in plain Python: one output value per row index.

    Non-NULL values sorted by (value, key columns); runs of k; the n mod k left over join the last run;
    a run's value is its mean or median; NULL stays NULL; fewer than k values: all NULL.
    """
    a = columns.index(attribute)
    keys = [columns.index(c) for c in key]
    present = sorted((i for i, r in enumerate(rows) if r[a] is not None),
                     key=lambda i: (rows[i][a], *[rows[i][j] for j in keys]))
    out = [None] * len(rows)
    runs = len(present) // k
    for g in range(runs):
        members = present[g * k:(g + 1) * k] if g < runs - 1 else present[g * k:]
        vs = [rows[i][a] for i in members]
        value = math.fsum(vs) / len(vs) if statistic == "mean" else statistics.median(vs)
        for i in members:
            out[i] = value
    return out


def load(engine, name, columns, types, rows):
    """Create ``name`` from rows through an inline VALUES list with typed casts."""
    source = exp.values([tuple(lit(v) for v in r) for r in rows] or [tuple(lit(None) for _ in columns)],
                        alias="v", columns=[f"c{i}" for i in range(len(columns))])
    q = exp.select(*[alias(exp.cast(col(f"c{i}", "v"), exp.DataType.build(t)), c)
                     for i, (c, t) in enumerate(zip(columns, types))]).from_(source)
    if not rows:
        q = q.where(exp.false())
    engine.drop(name)
    engine.create_table_as(name, q)


def run(engine, name, columns, attributes, k, one_sort=False, **kw):
    """The SQL form's rows, or with ``one_sort`` the one-sort form's (given the counts of non-NULL values)."""
    if one_sort:
        present = [engine.fetch(exp.select(exp.Count(this=col(a))).from_(table(name)))[1][0][0]
                   for a in attributes]
        q = one_sort_ranking(name, columns, attributes, k, key=kw.get("key"),
                           statistic=kw.get("statistic", "mean"), present=present)
    else:
        q = individual_ranking(name, columns, attributes, k, **kw)
    names, rows = engine.fetch(q)
    assert names == list(columns)
    return rows


def close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def assert_matches(got, rows, columns, attributes, k, key, statistic="mean"):
    """``got`` (SQL rows, any order, first column a unique id) equals the reference row by row."""
    by_id = {r[0]: r for r in got}
    assert len(by_id) == len(rows)
    for a in attributes:
        want = reference(rows, columns, a, k, key, statistic)
        j = columns.index(a)
        for r, w in zip(rows, want):
            assert close(by_id[r[0]][j], w), (a, r, by_id[r[0]][j], w)
    for j, c in enumerate(columns):
        if c not in attributes:
            assert [by_id[r[0]][j] for r in rows] == [r[j] for r in rows]


values_int = st.one_of(st.none(), st.integers(-6, 6))
values_float = st.one_of(st.none(), st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False).map(
    lambda v: v + 0.0))  # no -0.0: engines may order it before 0.0


@st.composite
def tables(draw):
    body = draw(st.lists(st.tuples(values_int, values_float, st.sampled_from(["p", "q", None])),
                         max_size=40))
    ids = draw(st.permutations(range(len(body))))
    return [(i, *r) for i, r in zip(ids, body)]


COLUMNS = ["id", "a", "b", "s"]
TYPES = ["integer", "double", "double", "varchar"]


@pytest.fixture(scope="module")
def duck():
    engine = DuckDBEngine()
    yield engine
    engine.close()


@settings(max_examples=60)
@given(rows=tables(), k=st.integers(2, 5), statistic=st.sampled_from(["mean", "median"]),
       one_sort=st.booleans())
def test_duckdb_equals_the_rule_on_random_tables(duck, rows, k, statistic, one_sort):
    """Both forms: the SQL form, and the one-sort form (each attribute's windows in its one order)."""
    load(duck, "t", COLUMNS, TYPES, rows)
    got = run(duck, "t", COLUMNS, ["a", "b"], k, one_sort=one_sort, key=["id"], statistic=statistic)
    assert_matches(got, rows, COLUMNS, ["a", "b"], k, ["id"], statistic)


@settings(max_examples=30)
@given(values=st.lists(st.integers(-50, 50), min_size=0, max_size=40), k=st.integers(2, 6),
       one_sort=st.booleans())
def test_default_key_breaks_ties_among_whole_rows(duck, values, k, one_sort):
    # duplicate rows on purpose: no unique key; the result is compared as a multiset
    rows = [(v, v % 3) for v in values] * 2
    load(duck, "d", ["a", "c"], ["integer", "integer"], rows)
    got = run(duck, "d", ["a", "c"], ["a"], k, one_sort=one_sort)
    want = reference(rows, ["a", "c"], "a", k, ["c"])
    assert Counter((round(x, 9) if x is not None else None, c) for x, c in got) == \
        Counter((round(w, 9) if w is not None else None, r[1]) for w, r in zip(want, rows))


@settings(max_examples=30)
@given(values=st.lists(st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False), min_size=0,
                       max_size=60, unique=True), k=st.integers(2, 7))
def test_group_sizes_are_k_to_2k_minus_1(duck, values, k):
    # distinct values: group means strictly increase, so rows per distinct output value = group sizes
    rows = [(i, v + 0.0) for i, v in enumerate(values)]
    load(duck, "g", ["id", "x"], ["integer", "double"], rows)
    sizes = sorted(Counter(x for _, x in run(duck, "g", ["id", "x"], ["x"], k, key=["id"])).items())
    n = len(values)
    if n < k:
        assert sizes == ([(None, n)] if n else [])
        return
    counts = [c for _, c in sizes]
    assert len(counts) == n // k and all(c == k for c in counts[:-1]) and k <= counts[-1] <= 2 * k - 1


def test_worked_examples(duck):
    # Domingo-Ferrer et al. 2016, Lemma 10.1: 1..10, k = 3: centroids 2, 5, 8.5; after x=1 -> 11 they
    # are 3, 6, 9.5 (the remainder joins the last group, as sdcMicro's "onedims" does)
    load(duck, "l", ["id", "x"], ["integer", "integer"], [(i, i) for i in range(1, 11)])
    assert sorted(run(duck, "l", ["id", "x"], ["x"], 3, key=["id"])) == \
        [(1, 2.0), (2, 2.0), (3, 2.0), (4, 5.0), (5, 5.0), (6, 5.0), (7, 8.5), (8, 8.5), (9, 8.5), (10, 8.5)]
    load(duck, "l", ["id", "x"], ["integer", "integer"], [(i, 11 if i == 1 else i) for i in range(1, 11)])
    released = sorted(x for _, x in run(duck, "l", ["id", "x"], ["x"], 3, key=["id"]))
    assert released == [3.0] * 3 + [6.0] * 3 + [9.5] * 4
    # ages 19, 20, 23 | 24, 25, 27, 30, 40 with k = 3: 62/3 and 146/5
    ages = [40, 19, 25, 20, 30, 23, 27, 24]
    load(duck, "ages", ["id", "age"], ["integer", "integer"], list(enumerate(ages)))
    got = dict(run(duck, "ages", ["id", "age"], ["age"], 3, key=["id"]))
    assert all(close(got[i], 62 / 3 if a <= 23 else 29.2) for i, a in enumerate(ages))
    # median: 1, 2, 3 | 4, 5, 6 | 7, 8, 9, 100 -> 2, 5, (8 + 9) / 2
    load(duck, "m", ["id", "x"], ["integer", "integer"], [(i, v) for i, v in enumerate([100, *range(1, 10)])])
    got = dict(run(duck, "m", ["id", "x"], ["x"], 3, key=["id"], statistic="median"))
    assert [got[i] for i in range(10)] == [8.5, 2.0, 2.0, 2.0, 5.0, 5.0, 5.0, 8.5, 8.5, 8.5]


def test_nulls_stay_null_and_are_ranked_apart(duck):
    rows = [(0, None), (1, 5), (2, 1), (3, None), (4, 3), (5, 2), (6, 4)]
    load(duck, "n", ["id", "x"], ["integer", "integer"], rows)
    # non-NULL 1, 2 | 3, 4, 5 with k = 2
    assert sorted(run(duck, "n", ["id", "x"], ["x"], 2, key=["id"])) == \
        [(0, None), (1, 4.0), (2, 1.5), (3, None), (4, 4.0), (5, 1.5), (6, 4.0)]
    # 5 non-NULL values cannot form a group of 6: the whole attribute becomes NULL
    assert [x for _, x in run(duck, "n", ["id", "x"], ["x"], 6, key=["id"])] == [None] * 7


def test_source_may_be_a_query(duck):
    load(duck, "base", ["id", "x"], ["integer", "integer"], [(i, i * i) for i in range(6)])
    q = exp.select(col("id"), col("x")).from_(table("base")).where(exp.GT(this=col("id"), expression=lit(0)))
    got = dict(duck.fetch(individual_ranking(q, ["id", "x"], ["x"], 2, key=["id"]))[1])
    # 1, 4 | 9, 16, 25
    assert sorted(got) == [1, 2, 3, 4, 5]
    assert all(close(got[i], w) for i, w in zip(range(1, 6), [2.5, 2.5, 50 / 3, 50 / 3, 50 / 3]))


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_renders_for_every_dialect_with_hostile_names(dialect, statistic):
    columns = ["id", *HOSTILE]
    sql = render(individual_ranking("my table", columns, HOSTILE[:3], 3, key=["id"], statistic=statistic),
                 dialect)
    parsed = sqlglot.parse_one(sql, read=dialect)
    assert isinstance(parsed, exp.Select)
    # names as the dialect stores them (Snowflake: a lower-case plain name such as id becomes ID)
    target = profile(dialect)
    assert [p.alias_or_name for p in parsed.expressions] == [stored_case(c, target) for c in columns]
    assert "DROP" not in {t.token_type.name for t in sqlglot.tokenize(sql, read=dialect)}
    assert [t.name for t in parsed.find_all(exp.Table) if t.name == "my table"]


def test_hostile_names_run_on_duckdb(duck):
    columns = ["id", *HOSTILE]
    rows = [(i, *[(i * (j + 3)) % 7 for j in range(len(HOSTILE))]) for i in range(9)]
    load(duck, 'ta"b;le', columns, ["integer"] * len(columns), rows)
    got = run(duck, 'ta"b;le', columns, HOSTILE[:3], 4, key=["id"], statistic="median")
    assert_matches(got, rows, columns, HOSTILE[:3], 4, ["id"], "median")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"k": 1}, r"individual_ranking.k: k must be an integer >= 2, got 1"),
    ({"k": "3"}, r"individual_ranking.k: k must be an integer >= 2, got '3'"),
    ({"statistic": "meen"}, r"individual_ranking.statistic: unknown statistic 'meen'.*Did you mean 'mean'"),
    ({"attributes": ["agee"]}, r"individual_ranking.attributes\[0\]: 'agee' is not a column.*'age'"),
    ({"attributes": ["age", "age"]}, r"individual_ranking.attributes\[1\]: 'age' is named twice"),
    ({"attributes": []}, r"individual_ranking.attributes: no attribute"),
    ({"key": ["idd"]}, r"individual_ranking.key\[0\]: 'idd' is not a column"),
    ({"columns": ["id", "age", "__sa_x"]},
     r"individual_ranking.columns\[2\]: column '__sa_x' uses the prefix"),
    ({"columns": ["id", "age", "id"]}, r"individual_ranking.columns: columns named more than once: \['id'\]"),
])
def test_bad_arguments_are_named(kwargs, message):
    args = {"columns": ["id", "age"], "attributes": ["age"], "k": 3, "key": ["id"]} | kwargs
    with pytest.raises(SpecError, match=message):
        individual_ranking("t", args.pop("columns"), args.pop("attributes"), args.pop("k"), **args)


# -- PostgreSQL --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pg():
    from sqlanon.engines.postgres import PostgresEngine
    from tests.pg_server import PostgresServer, PostgresUnavailable

    try:
        server = PostgresServer().start()
    except PostgresUnavailable as e:
        pytest.fail(str(e), pytrace=False)
    engine = PostgresEngine(server.create_schema("ranking"))
    yield engine
    engine.close()
    server.stop()


def random_table(seed: int) -> list[tuple]:
    rng = random.Random(seed)
    n = rng.randint(0, 60)
    ids = rng.sample(range(1000), n)

    def maybe(v):
        return None if rng.random() < 0.15 else v

    return [(i, maybe(rng.randint(-8, 8)), maybe(round(rng.uniform(-100, 100), 3)), maybe(rng.choice("pq")))
            for i in ids]


@pytest.mark.postgres
@pytest.mark.parametrize("seed", range(12))
def test_postgres_equals_the_rule_on_random_tables(pg, seed):
    rows = random_table(seed)
    k = 2 + seed % 4
    statistic = "median" if seed % 2 else "mean"
    load(pg, "t", COLUMNS, TYPES, rows)
    got = run(pg, "t", COLUMNS, ["a", "b"], k, key=["id"], statistic=statistic)
    assert_matches(got, rows, COLUMNS, ["a", "b"], k, ["id"], statistic)


@pytest.mark.postgres
def test_postgres_hostile_names_nulls_and_worked_example(pg):
    columns = ["id", *HOSTILE]
    rows = [(i, *[None if (i + j) % 5 == 0 else (i * (j + 3)) % 7 for j in range(len(HOSTILE))])
            for i in range(11)]
    load(pg, 'ta"b;le', columns, ["integer"] * len(columns), rows)
    for statistic in ("mean", "median"):
        got = run(pg, 'ta"b;le', columns, HOSTILE, 3, key=["id"], statistic=statistic)
        assert_matches(got, rows, columns, HOSTILE, 3, ["id"], statistic)
    load(pg, "l", ["id", "x"], ["integer", "integer"], [(i, i) for i in range(1, 11)])
    assert sorted(x for _, x in run(pg, "l", ["id", "x"], ["x"], 3, key=["id"])) == \
        [2.0] * 3 + [5.0] * 3 + [8.5] * 4
