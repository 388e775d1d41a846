"""DuckDB writes a table of per-row values in row blocks, on all the engine's threads.

One ``CREATE TABLE ... AS SELECT`` with a ``POSITIONAL JOIN`` to an Arrow stream runs on one thread,
and costs about twice a parallel copy on two cores (docs/noise.md). Noise that does not depend on the
values (:attr:`~sqlanon.methods.perturbation.draws.Draw.independent`) is therefore written block by block:
block ``b`` holds the rows whose ``rowid`` lies in ``[b·BLOCK_ROWS, (b+1)·BLOCK_ROWS)``, draws from its own
generator (the ``b``-th spawned from the run's generator, so a seed gives the same noise whatever the
number of threads), and is appended to a staging table by one of several cursors, each block in its
own transaction. Blocks commit strictly in order, so the staging table keeps the source's row order.

The staging table is committed piece by piece, but the caller replaces or creates the output by
renaming it inside one transaction; until then the source and any existing output are untouched. A
failure drops the staging table; a killed process can leave it behind under its staging name
(:mod:`sqlanon.engines.staging`), for the next run to remove. Since its rows are readable once committed,
a DP release is charged before the first block is written (:mod:`sqlanon.methods.perturbation.apply`).
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon.engines.base import internal_name
from sqlanon.engines.messages import driver_message
from sqlanon.engines.row_values import BATCH_ROWS, SOURCE, VALUES, Block, Projection, RowsFrom, schema_name
from sqlanon.errors import EngineError
from sqlanon.sql.nodes import alias, lit, table
from sqlanon.sql.render import render

if TYPE_CHECKING:
    import pyarrow as pa

    from sqlanon.engines.duckdb import DuckDBEngine

ROW_GROUP_ROWS = 122_880
"""DuckDB's default row group size."""

BLOCK_ROWS = 8 * ROW_GROUP_ROWS
"""Rows per block (983,040): large enough that a block's statement overhead is negligible, small
enough that the blocks of a few million rows keep two threads busy, and whole row groups, so that
DuckDB reads a block's rows without filtering inside a row group (10M rows, `gaussian`: 0.80 s,
against 0.87 s for blocks of 2^20 rows and 0.93 s for 8 row groups plus 2,048 rows)."""


def blocks_of(engine: DuckDBEngine, relation: exp.Table) -> list[Block] | None:
    """The table's row blocks, or None when it cannot be written in blocks.

    Blocks need a stored table other cursors can read (not a view, not a temporary table) and the
    ``rowid`` pseudo-column (not shadowed by a column of that name).
    """
    schema = schema_name(relation)
    if any(c.lower() == "rowid" for c, _ in engine.columns(relation.name, schema)):
        return None
    found = engine.con.execute(
        "SELECT table_catalog = current_database(), table_type FROM information_schema.tables "
        "WHERE table_name = ? AND table_schema = coalesce(?, current_schema())",
        [relation.name, schema]).fetchall()
    if found != [(True, "BASE TABLE")]:
        return None  # a view, a temporary table (other cursors cannot see it), or ambiguous
    source = table(relation.name, schema)
    rowid = exp.column("rowid")
    extent = engine.fetch_one(exp.select(alias(exp.Count(this=exp.Star()), "n"),
                                            alias(exp.Max(this=rowid), "top")).from_(source))
    n, top = int(extent["n"]), extent["top"]
    if n == 0:
        return []
    if int(top) + 1 == n:  # no deleted rows in between: the blocks' sizes follow
        return [Block(b, lo, min(lo + BLOCK_ROWS, n), min(BLOCK_ROWS, n - lo))
                for b, lo in enumerate(range(0, n, BLOCK_ROWS))]
    block = exp.IntDiv(this=rowid, expression=lit(BLOCK_ROWS))
    counts = engine.fetch_dicts(exp.select(alias(block, "b"), alias(exp.Count(this=exp.Star()), "n"))
                                   .from_(source).group_by(block).order_by(exp.column("b")))
    return [Block(int(r["b"]), int(r["b"]) * BLOCK_ROWS, (int(r["b"]) + 1) * BLOCK_ROWS, int(r["n"]))
            for r in counts]


def _stream(rows: int, schema: pa.Schema, batches: Callable[[int], dict[str, Any]]
            ) -> Iterator[pa.RecordBatch]:
    import pyarrow as pa

    done = 0
    while done < rows:
        size = min(BATCH_ROWS, rows - done)
        yield pa.RecordBatch.from_pydict(batches(size), schema=schema)
        done += size


def _select(relation: exp.Table, values: str, block: bool, projection: Projection) -> exp.Select:
    """The projection over the rows of a block, whose first and last-plus-one rowids are the
    statement's two parameters (no rows with ``block=False``)."""
    rows = exp.select("*").from_(table(relation.name, schema_name(relation)))
    if not block:
        rows = rows.where(exp.false())
    else:
        rowid = exp.column("rowid")
        rows = rows.where(exp.and_(exp.GTE(this=rowid, expression=exp.Placeholder()),
                                   exp.LT(this=rowid, expression=exp.Placeholder())))
    skeleton = exp.select().from_(rows.subquery(SOURCE)).join(
        exp.Join(this=exp.alias_(table(values), VALUES, table=True, quoted=True), method="POSITIONAL"))
    return projection(skeleton)


_PLAIN_TYPE = re.compile(r"[A-Z][A-Z0-9 ]*(\(\d+(, ?\d+)?\))?")
"""A DuckDB type name that can be written back into DDL as it is (no names or values inside)."""


def _rebuilt(kind: str) -> exp.DataType | None:
    """The type DuckDB describes as ``kind`` as a sqlglot type, if its text holds no names or values."""
    if not _PLAIN_TYPE.fullmatch(kind):
        return None
    try:
        return exp.DataType.build(kind, dialect="duckdb")
    except Exception:  # noqa: BLE001 - a type sqlglot does not know: keep DuckDB's table
        return None


