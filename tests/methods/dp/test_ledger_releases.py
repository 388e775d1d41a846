"""DP releases of whole tables charged to the privacy-budget ledger (under substitution).

DP microdata (dp_microaggregation) and per-value DP noise (laplace, discrete_laplace, gaussian,
staircase, randomized_response) from a spec naming a ledger `dataset`, and dp_microaggregate with
`dataset=`: the charge, its refusals, and its atomicity with the write of the output (DuckDB's
block writer, the joined writer, and PostgreSQL).
"""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from sqlanon import api
from sqlanon.domain.hierarchy import MapHierarchy
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import EngineError, SpecError
from sqlanon.methods.dp.aggregates import Count
from sqlanon.methods.dp.amounts import PrivacyBudgetError
from sqlanon.methods.dp.budget import PrivacyLedger
from sqlanon.methods.dp.ledger_tables import BUDGET_TABLE, LEDGER_TABLE
from sqlanon.methods.dp.microdata import dp_microaggregate
from sqlanon.methods.dp.queries import dp_query
from sqlanon.spec.load import spec_from_dict
from tests.postgres.conftest import pg, pg_dsn  # noqa: F401  (fixtures; pg_server is the suite's)

pytestmark = pytest.mark.filterwarnings("ignore::sqlanon.methods.rng.ReproducibleNoiseWarning")

N = 200
COLUMNS = "id INTEGER, age INTEGER, income DOUBLE, smoker VARCHAR, illness VARCHAR"
ILLNESS = {"flu": ["respiratory", "*"], "cold": ["respiratory", "*"], "ulcer": ["stomach", "*"],
           "gastritis": ["stomach", "*"]}


def _rows(n: int = N) -> list[tuple]:
    r = np.random.default_rng(8)
    return [(i, int(r.integers(18, 90)), float(r.normal(3000, 800)), ["yes", "no"][i % 2],
             list(ILLNESS)[i % 4]) for i in range(n)]


@pytest.fixture()
def engine():
    e = DuckDBEngine()
    e.con.execute(f"CREATE TABLE people ({COLUMNS})")
    e.con.executemany("INSERT INTO people VALUES (?, ?, ?, ?, ?)", [list(r) for r in _rows()])
    yield e
    e.close()


MICRODATA = {"mechanism": "dp_microaggregation", "attributes": ["age", "income"], "k": 5,
             "epsilon": 1.0, "bounds": {"age": [0, 120], "income": [0, 10_000]}}
LAPLACE = {"mechanism": "laplace", "attributes": ["age", "income"], "epsilon": 0.3,
           "sensitivity": {"age": 1, "income": 100}, "bounds": {"age": [0, 120], "income": [0, 10_000]}}
RESPONSE = {"mechanism": "randomized_response", "attributes": ["smoker"], "epsilon": 0.7,
            "categories": {"smoker": ["yes", "no"]}}


def spec(transformation: dict, output: dict | None = None, **ledger):
    return spec_from_dict({
        "source": {"table": "people"},
        "attributes": {"id": {"role": "identifier"}, "age": {"role": "sensitive"},
                       "income": {"role": "sensitive"}, "smoker": {"role": "sensitive"},
                       "illness": {"role": "sensitive", "hierarchy": {"map": ILLNESS}}},
        "transformation": {"method": "noise", "seed": 3, **transformation, **ledger},
        "output": output or {"mode": "table", "name": "released"}})


def ledger_rows(engine) -> list[tuple]:
    if not engine.relation_exists(LEDGER_TABLE):
        return []
    return (engine.fetch_script(f"SELECT * FROM {BUDGET_TABLE} ORDER BY dataset")[1]
            + engine.fetch_script(f"SELECT * FROM {LEDGER_TABLE} ORDER BY id")[1])


# -- what is charged ----------------------------------------------------------------------------------

