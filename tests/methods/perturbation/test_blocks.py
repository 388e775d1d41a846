"""Noise written in parallel row blocks: order, seeds, deleted rows, fallbacks and failures."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from randomgen import AESCounter

from sqlanon import api
from sqlanon.engines import duckdb_blocks as B
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.engines.staging import is_staging
from sqlanon.errors import EngineError
from sqlanon.methods.dp import mechanisms as mech
from sqlanon.methods.rng import CHUNK_ROWS, ReproducibleNoiseWarning, RowKey, make_rng
from sqlanon.spec.load import spec_from_dict
from sqlanon.sql.nodes import table as sql_table
from tests.processes import kill_when_marked

TABLE = "r'ows; ✓"
N = 10_500
BLOCK = 1000
SIGMA_ARGS = (2.0, 0.5, 1e-5)  # sensitivity, epsilon, delta


@pytest.fixture()
def engine(monkeypatch):
    monkeypatch.setattr(B, "BLOCK_ROWS", BLOCK)
    e = DuckDBEngine()
    e.con.execute(f"""CREATE TABLE "{TABLE}" AS
        SELECT i AS id, (i * 10)::DOUBLE AS x, (i % 7)::DOUBLE AS y FROM range({N}) r(i)""")
    yield e
    e.close()


def spec(**output):
    return spec_from_dict({
        "source": {"table": TABLE},
        "attributes": {"id": {"role": "insensitive"}, "x": {"role": "sensitive"},
                       "y": {"role": "sensitive"}},
        "transformation": {"method": "noise", "mechanism": "gaussian", "attributes": ["x"],
                           "sensitivity": SIGMA_ARGS[0], "epsilon": SIGMA_ARGS[1],
                           "delta": SIGMA_ARGS[2], "seed": 5},
        "output": output or {"mode": "table", "name": "out"}})


def apply(engine, **output):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        return api.apply(spec(**output), engine=engine)


def rows(engine, name="out", order=""):
    return engine.con.execute(f'SELECT id, x, y FROM "{name}" {order}').fetchnumpy()


def expected_noise(rows: int) -> np.ndarray:
    """Row r's noise is the (r mod 2^16)-th standard normal drawn from the run key's AES counter
    (r div 2^16)·2^64, whatever block writes it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        key = RowKey.of(make_rng(5)).key
    chunks = -(-rows // CHUNK_ROWS)
    z = np.concatenate([np.random.Generator(AESCounter(key=key, counter=c << 64)).standard_normal(CHUNK_ROWS)
                        for c in range(chunks)])[:rows]
    grid, sigma = mech.gaussian_parameters(*SIGMA_ARGS)
    # the engine rounds σ/γ·z half up to whole grid steps (x = 10·i is on the grid already)
    return np.floor(z * (sigma / grid) + 0.5) * grid


def test_blocks_keep_the_row_order_and_draw_by_row_number(engine):
    report = apply(engine)
    out = rows(engine)  # stored order, no ORDER BY
    assert len(out["id"]) == N and report.outputs["rows"] == N
    np.testing.assert_array_equal(out["id"], np.arange(N))
    np.testing.assert_array_equal(out["x"], np.arange(N) * 10.0 + expected_noise(N))
    np.testing.assert_array_equal(out["y"], np.arange(N) % 7)
    assert report.metrics["sse"] == pytest.approx(float(((out["x"] - np.arange(N) * 10.0) ** 2).sum()))


@pytest.mark.parametrize("threads", [1, 3, 8])
def test_the_same_seed_gives_the_same_table_whatever_the_threads(engine, threads):
    apply(engine)
    first = rows(engine)
    engine.con.execute(f"SET threads = {threads}")
    apply(engine, mode="table", name="out", replace=True)
    np.testing.assert_array_equal(rows(engine)["x"], first["x"])


def test_deleted_rows_leave_gaps_the_row_numbers_skip(engine):
    engine.con.execute(f'DELETE FROM "{TABLE}" WHERE id % 3 = 0 OR id BETWEEN 2000 AND 2999')
    kept = np.array([i for i in range(N) if i % 3 and not 2000 <= i <= 2999])
    apply(engine)
    out = rows(engine)
    np.testing.assert_array_equal(out["id"], kept)
    # an empty block is skipped; the rows after it are numbered on from the last kept row
    np.testing.assert_array_equal(out["x"], kept * 10.0 + expected_noise(len(kept)))


def test_in_place_keeps_order_and_leaves_no_staging_table(engine):
    apply(engine, mode="in_place")
    out = rows(engine, TABLE)
    np.testing.assert_array_equal(out["id"], np.arange(N))
    assert not np.array_equal(out["x"], np.arange(N) * 10.0)
    names = [r[0] for r in engine.con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
    assert names == [TABLE]


def test_each_block_runs_one_statement_written_once(engine, monkeypatch):
    """The blocks' statement is rendered once per cursor and gets its rowid bounds as parameters:
    no sqlglot tree (cyclic garbage) per block."""
    rendered = []
    real_insert = B.exp.insert

    def counting(*args, **kwargs):
        rendered.append(1)
        return real_insert(*args, **kwargs)

    monkeypatch.setattr(B.exp, "insert", counting)
    report = apply(engine)
    assert report.outputs["rows"] == N and len(rendered) <= 8 < -(-N // BLOCK)


def test_a_failing_block_leaves_source_and_output_untouched(engine, monkeypatch):
    apply(engine)  # an existing output, to be replaced
    before_out, before_src = rows(engine), rows(engine, TABLE)
    real, calls = B._stream, []

    def failing(rows_, schema, batches):
        calls.append(rows_)
        if len(calls) == 4:
            raise RuntimeError("disk full")
        yield from real(rows_, schema, batches)

    monkeypatch.setattr(B, "_stream", failing)
    with pytest.raises(EngineError, match="disk full"):
        apply(engine, mode="table", name="out", replace=True)
    for name, before in (("out", before_out), (TABLE, before_src)):
        after = rows(engine, name)
        for c in before:
            np.testing.assert_array_equal(after[c], before[c])
    names = {r[0] for r in engine.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert names == {TABLE, "out"}
    calls.clear()
    with pytest.raises(EngineError, match="disk full"):
        apply(engine, mode="in_place")
    np.testing.assert_array_equal(rows(engine, TABLE)["x"], before_src["x"])


@pytest.mark.parametrize("kind", ["temporary", "view", "rowid column"])
def test_tables_blocks_cannot_serve_fall_back_to_one_statement(engine, kind):
    source = "src"
    if kind == "temporary":
        engine.con.execute(f'CREATE TEMP TABLE src AS SELECT * FROM "{TABLE}"')
    elif kind == "view":
        engine.con.execute(f'CREATE VIEW src AS SELECT * FROM "{TABLE}"')
    else:
        engine.con.execute(f'CREATE TABLE src AS SELECT id, x, y, id AS rowid FROM "{TABLE}"')
    assert engine.row_blocks(sql_table(source)) is None
    s = spec()
    s = spec_from_dict({**_as_dict(s), "source": {"table": source}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        report = api.apply(s, engine=engine)
    out = rows(engine, "out", "ORDER BY id")
    assert report.outputs["rows"] == N
    np.testing.assert_array_equal(out["y"], np.arange(N) % 7)


def _as_dict(s):
    return {"source": {"table": TABLE},
            "attributes": {"id": {"role": "insensitive"}, "x": {"role": "sensitive"},
                           "y": {"role": "sensitive"}},
            "transformation": {"method": "noise", "mechanism": "gaussian", "attributes": ["x"],
                               "sensitivity": SIGMA_ARGS[0], "epsilon": SIGMA_ARGS[1],
                               "delta": SIGMA_ARGS[2], "seed": 5},
            "output": {"mode": "table", "name": "out"}}


def test_blocks_of_a_plain_table(engine):
    blocks = engine.row_blocks(sql_table(TABLE))
    assert [(b.index, b.low, b.high, b.rows) for b in blocks][:2] == [(0, 0, 1000, 1000),
                                                                      (1, 1000, 2000, 1000)]
    assert blocks[-1] == B.Block(10, 10_000, 10_500, 500) and sum(b.rows for b in blocks) == N


def _compression(engine, name):
    engine.con.execute("CHECKPOINT")
    return dict(engine.con.execute(
        f"SELECT column_name, string_agg(DISTINCT compression, ',') FROM pragma_storage_info('{name}') "
        "WHERE segment_type <> 'VALIDITY' GROUP BY column_name").fetchall())


def test_continuous_noise_is_stored_uncompressed_on_plain_tables(tmp_path, monkeypatch):
    monkeypatch.setattr(B, "BLOCK_ROWS", 1 << 14)
    e = DuckDBEngine(str(tmp_path / "db.duckdb"))
    try:
        e.con.execute(f"""CREATE TABLE "{TABLE}" AS
            SELECT i AS id, (i * 10)::DOUBLE AS x, (i % 7)::DOUBLE AS y FROM range(50000) r(i)""")
        apply(e)
        stored = _compression(e, "out")
        assert stored["x"] == "Uncompressed" and stored["y"] != "Uncompressed"
        # a type whose text holds values (ENUM) cannot be rebuilt safely: DuckDB's choice is kept
        e.con.execute("CREATE TYPE mood AS ENUM ('o''k', 'b;ad')")
        e.con.execute(f'ALTER TABLE "{TABLE}" ADD COLUMN m mood DEFAULT \'o\'\'k\'')
        apply(e, mode="table", name="out", replace=True)
        assert _compression(e, "out")["x"] != "Uncompressed"
        assert e.con.execute("SELECT DISTINCT m::VARCHAR FROM out").fetchall() == [("o'k",)]
    finally:
        e.close()


KILLED_CHILD = r"""
import sys, time, warnings
from pathlib import Path
from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.engines import duckdb_blocks as B
from sqlanon.spec.load import spec_from_dict

database, marker, where = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
B.BLOCK_ROWS = 1000
warnings.simplefilter("ignore")
real = B._stream
calls = []

def pausing(rows, schema, batches):  # stops for good inside the fourth block
    calls.append(rows)
    if where == "block" and len(calls) == 4:
        marker.write_text("blocks")
        time.sleep(600)
    yield from real(rows, schema, batches)

class Pausing(DuckDBEngine):  # or stops right after the source was dropped, before the rename
    def _execute(self, sql):
        super()._execute(sql)
        if where == "drop" and sql.startswith("DROP TABLE") and "__sa_stage" not in sql:
            marker.write_text("dropped")
            time.sleep(600)

B._stream = pausing
spec = {"source": {"table": "rows"},
        "attributes": {"id": {"role": "insensitive"}, "x": {"role": "sensitive"}},
        "transformation": {"method": "noise", "mechanism": "gaussian", "attributes": ["x"],
                           "sensitivity": 1, "epsilon": 1, "delta": 1e-6},
        "output": {"mode": "in_place"}}
api.apply(spec_from_dict(spec), engine=Pausing(database))
"""


@pytest.mark.parametrize("where", ["block", "drop"])
def test_in_place_noise_survives_sigkill(tmp_path, where):
    database = tmp_path / "rows.duckdb"
    with DuckDBEngine(str(database)) as e:
        e.con.execute("CREATE TABLE rows AS SELECT i AS id, (i * 10)::DOUBLE AS x FROM range(10500) r(i)")
    marker, script = tmp_path / "marker", tmp_path / "child.py"
    script.write_text(KILLED_CHILD)
    kill_when_marked(script, [str(database), str(marker), where], marker)
    with DuckDBEngine(str(database)) as e:
        ids, xs = zip(*e.con.execute("SELECT id, x FROM rows").fetchall())
        assert list(ids) == list(range(10500)) and list(xs) == [i * 10.0 for i in range(10500)]
        tables = {r[0] for r in e.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        # at most a staging table is left behind, under a staging name (the next run removes it)
        assert "rows" in tables and all(t == "rows" or is_staging(t) for t in tables)


def test_uncompressed_storage_keeps_every_column_type(tmp_path, monkeypatch):
    monkeypatch.setattr(B, "BLOCK_ROWS", 1 << 14)
    e = DuckDBEngine(str(tmp_path / "db.duckdb"))
    try:
        e.con.execute(f"""CREATE TABLE "{TABLE}" AS SELECT i AS id, (i * 10)::DOUBLE AS x,
            (i % 7)::DOUBLE AS y, 'v' || i AS "na;me", (i / 3)::DECIMAL(18,3) AS d, i::FLOAT AS f,
            TIMESTAMPTZ '2024-01-01 00:00:00+00' AS tz, i::UHUGEINT AS uh FROM range(30000) r(i)""")
        before = e.con.execute(f'DESCRIBE "{TABLE}"').fetchall()
        apply(e)
        after = e.con.execute('DESCRIBE out').fetchall()
        assert [(r[0], r[1]) for r in after] == [(r[0], r[1]) for r in before]
        assert _compression(e, "out")["x"] == "Uncompressed"
        names = {r[0] for r in e.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        assert names == {TABLE, "out"}
    finally:
        e.close()
