"""δ-presence of Adult's research subset (adult_subset.csv), against an independent pandas computation."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from sqlanon.domain.models.presence import SubsetCount
from sqlanon.methods.dataset import open_dataset
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.problem import problem_for
from sqlanon.spec import spec_from_dict
from tests.conftest import adult_spec_dict
from tests.domain.models.conftest import class_rows

QIS = ["sex", "age", "race", "marital-status", "education"]
NODES = [(0, 4, 1, 1, 2), (1, 3, 0, 1, 3), (0, 2, 1, 2, 3)]


def expected_shares(adult_dir, node) -> pd.DataFrame:
    """Per generalized class: size and matched subset rows (multiset match on every column)."""
    pop = pd.read_csv(adult_dir / "adult.csv", sep=";", dtype=str)
    sub = pd.read_csv(adult_dir / "adult_subset.csv", sep=";", dtype=str)
    cols = list(pop.columns)
    counts = pop.value_counts().rename("np").to_frame().join(
        sub.value_counts().rename("ns"), how="left").fillna(0).reset_index()
    counts["m"] = counts[["np", "ns"]].min(axis=1)
    assert counts["m"].sum() == len(sub)
    for q, level in zip(QIS, node):
        with open(adult_dir / f"adult_hierarchy_{q}.csv", newline="") as f:
            mapping = {row[0]: row[level] for row in csv.reader(f, delimiter=";")}
        counts[q] = counts[q].map(mapping)
    assert set(cols) >= set(QIS)
    return counts.groupby(QIS, dropna=False)[["np", "m"]].sum()


def _run(engine, adult_dir, node, subset, dmin, dmax, limit=0.0):
    d = adult_spec_dict(adult_dir, qis=QIS, levels=dict(zip(QIS, node)), limit=limit,
                        privacy=[{"delta_presence": {"subset": subset, "delta_min": dmin,
                                                     "delta_max": dmax}}])
    spec = spec_from_dict(d)
    with Evaluator(problem_for(spec, open_dataset(spec, engine))) as ev:
        checked = ev.check(dict(zip(QIS, node)), limit)
        return checked, class_rows(engine, checked, QIS)


@pytest.mark.parametrize("node", NODES)
def test_shares_match_pandas(adult_engine, adult_dir, node):
    want = expected_shares(adult_dir, node)
    shares = (want["m"] / want["np"]).tolist()
    lo, hi = sorted(shares)[1], sorted(shares)[-2]  # extreme classes fail on either side
    checked, rows = _run(adult_engine, adult_dir, node, str(adult_dir / "adult_subset.csv"), lo, hi)
    assert len(rows) == len(want)
    column = SubsetCount(str(adult_dir / "adult_subset.csv")).column
    failing = 0
    for key, w in want.iterrows():
        got = rows[key]
        assert got["__sa_size"] == w["np"]
        assert (got[column] or 0) == w["m"]
        share = float(w["m"] / w["np"])
        assert got["__sa_ok0"] is (lo <= share <= hi)
        failing += not (lo <= share <= hi)
    assert checked.models[0].violating_classes == failing >= 1


def test_subset_as_a_table_gives_the_same_counts(adult_engine, adult_dir):
    adult_engine.con.execute("CREATE TABLE research AS SELECT * FROM read_csv(?, delim=';', header=true)",
                             [str(adult_dir / "adult_subset.csv")])  # typed columns: cast on matching
    node = NODES[0]
    want = expected_shares(adult_dir, node)
    checked, rows = _run(adult_engine, adult_dir, node, "research", 0.0, 1.0)
    assert checked.anonymous
    for key, w in want.iterrows():
        assert (rows[key][SubsetCount("research").column] or 0) == w["m"]


def test_class_without_subset_rows_has_share_zero(adult_engine, adult_dir):
    adult_engine.con.execute("CREATE TABLE research AS SELECT * FROM adult WHERE sex = 'Female'")
    checked, rows = _run(adult_engine, adult_dir, (0, 4, 1, 2, 3), "research", 0.01, 1.0)
    assert {k[0]: (r["__sa_ok0"], r["__sa_size"]) for k, r in rows.items()} == {
        "Female": (True, 9782), "Male": (False, 20380)}
    assert not checked.anonymous


def _release_spec(adult_dir, subset, mode, **output):
    d = adult_spec_dict(adult_dir, qis=["sex", "race", "marital-status"], limit=0.02,
                        privacy=[{"k_anonymity": {"k": 5}},
                                 {"delta_presence": {"subset": subset, "delta_min": 0.0, "delta_max": 0.5}}])
    d["output"] = {"mode": mode, "name": "released", **output}
    return spec_from_dict(d)


@pytest.mark.parametrize("subset", ["file", "table"])
def test_presence_release_is_written_after_the_search(adult_engine, adult_dir, subset):
    """δ-presence releases failed after the search: the output statement read the subset's matched
    counts from a relation of the check (``__sa_presence_…``) that it does not contain."""
    from sqlanon import api

    name = str(adult_dir / "adult_subset.csv")
    if subset == "table":
        adult_engine.con.execute("CREATE TABLE research AS SELECT * FROM read_csv(?, delim=';', "
                                 "header=true, all_varchar=true)", [name])
        name = "research"
    report = api.anonymize(_release_spec(adult_dir, name, "table"), engine=adult_engine)
    assert report.anonymous
    kept = report.node.rows - report.node.suppressed_rows
    assert report.outputs["rows"] == kept == adult_engine.row_count("released")


def test_presence_table_subset_release_as_view_and_sql(adult_engine, adult_dir):
    """A subset table is read by the view and the printed SQL themselves (no temporary relation)."""
    from sqlanon import api

    adult_engine.con.execute("CREATE TABLE research AS SELECT * FROM read_csv(?, delim=';', "
                             "header=true, all_varchar=true)", [str(adult_dir / "adult_subset.csv")])
    spec = _release_spec(adult_dir, "research", "view")
    report = api.anonymize(spec, engine=adult_engine)
    levels = report.node.levels
    rows = adult_engine.row_count("released")
    assert rows == report.node.rows - report.node.suppressed_rows
    sql = api.compile_sql(_with_levels(adult_dir, "research", "sql", levels), engine=adult_engine)
    assert "__sa_presence_" in sql and "research" in sql
    counted = adult_engine.fetch_script(f"SELECT COUNT(*) AS n FROM ({sql.rstrip().rstrip(';')}) AS x")
    assert counted[1][0][0] == rows


def _with_levels(adult_dir, subset, mode, levels):
    d = adult_spec_dict(adult_dir, qis=["sex", "race", "marital-status"], limit=0.02, levels=levels,
                        privacy=[{"k_anonymity": {"k": 5}},
                                 {"delta_presence": {"subset": subset, "delta_min": 0.0, "delta_max": 0.5}}])
    d["output"] = {"mode": mode}
    return spec_from_dict(d)


@pytest.mark.parametrize("mode", ["view", "sql"])
def test_presence_file_subset_cannot_outlive_the_session(adult_engine, adult_dir, mode):
    """A subset file lives in a temporary table: a view or printed SQL over it is refused clearly."""
    from sqlanon import api
    from sqlanon.errors import SpecError

    spec = _with_levels(adult_dir, str(adult_dir / "adult_subset.csv"), mode, {"race": 1})
    with pytest.raises(SpecError, match="temporary table of this session") as e:
        api.apply(spec, engine=adult_engine)
    assert e.value.path == "delta_presence.subset"
    assert not adult_engine.relation_exists("adult_anon")


@pytest.mark.parametrize("verb", ["anonymize", "compile_sql"])
def test_presence_file_subset_refused_before_the_source_is_read(duck, adult_dir, verb):
    """The refusal of a subset file for a view or SQL text comes before any scan or search (the
    source table does not even exist here)."""
    from sqlanon import api
    from sqlanon.errors import SpecError

    spec = _with_levels(adult_dir, str(adult_dir / "adult_subset.csv"), "view", {"race": 1})
    with pytest.raises(SpecError, match="temporary table of this session") as e:
        getattr(api, verb)(spec, engine=duck)
    assert e.value.path == "delta_presence.subset"
