"""Conformance on Adult: PostgreSQL and DuckDB give the same checks, metrics and outputs, row for row
(and the same checks for every other privacy model).

The class counts are also recomputed in plain Python from the CSV files (an independent oracle for
k-anonymity and distinct l-diversity).
"""

from __future__ import annotations

import csv
from collections import Counter, defaultdict
from functools import cache

import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.engines.postgres import PostgresEngine
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table
from tests.compare import same
from tests.conftest import ADULT, adult_spec_dict, require_data

pytestmark = pytest.mark.postgres

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
       "salary-class"]
NODE = {"age": 2, "education": 1, "marital-status": 1, "native-country": 1, "workclass": 1, "race": 1}
COARSE = {"age": 3, "education": 2, "marital-status": 2, "native-country": 2, "workclass": 2, "race": 1,
          "sex": 1}
LIMIT = 0.1
MODELS = {
    "k_anonymity": ([{"k_anonymity": {"k": 5}}], NODE),
    "distinct_l": ([{"k_anonymity": {"k": 3}}, {"l_diversity": {"attribute": "occupation", "l": 3}}],
                   NODE),
    "entropy_l": ([{"l_diversity": {"attribute": "occupation", "l": 3, "variant": "entropy"}}], NODE),
    "recursive_cl": ([{"l_diversity": {"attribute": "occupation", "l": 3, "variant": "recursive",
                                       "c": 4}}], NODE),
    "t_closeness_equal": ([{"t_closeness": {"attribute": "occupation", "t": 0.5}}], COARSE),
}
# every other model, checked without metrics (age is the numeric sensitive attribute)
OTHER_QIS = [q for q in QIS if q != "age"]
OTHER_NODE = {"education": 2, "marital-status": 2, "native-country": 2, "workclass": 2, "race": 1}
OTHERS = {
    "p_sensitive": {"p_sensitive_k_anonymity": {"attribute": "occupation", "k": 3, "p": 2}},
    "alpha_k": {"alpha_k_anonymity": {"attribute": "occupation", "alpha": 0.6, "k": 3}},
    "t_ordered": {"t_closeness": {"attribute": "age", "t": 0.3, "distance": "ordered"}},
    "t_hierarchical": {"t_closeness": {"attribute": "occupation", "t": 0.5,
                                       "distance": "hierarchical"}},
    "delta_disclosure": {"delta_disclosure": {"attribute": "occupation", "delta": 3}},
    "beta_likeness": {"beta_likeness": {"attribute": "occupation", "beta": 2}},
    "k_e": {"k_e_anonymity": {"attribute": "age", "k": 3, "e": 5}},
    "kpqr": {"kpqr_anonymity": {"attribute": "age", "k": 3, "p": 2, "q": 0.01, "r": 0.05}},
    "delta_presence": {"delta_presence": {"subset": "subset", "delta_min": 0.0, "delta_max": 0.9}},
}


@pytest.fixture(scope="module")
def engines(pg_server):
    require_data(ADULT)
    pg = PostgresEngine(pg_server.create_schema("adult_conformance"))
    duck = DuckDBEngine()
    try:
        for e in (pg, duck):
            for name in ("adult", "adult_copy"):
                if e is pg:
                    e.copy_csv(name, ADULT / "adult.csv", delimiter=";")
                else:
                    e.con.execute(f"CREATE TABLE {name} AS SELECT * FROM read_csv(?, delim=';', "
                                  "header=true, all_varchar=true)", [str(ADULT / "adult.csv")])
            e.execute_script("CREATE TABLE subset AS SELECT * FROM adult "
                             "WHERE sex = 'Female' AND race = 'White'")
        yield {"postgres": pg, "duckdb": duck}
    finally:
        pg.close()
        duck.close()


def spec(case: str, **output) -> dict:
    privacy, levels = MODELS[case]
    d = adult_spec_dict(ADULT, qis=QIS, sensitive=["occupation"], privacy=privacy, levels=levels,
                        limit=LIMIT)
    d["output"] = output or {"mode": "none"}
    return d