def test_microdata_release_is_charged_its_epsilon(engine):
    report = dp_microaggregate(engine, "people", "released", k=5, epsilon=1.25,
                               bounds={"age": (0, 120)}, seed=1, dataset="clinic", budget_epsilon=3)
    assert report.ledger["dataset"] == "clinic" and report.ledger["neighbours"] == "substitution"
    assert report.ledger["charged"] == {"epsilon": 1.25, "delta": 0.0}
    assert report.ledger["remaining"] == {"epsilon": 1.75, "delta": 0.0}
    [entry] = PrivacyLedger(engine).entries("clinic")
    assert entry["neighbours"] == "substitution" and entry["epsilon_charged"] == Decimal("1.25")
    assert "dp_microaggregation" in entry["description"] and "'people'" in entry["description"]
    assert engine.row_count("released") == N


def test_spec_microdata_release_reports_the_ledger_in_its_guarantee(engine):
    report = api.apply(spec(MICRODATA, dataset="clinic", budget_epsilon=2), engine=engine).as_dict()
    ledger = report["guarantee"]["ledger"]
    assert ledger["spent"] == {"epsilon": 1.0, "delta": 0.0} and ledger["total"]["epsilon"] == 2.0
    assert report["guarantee"]["neighbours"] == "substitution of one record"
    # the second release of the same spec exhausts the budget exactly; a third is refused
    api.apply(spec(MICRODATA, {"mode": "table", "name": "again"}, dataset="clinic", budget_epsilon=2),
              engine=engine)
    assert PrivacyLedger(engine).state("clinic").remaining.epsilon == 0


def test_per_value_release_is_charged_per_record_exactly(engine):
    # two attributes at ε = 0.3: 0.6 per record, as an exact decimal (0.3·2 in floats is 0.6000000000000001)
    report = api.apply(spec(LAPLACE, dataset="clinic", budget_epsilon=1), engine=engine)
    assert report.guarantee["epsilon_per_record"] == pytest.approx(0.6)
    assert report.guarantee["ledger"]["charged"] == {"epsilon": 0.6, "delta": 0.0}
    assert PrivacyLedger(engine).state("clinic").spent.epsilon == Decimal("0.6")
    gaussian = {"mechanism": "gaussian", "attributes": ["age", "income"], "epsilon": 0.1,
                "delta": 1e-7, "sensitivity": 1}
    report = api.apply(spec(gaussian, {"mode": "table", "name": "g"}, dataset="g",
                            budget_epsilon=1, budget_delta=1e-6), engine=engine)
    state = PrivacyLedger(engine).state("g")
    assert (state.spent.epsilon, state.spent.delta) == (Decimal("0.2"), Decimal("2e-7"))
    assert report.guarantee["ledger"]["neighbours"] == "substitution"
    rr = api.apply(spec(RESPONSE, {"mode": "table", "name": "rr"}, dataset="rr", budget_epsilon=1),
                   engine=engine)
    assert rr.guarantee["ledger"]["spent"]["epsilon"] == 0.7
    keep = {**RESPONSE, "keep_probability": 0.75}
    del keep["epsilon"]
    api.apply(spec(keep, {"mode": "table", "name": "rr2"}, dataset="rr2", budget_epsilon=2),
              engine=engine)
    assert PrivacyLedger(engine).state("rr2").spent.epsilon == Decimal(
        "1.098612288668109800")  # ln 3 (keep 0.75 of 2 categories), rounded up from its float


def test_ledger_descriptions_name_columns_without_python_list_reprs(engine):
    """A release's ledger entry read "laplace noise on ['age', 'income'] of table ...", a Python
    list repr shown to people by `sqlanon budget --entries`; so did histogram and grouped queries."""
    from sqlanon.methods.dp.aggregates import Grouped, Histogram, Mean

    api.apply(spec(LAPLACE, dataset="clinic", budget_epsilon=1), engine=engine)
    [entry] = PrivacyLedger(engine).entries("clinic")
    assert "noise on age, income of table" in entry["description"], entry["description"]
    histogram = Histogram(["age", "sex"], [("30", "F")]).describe()
    grouped = Grouped(Mean("income", 0, 10), ["age"], [("30",)]).describe()
    for text in (entry["description"], histogram, grouped):
        assert "['" not in text and "']" not in text, text


