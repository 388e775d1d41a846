"""A table written from a scan on class keys picks the rows of kept classes by their row keys; it
holds the rows the join of every generalized row to its class gives."""

from __future__ import annotations

import logging

import pytest

from sqlanon import api
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table

LEVELS = [{"x": 1, "z": 1, "c": 1}, {"x": 2, "z": 2, "c": 0}, {"x": 3, "z": 1, "c": 2},
          {"x": 1, "z": 0, "c": 1}, {"x": 0, "z": 3, "c": 2}]


@pytest.fixture()
def source(duck, tmp_path):
    duck.con.execute("""CREATE TABLE t AS SELECT
        range AS id,
        CASE WHEN range % 17 = 0 THEN NULL ELSE (range * 37 % 400) / 10.0 - 3.5 END AS x,
        CASE WHEN range % 29 = 0 THEN NULL ELSE lpad(CAST(range * 7919 % 900 AS VARCHAR), 3, '0') END AS z,
        ['a', 'b', 'c', 'd'][1 + range % 4] AS c,
        range % 7 AS extra
        FROM range(3000)""")
    duck.con.execute("CREATE VIEW v AS SELECT * FROM t")
    (tmp_path / "c.csv").write_text("a;ab;*\nb;ab;*\nc;cd;*\nd;cd;*\n", encoding="utf-8")
    return tmp_path / "c.csv"


def _spec(source_table: str, csv, levels: dict[str, int], k: int, name: str) -> dict:
    return {"source": {"table": source_table},
            "attributes": {"id": {"role": "identifier", "action": "drop"},
                           "x": {"role": "quasi_identifier",
                                 "hierarchy": {"intervals": {"widths": [0.5, 2.5, 10]}}},
                           "z": {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 3}}},
                           "c": {"role": "quasi_identifier", "hierarchy": {"csv": str(csv)}},
                           "extra": "insensitive"},
            "privacy": {"k_anonymity": {"k": k}},
            "transformation": {"levels": levels, "suppression_limit": 1.0},
            "output": {"mode": "table", "name": name, "replace": True}}


def _written(duck, spec: dict, caplog, **options) -> tuple[list[tuple], bool]:
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="sqlanon"):
        report = api.apply(spec_from_dict(spec), engine=duck, **options)
    keyed = any("UNNEST" in r.getMessage() for r in caplog.records)
    name = spec["output"]["name"]
    rows = duck.con.execute(f'SELECT * FROM "{name}" ORDER BY ALL').fetchall()
    assert report.outputs["rows"] == len(rows)
    return rows, keyed


@pytest.mark.parametrize("k", [2, 5])
def test_rows_picked_by_key_are_the_rows_joined_on_labels(duck, source, caplog, k):
    sizes = []
    for levels in LEVELS:
        keyed, by_key = _written(duck, _spec("t", source, levels, k, "by_key"), caplog, metrics=())
        # a view has no row keys; metrics read the classes' labels: both join the rows on labels
        joined, from_view = _written(duck, _spec("v", source, levels, k, "from_view"), caplog, metrics=())
        labelled, with_metrics = _written(duck, _spec("t", source, levels, k, "labelled"), caplog)
        assert by_key and not from_view and not with_metrics, levels
        assert keyed == joined == labelled, levels
        sizes.append(len(keyed))
    assert any(0 < n < 3000 for n in sizes), sizes  # some rows suppressed, some written


def test_rows_picked_by_the_keys_of_fewer_rows_are_the_rows_joined_on_labels(duck, source, caplog):
    """The statement lists the keys of the kept rows, or of the suppressed rows when they are
    fewer (the rows whose keys are not listed): the same rows as the join on labels either way."""
    forms = set()
    for levels in LEVELS:
        for k in (2, 5, 40):
            caplog.clear()
            with caplog.at_level(logging.DEBUG, logger="sqlanon"):
                report = api.apply(spec_from_dict(_spec("t", source, levels, k, "picked")), engine=duck,
                                   metrics=())
            picks = [r.getMessage() for r in caplog.records if "UNNEST" in r.getMessage()]
            assert len(picks) == 1, (levels, k)
            by_dropped = "IS TRUE" in picks[0]
            suppressed = report.as_dict()["suppressed_rows"]
            assert by_dropped == (suppressed < 3000 - suppressed), (levels, k, suppressed)
            forms.add(by_dropped)
            picked = duck.con.execute('SELECT * FROM "picked" ORDER BY ALL').fetchall()
            joined, _ = _written(duck, _spec("v", source, levels, k, "joined"), caplog, metrics=())
            assert picked == joined, (levels, k)
    assert forms == {True, False}


def test_only_stored_tables_without_a_rowid_column_have_row_keys(duck, source):
    duck.con.execute("CREATE TABLE shadowed AS SELECT 1 AS rowid, 2 AS a")
    duck.con.execute("CREATE TEMP TABLE temporary AS SELECT 1 AS a")
    def keyed(name: str) -> bool:
        return duck.has_row_keys(table(name), [c for c, _ in duck.columns(name)])

    assert keyed("t") and keyed("T") and keyed("temporary")
    assert not keyed("v")
    assert not keyed("shadowed")
    assert not duck.has_row_keys(table("missing"), ["a"])
    with duck.transaction():  # a relation without row keys leaves an open transaction usable
        assert not keyed("v") and not duck.has_row_keys(table("missing"), ["a"])
        assert duck.row_count("t") == 3000


def test_masked_suppression_without_metrics_joins_every_row_on_its_labels(duck, source, caplog):
    """Masked suppression writes every row, joined to its class on the labels: the scan keeps them
    even when nothing else reads them (no metric)."""
    spec = _spec("t", source, {"x": 1, "z": 2, "c": 1}, 3, "masked")
    spec["transformation"]["suppressed"] = "mask"
    without, _ = _written(duck, spec, caplog, metrics=())
    with_metrics, _ = _written(duck, spec, caplog, metrics=("discernibility",))
    assert without == with_metrics
    assert len(without) == 3000 and any(r[0] == "*" for r in without)


def test_a_search_in_memory_writes_the_rows_of_kept_classes_by_key(duck, source, caplog):
    """After a search in memory whose report has only metrics with an in-memory form (the default
    ones), the check's scan keeps class keys and row ids: the table holds the rows that the same
    search over a view (no row keys: every row joined to its class on labels) writes."""
    def searched(source_table: str, name: str) -> tuple[list[tuple], bool, dict]:
        spec = _spec(source_table, source, {}, 5, name)
        spec["transformation"] = {"suppression_limit": 0.05}
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger="sqlanon"):
            report = api.anonymize(spec_from_dict(spec), engine=duck).as_dict()
        keyed = any("UNNEST" in r.getMessage() for r in caplog.records)
        for part in ("search", "outputs"):
            report.pop(part)
        return duck.con.execute(f'SELECT * FROM "{name}" ORDER BY ALL').fetchall(), keyed, report

    by_key, keyed, report = searched("t", "by_key")
    joined, from_view, view_report = searched("v", "joined")
    assert keyed and not from_view
    assert by_key == joined and 0 < len(by_key) < 3000
    assert report == view_report
