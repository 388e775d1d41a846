"""Person-level DP queries: contribution bounding in SQL, sensitivities, privacy loss between tables
differing by one whole person, and the ledger's privacy unit."""

from __future__ import annotations

import math
from collections import Counter
from decimal import Decimal

import numpy as np
import pytest

from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError
from sqlanon.methods.dp.aggregate_noise import Noise
from sqlanon.methods.dp.aggregates import Count, Grouped, Histogram, Mean, Sum
from sqlanon.methods.dp.amounts import PrivacyBudgetError
from sqlanon.methods.dp.budget import PrivacyLedger
from sqlanon.methods.dp.contribution import Contribution, bounded
from sqlanon.methods.dp.queries import dp_query, exact_query
from tests.methods.dp.test_aggregates import _max_log_ratio
from tests.postgres.conftest import pg, pg_dsn  # noqa: F401  (fixtures; pg_server is the suite's)

pytestmark = pytest.mark.filterwarnings("ignore::sqlanon.methods.rng.ReproducibleNoiseWarning")

PERSON = 'pat"ient'
TABLE = "vi'sits"
KEYS = ["a", "b", "c"]


def _rows(persons: int = 40, seed: int = 1) -> list[tuple[int, str, float]]:
    """Persons 0..persons-1 with 1 to 9 rows each (a ward and a cost), some rows repeated."""
    r = np.random.default_rng(seed)
    out = []
    for p in range(persons):
        for _ in range(int(r.integers(1, 10))):
            out.append((p, str(r.choice(["a", "b", "c", "d"])), float(r.integers(0, 4) * 25)))
    return out


def _load(engine, rows, name: str = TABLE, person: str = PERSON) -> None:
    from sqlglot import exp

    from sqlanon.sql.nodes import ident, table

    engine.execute(exp.Create(this=exp.Schema(this=table(name), expressions=[
        exp.ColumnDef(this=ident(person), kind=exp.DataType.build("int")),
        exp.ColumnDef(this=ident("ward"), kind=exp.DataType.build("varchar")),
        exp.ColumnDef(this=ident("cost"), kind=exp.DataType.build("double"))]), kind="TABLE"))
    engine.insert_rows(name, rows)


@pytest.fixture()
def duck():
    engine = DuckDBEngine()
    yield engine
    engine.close()


def _check_bounding(engine, rows) -> None:
    by_person: dict[int, Counter] = {}
    for p, w, c in rows:
        by_person.setdefault(p, Counter())[(w, c)] += 1
    # ungrouped: exactly min(rows, L) rows per person, each one of the person's own rows
    for key in ("k1", "k2"):
        q = bounded(TABLE, Contribution(PERSON, 3), ["ward", "cost"], key, engine.dialect)
        kept: dict[int, Counter] = {}
        for p, w, c in engine.fetch(q)[1]:
            kept.setdefault(p, Counter())[(w, float(c))] += 1
        assert set(kept) == set(by_person)
        for p, mine in by_person.items():
            assert sum(kept[p].values()) == min(sum(mine.values()), 3)
            assert not kept[p] - mine                       # a sub-multiset of the person's rows
    # per key: only listed keys, at most G keys per person and L rows per person and key
    q = bounded(TABLE, Contribution(PERSON, 2, 2), ["ward", "cost"], "k3", engine.dialect,
                (("ward",), tuple((k,) for k in KEYS)))
    kept_rows: dict[tuple[int, str], int] = Counter()
    for p, w, _ in engine.fetch(q)[1]:
        kept_rows[(p, w)] += 1
    for p, mine in by_person.items():
        listed = Counter()
        for (w, _), n in mine.items():
            if w in KEYS:
                listed[w] += n
        keys = {w for (q_p, w) in kept_rows if q_p == p}
        assert keys <= set(listed) and len(keys) == min(len(listed), 2)
        for w in keys:
            assert kept_rows[(p, w)] == min(listed[w], 2)