def test_without_a_dataset_nothing_is_charged(engine):
    report = api.apply(spec(LAPLACE), engine=engine)
    assert report.guarantee["ledger"]["dataset"] is None
    assert "not charged to any privacy budget" in report.guarantee["ledger"]["note"]
    micro = api.apply(spec(MICRODATA, {"mode": "table", "name": "m"}), engine=engine)
    assert "not charged" in micro.guarantee["ledger"]["note"]
    assert not engine.relation_exists(BUDGET_TABLE)  # the ledger is not even created
    swapped = api.apply(spec({"mechanism": "rank_swap", "attributes": ["income"]},
                             {"mode": "table", "name": "s"}), engine=engine)
    assert swapped.guarantee == {}


def test_query_and_release_share_a_substitution_budget(engine):
    api.apply(spec(MICRODATA, dataset="clinic", budget_epsilon=3), engine=engine)
    r = dp_query(engine, "people", Count(), epsilon=0.5, dataset="clinic", seed=1)
    # the answer is (0.5, 0)-DP under add/remove: under substitution it costs 2·0.5
    assert r.as_dict()["spent"] == {"epsilon": 0.5, "delta": 0.0}
    assert r.ledger.charged.epsilon == 1 and r.ledger.spent.epsilon == 2
    assert r.as_dict()["budget"]["neighbours"] == "substitution"
    with pytest.raises(PrivacyBudgetError, match="charged as epsilon=1.2"):
        dp_query(engine, "people", Count(), epsilon=0.6, dataset="clinic", seed=1)
    with pytest.raises(PrivacyBudgetError, match="under substitution neighbours; a budget is set once"):
        dp_query(engine, "people", Count(), epsilon=0.1, dataset="clinic", budget_epsilon=3, seed=1)
    r = dp_query(engine, "people", Count(), epsilon=0.1, dataset="clinic", budget_epsilon=3,
                 budget_neighbours="substitution", seed=1)
    assert r.ledger.spent.epsilon == Decimal("2.2")
    assert [e["neighbours"] for e in PrivacyLedger(engine).entries("clinic")] == [
        "substitution", "add/remove", "add/remove"]


# -- refusals: nothing written, nothing spent --------------------------------------------------------

@pytest.mark.parametrize("transformation", [MICRODATA, LAPLACE, RESPONSE], ids=["microdata", "blocks",
                                                                                 "joined"])
def test_a_release_on_an_add_remove_budget_is_refused(engine, transformation):
    dp_query(engine, "people", Count(), epsilon=0.5, dataset="clinic", budget_epsilon=5, seed=1)
    before = ledger_rows(engine)
    with pytest.raises(PrivacyBudgetError, match=r"reveals the row count.*kept under add/remove"):
        api.apply(spec(transformation, dataset="clinic"), engine=engine)
    assert not engine.relation_exists("released") and ledger_rows(engine) == before


@pytest.mark.parametrize("transformation", [MICRODATA, LAPLACE, RESPONSE], ids=["microdata", "blocks",
                                                                                 "joined"])
def test_a_release_over_budget_writes_nothing_and_spends_nothing(engine, transformation):
    PrivacyLedger(engine).set_budget("clinic", 1, neighbours="substitution")
    PrivacyLedger(engine).spend("clinic", 0.5, neighbours="substitution")
    before = ledger_rows(engine)
    with pytest.raises(PrivacyBudgetError, match=r"would exceed the budget of dataset 'clinic'.*"
                                                  r"remaining epsilon=0\.5"):
        api.apply(spec(transformation, dataset="clinic"), engine=engine)
    assert not engine.relation_exists("released") and ledger_rows(engine) == before
    with pytest.raises(PrivacyBudgetError, match="no privacy budget is set for dataset 'other'"):
        api.apply(spec(transformation, dataset="other"), engine=engine)
    assert not engine.relation_exists("released") and ledger_rows(engine) == before


