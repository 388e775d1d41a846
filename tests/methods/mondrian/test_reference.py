"""Mondrian with inherited box widths reproduces the published figures on UCI Adult exactly
(partitions, NCP to 1e-12 relative, discernibility, smallest partition); four rows here (two of them on
both paths), all twelve in bench/mondrian_bench.py --reference."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.spec import spec_from_dict
from tests.conftest import DATA, require_data
from tests.methods.mondrian.adult_uci import REFERENCE, load, read, spec_dict

CHOSEN = [(10, "strict"), (100, "strict"), (5, "relaxed"), (100, "relaxed")]
DATABASE = [(10, "strict"), (5, "relaxed")]


@pytest.fixture(scope="module")
def adult_uci():
    path = require_data(DATA / "adult-uci" / "adult.data")
    engine = DuckDBEngine()
    engine.create_table_from_arrow("adult_uci", load(path))
    yield engine
    engine.close()


@pytest.mark.parametrize(("k", "mode", "partitions", "ncp", "discernibility", "smallest", "path"),
                         [(*r, "auto") for r in REFERENCE if (r[0], r[1]) in CHOSEN]
                         + [(*r, "database") for r in REFERENCE if (r[0], r[1]) in DATABASE])
def test_reference_figures(adult_uci, k, mode, partitions, ncp, discernibility, smallest, path):
    """On the in-memory path (auto at this size), and on the rounds in the database."""
    d = spec_dict(k, mode)
    d["transformation"]["path"] = path
    report = api.check(spec_from_dict(d), engine=adult_uci)
    assert report.rows == 30162
    assert report.partitions == partitions
    assert report.metrics["ncp_percent"] == pytest.approx(ncp, rel=1e-12)
    assert report.metrics["discernibility"] == discernibility
    assert report.smallest == smallest


def test_exact_widths_differ_as_documented(adult_uci):
    """With every box exact (the default) strict k=10 gives 1,796 partitions and NCP 11.084 %."""
    report = api.check(spec_from_dict(spec_dict(10, "strict", width="exact")), engine=adult_uci)
    assert report.partitions == 1796
    assert round(report.metrics["ncp_percent"], 3) == 11.084
    assert report.smallest >= 10


def test_relaxed_positions_renumbered_keep_the_figures(adult_uci, monkeypatch):
    """Relaxed positions grow each round and are renumbered before they could overflow; renumbered
    every round, the partitions stay the reference's."""
    from sqlanon.methods.mondrian import partitioning

    monkeypatch.setattr(partitioning, "POSITION_LIMIT", 1)
    k, mode, partitions, ncp, discernibility, smallest = REFERENCE[-1]
    d = spec_dict(k, mode)
    d["transformation"]["path"] = "database"
    report = api.check(spec_from_dict(d), engine=adult_uci)
    assert (report.partitions, report.metrics["discernibility"], report.smallest) == \
        (partitions, discernibility, smallest)
    assert report.metrics["ncp_percent"] == pytest.approx(ncp, rel=1e-12)


def test_the_csv_reader_loads_what_the_figures_were_computed_from():
    """The benchmark's pyarrow reader gives the same rows, codes and order as the line-by-line one."""
    path = require_data(DATA / "adult-uci" / "adult.data")
    fast = read(path)
    assert fast.num_rows == 30162
    assert fast.equals(load(path))