def test_bounding_keeps_at_most_max_rows_per_person_duckdb(duck):
    rows = _rows()
    _load(duck, rows)
    _check_bounding(duck, rows)
    duck.insert_rows(TABLE, [(None, "a", 1.0)] * 5)      # rows of no person count nowhere
    q = bounded(TABLE, Contribution(PERSON, 100), ["ward"], "k", duck.dialect)
    assert len(duck.fetch(q)[1]) == len(rows)


def test_bounding_keeps_at_most_max_rows_per_person_postgres(pg):  # noqa: F811
    rows = _rows(seed=2)
    _load(pg, rows)
    _check_bounding(pg, rows)
    # the same rows are kept as DuckDB keeps with the same key (integers and text hash alike)
    duck = DuckDBEngine()
    _load(duck, rows)
    q = bounded(TABLE, Contribution(PERSON, 3), ["ward"], "same key", pg.dialect)
    qd = bounded(TABLE, Contribution(PERSON, 3), ["ward"], "same key", duck.dialect)
    assert sorted(pg.fetch(q)[1]) == sorted(duck.fetch(qd)[1])
    duck.close()


def test_kept_rows_are_a_uniform_random_choice_per_person(duck):
    # 30 persons with 6 distinct rows each, 2 kept: over 40 keys each row is kept about 1/3 of the time
    rows = [(p, str(i), float(i)) for p in range(30) for i in range(6)]
    _load(duck, rows)
    kept = Counter()
    choices = set()
    for k in range(40):
        got = duck.fetch(bounded(TABLE, Contribution(PERSON, 2), ["ward"], f"key {k}", duck.dialect))[1]
        kept.update(w for _, w in got)
        choices.add(tuple(sorted(w for p, w in got if p == 0)))
    frequencies = np.array([kept[str(i)] for i in range(6)]) / (30 * 40)
    sd = math.sqrt(1 / 3 * 2 / 3 / 1200)
    assert np.all(np.abs(frequencies - 1 / 3) < 5 * sd), frequencies
    assert len(choices) >= 8                     # person 0's pair changes with the key (15 possible)
    same = [duck.fetch(bounded(TABLE, Contribution(PERSON, 2), ["ward"], "fixed", duck.dialect))[1]
            for _ in range(2)]
    assert sorted(same[0]) == sorted(same[1])    # one key, one choice


def _neighbours(engine):
    """Two tables of the same persons, the second without person 99 (seven rows in wards a, b)."""
    rows = _rows(30, seed=7)
    _load(engine, rows)
    from sqlglot import exp

    from sqlanon.sql.nodes import table
    engine.execute(exp.Create(this=table("with_p"), kind="TABLE",
                              expression=exp.select("*").from_(table(TABLE))))
    engine.insert_rows("with_p", [(99, "a", 75.0)] * 4 + [(99, "b", 75.0)] * 3)


def test_removing_one_person_moves_the_histogram_within_e_epsilon(duck):
    """Neighbours differ by all seven rows of one person. With at most one key and two rows per
    person (sensitivity 2), the joint output over the keys has a probability ratio within e^ε: the
    exact values come from the bounding SQL under 20 keys (a mixture over the random choice), and
    each gets 15,000 noise draws. 4-sigma allowance per compared output."""
    _neighbours(duck)
    eps, bound, hist = 1.0, Contribution(PERSON, 2, 1), Histogram("ward", ["a", "b"])
    rng = np.random.default_rng(21)
    outputs = {}
    for name in (TABLE, "with_p"):
        draws = []
        for k in range(20):
            exact = dict(duck.fetch(exact_query(duck, name, hist, bound, f"key {k}"))[1])
            values = np.array([exact.get(w, 0) for w in ("a", "b")])
            noise = Noise("laplace", eps, 0.0, rng, bound.factors())
            draws.append(np.stack([noise.integer(np.full(15_000, v), 1) for v in values], axis=1))
        both = np.concatenate(draws)
        outputs[name] = both[:, 0] * 100_000 + both[:, 1]
    worst, allowance = _max_log_ratio(outputs[TABLE], outputs["with_p"], min_count=800)
    assert worst <= eps + allowance
    # without the bound the person's 7 rows would move the counts by 4 and 3 at the same noise:
    exact = np.array([dict(duck.fetch(Histogram("ward", ["a", "b"]).query(n))[1]).get(w, 0)
                      for n in (TABLE, "with_p") for w in ("a", "b")]).reshape(2, 2)
    unbounded = []
    for values in exact:
        noise = Noise("laplace", eps, 0.0, rng, bound.factors())
        pair = np.stack([noise.integer(np.full(300_000, v), 1) for v in values], axis=1)
        unbounded.append(pair[:, 0] * 100_000 + pair[:, 1])
    worst, allowance = _max_log_ratio(unbounded[0], unbounded[1], min_count=800)
    assert worst > eps + allowance              # the test sees a violation when there is one