@pytest.mark.parametrize("transformation", [MICRODATA, LAPLACE, RESPONSE], ids=["microdata", "blocks",
                                                                                 "joined"])
def test_a_budget_spent_during_the_release_leaves_the_output_absent(engine, transformation,
                                                                     monkeypatch):
    # Another spender takes the budget after the early check: the spend in the write's transaction
    # is refused and the output is rolled back with it.
    ledger = PrivacyLedger(engine)
    ledger.set_budget("clinic", 1, neighbours="substitution")

    def check_then_spend_elsewhere(self, *args, **kwargs):
        PrivacyLedger(engine).spend("clinic", 0.5, neighbours="substitution", description="other")
        return None

    monkeypatch.setattr(PrivacyLedger, "check", check_then_spend_elsewhere)
    with pytest.raises(PrivacyBudgetError, match="would exceed"):
        api.apply(spec(transformation, dataset="clinic"), engine=engine)
    assert not engine.relation_exists("released")
    assert [e["description"] for e in ledger.entries("clinic")] == ["other"]
    assert not [r for r in engine.fetch_script("SHOW TABLES")[1] if r[0].startswith("__sa_")]


def test_a_failing_write_spends_nothing(engine, monkeypatch):
    ledger = PrivacyLedger(engine)
    ledger.set_budget("clinic", 100, neighbours="substitution")
    # joined writer: the released categories are cast back to the INTEGER column inside the
    # transaction, and 10^12 does not fit
    failing = {"mechanism": "randomized_response", "attributes": ["age"], "keep_probability": 0.0,
               "categories": {"age": list(range(18, 90)) + [10 ** 12]}}
    with pytest.raises(SpecError, match="no finite ε"):  # keep_probability 0: no ε to charge
        api.apply(spec(failing, dataset="clinic"), engine=engine)
    failing["keep_probability"] = 1e-9
    with pytest.raises(EngineError, match="(?i)conver|cast"):
        api.apply(spec(failing, {"mode": "in_place"}, dataset="clinic"), engine=engine)
    assert ledger.state("clinic").spent.epsilon == 0 and ledger.entries("clinic") == []
    assert engine.row_count("people") == N

    # block writer and microdata: the rename / the CREATE TABLE fails inside the transaction
    real_execute = engine.execute_script  # the writer runs its template statements as text

    def broken(writes):
        def run(statement, *args, **kwargs):
            real_execute(statement, *args, **kwargs)
            if isinstance(statement, str) and writes(statement):  # the output is there, then the write fails
                raise EngineError("disk full")
        return run

    monkeypatch.setattr(engine, "execute_script", broken(lambda sql: sql.endswith('RENAME TO "released"')))
    with pytest.raises(EngineError, match="disk full"):
        api.apply(spec(LAPLACE, dataset="clinic"), engine=engine)
    monkeypatch.setattr(engine, "execute_script",
                        broken(lambda sql: sql.startswith('CREATE TABLE "released"')))
    with pytest.raises(EngineError, match="disk full"):
        api.apply(spec(MICRODATA, dataset="clinic"), engine=engine)
    assert not engine.relation_exists("released")
    assert ledger.state("clinic").spent.epsilon == 0 and ledger.entries("clinic") == []


