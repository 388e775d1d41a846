"""sdcMicro's individual and global risk: hand-computed classes, missing values as sdcMicro's
freqCalc counts them, random tables against the definitions re-run record by record, and Adult."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.domain.risk.individual import PER_RECORD, individual_risk
from sqlanon.errors import SpecError
from tests.domain.risk.oracle import frequencies_by_row, risk_by_row, threshold_by_row


def load(duck, rows, weights=None, name="t"):
    q = len(rows[0])
    cols = [f"q{j}" for j in range(q)]
    duck.con.execute(f"CREATE TABLE {name} ({', '.join(c + ' VARCHAR' for c in cols)}, w DOUBLE)")
    data = [tuple(None if v is None else str(v) for v in r) + (w,)
            for r, w in zip(rows, weights or [1.0] * len(rows))]
    duck.con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * (q + 1))})", data)
    return cols


def per_record(duck, table, q):
    """{QI values: (risk, fk, Fk)} from the per-record table, checking one value per class."""
    out: dict[tuple, tuple] = {}
    cols = ", ".join(f"q{j}" for j in range(q))
    for row in duck.con.execute(f"SELECT {cols}, {', '.join(PER_RECORD)} FROM {table}").fetchall():
        key, figures = row[:q], row[q:]
        assert out.setdefault(key, figures) == figures
    return out


def test_hand_computed_classes(duck):
    # one record of weight 10: fk = 1, Fk = 10, pk = 0.1, risk = (0.1/0.9)·ln 10
    # two of weight 2: fk = 2, Fk = 4, pk = 0.5, risk = 1 − 1·ln 2
    # three of weight 10: fk = 3, Fk = 30, pk = 0.1, risk = 0.1/(3 − 0.9)
    # two of weight 1: fk = Fk = 2, risk = 1/2
    rows = [("a",)] + [("b",)] * 2 + [("c",)] * 3 + [("d",)] * 2
    weights = [10.0, 2, 2, 10, 10, 10, 1, 1]
    cols = load(duck, rows, weights)
    r = individual_risk(duck, "t", cols, "w", output="out")
    expected = {("a",): 0.25584278811044947, ("b",): 0.30685281944005466, ("c",): 0.047619047619047616,
                ("d",): 0.5}
    got = per_record(duck, "out", 1)
    assert {k: v[0] for k, v in got.items()} == pytest.approx(expected, rel=1e-12)
    assert got[("c",)][1:] == (3.0, 30.0)
    er = 0.25584278811044947 + 2 * 0.30685281944005466 + 3 * 0.047619047619047616 + 2 * 0.5
    assert r.expected_reidentifications == pytest.approx(er, rel=1e-12)
    assert r.global_risk == pytest.approx(er / 8, rel=1e-12)
    assert r.global_risk_pct == pytest.approx(100 * er / 8)
    assert (r.records, r.classes, r.highest_risk) == (8, 4, 0.5)
    # ER allowed 0.2·8 = 1.6: protecting the four records at 0.5 and 0.307 leaves 0.4 + 4·0.256 < 1.6
    capped = individual_risk(duck, "t", cols, "w", max_global_risk=0.2)
    assert capped.threshold == pytest.approx(0.25584278811044947)


def test_missing_values_are_wildcards_as_in_sdcmicro(duck):
    # (b, NULL) matches (b, 2) and (NULL, NULL); (b, 2) gets (b, NULL); (NULL, NULL) gets every record;
    # complete classes do not count the all-missing class
    rows = [("a", 1), ("a", 1), ("b", 2), ("b", None), (None, None), ("c", 3)]
    weights = [10.0, 20.0, 5.0, 3.0, 7.0, 1.0]
    cols = load(duck, rows, weights)
    individual_risk(duck, "t", cols, "w", output="out")
    got = {k: v[1:] for k, v in per_record(duck, "out", 2).items()}
    assert got == {("a", "1"): (2.0, 30.0), ("b", "2"): (2.0, 8.0), ("b", None): (3.0, 15.0),
                   (None, None): (6.0, 46.0), ("c", "3"): (1.0, 1.0)}
    r = individual_risk(duck, "t", cols, "w", alpha=0.5, output="half")
    # 1 + ½·1 + 1 records, 3 + ½·7 + 5 weight
    assert per_record(duck, "half", 2)[("b", None)][1:] == (2.5, 11.5)
    assert r.classes == 5


def test_one_quasi_identifier_with_missing_values(duck):
    cols = load(duck, [("a",), ("a",), (None,), ("b",)], [2.0, 2.0, 4.0, 3.0])
    individual_risk(duck, "t", cols, "w", output="out")
    got = {k: v[1:] for k, v in per_record(duck, "out", 1).items()}
    assert got == {("a",): (3.0, 8.0), ("b",): (2.0, 7.0), (None,): (4.0, 11.0)}


values = st.sampled_from(["x", "y", "z", None])


@st.composite
def tables(draw):
    q = draw(st.integers(1, 3))
    n = draw(st.integers(1, 25))
    rows = [tuple(draw(values) for _ in range(q)) for _ in range(n)]
    weights = [draw(st.sampled_from([0.5, 1.0, 1.0, 2.0, 3.5, 10.0])) for _ in range(n)]
    return rows, weights


@settings(max_examples=25)
@given(tables(), st.sampled_from([1.0, 0.5]), st.booleans(), st.sampled_from([0.01, 0.1, 0.3]))
def test_random_tables_against_the_definitions_record_by_record(data, alpha, weighted, max_risk):
    from sqlanon.engines.duckdb import DuckDBEngine

    rows, weights = data
    with DuckDBEngine() as duck:
        cols = load(duck, rows, weights)
        r = individual_risk(duck, "t", cols, "w" if weighted else None, alpha=alpha,
                            max_global_risk=max_risk, output="out")
        got = per_record(duck, "out", len(cols))
    risks = risk_by_row(rows, weights if weighted else None, alpha)
    freqs = frequencies_by_row(rows, weights if weighted else [1.0] * len(rows), alpha)
    for row, risk, (fk, Fk) in zip(rows, risks, freqs):
        g = got[tuple(None if v is None else str(v) for v in row)]
        assert g[0] == pytest.approx(risk, rel=1e-9, abs=1e-12)
        assert g[1:] == pytest.approx((fk, Fk), rel=1e-12)
    assert r.expected_reidentifications == pytest.approx(math.fsum(risks), rel=1e-9)
    assert r.global_risk == pytest.approx(math.fsum(risks) / len(rows), rel=1e-9)
    expected = threshold_by_row(risks, max_risk)
    assert (r.threshold is None) == (expected is None)
    if expected is not None:
        assert r.threshold == pytest.approx(expected, rel=1e-9, abs=1e-12)
    med = statistics.median(risks)
    mad = 1.4826 * statistics.median([abs(x - med) for x in risks])
    assert r.higher_risk_records == sum(1 for x in risks if x > med + 3 * mad and x > 0.1)


def test_adult_unweighted_global_risk_is_arx_average_risk(adult_engine):
    qis = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
           "occupation", "salary-class"]
    r = individual_risk(adult_engine, "adult", qis)
    # without weights the risk is 1/fk: the global risk is ARX's average (prosecutor) risk
    assert r.classes == 19_502 and r.records == 30_162
    assert r.expected_reidentifications == pytest.approx(19_502, rel=1e-12)
    assert r.global_risk == pytest.approx(0.6465751607983555, rel=1e-12)
    assert r.as_dict()["global_risk_pct"] == pytest.approx(64.65751607983555, rel=1e-12)


def test_bad_input_is_refused_with_one_line(duck):
    cols = load(duck, [("a",), ("b",)], [1.0, 0.0])
    with pytest.raises(SpecError, match="values <= 0"):
        individual_risk(duck, "t", cols, "w")
    duck.con.execute("UPDATE t SET w = NULL WHERE q0 = 'b'")
    with pytest.raises(SpecError, match="NULL"):
        individual_risk(duck, "t", cols, "w")
    with pytest.raises(SpecError, match="no column 'nope'"):
        individual_risk(duck, "t", ["nope"])
    with pytest.raises(SpecError, match="no table or view named 'missing'"):
        individual_risk(duck, "missing", cols)
    with pytest.raises(SpecError, match="max_global_risk"):
        individual_risk(duck, "t", cols, max_global_risk=1.0)
    with pytest.raises(SpecError, match="cannot replace the table it is computed from"):
        individual_risk(duck, "t", cols, output="T")
    duck.con.execute("ALTER TABLE t ADD COLUMN individual_risk DOUBLE")
    with pytest.raises(SpecError, match="'t' already has a column named 'individual_risk'"):
        individual_risk(duck, "t", cols, output="out")


def test_an_empty_table_and_a_query_as_relation(duck):
    from sqlglot import exp

    from sqlanon.domain.risk.suda2 import suda2

    duck.con.execute("CREATE TABLE e (a VARCHAR, b INTEGER, w DOUBLE)")
    empty = individual_risk(duck, "e", ["a", "b"], "w", output="e_out")
    assert (empty.records, empty.expected_reidentifications, empty.threshold) == (0, 0.0, None)
    assert suda2(duck, "e", ["a", "b"]).sample_uniques == 0
    assert duck.con.execute("SELECT count(*) FROM e_out").fetchone() == (0,)
    duck.con.execute("INSERT INTO e VALUES (NULL, NULL, 1), (NULL, NULL, 2), ('x', 1, 3), ('y', 2, 4)")
    query = exp.select("*").from_("e").where("b IS NULL OR b = 1")
    r = individual_risk(duck, query, ["a", "b"], "w")
    # the all-NULL class counts every record of the query (3, weight 6); ('x', 1) only itself
    assert r.records == 3 and sorted(r.fk.tolist()) == [1.0, 3.0] and sorted(r.Fk.tolist()) == [3.0, 6.0]


@pytest.mark.parametrize("chunk", [3, 7, 1 << 22])
def test_the_threshold_sums_record_by_record_as_sdcmicro(monkeypatch, chunk):
    """Ties of the running sum with ER (0.1 · 10 = 1 here) fall as sdcMicro's C++ rounds them, also
    when the records are expanded in chunks."""
    import numpy as np

    from sqlanon.domain.risk import individual

    monkeypatch.setattr(individual, "_CHUNK", chunk)
    risks = np.array([1 / 1.5, 1 / 2.5, 1 / 6.5, 0.1])
    counts = np.array([1, 2, 6, 1])
    records = [float(r) for r, c in zip(risks, counts) for _ in range(c)]
    assert individual.global_threshold(risks, counts, 0.1) == threshold_by_row(records, 0.1) == 0.1
    rng = np.random.default_rng(3)
    for _ in range(200):
        k = int(rng.integers(1, 8))
        values = rng.choice([0.0, 0.05, 0.1, 0.2, 0.25, 1 / 3, 0.5, 1.0], size=k)
        sizes = rng.integers(1, 6, size=k)
        expanded = [float(v) for v, c in zip(values, sizes) for _ in range(c)]
        for cap in (0.01, 0.1, 0.3, 0.5):
            assert individual.global_threshold(values, sizes, cap) == threshold_by_row(expanded, cap)