def test_removing_one_person_moves_a_count_within_e_epsilon(duck):
    _neighbours(duck)
    eps, bound = 0.7, Contribution(PERSON, 3)
    rng = np.random.default_rng(22)
    out = []
    for name in (TABLE, "with_p"):
        n = duck.fetch(exact_query(duck, name, Count(), bound, "k"))[1][0][0]
        out.append(Noise("laplace", eps, 0.0, rng, bound.factors()).integer(np.full(300_000, n), 1))
    worst, allowance = _max_log_ratio(out[0], out[1], min_count=3000)
    assert eps - allowance <= worst <= eps + allowance   # attained: 3 rows kept of the 7


def test_sensitivities_follow_the_bounds(duck):
    _load(duck, _rows())
    common = dict(epsilon=1.0, budget_epsilon=100, seed=3, privacy_unit=PERSON, trust_bounds=True)

    def noise(aggregate, **kw):
        return [(p["part"], p["sensitivity"]) for p in
                dp_query(duck, TABLE, aggregate, **common, **kw).noise]

    assert noise(Count(), max_rows_per_person=4) == [("count", 4)]
    assert noise(Sum("cost", -10, 100), max_rows_per_person=4) == [("sum", 400.0)]
    assert noise(Mean("cost", 0, 100), max_rows_per_person=4) == [("centred sum", 200.0), ("count", 4)]
    assert noise(Histogram("ward", KEYS), max_rows_per_person=2, max_groups_per_person=3) == \
        [("count per key", 6)]
    assert noise(Grouped(Sum("cost", 0, 100), "ward", KEYS), max_rows_per_person=2,
                 max_groups_per_person=3) == [("sum per key", 600.0)]
    gauss = dp_query(duck, TABLE, Histogram("ward", KEYS), **common, dataset="g", budget_delta=1e-5,
                     delta=1e-6, mechanism="gaussian", max_rows_per_person=2, max_groups_per_person=4)
    assert gauss.noise[0]["sensitivity"] == pytest.approx(2 * math.sqrt(4))   # l2: √G·L
    r = dp_query(duck, TABLE, Count(), **dict(common, budget_epsilon=None), max_rows_per_person=1)
    assert r.as_dict()["contribution"] == {"privacy_unit": PERSON, "max_rows_per_person": 1}
    assert abs(r.value - 40) < 40                    # 40 persons, one row each, scale 1


