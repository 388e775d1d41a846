"""The privacy unit in a spec: its validation, the rules for quasi-identifiers that vary across a
person's rows, and every output mode releasing whole persons."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.errors import SpecError

ROWS = [  # pid, age, zip, visit, dx
    (1, 30, "a", 1, "flu"), (1, 34, "a", 2, "flu"), (1, 30, "a", 3, "hiv"),
    (2, 31, "a", 1, "flu"), (2, 31, "a", 2, "flu"),
    (3, 45, "b", 1, "cold"), (3, 45, "b", 2, "cold"), (3, 45, "b", 3, "cold"),
    (4, 46, "b", 1, "flu"), (5, 57, "b", 1, "hiv"), (5, 57, "b", 2, "hiv"),
]


@pytest.fixture()
def visits(duck):
    duck.con.execute("CREATE TABLE visits (pid INTEGER, age INTEGER, zip VARCHAR, visit INTEGER, dx VARCHAR)")
    duck.con.executemany("INSERT INTO visits VALUES (?, ?, ?, ?, ?)", ROWS)
    return duck


def spec(unit, levels=None, privacy=None, **output) -> dict:
    return {"source": {"table": "visits"}, "privacy_unit": unit,
            "attributes": {"pid": {"role": "insensitive"}, "visit": {"role": "insensitive"},
                           "age": {"role": "quasi_identifier",
                                   "hierarchy": {"intervals": {"widths": [10, 20]}}},
                           "zip": {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 1}}},
                           "dx": {"role": "sensitive"}},
            "privacy": privacy or [{"k_anonymity": {"k": 2}}],
            "transformation": {"levels": levels or {"age": 1}, "suppression_limit": 0.2},
            "output": {"mode": "table", "name": "out", "replace": True, **output}}


def released(engine, relation="out"):
    return sorted(engine.con.execute(f'SELECT pid, age, zip, visit, dx FROM "{relation}"').fetchall())


@pytest.mark.parametrize("unit, path, words", [
    ("patient", "privacy_unit.column", "unknown column 'patient'"),
    ({"column": "pid", "varying": "median"}, "privacy_unit.varying", "unknown rule 'median'"),
    ({"column": "pid", "varying": "first"}, "privacy_unit.order_by", "needs `order_by"),
    ({"column": "pid", "attributes": {"visit": "min"}}, "privacy_unit.attributes.visit",
     "not a quasi-identifier or sensitive attribute"),
    ({"column": "pid", "order_by": "when", "attributes": {"age": "first"}}, "privacy_unit.order_by",
     "unknown column 'when'"),
    ("pid", "privacy_unit.attributes.age", "differs between the rows of person(s) 1 (pid)"),
])
def test_bad_units_are_one_line_errors(visits, unit, path, words):
    with pytest.raises(SpecError) as e:
        api.check(spec(unit), engine=visits)
    assert e.value.path == path and words in str(e.value) and "\n" not in str(e.value)


def test_null_persons_and_unit_roles_are_refused(visits):
    visits.con.execute("INSERT INTO visits VALUES (NULL, 30, 'a', 9, 'flu')")
    with pytest.raises(SpecError, match="1 row.s. have no person: 'pid' is NULL"):
        api.check(spec({"column": "pid", "varying": "min"}), engine=visits)
    s = spec("age")
    with pytest.raises(SpecError, match="identifies persons, so it cannot be a quasi_identifier"):
        api.check(s, engine=visits)
    noise = {"method": "noise", "mechanism": "laplace", "epsilon": 1.0, "attributes": ["age"],
             "bounds": {"age": [0, 100]}, "sensitivity": 100}
    for path, method in (("privacy_unit", noise),
                         ("transformation.recoding", {"recoding": "local", "search": "optimal"})):
        s = spec({"column": "pid", "varying": "min"})
        s["transformation"] = method
        with pytest.raises(SpecError) as e:
            api.check(s, engine=visits)
        assert e.value.path == path and "person" in str(e.value)


@pytest.mark.parametrize("rule", ["min", "max", "first"])
def test_varying_rules_release_each_person_in_one_class(visits, rule):
    unit = {"column": "pid", "varying": rule, "order_by": "visit"}
    visits.con.execute("UPDATE visits SET age = 29 WHERE pid = 1 AND visit = 3")  # first is not min
    report = api.apply(spec(unit, levels={"age": 0}, privacy=[{"k_anonymity": {"k": 1}}]), engine=visits)
    out = released(visits)
    ages = {p: {str(a) for p_, a, *_ in out if p_ == p} for p, *_ in out}
    assert all(len(a) == 1 for a in ages.values())
    assert ages[1] == {{"min": "29", "max": "34", "first": "30"}[rule]}
    assert report.privacy_unit["persons"] == 5


def test_suppression_removes_whole_persons_and_counts_persons(visits):
    # at age level 1: persons 1, 2 in [30, 40); 3, 4 in [40, 50); 5 alone in [50, 60)
    report = api.apply(spec({"column": "pid", "varying": "min"}), engine=visits)
    assert report.node.outlier_rows == 1 and report.node.max_suppressed == 1  # floor(0.2 · 5 persons)
    assert report.privacy_unit["suppressed_rows"] == 2
    assert {r[0] for r in released(visits)} == {1, 2, 3, 4}
    assert len(released(visits)) == len(ROWS) - 2
    strict = spec({"column": "pid", "varying": "min"})
    strict["transformation"]["suppression_limit"] = 0.1  # 0 persons, although 2 rows are < 0.1 · 11
    assert not api.check(strict, engine=visits).anonymous


def test_person_values_count_once_in_l_diversity(visits):
    # class [40, 50): person 3 has three 'cold' rows, person 4 one 'flu': entropy over persons is
    # ln 2 (l = 2 holds), over rows it would be below it
    privacy = [{"l_diversity": {"attribute": "dx", "l": 2, "variant": "entropy"}}]
    s = spec({"column": "pid", "varying": "min"}, privacy=privacy)
    s["transformation"]["suppression_limit"] = 0.5
    report = api.check(s, engine=visits)
    # [30, 40): flu 2 persons, hiv 1 (person 1 counts both its values): entropy below ln 2;
    # [50, 60): person 5 alone; [40, 50): cold 1 person, flu 1: ln 2 holds
    assert report.node.outlier_rows == 3
    row_level = dict(s, privacy_unit=None)
    assert api.check(row_level, engine=visits).node.outlier_rows == len(ROWS)  # rows: cold 3, flu 1


@pytest.mark.parametrize("mode", ["view", "in_place", "sql"])
def test_every_output_mode_releases_the_same_persons(visits, mode, tmp_path):
    unit = {"column": "pid", "varying": "min"}
    api.apply(spec(unit), engine=visits)
    expected = released(visits)
    if mode == "sql":
        path = tmp_path / "out.sql"
        api.apply(spec(unit, mode="sql", path=str(path)), engine=visits)
        visits.con.execute(f"CREATE TABLE from_sql AS {path.read_text().strip().rstrip(';')}")
        assert released(visits, "from_sql") == expected
    elif mode == "view":
        api.apply(spec(unit, mode="view", name="out_view"), engine=visits)
        assert released(visits, "out_view") == expected
    else:
        s = spec(unit, mode="in_place")
        del s["output"]["name"], s["output"]["replace"]
        api.apply(s, engine=visits)
        assert released(visits, "visits") == expected


def test_sql_compiled_without_a_connection_releases_the_same_persons(visits):
    unit = {"column": "pid", "varying": "min"}
    api.apply(spec(unit), engine=visits)
    expected = released(visits)
    s = spec(unit, mode="sql")
    del s["output"]["name"], s["output"]["replace"]
    sql = api.compile_sql(s, offline=True, dialect="duckdb")
    statement = sql[sql.index("WITH"):].strip().rstrip(";")
    visits.con.execute(f"CREATE TABLE offline AS {statement}")
    assert released(visits, "offline") == expected
    dbt = dict(s, output={"mode": "table"})
    from sqlanon.errors import UnsupportedError
    from sqlanon.outputs.dbt.sql import gates
    from sqlanon.spec import spec_from_dict
    with pytest.raises(UnsupportedError, match="privacy unit"):
        gates(spec_from_dict(dbt), ["duckdb"])


@pytest.mark.parametrize("method", [{"method": "mondrian", "k": 2}, {"method": "local_suppression", "k": 2}])
def test_methods_that_count_rows_refuse_a_privacy_unit(method):
    from sqlanon.spec import spec_from_dict

    s = spec({"column": "pid", "varying": "min"})
    s["transformation"] = method
    with pytest.raises(SpecError, match="counts rows and cannot treat a person's rows together") as e:
        spec_from_dict(s)
    assert e.value.path == "privacy_unit"