def _store_uncompressed(engine: DuckDBEngine, target: exp.Table, columns: frozenset[str]) -> None:
    """Recreate the empty ``target`` with ``columns`` (where DOUBLE) stored uncompressed.

    Continuous noise leaves doubles DuckDB's floating-point compression saves little on (ALPRD:
    17 % on 10M noisy rows) at a high cost: writing them uncompressed took 0.36–0.40 s against
    0.51 s (docs/noise.md). The table is rebuilt from its column types only where DuckDB describes
    the rebuilt table with exactly the same types; otherwise (types carrying names or values, such
    as ENUM or STRUCT, or types that do not survive the round trip) it stays as DuckDB made it.
    """
    def described(t: exp.Table) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in engine.con.execute(engine.sql(exp.Describe(this=t))).fetchall()]

    columns_now = described(target)
    if not any(name in columns and kind == "DOUBLE" for name, kind in columns_now):
        return
    definitions = []
    for name, kind in columns_now:
        rebuilt = _rebuilt(kind)
        if rebuilt is None:
            return
        sql = render(exp.ColumnDef(this=exp.to_identifier(name, quoted=True), kind=rebuilt),
                     engine.dialect)
        if name in columns and kind == "DOUBLE":
            sql += " USING COMPRESSION uncompressed"  # no sqlglot node; a fixed keyword
        definitions.append(sql)
    schema = schema_name(target)
    candidate = table(_uncompressed_name(target.name), schema)
    engine.con.execute(f"CREATE TABLE {render(candidate, engine.dialect)} ({', '.join(definitions)})")
    if described(candidate) != columns_now:
        engine.drop(candidate.name, schema=schema)
        return
    engine.drop(target.name, schema=schema)
    engine.rename_table(candidate.name, target.name, schema=schema)


def _uncompressed_name(target: str) -> str:
    """Where :func:`_store_uncompressed` builds the table (a staging name: ``target``'s with a part)."""
    return target + "_u"


def discard(engine: DuckDBEngine, target: str, schema: str | None) -> None:
    """Drop what :func:`write_blocks` may have left of ``target`` (the table and its rebuild)."""
    engine.drop(target, schema=schema)
    engine.drop(_uncompressed_name(target), schema=schema)


def _rollback(cur: Any) -> None:
    try:
        cur.execute("ROLLBACK")
    except Exception:  # noqa: BLE001 - the transaction is already gone
        pass


def write_blocks(engine: DuckDBEngine, relation: exp.Table, target: str, blocks: list[Block],
                 schema: pa.Schema, rows_from: RowsFrom, projection: Projection,
                 uncompressed: frozenset[str] = frozenset()) -> None:
    """Create ``target`` (in the source's schema) holding the projection over every block, in order;
    a block's values are ``rows_from`` the number of its first row (the rows of the blocks before it).

    ``uncompressed`` names DOUBLE output columns stored without compression (see
    :func:`_store_uncompressed`).

    Raises:
        EngineError: a block failed; ``target`` has been dropped.
    """
    con = engine.con
    where = schema_name(relation)
    target_table = table(target, where)
    firsts = list(itertools.accumulate((b.rows for b in blocks), initial=0))
    with engine.arrow_relation(schema.empty_table(), internal_name("v")) as empty:
        engine.execute(exp.Create(this=target_table, kind="TABLE",
                                  expression=_select(relation, empty.name, False, projection)))
    if uncompressed:
        _store_uncompressed(engine, target_table, uncompressed)
    threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    workers = max(1, min(threads, len(blocks)))
    committed = [threading.Event() for _ in blocks]
    failed = threading.Event()
    errors: list[BaseException] = []

    def turn_of(i: int) -> bool:
        """Wait until the block before ``i`` has committed; False if another block failed."""
        while i and not committed[i - 1].wait(0.05):
            if failed.is_set():
                return False
        return not failed.is_set()

    def work(first: int) -> None:
        cur = con.cursor()
        # Written once, the blocks' bounds passed as parameters (DuckDB still pushes them into
        # the scan): a statement built per block leaves sqlglot trees, whose parent links make
        # them cyclic garbage for Python's collector to walk (a full collection per 10M rows).
        values = internal_name("v")
        import pyarrow as pa

        insert = engine.sql(exp.insert(_select(relation, values, True, projection), target_table))
        try:
            for i in range(first, len(blocks), workers):
                block = blocks[i]
                reader = pa.RecordBatchReader.from_batches(
                    schema, _stream(block.rows, schema, rows_from(firsts[i])))
                cur.register(values, reader)
                try:
                    cur.execute("BEGIN TRANSACTION")
                    try:
                        cur.execute(insert, [block.low, block.high])
                        if not turn_of(i):
                            cur.execute("ROLLBACK")
                            return
                        cur.execute("COMMIT")
                    except BaseException:
                        _rollback(cur)
                        raise
                    committed[i].set()
                finally:
                    cur.unregister(values)
        except BaseException as error:  # handed to the calling thread
            errors.append(error)
            failed.set()
        finally:
            cur.close()

    pool = [threading.Thread(target=work, args=(w,), name=f"sqlanon-noise-{w}") for w in range(workers)]
    try:
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    except BaseException:  # an interrupt: stop the workers before dropping what they wrote
        failed.set()
        for t in pool:
            t.join()
        engine.drop(target, schema=where)
        raise
    if errors:
        engine.drop(target, schema=where)
        error = errors[0]
        if isinstance(error, EngineError):
            raise error
        raise EngineError(f"duckdb: writing the perturbed rows into {target!r} failed: "
                          f"{driver_message(error)}") from error