def test_the_ledger_keeps_a_budget_per_privacy_unit(duck):
    _load(duck, _rows())
    person = dict(privacy_unit=PERSON, max_rows_per_person=2)
    dp_query(duck, TABLE, Count(), epsilon=0.5, dataset="clinic", budget_epsilon=2, **person)
    ledger = PrivacyLedger(duck)
    assert ledger.state("clinic").privacy_unit == PERSON
    assert [e["privacy_unit"] for e in ledger.entries("clinic")] == [PERSON]
    with pytest.raises(PrivacyBudgetError, match=r"kept for persons \('pat\"ient'\).*at rows"):
        dp_query(duck, TABLE, Count(), epsilon=0.5, dataset="clinic")
    with pytest.raises(PrivacyBudgetError, match="kept for persons"):
        dp_query(duck, TABLE, Count(), epsilon=0.5, dataset="clinic", privacy_unit="ward",
                 max_rows_per_person=1)
    with pytest.raises(PrivacyBudgetError, match="kept for persons"):   # setting it again
        ledger.set_budget("clinic", 2)
    assert ledger.state("clinic").spent.epsilon == Decimal("0.5")     # nothing spent by refusals
    dp_query(duck, TABLE, Count(), epsilon=0.5, dataset="rows", budget_epsilon=2)
    assert ledger.state("rows").privacy_unit == "row"
    with pytest.raises(PrivacyBudgetError, match=r"kept for rows \(no privacy unit\)"):
        dp_query(duck, TABLE, Count(), epsilon=0.5, dataset="rows", **person)
    assert ledger.state("rows").spent.epsilon == Decimal("0.5")
    assert ledger.states()["rows"].as_dict()["privacy_unit"] == "row"


def test_person_level_query_on_postgres(pg):  # noqa: F811
    _load(pg, _rows())
    r = dp_query(pg, TABLE, Grouped(Mean("cost", 0, 100), "ward", KEYS), epsilon=1.0,
                 budget_epsilon=2, seed=4, privacy_unit=PERSON, max_rows_per_person=2,
                 max_groups_per_person=2)
    assert [v["key"] for v in r.value] == KEYS and r.ledger.privacy_unit == PERSON
    assert PrivacyLedger(pg).entries(TABLE)[0]["privacy_unit"] == PERSON
    with pytest.raises(PrivacyBudgetError, match="kept for persons"):
        dp_query(pg, TABLE, Count(), epsilon=0.5)


@pytest.mark.parametrize(("aggregate", "kw", "path"), [
    (Count(), {"max_rows_per_person": 2}, "privacy_unit"),
    (Count(), {"privacy_unit": PERSON}, "max_rows_per_person"),
    (Count(), {"privacy_unit": PERSON, "max_rows_per_person": 0}, "max_rows_per_person"),
    (Count(), {"privacy_unit": PERSON, "max_rows_per_person": 2.5}, "max_rows_per_person"),
    (Count(), {"privacy_unit": PERSON, "max_rows_per_person": 2, "max_groups_per_person": 2},
     "max_groups_per_person"),
    (Histogram("ward", KEYS), {"privacy_unit": PERSON, "max_rows_per_person": 2},
     "max_groups_per_person"),
    (Count(), {"privacy_unit": "nobody", "max_rows_per_person": 2}, "privacy_unit"),
])
def test_bad_person_level_queries_are_refused_before_spending(duck, aggregate, kw, path):
    _load(duck, _rows())
    with pytest.raises(SpecError) as e:
        dp_query(duck, TABLE, aggregate, epsilon=0.5, budget_epsilon=1, **kw)
    assert e.value.path == path
    assert PrivacyLedger(duck).state(TABLE) is None or \
        PrivacyLedger(duck).state(TABLE).spent.epsilon == 0


