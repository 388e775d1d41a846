"""Every Mondrian output on small random tables is checked by brute force: each published class holds
k rows or more and satisfies the spec's other models, and every released box holds its row's value."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.spec import spec_from_dict
from tests.methods.mondrian.checked import classes, contains, equal_emd

QIS = ["age", "zip", "city"]


@st.composite
def tables(draw):
    n = draw(st.integers(6, 40))
    rows = [(i, draw(st.integers(18, 30)), draw(st.integers(-3, 5)), draw(st.sampled_from("abcd")),
             draw(st.sampled_from(["flu", "cold", "hiv"]))) for i in range(n)]
    return rows


CITIES = {"a": ["ab", "*"], "b": ["ab", "*"], "c": ["cd", "*"], "d": ["cd", "*"]}


def _run(rows, privacy, mode="strict", hierarchy=False):
    engine = DuckDBEngine()
    try:
        engine.con.execute("CREATE TABLE t (id INTEGER, age INTEGER, zip INTEGER, city VARCHAR, "
                           "disease VARCHAR)")
        engine.con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
        spec = spec_from_dict({
            "source": {"table": "t"},
            "attributes": {"id": {"role": "insensitive"}, **{q: {"role": "quasi_identifier"} for q in QIS},
                           "disease": {"role": "sensitive"},
                           **({"city": {"role": "quasi_identifier", "hierarchy": {"map": CITIES}}}
                              if hierarchy else {})},
            "privacy": privacy, "transformation": {"method": "mondrian", "mode": mode},
            "output": {"mode": "table", "name": "out"}})
        try:
            report = api.apply(spec, engine=engine)
        except Exception as e:  # the whole table fails a model: refused, nothing written
            assert "the whole table does not satisfy" in str(e)
            return None, None
        cur = engine.con.execute("SELECT * FROM out")
        names = [d[0] for d in cur.description]
        return report, [dict(zip(names, r)) for r in cur.fetchall()]
    finally:
        engine.close()


def _check_boxes(rows, released, hierarchy=False):
    original = {r[0]: dict(zip(["id", *QIS, "disease"], r)) for r in rows}
    assert len(released) == len(rows)
    for r in released:
        o = original[r["id"]]
        assert r["disease"] == o["disease"]
        for q in QIS:
            label = r[q]
            if hierarchy and q == "city":  # a node's label: its leaves
                label = "{" + ",".join(v for v, up in CITIES.items() if label in (v, *up)) + "}"
            assert contains(label, o[q]), (q, r[q], o[q])


@settings(max_examples=12)
@given(tables(), st.integers(2, 4), st.sampled_from(["strict", "relaxed"]))
def test_k_anonymous_and_truthful(rows, k, mode):
    report, released = _run(rows, [{"k_anonymity": {"k": k}}], mode)
    if len(rows) < k:
        assert report.smallest == len(rows)
        return
    _check_boxes(rows, released)
    for members in classes(released, QIS).values():
        assert len(members) >= k
    assert report.classes == len(classes(released, QIS))


@settings(max_examples=15)
@given(tables(), st.integers(1, 3), st.sampled_from([("l", 2), ("t", 0.25), ("e", 1.5)]),
       st.sampled_from(["strict", "relaxed", "hierarchy"]))
def test_cuts_respect_every_model(rows, k, model, mode):
    kind, value = model
    m = ({"l_diversity": {"attribute": "disease", "l": value}} if kind == "l" else
         {"l_diversity": {"attribute": "disease", "l": value, "variant": "entropy"}} if kind == "e" else
         {"t_closeness": {"attribute": "disease", "t": value}})
    privacy = [{"k_anonymity": {"k": k}}, m] if k > 1 else [m]
    report, released = _run(rows, privacy, "relaxed" if mode == "relaxed" else "strict", mode == "hierarchy")
    whole = [r[4] for r in rows]
    if released is None:  # refused: then the whole table indeed fails the model
        if kind == "l":
            assert len(set(whole)) < value
        return
    _check_boxes(rows, released, mode == "hierarchy")
    import math
    for members in classes(released, QIS).values():
        values = [r["disease"] for r in members]
        assert len(members) >= k
        if kind == "l":
            assert len(set(values)) >= value
        elif kind == "e":
            counts = [values.count(v) / len(values) for v in set(values)]
            assert -sum(p * math.log(p) for p in counts) >= math.log(value) - 1e-9
        else:
            assert equal_emd(values, whole) <= value + 1e-9