# -- spec keys ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("transformation", "ledger", "path", "message"), [
    ({"mechanism": "correlated", "attributes": ["income"]}, {"dataset": "d"},
     "transformation.dataset", "releases no differential-privacy guarantee"),
    ({"mechanism": "rank_swap", "attributes": ["income"]}, {"budget_epsilon": 1},
     "transformation.budget_epsilon", "nothing to charge"),
    (LAPLACE, {"budget_epsilon": 1}, "transformation.budget_epsilon", "needs transformation.dataset"),
    (LAPLACE, {"dataset": ""}, "transformation.dataset", "non-empty text"),
    (LAPLACE, {"dataset": 7}, "transformation.dataset", "non-empty text"),
    (MICRODATA, {"dataset": "d", "budget_epsilon": 0}, "transformation.budget_epsilon", "> 0"),
    (MICRODATA, {"dataset": "d", "budget_epsilon": 1, "budget_delta": 1},
     "transformation.budget_delta", ">= 0 and < 1"),
    (MICRODATA, {"dataset": "d", "budget_delta": 1e-6}, "transformation.budget_delta",
     "needs transformation.budget_epsilon"),
])
def test_ledger_keys_are_checked(transformation, ledger, path, message):
    with pytest.raises(SpecError, match=message) as e:
        spec(transformation, **ledger)
    assert e.value.path == path


def test_dry_run_touches_no_ledger(engine):
    api.apply(spec(LAPLACE, dataset="clinic", budget_epsilon=1), engine=engine, dry_run=True)
    assert not engine.relation_exists(BUDGET_TABLE) and not engine.relation_exists("released")


def test_an_existing_output_is_refused_before_the_budget_is_set(engine):
    engine.execute_script("CREATE TABLE released (x INTEGER)")
    with pytest.raises(SpecError, match="'released' already exists"):
        api.apply(spec(LAPLACE, dataset="clinic", budget_epsilon=1), engine=engine)
    assert ledger_rows(engine) == [] and engine.fetch_script("SELECT * FROM released")[1] == []


# -- the command line: a release, then queries on the same budget -------------------------------------

def test_command_line_release_then_queries_share_the_budget(tmp_path: Path):
    db = tmp_path / "clinic.duckdb"
    with DuckDBEngine(str(db)) as e:
        e.execute_script(f"CREATE TABLE people ({COLUMNS})")
        e.insert_rows("people", _rows())
    (tmp_path / "spec.yaml").write_text(f"""
source: {{table: people, database: {db}}}
attributes:
  age: {{role: sensitive}}
  income: {{role: sensitive}}
transformation:
  method: noise
  mechanism: dp_microaggregation
  attributes: [age, income]
  k: 5
  epsilon: 1.0
  bounds: {{age: [0, 120], income: [0, 10000]}}
  dataset: clinic
  budget_epsilon: 2
output: {{mode: table, name: people_dp}}
""", encoding="utf-8")

    def sqlanon(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "sqlanon", *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)

    def query(*args: str) -> subprocess.CompletedProcess[str]:
        return sqlanon("query", "--database", str(db), "--table", "people", "--count",
                       "--dataset", "clinic", *args)

    release = sqlanon("apply", "spec.yaml", "--json")
    assert release.returncode == 0, release.stderr
    ledger = json.loads(release.stdout)["guarantee"]["ledger"]
    assert ledger["neighbours"] == "substitution" and ledger["remaining"]["epsilon"] == 1.0
    # a count at ε = 0.25 costs 0.5 of the substitution budget
    first = query("--epsilon", "0.25")
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    assert out["spent"]["epsilon"] == 0.25 and out["budget"]["charged"]["epsilon"] == 0.5
    assert out["budget"]["remaining"]["epsilon"] == 0.5
    # the budget is kept under substitution: restating it as add/remove is refused
    restated = query("--epsilon", "0.1", "--budget-epsilon", "2")
    assert restated.returncode == 2 and "under substitution neighbours" in restated.stderr
    ok = query("--epsilon", "0.1", "--budget-epsilon", "2", "--budget-neighbours", "substitution")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["budget"]["remaining"]["epsilon"] == pytest.approx(0.3)
    refused = query("--epsilon", "0.2")
    assert refused.returncode == 2 and "would exceed the budget of dataset 'clinic'" in refused.stderr
    spec_text = (tmp_path / "spec.yaml").read_text(encoding="utf-8")
    (tmp_path / "again.yaml").write_text(spec_text.replace("people_dp", "people_dp2"), encoding="utf-8")
    again = sqlanon("apply", "again.yaml")  # the release itself no longer fits either
    assert again.returncode == 2 and "would exceed" in again.stderr
    with DuckDBEngine(str(db)) as e:
        entries = PrivacyLedger(e).entries("clinic")
        assert [x["neighbours"] for x in entries] == ["substitution", "add/remove", "add/remove"]
        assert sum(x["epsilon_charged"] for x in entries) == PrivacyLedger(e).state(
            "clinic").spent.epsilon == Decimal("1.7")
    # sqlanon budget shows the same, read back from the database by another process
    shown = sqlanon("budget", "--database", str(db), "--entries")
    assert shown.returncode == 0, shown.stderr
    (clinic,) = json.loads(shown.stdout)["datasets"]
    assert clinic["dataset"] == "clinic" and clinic["neighbours"] == "substitution"
    assert clinic["total"]["epsilon"] == 2.0 and clinic["spent"]["epsilon"] == pytest.approx(1.7)
    assert clinic["remaining"]["epsilon"] == pytest.approx(0.3)
    assert [(x["neighbours"], x["spent"]["epsilon"], x["charged"]["epsilon"])
            for x in clinic["entries"]] == [("substitution", 1.0, 1.0), ("add/remove", 0.25, 0.5),
                                            ("add/remove", 0.1, 0.2)]
    assert "dp_microaggregation" in clinic["entries"][0]["description"]
    unknown = sqlanon("budget", "--database", str(db), "--dataset", "clinic", "x'; DROP TABLE people")
    assert unknown.returncode == 2
    assert "no privacy budget is set for dataset \"x'; DROP TABLE people\"" in unknown.stderr
    assert "datasets with a budget: 'clinic'" in unknown.stderr


