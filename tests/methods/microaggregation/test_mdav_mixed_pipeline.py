"""mdav_mixed through the microaggregation pipeline on DuckDB, with Adult's nominal attributes.

Oracle: the partitioner run on the same rows in key order, group means computed by pandas and the
least marginal value of each group by brute force over the column's values (eq. 9.4, eq. 9.6 from
sets of ancestors).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.domain.hierarchy import read_arx_csv
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import HierarchyError
from sqlanon.methods.microaggregation.algorithms.mdav_mixed import mdav_mixed
from sqlanon.methods.microaggregation.records import NominalColumn, Records
from sqlanon.spec import spec_from_dict
from tests.conftest import ADULT, require_data
from tests.methods.microaggregation import categorical_reference as ref

NOMINAL = ("education", "marital-status", "occupation")
TABLE = "adult; \"people\" ✓"


@pytest.fixture()
def engine():
    e = DuckDBEngine()
    yield e
    e.close()


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    frame = pd.read_csv(require_data(ADULT / "adult.csv"), sep=";", dtype=str).iloc[:900].copy()
    frame.insert(0, "id", np.random.default_rng(5).permutation(len(frame)) + 1)  # not row order
    frame["age"] = frame["age"].astype(int)
    return frame


def load(engine: DuckDBEngine, frame: pd.DataFrame) -> None:
    engine.con.register("__frame", frame)
    engine.create_table_as(TABLE, exp.select("*").from_("__frame"), replace=True)
    engine.con.unregister("__frame")


def spec(**transformation) -> object:
    attributes = {"id": "insensitive", "sex": "insensitive", "race": "insensitive",
                  "native-country": "insensitive", "workclass": "insensitive",
                  "salary-class": "sensitive",
                  "age": "quasi_identifier",
                  **{a: {"role": "quasi_identifier",
                         "hierarchy": {"csv": str(ADULT / f"adult_hierarchy_{a}.csv")}}
                     for a in NOMINAL}}
    return spec_from_dict({
        "source": {"table": TABLE}, "attributes": attributes,
        "transformation": {"method": "microaggregation", "algorithm": "mdav_mixed", "k": 4,
                           "key": "id", **transformation},
        "output": {"mode": "table", "name": "released"}})


def oracle_labels(d: pd.DataFrame, k: int) -> np.ndarray:
    nominal = {}
    for a in NOMINAL:
        values = sorted(set(d[a]))
        nominal[a] = NominalColumn(np.array([values.index(v) for v in d[a]]), tuple(values),
                                   read_arx_csv(ADULT / f"adult_hierarchy_{a}.csv"))
    return mdav_mixed(Records(d[["age"]].astype(float).to_numpy(), ("age",), nominal), k)


def least_marginal_value(values: list[str], candidates: list[str], rows: list[list[str]]) -> str:
    leaf = ref.leaves(rows)
    m = {c: sum(ref.delta(leaf[c], leaf[v]) for v in values) for c in candidates}
    best = min(m.values())
    tied = [c for c in candidates if m[c] <= best + 1e-9 * max(1.0, best)]
    order = list(leaf)
    return min(tied, key=lambda c: (-values.count(c), order.index(c)))


def test_released_table_has_group_means_and_least_marginal_values(engine, people):
    load(engine, people)
    report = api.apply(spec(centroid="marginality"), engine=engine)
    assert report is not None
    got = engine.con.execute('SELECT * FROM "released" ORDER BY id').df()
    d = people.sort_values("id").reset_index(drop=True)
    labels = oracle_labels(d, 4)
    sizes = np.bincount(labels)
    assert sizes.min() >= 4 and sizes.max() <= 7
    assert got["salary-class"].tolist() == d["salary-class"].tolist()  # confidential: untouched
    means = d["age"].astype(float).groupby(labels).transform("mean")
    assert np.allclose(got["age"].astype(float), means, rtol=1e-12)
    trees = {a: [r.split(";") for r in (ADULT / f"adult_hierarchy_{a}.csv").read_text().splitlines()]
             for a in NOMINAL}
    for a in NOMINAL:
        candidates = sorted(set(d[a]))
        for g in range(0, len(sizes), 11):
            members = d[a][labels == g].tolist()
            want = least_marginal_value(members, candidates, trees[a])
            assert set(got[a][labels == g]) == {want}
    # every released combination of quasi-identifiers is shared by at least k rows
    qis = ["age", *NOMINAL]
    assert got.groupby(qis).size().min() >= 4


def test_a_value_missing_from_a_hierarchy_writes_nothing(engine, people):
    broken = people.copy()
    broken.loc[broken.index[7], "occupation"] = "Astronaut'; DROP TABLE x; --"
    load(engine, broken)
    with pytest.raises(HierarchyError, match=r"'occupation'.*Astronaut"):
        api.apply(spec(centroid="marginality"), engine=engine)
    tables = {r[0] for r in engine.con.execute("SELECT table_name FROM information_schema.tables")
              .fetchall()}
    assert "released" not in tables