def oracle_outliers(levels: dict[str, int], k: int, l: int = 1) -> tuple[int, int]:
    return _oracle(tuple(sorted(levels.items())), k, l)


@cache
def _oracle(node: tuple[tuple[str, int], ...], k: int, l: int) -> tuple[int, int]:
    """(rows, outlier rows) from the CSV files: classes with < k rows or < l occupations."""
    levels = dict(node)
    maps = {}
    for q in QIS:
        with open(ADULT / f"adult_hierarchy_{q}.csv", encoding="utf-8") as f:
            maps[q] = {row[0]: row for row in csv.reader(f, delimiter=";")}
    sizes: Counter = Counter()
    values: dict[tuple, set] = defaultdict(set)
    with open(ADULT / "adult.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter=";"):
            key = tuple(maps[q][row[q]][levels.get(q, 0)] for q in QIS)
            sizes[key] += 1
            values[key].add(row["occupation"])
    out = sum(n for key, n in sizes.items() if n < k or len(values[key]) < l)
    return sum(sizes.values()), out


def bag(engine, query) -> Counter:
    """The rows of a query (a tree, or the text of the sql output) as a multiset: equal bags are
    equal row for row in some order."""
    rows = engine.fetch_script(query)[1] if isinstance(query, str) else engine.fetch(query)[1]
    return Counter(rows)


@pytest.mark.parametrize("case", sorted(MODELS))
def test_checks_and_metrics_agree(engines, case):
    reports = {name: api.check(spec_from_dict(spec(case)), engine=e).as_dict()
               for name, e in engines.items()}
    assert same(reports["postgres"], reports["duckdb"]), (reports["postgres"], reports["duckdb"])
    assert reports["postgres"]["anonymous"] and reports["postgres"]["outlier_rows"] > 0
    if case == "k_anonymity":
        assert (reports["postgres"]["rows"], reports["postgres"]["outlier_rows"]) == \
            oracle_outliers(NODE, 5)
    if case == "distinct_l":
        assert (reports["postgres"]["rows"], reports["postgres"]["outlier_rows"]) == \
            oracle_outliers(NODE, 3, 3)


@pytest.mark.parametrize("case", sorted(OTHERS))
def test_other_models_agree(engines, case):
    model = OTHERS[case]
    (params,) = model.values()
    attribute = params.get("attribute")
    d = adult_spec_dict(ADULT, qis=OTHER_QIS, sensitive=[attribute] if attribute else [],
                        privacy=[model], levels=OTHER_NODE, limit=LIMIT)
    d["metrics"] = []
    if attribute == "age":
        d["attributes"]["age"]["type"] = "integer"
    if case == "t_hierarchical":
        d["attributes"]["occupation"]["hierarchy"] = {"csv": str(ADULT / "adult_hierarchy_occupation.csv")}
    reports = {name: api.check(spec_from_dict(d), engine=e).as_dict() for name, e in engines.items()}
    assert same(reports["postgres"], reports["duckdb"]), (reports["postgres"], reports["duckdb"])


@pytest.mark.parametrize("mode", ["table", "view", "in_place", "sql"])
def test_outputs_agree_row_for_row(engines, mode):
    n, outliers = oracle_outliers(NODE, 3, 3)
    rows = {}
    for name, e in engines.items():
        if mode == "sql":
            d = spec("distinct_l", mode="sql", dialect=name)
        else:
            d = spec("distinct_l", mode=mode, name=f"adult_{mode}", replace=True)
        if mode == "in_place":
            d["source"]["table"] = "adult_copy"
        d["metrics"] = []
        report = api.apply(spec_from_dict(d), engine=e)
        query = report.outputs["sql"].rstrip().rstrip(";") if mode == "sql" else \
            exp.select("*").from_(table(report.outputs["relation"]))
        rows[name] = bag(e, query)
    assert sum(rows["postgres"].values()) == n - outliers
    assert rows["postgres"] == rows["duckdb"]
