"""Person-level DP queries on Spark (the ledger in a DuckDB file): the same rows kept per person and
the same answers as on DuckDB, from the same rows and seed."""

from __future__ import annotations

import pytest

from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.dp.aggregates import Grouped, Mean
from sqlanon.methods.dp.budget import PrivacyLedger
from sqlanon.methods.dp.contribution import Contribution, bounded
from sqlanon.methods.dp.queries import dp_query
from tests.methods.dp.test_person_level import KEYS, _load, _rows

TABLE, PERSON = "visits", "patient"

pytestmark = [pytest.mark.spark,
              pytest.mark.filterwarnings("ignore::sqlanon.methods.rng.ReproducibleNoiseWarning")]


def test_person_level_queries_on_spark_match_duckdb(spark, tmp_path):
    rows = _rows(15, seed=9)
    _load(spark, rows, TABLE, PERSON)
    duck = DuckDBEngine()
    _load(duck, rows, TABLE, PERSON)
    per_key = (("ward",), tuple((k,) for k in KEYS))
    kept = [sorted(tuple(map(str, r)) for r in e.fetch(bounded(
                TABLE, Contribution(PERSON, 2, 2), ["ward", "cost"], "k", e.dialect, per_key))[1])
            for e in (spark, duck)]
    assert kept[0] == kept[1] and len(kept[0]) < len(rows)
    person = dict(privacy_unit=PERSON, max_rows_per_person=2, max_groups_per_person=2, seed=6,
                  epsilon=0.5, budget_epsilon=2, trust_bounds=True)
    answers = []
    for engine, ledger in ((spark, str(tmp_path / "ledger.duckdb")), (duck, None)):
        answers.append(dp_query(engine, TABLE, Grouped(Mean("cost", 0, 100), "ward", KEYS),
                                ledger=ledger, **person).as_dict()["value"])
    assert answers[0] == answers[1]
    with DuckDBEngine(str(tmp_path / "ledger.duckdb")) as books:
        assert [e["privacy_unit"] for e in PrivacyLedger(books).entries(TABLE)] == [PERSON]
    duck.close()
