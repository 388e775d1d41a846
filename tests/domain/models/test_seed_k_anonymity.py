"""k-anonymity checks against the seeds' worked examples (digests: seed 000 §4.3, seed 002-004 §D)."""

from __future__ import annotations

import itertools

import pytest

from sqlanon.domain.hierarchy import IntervalHierarchy, TableHierarchy
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.sql.nodes import table

# Seed 000, Table 5.1: (Age, ZIP); the condition is irrelevant to k-anonymity.
TABLE_5_1 = [(21, 23058), (24, 23059), (26, 23060), (27, 23061), (43, 23058), (43, 23059),
             (47, 23060), (49, 23061), (32, 23058), (34, 23059), (35, 23060), (38, 23061)]

# Fig 5.3, min class size per node (Age level, ZIP level), from seed 000's digest §4.3.
FIG_5_3_MIN_CLASS = {
    (0, 0): 1, (0, 1): 1, (0, 2): 1, (1, 0): 1, (1, 1): 2, (1, 2): 2,
    (2, 0): 1, (2, 1): 2, (2, 2): 4, (3, 0): 3, (3, 1): 6, (3, 2): 12,
}


@pytest.fixture()
def table_5_1(duck):
    duck.con.execute("CREATE TABLE t51 (age INTEGER, zip INTEGER)")
    duck.con.executemany("INSERT INTO t51 VALUES (?, ?)", TABLE_5_1)
    zips = sorted({z for _, z in TABLE_5_1})
    zip_h = TableHierarchy([[str(z), str(z // 10), "*"] for z in zips])
    age_h = IntervalHierarchy((5, 10))  # value, ⌊a/5⌋·5, ⌊a/10⌋·10, ALL
    return Problem(duck, table("t51"), ["age", "zip"], {"age": age_h, "zip": zip_h}, [],
                   [KAnonymity(2)])


def test_fig_5_3_min_class_sizes(table_5_1):
    with Evaluator(table_5_1) as ev:
        for (a, z), expected in FIG_5_3_MIN_CLASS.items():
            node = ev.check({"age": a, "zip": z})
            assert node.min_class_size_all == expected, (a, z)


@pytest.mark.parametrize("k, minimal", [(2, {(3, 0), (1, 1)}), (3, {(2, 2), (3, 0)}),
                                        (4, {(2, 2), (3, 1)})])
def test_fig_5_3_satisfying_and_minimal_nodes(table_5_1, k, minimal):
    table_5_1.models = [KAnonymity(k)]
    with Evaluator(table_5_1) as ev:
        ok = {(a, z) for a, z in itertools.product(range(4), range(3))
              if ev.check({"age": a, "zip": z}).anonymous}
    found = {n for n in ok if not any(m != n and m[0] <= n[0] and m[1] <= n[1] for m in ok)}
    assert found == minimal
    if k == 2:  # the book's list of valid nodes
        assert ok == {(3, 2), (3, 1), (3, 0), (2, 2), (2, 1), (1, 2), (1, 1)}


# Seed 004's PT (Fig 1): Race, DOB, Sex, ZIP, Marital status.
PT = [
    ("asian", "64/04/12", "F", "94142", "divorced"),
    ("asian", "64/09/13", "F", "94141", "divorced"),
    ("asian", "64/04/15", "F", "94139", "married"),
    ("asian", "63/03/13", "M", "94139", "married"),
    ("asian", "63/03/18", "M", "94139", "married"),
    ("black", "64/09/27", "F", "94138", "single"),
    ("black", "64/09/27", "F", "94139", "single"),
    ("white", "64/09/27", "F", "94139", "single"),
    ("white", "64/09/27", "F", "94141", "widow"),
]
PT_HIERARCHIES = {
    "race": [[r, "person"] for r in ("asian", "black", "white")],
    "dob": [[d, d[:5], d[:2], "60-65"] for d in sorted({row[1] for row in PT})],
    "sex": [["M", "not released"], ["F", "not released"]],
    "zip": [[z, z[:4] + "*", "941**"] for z in ("94138", "94139", "94141", "94142")],
    "marital": [["married", "been married", "not released"], ["widow", "been married", "not released"],
                ["divorced", "been married", "not released"], ["single", "never married", "not released"]],
}

# req_sup for k = 2 by node [R, D, S, Z] (seed 002-004 digest §D); nodes not listed need 0.
REQ_SUP_K2 = {
    "0000": 9, "0001": 7, "0010": 9, "0100": 7, "1000": 7,
    "0002": 5, "0011": 7, "0101": 5, "0110": 7, "0200": 7, "1001": 6, "1010": 7, "1100": 3,
    "0012": 5, "0102": 1, "0111": 5, "0201": 3, "0210": 7, "0300": 7, "1002": 5, "1011": 6, "1101": 2,
    "1110": 3, "1200": 2,
    "0112": 1, "0202": 0, "0211": 3, "0301": 3, "0310": 6, "1012": 5, "1102": 0, "1111": 2, "1201": 0,
    "1210": 2, "1300": 2,
    "0212": 0, "0302": 0, "0311": 2, "1112": 0, "1202": 0, "1211": 0, "1301": 0, "1310": 2,
}


@pytest.fixture()
def pt(duck):
    duck.con.execute("CREATE TABLE pt (race VARCHAR, dob VARCHAR, sex VARCHAR, zip VARCHAR, "
                     "marital VARCHAR)")
    duck.con.executemany("INSERT INTO pt VALUES (?, ?, ?, ?, ?)", PT)
    return duck


def test_seed_004_required_suppression_per_node(pt):
    qis = ["race", "dob", "sex", "zip"]
    hs = {q: TableHierarchy(PT_HIERARCHIES[q]) for q in qis}
    problem = Problem(pt, table("pt"), qis, hs, [], [KAnonymity(2)])
    with Evaluator(problem) as ev:
        for node in itertools.product(range(2), range(4), range(2), range(3)):
            key = "".join(map(str, node))
            check = ev.check(dict(zip(qis, node)))
            assert check.outlier_rows == REQ_SUP_K2.get(key, 0), key


def test_seed_004_race_zip_k2(pt):
    """Fig 5/7: QI {Race, ZIP}, k = 2: GT[1,0] and GT[0,1] each suppress 2 tuples; GT[0,0] needs 6."""
    qis = ["race", "zip"]
    hs = {q: TableHierarchy(PT_HIERARCHIES[q]) for q in qis}
    problem = Problem(pt, table("pt"), qis, hs, [], [KAnonymity(2)])
    expected = {(0, 0): 6, (0, 1): 2, (1, 0): 2, (0, 2): 0, (1, 1): 0, (1, 2): 0}
    with Evaluator(problem) as ev:
        for node, sup in expected.items():
            check = ev.check(dict(zip(qis, node)), suppression_limit=2 / 9)
            assert check.outlier_rows == sup
            assert check.anonymous == (sup <= 2)
        problem.models = [KAnonymity(3)]
    with Evaluator(problem) as ev:
        # k = 3: [1,1] holds with person/9414* = 3 and person/9413* = 6
        assert ev.check({"race": 1, "zip": 1}).min_class_size == 3
