"""A node checked by the generalizing scan equals the same node checked from the raw frequency table."""

from __future__ import annotations

import random

import pytest
from sqlglot import exp

from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.domain.models.l_diversity import LDiversity
from sqlanon.domain.models.t_closeness import TCloseness
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.sql.nodes import table
from tests.conftest import ADULT_QIS

QIS = [q for q in ADULT_QIS if q != "occupation"]


def _rows(ev: Evaluator, relation: exp.Table) -> list[tuple]:
    return sorted(ev.engine.fetch(exp.select(exp.Star()).from_(relation.copy()))[1], key=repr)


def test_generalizing_scan_matches_raw_frequency_table(adult_engine, adult_hierarchies):
    models = [KAnonymity(5), LDiversity("occupation", 3, "recursive", 4),
              TCloseness("occupation", 0.3, "equal")]
    problem = Problem(adult_engine, table("adult"), QIS, {q: adult_hierarchies[q] for q in QIS},
                      ["occupation"], models)
    rng = random.Random(20261122)
    nodes = [{q: rng.randint(0, adult_hierarchies[q].height) for q in QIS} for _ in range(6)]
    nodes.append({q: 0 for q in QIS})
    with Evaluator(problem) as raw:
        for levels in nodes:
            expected = raw.check(levels, 0.02)
            expected_rows = _rows(raw, expected.verdict)
            with Evaluator(problem, scan_levels=levels) as scan:
                got = scan.check(levels, 0.02)
                assert scan.scans.raw is None  # the raw table was never built
                assert _rows(scan, got.verdict) == expected_rows
            for field in ("rows", "classes", "outlier_rows", "min_class_size", "dm_star", "dm_kept",
                          "models"):
                assert getattr(got, field) == getattr(expected, field), (levels, field)


def test_a_scan_on_class_keys_checks_a_node_as_the_scan_on_labels(duck, tmp_path):
    """compile reads only the node's counts: its scan groups by an interval's index and a file
    hierarchy's code; the figures equal the labelled scan's, and a statistic beyond the class size
    (l-diversity) keeps the labels."""
    from sqlanon.domain.hierarchy import read_arx_csv
    from sqlanon.domain.hierarchy.intervals import IntervalHierarchy
    from sqlanon.domain.hierarchy.masks import MaskHierarchy

    duck.con.execute("""CREATE TABLE t AS SELECT
        CASE WHEN range % 17 = 0 THEN NULL ELSE (range * 37 % 400) / 10.0 - 3.5 END AS x,
        lpad(CAST(range * 7919 % 900 AS VARCHAR), 3, '0') AS z,
        ['a', 'b', 'c', 'd'][1 + range % 4] AS c,
        CAST(range % 5 AS VARCHAR) AS s
        FROM range(3000)""")
    (tmp_path / "c.csv").write_text("a;ab;*\nb;ab;*\nc;cd;*\nd;cd;*\n", encoding="utf-8")
    hierarchies = {"x": IntervalHierarchy((0.5, 2.5, 10)), "z": MaskHierarchy(3),
                   "c": read_arx_csv(tmp_path / "c.csv")}
    qis = ["x", "z", "c"]
    nodes = [{"x": x, "z": z, "c": c} for x, z, c in [(1, 1, 1), (2, 2, 0), (3, 1, 2), (1, 0, 1), (4, 3, 2)]]
    for models in ([KAnonymity(3)], [KAnonymity(2), LDiversity("s", 2, "distinct")]):
        problem = Problem(duck, table("t"), qis, hierarchies, ["s"] if len(models) > 1 else [], models)
        for levels in nodes:
            with Evaluator(problem, scan_levels=levels) as labelled:
                expected = labelled.check(levels, 0.1)
                expected_rows = _rows(labelled, expected.verdict)
            with Evaluator(problem, scan_levels=levels, scan_labels=False) as keyed:
                got = keyed.check(levels, 0.1)
                rows = _rows(keyed, got.verdict)
                for field in ("rows", "classes", "outlier_rows", "outlier_classes", "min_class_size",
                              "dm_star", "dm_kept", "models"):
                    assert getattr(got, field) == getattr(expected, field), (levels, field)
                if len(models) > 1:  # l-diversity reads more than the sizes: the labels stay
                    assert rows == expected_rows
                else:  # only the sizes are read: the scan writes no class key, only the counts
                    names = keyed.engine.columns(keyed.scans.node_scan.name)
                    assert not {c for c, _ in names} & set(qis), names
                    assert sorted(r[0] for r in rows) == sorted(r[qis.__len__()] for r in expected_rows)


def test_a_scan_of_counts_alone_names_the_values_a_hierarchy_lacks(duck, tmp_path):
    """The scan that writes no class key flags the classes holding a value no leaf of a coded or raw
    file hierarchy; the values are then named as the scan with keys names them."""
    from sqlanon.domain.hierarchy import read_arx_csv
    from sqlanon.errors import HierarchyError

    duck.con.execute("CREATE TABLE t AS SELECT ['a', 'b', 'c', 'e'][1 + range % 4] AS c, "
                     "['a', 'b', 'c', 'd', NULL][1 + range % 5] AS d FROM range(40)")
    (tmp_path / "h.csv").write_text("a;ab;*\nb;ab;*\nc;cd;*\nd;cd;*\n", encoding="utf-8")
    h = read_arx_csv(tmp_path / "h.csv")
    problem = Problem(duck, table("t"), ["c", "d"], {"c": h, "d": h}, [], [KAnonymity(2)])
    for levels in ({"c": 1, "d": 0}, {"c": 0, "d": 1}, {"c": 0, "d": 0}, {"c": 2, "d": 2}):
        messages = []
        for labels in (True, False):
            with pytest.raises(HierarchyError) as e:
                Evaluator(problem, scan_levels=levels, scan_labels=labels).close()
            messages.append(str(e.value))
        assert messages[0] == messages[1], levels
        assert "missing from the hierarchy" in messages[0], messages


@pytest.mark.parametrize("from_right", [True, False])
def test_a_mask_grouped_on_its_kept_characters_counts_the_classes_its_labels_give(duck, from_right):
    """Below the top a mask groups by the characters a value keeps (short values by their label);
    values whose kept part is all mask characters could meet a short value's label: the scan then
    groups by the labels. Every figure equals the labelled scan's."""
    from sqlanon.domain.hierarchy.masks import MaskHierarchy

    values = ["12345", "12399", "1", "22", "", None, "98765", "98700", "4", "77", "5"]
    starred = ["*12", "*", "**", "***1", "1*", "*1234"]  # '*12' keeps '*' at level 2: the label of '1'
    for name, extra in (("plain", []), ("starred", starred)):
        rows = [(v,) for v in values + extra for _ in range(2)] + [(v,) for v in values + extra]
        duck.con.execute(f"CREATE OR REPLACE TABLE {name} (z VARCHAR)")
        duck.con.executemany(f"INSERT INTO {name} VALUES (?)", rows[: len(rows) - 3])
        h = {"z": MaskHierarchy(5, from_right=from_right)}
        problem = Problem(duck, table(name), ["z"], h, [], [KAnonymity(2)])
        for level in (1, 2, 3):
            with Evaluator(problem, scan_levels={"z": level}) as labelled:
                expected = labelled.check({"z": level}, 0.5)
            with Evaluator(problem, scan_levels={"z": level}, scan_labels=False) as keyed:
                got = keyed.check({"z": level}, 0.5)
            for field in ("rows", "classes", "outlier_rows", "outlier_classes", "min_class_size",
                          "dm_star", "dm_kept"):
                assert getattr(got, field) == getattr(expected, field), (name, level, field)