def test_budget_of_a_database_without_a_ledger_lists_nothing_and_creates_nothing(tmp_path: Path):
    db = tmp_path / "empty.duckdb"
    with DuckDBEngine(str(db)) as e:
        e.execute_script("CREATE TABLE t (x INTEGER)")
    shown = subprocess.run([sys.executable, "-m", "sqlanon", "budget", "--database", str(db)],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["datasets"] == []
    with DuckDBEngine(str(db)) as e:
        assert not e.relation_exists(BUDGET_TABLE) and not e.relation_exists(LEDGER_TABLE)


# -- PostgreSQL -------------------------------------------------------------------------------------------

@pytest.mark.postgres
def test_postgres_release_is_charged_atomically(pg):  # noqa: F811
    pg.execute_script(f"CREATE TABLE people ({COLUMNS.replace('DOUBLE', 'DOUBLE PRECISION')})")
    pg.insert_rows("people", _rows())
    ledger = PrivacyLedger(pg)
    report = api.apply(spec(LAPLACE, dataset="clinic", budget_epsilon=1), engine=pg)
    assert report.guarantee["ledger"]["spent"]["epsilon"] == 0.6 and pg.row_count("released") == N
    micro = dp_microaggregate(pg, "people", "micro", k=5, epsilon=0.4, bounds={"age": (0, 120)},
                              categorical={"illness": MapHierarchy(ILLNESS)}, seed=2,
                              dataset="clinic")
    assert micro.ledger["remaining"]["epsilon"] == 0
    before = ledger_rows(pg)
    with pytest.raises(PrivacyBudgetError, match="would exceed"):
        api.apply(spec(RESPONSE, {"mode": "table", "name": "rr"}, dataset="clinic"), engine=pg)
    with pytest.raises(PrivacyBudgetError, match="would exceed"):
        api.apply(spec(LAPLACE, {"mode": "in_place"}, dataset="clinic"), engine=pg)
    assert not pg.relation_exists("rr") and ledger_rows(pg) == before
    assert [e["epsilon_charged"] for e in ledger.entries("clinic")] == [Decimal("0.6"),
                                                                         Decimal("0.4")]