def test_cli_query_at_a_privacy_unit(tmp_path, capsys):
    import json

    from sqlanon.cli.main import main

    db = tmp_path / "v.duckdb"
    engine = DuckDBEngine(str(db))
    _load(engine, _rows())
    engine.close()
    code = main(["query", "--database", str(db), "--table", TABLE, "--histogram", "ward",
                 "--keys", *KEYS, "--epsilon", "0.5", "--budget-epsilon", "1", "--seed", "1",
                 "--privacy-unit", PERSON, "--max-rows-per-person", "2",
                 "--max-groups-per-person", "2"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["noise"][0]["sensitivity"] == 4
    assert out["budget"]["privacy_unit"] == PERSON


# -- DP microdata: one record per person -----------------------------------------------------------

def test_person_level_microdata_releases_one_bounded_record_per_person(duck):
    from sqlanon.methods.dp.person_microdata import dp_microaggregate_persons

    rows = _rows()
    _load(duck, rows)
    args = dict(privacy_unit=PERSON, k=5, epsilon=1.0, bounds={"cost": (0, 100)}, seed=5,
                quality=False, trust_bounds=True)
    report = dp_microaggregate_persons(duck, TABLE, "out", dataset="clinic", budget_epsilon=3, **args)
    released = duck.fetch(exp_select_all("out"))[1]
    assert len(released) == 40 == report.rows                      # one record per person
    assert all(0 <= v <= 100 for (v,) in released)
    assert PrivacyLedger(duck).state("clinic").privacy_unit == PERSON
    assert PrivacyLedger(duck).state("clinic").neighbours == "substitution"
    # a person's number of rows does not show: ten more copies of person 0's rows, same output
    duck.insert_rows(TABLE, [r for r in rows if r[0] == 0] * 10)
    dp_microaggregate_persons(duck, TABLE, "out2", dataset="clinic", **args)
    assert sorted(duck.fetch(exp_select_all("out2"))[1]) == sorted(released)
    with pytest.raises(PrivacyBudgetError, match="kept for persons"):   # a row-level release
        from sqlanon.methods.dp.microdata import dp_microaggregate
        dp_microaggregate(duck, TABLE, "out3", k=5, epsilon=0.5, bounds={"cost": (0, 100)},
                          dataset="clinic", trust_bounds=True, quality=False)
    assert not duck.relation_exists("out3")


def test_person_level_microdata_refuses_a_nominal_value_that_varies(duck):
    from sqlanon.methods.dp.person_microdata import dp_microaggregate_persons

    _load(duck, _rows())
    with pytest.raises(SpecError, match=r"'ward' differs between the rows of person\(s\) 0, 1"):
        dp_microaggregate_persons(duck, TABLE, "out", privacy_unit=PERSON, k=5, epsilon=1.0,
                                  categorical={"ward": _wards()})
    with pytest.raises(SpecError, match="unknown column 'nobody'"):
        dp_microaggregate_persons(duck, TABLE, "out", privacy_unit="nobody", k=5, epsilon=1.0,
                                  bounds={"cost": (0, 100)})


def _wards():
    from sqlanon.domain.hierarchy import MapHierarchy

    return MapHierarchy({w: ["ward", "*"] for w in ("a", "b", "c", "d")})


def exp_select_all(name: str):
    from sqlglot import exp

    from sqlanon.sql.nodes import table
    return exp.select("*").from_(table(name))


def _spec(transformation: dict) -> object:
    from sqlanon.spec.load import spec_from_dict

    return spec_from_dict({
        "source": {"table": TABLE}, "privacy_unit": PERSON,
        "attributes": {PERSON: {"role": "identifier"}, "cost": {"role": "sensitive"}},
        "transformation": transformation, "output": {"mode": "table", "name": "out"}})


def test_spec_releases_dp_microdata_per_person(duck):
    from sqlanon import api

    _load(duck, _rows())
    report = api.apply(_spec({"method": "noise", "mechanism": "dp_microaggregation",
                              "attributes": ["cost"], "k": 5, "epsilon": 1.0, "seed": 2,
                              "bounds": {"cost": [0, 100]}, "trust_bounds": True,
                              "dataset": "clinic", "budget_epsilon": 2.0}), engine=duck).as_dict()
    assert duck.row_count("out") == 40
    assert report["guarantee"]["neighbours"].startswith("substitution of one person")
    assert report["guarantee"]["ledger"]["privacy_unit"] == PERSON
    with pytest.raises(SpecError) as e:
        api.apply(_spec({"method": "noise", "mechanism": "laplace", "attributes": ["cost"],
                         "epsilon": 1.0, "bounds": {"cost": [0, 100]}, "sensitivity": 100}),
                  engine=duck)
    assert e.value.path == "privacy_unit" and "dp_microaggregation" in str(e.value)
