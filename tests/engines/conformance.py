"""What every engine must do, as one test class each engine's tests subclass.

A subclass provides the ``engine`` fixture: an open engine on an empty database or schema, closed
after the test. Each declared capability is exercised; each undeclared one must refuse with an
:class:`~sqlanon.errors.UnsupportedError` naming it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from sqlglot import exp

from sqlanon.engines import swap
from sqlanon.engines.capabilities import Capabilities
from sqlanon.engines.row_values import ROW_KEY, SOURCE, VALUES
from sqlanon.errors import EngineError, InternalError, UnsupportedError
from sqlanon.sql.nodes import alias, col, ident, lit, table

WEIRD_NAMES = ['we"ird; DROP TABLE t; --', "Zoë 🙂", "it's"]
WEIRD_TEXT = ["O'Brien; DROP TABLE t; --", 'say "hi"', "Zoë 🙂 ünïcödé", "back\\slash", ""]
N = 2_500


def create(engine, name: str, columns: dict[str, str]) -> None:
    engine.execute(exp.Create(this=exp.Schema(this=table(name), expressions=[
        exp.ColumnDef(this=ident(c), kind=exp.DataType.build(t)) for c, t in columns.items()]),
        kind="TABLE"))


def rows_of(engine, name: str, *columns: str, order: str | None = None) -> list[tuple]:
    q = exp.select(*[col(c) for c in columns]).from_(table(name))
    if order:
        q = q.order_by(col(order))
    return engine.fetch(q)[1]


def numbered(engine, name: str, n: int = N) -> None:
    """A stored table ``name`` of ``n`` rows: ``id`` 0..n-1 and ``x = id * 10``, in that order."""
    engine.create_table_from_arrow(name, pa.table({"id": pa.array(range(n), pa.int64()),
                                                   "x": pa.array([i * 10.0 for i in range(n)])}))


class EngineConformance:
    """The engine interface and its declared capabilities, against a real database."""

    any_table_name = True
    """Whether a table's name may be any text; False where the catalog keeps only letters, digits
    and ``_`` (Spark's session catalog), which must then refuse the other names."""

    @pytest.fixture()
    def engine(self):  # pragma: no cover - every subclass provides it
        raise NotImplementedError

    def refuses(self, engine, capability: str, call) -> None:
        with pytest.raises(UnsupportedError, match=f"does not declare the capability '{capability}'"):
            call()

    # -- the record -------------------------------------------------------------------------------
    def test_capabilities_are_a_frozen_record_of_known_names(self, engine):
        caps = engine.capabilities
        assert isinstance(caps, Capabilities)
        with pytest.raises(dataclasses.FrozenInstanceError):
            caps.arrow_in = not caps.arrow_in  # type: ignore[misc]
        assert set(caps.declared()) <= set(Capabilities.names())
        with pytest.raises(ValueError, match="unknown engine capability"):
            engine.require("teleportation")

    # -- statements -------------------------------------------------------------------------------
    def test_statements_are_trees_and_text_only_runs_as_a_script(self, engine):
        with pytest.raises(InternalError, match="execute_script"):
            engine.execute("CREATE TABLE t (x INTEGER)")
        with pytest.raises(InternalError, match="execute_script"):
            engine.fetch("SELECT 1")
        assert not engine.relation_exists("t")
        engine.execute_script("CREATE TABLE t (x INTEGER)")
        assert engine.fetch_script("SELECT count(*) FROM t")[1] == [(0,)]

    def test_column_types_round_trip(self, engine):
        types = {"i": "INTEGER", "b": "BIGINT", "d": "DOUBLE", "s": "TEXT", "f": "BOOLEAN",
                 "day": "DATE", "ts": "TIMESTAMP", "m": "DECIMAL(10, 2)"}
        create(engine, "typed", types)
        values = [(1, 2**40, 0.1, "x", True, dt.date(1999, 12, 31), dt.datetime(2021, 3, 14, 15, 9, 26),
                   Decimal("12.34")),
                  (-7, -(2**40), -1e300, "", False, dt.date(2024, 2, 29), dt.datetime(1970, 1, 1),
                   Decimal("-0.01")),
                  (None,) * 8]
        engine.insert_rows("typed", values)
        assert [c for c, _ in engine.columns("typed")] == list(types)
        got = rows_of(engine, "typed", *types, order="i")
        assert len(got) == 3
        for row, want in zip(sorted(got, key=lambda r: (r[0] is None, r[0] or 0)),
                             sorted(values, key=lambda r: (r[0] is None, r[0] or 0))):
            *exact, money = row
            assert tuple(exact) == want[:-1]
            assert (money is None and want[-1] is None) or Decimal(str(money)) == want[-1]

    def test_identifiers_and_literals_are_quoted(self, engine):
        name, *columns = WEIRD_NAMES
        if not self.any_table_name:
            with pytest.raises(EngineError, match="not a valid name"):
                create(engine, name, {c: "TEXT" for c in columns})
            assert not engine.relation_exists(name)
            name = "plain_name"
        create(engine, name, {c: "TEXT" for c in columns})
        engine.execute(exp.insert(exp.values([tuple(lit(v) for v in (t, t[::-1]))
                                              for t in WEIRD_TEXT]), table(name)))
        engine.insert_rows(name, [(t, t) for t in WEIRD_TEXT])
        assert engine.relation_exists(name)
        assert [c for c, _ in engine.columns(name)] == columns
        got = rows_of(engine, name, *columns)
        assert sorted(got) == sorted([(t, t[::-1]) for t in WEIRD_TEXT] + [(t, t) for t in WEIRD_TEXT])
        echoed = engine.fetch(exp.select(*[alias(lit(t), f"c{i}") for i, t in enumerate(WEIRD_TEXT)]))
        assert echoed == ([f"c{i}" for i in range(len(WEIRD_TEXT))], [tuple(WEIRD_TEXT)])

    # -- transactions and replacement -------------------------------------------------------------
    def test_a_rolled_back_transaction_leaves_nothing(self, engine):
        if not engine.capabilities.transactional_ddl:
            self.refuses(engine, "transactional_ddl", lambda: engine.transaction().__enter__())
            return
        create(engine, "kept", {"x": "INTEGER"})
        with pytest.raises(ZeroDivisionError), engine.transaction():
            create(engine, "gone", {"x": "INTEGER"})
            engine.insert_rows("kept", [(1,), (2,)])
            engine.drop("kept")
            raise ZeroDivisionError
        assert not engine.relation_exists("gone")
        assert engine.row_count("kept") == 0
        with engine.transaction():
            create(engine, "made", {"x": "INTEGER"})
            engine.insert_rows("made", [(1,), (2,)])
        assert engine.row_count("made") == 2

    def test_a_table_is_replaced_atomically(self, engine):
        numbered(engine, "target", 3)
        numbered(engine, "staging", 5)
        if not engine.capabilities.atomic_rename:
            self.refuses(engine, "atomic_rename", lambda: engine.replace_table("target", "staging"))
            assert engine.row_count("target") == 3
            return
        with pytest.raises(ZeroDivisionError), engine.transaction():
            engine.replace_table("target", "staging")
            assert engine.row_count("target") == 5
            raise ZeroDivisionError
        assert engine.row_count("target") == 3 and engine.row_count("staging") == 5
        with engine.transaction():
            engine.replace_table("target", "staging")
        assert engine.row_count("target") == 5 and not engine.relation_exists("staging")

    def test_a_table_is_swapped_in_recorded_steps(self, engine):
        numbered(engine, "target", 3)
        query = exp.select(col("id"), alias(exp.Add(this=col("x"), expression=lit(1)), "x")) \
            .from_(table("target"))
        if not engine.capabilities.recoverable_swap:
            self.refuses(engine, "recoverable_swap", lambda: swap.replace_table(engine, "target", query))
            assert swap.recover(engine, "target") == [] and engine.row_count("target") == 3
            return
        assert swap.replace_table(engine, "target", query) == 3
        assert rows_of(engine, "target", "x", order="id") == [(1.0,), (11.0,), (21.0,)]
        with pytest.raises(EngineError):  # fails before the commit point: nothing changes
            swap.replace_table(engine, "target", exp.select(col("nowhere")).from_(table("target")))
        assert engine.row_count("target") == 3 and engine.tables_named(swap.PREFIX) == []
        assert engine.marks("target") == {}
        for renames in (0, 1, 2):  # a run killed before the renames, between them, after them
            new, old = swap.swap_names("0123456789ab")
            engine.create_marked(new, exp.select("*").from_(table("target")).limit(1),
                                 {swap.TARGET: "target", swap.TOKEN: "0123456789ab", swap.STEP: "staged"})
            if renames:
                engine.rename_table("target", old)
            if renames == 2:
                engine.rename_table(new, "target")
            [done] = swap.recover(engine, "target")
            assert done.startswith("completed" if renames == 2 else "undid")
            assert engine.row_count("target") == (1 if renames == 2 else 3)
            assert engine.tables_named(swap.PREFIX) == [] and engine.marks("target") == {}

    # -- rows -------------------------------------------------------------------------------------
    def test_row_keys_are_stable_and_name_one_row_each(self, engine):
        numbered(engine, "keyed")
        if not engine.capabilities.stable_row_key:
            self.refuses(engine, "stable_row_key", engine.row_key)
            return
        read = exp.select(alias(engine.row_key(), "k"), col("id")).from_(table("keyed"))
        first, second = dict(engine.fetch(read)[1]), dict(engine.fetch(read)[1])
        assert first == second and len(first) == N and sorted(first.values()) == list(range(N))
        joined = exp.select(col("id", "a"), col("id", "b")).from_(
            exp.alias_(table("keyed"), "a", table=True)).join(
            exp.alias_(table("keyed"), "b", table=True),
            on=exp.EQ(this=engine.row_key("a"), expression=engine.row_key("b")))
        pairs = engine.fetch(joined)[1]
        assert len(pairs) == N and all(a == b for a, b in pairs)

    def test_row_order_sorts_rows_as_they_were_stored(self, engine):
        numbered(engine, "ordered")
        if not engine.capabilities.stable_row_key:
            self.refuses(engine, "stable_row_key", engine.row_order)
            return
        read = exp.select(col("id")).from_(table("ordered")).order_by(engine.row_order())
        assert [r[0] for r in engine.fetch(read)[1]] == list(range(N))

    def test_values_made_in_numpy_join_their_rows(self, engine):
        numbered(engine, "src")
        relation = table("src")
        caps = engine.capabilities
        if not (caps.positional_join or caps.stable_row_key):
            with pytest.raises(UnsupportedError):
                engine.positional_rows()
            return
        assert engine.positional_rows() is caps.positional_join
        ids = engine.read_columns(relation, ["id"])
        assert (ROW_KEY in ids) is not caps.positional_join
        schema = pa.schema([("y", pa.float64())])
        order, done = np.asarray(ids["id"]), {"n": 0}

        def batches(n: int) -> dict[str, np.ndarray]:
            part = order[done["n"]:done["n"] + n]
            done["n"] += n
            return {"y": part * -1.0}

        if not caps.positional_join:
            with pytest.raises(UnsupportedError, match="matches rows by key"):
                with engine.join_row_values(relation, N, schema, batches):
                    pass
        with engine.join_row_values(relation, N, schema, batches, ids.get(ROW_KEY)) as skeleton:
            got = engine.fetch(skeleton.select(col("id", SOURCE), col("x", SOURCE), col("y", VALUES)))[1]
        assert sorted(got) == [(i, i * 10.0, -float(i)) for i in range(N)]

    def test_row_blocks_are_written_in_order(self, engine):
        numbered(engine, "big")
        relation = table("big")
        if not engine.capabilities.row_block_writes:
            self.refuses(engine, "row_block_writes", lambda: engine.row_blocks(relation))
            return
        blocks = engine.row_blocks(relation)
        assert blocks is not None and sum(b.rows for b in blocks) == N
        schema = pa.schema([("y", pa.float64())])

        def rows_from(first: int):
            """The values of the rows from ``first`` on: their row numbers, negated."""
            done = {"n": first}

            def batches(n: int) -> dict[str, np.ndarray]:
                done["n"] += n
                return {"y": -np.arange(done["n"] - n, done["n"], dtype=np.float64)}
            return batches

        engine.write_row_blocks(relation, "out", blocks, schema, rows_from,
                                lambda s: s.select(col("id", SOURCE), alias(col("y", VALUES), "y")))
        got = engine.fetch(exp.select(col("id"), col("y")).from_(table("out")))[1]
        assert [r[0] for r in got] == list(range(N))
        assert [r[1] for r in got] == [-float(i) for i in range(N)]  # each block from its first row
        engine.discard_row_blocks("out")
        assert not engine.relation_exists("out")

    def test_values_drawn_where_the_rows_are_read_follow_the_scan_order(self, engine):
        numbered(engine, "src")
        relation = table("src")
        schema = pa.schema([("y", pa.int64())])

        # defined here, not at module level: Spark pickles it by value only as a closure, and a
        # cluster's workers cannot import the tests package
        def rows_from(first: int):
            """The rows' numbers from ``first`` on."""
            done = {"n": first}

            def batches(n: int) -> dict[str, np.ndarray]:
                done["n"] += n
                return {"y": np.arange(done["n"] - n, done["n"], dtype=np.int64)}
            return batches

        if not engine.capabilities.row_stream_map:
            self.refuses(engine, "row_stream_map", lambda: engine.map_row_stream(relation, schema, rows_from))
            return
        scanned = [r[0] for r in rows_of(engine, "src", "id")]  # the table's scan order
        with engine.map_row_stream(relation, schema, rows_from) as skeleton:
            got = engine.fetch(skeleton.select(col("id", SOURCE), col("x", SOURCE), col("y", VALUES)))[1]
            again = engine.fetch(skeleton.select(col("id", SOURCE), col("y", VALUES)))[1]
        position = {i: n for n, i in enumerate(scanned)}
        assert sorted(got) == sorted((i, i * 10.0, position[i]) for i in range(N))
        assert sorted(again) == sorted((i, position[i]) for i in range(N))  # read again, drawn again

    def test_rows_are_numbered_in_sort_orders_as_a_window_numbers_them(self, engine):
        """Ties, and NULLs sorted last; the numbers stay when the table is read again."""
        engine.create_table_from_arrow("src", pa.table({
            "id": pa.array([(i * 7919) % N for i in range(N)], pa.int64()),
            "x": pa.array([None if i % 11 == 0 else float(i % 7) for i in range(N)], pa.float64()),
            "t": pa.array([None if i % 13 == 0 else f"t{i % 5}" for i in range(N)], pa.string())}))
        query = exp.select(col("id"), col("x"), col("t")).from_(table("src"))
        orders = [("by_x", ["x", "id"]), ("by_t", ["t", "x", "id"])]
        if not engine.capabilities.distributed_numbering:
            self.refuses(engine, "distributed_numbering", lambda: engine.number_rows("nums", query, orders))
            return
        engine.number_rows("nums", query, orders)
        windows = [alias(exp.Window(this=exp.RowNumber(), order=exp.Order(expressions=[
            exp.Ordered(this=col(c), nulls_first=False) for c in by])), name) for name, by in orders]
        expected = sorted(engine.fetch(exp.select(col("id"), col("x"), col("t"), *windows)
                                       .from_(table("src")))[1])
        got = sorted(rows_of(engine, "nums", "id", "x", "t", "by_x", "by_t"))
        assert got == expected and sorted(r[3] for r in got) == list(range(1, N + 1))
        assert sorted(rows_of(engine, "nums", "id", "x", "t", "by_x", "by_t")) == got

    # -- data from outside ------------------------------------------------------------------------
    def test_arrow_round_trip(self, engine):
        data = pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                         "x": pa.array([0.5, None, -2.25]),
                         "s": pa.array(WEIRD_TEXT[:2] + [None]),
                         "f": pa.array([True, False, None]),
                         "day": pa.array([dt.date(2020, 1, 1), None, dt.date(1969, 7, 20)])})
        engine.create_table_from_arrow("from_arrow", data)
        back = engine.fetch_arrow(exp.select(*[col(c) for c in data.column_names])
                                  .from_(table("from_arrow")).order_by(col("id")))
        assert back.column_names == data.column_names
        assert back.to_pylist() == data.to_pylist()

    def test_arrow_data_is_read_in_place(self, engine):
        data = pa.table({"v": pa.array(range(100), pa.int64())})
        if not engine.capabilities.arrow_in:
            self.refuses(engine, "arrow_in", lambda: engine.arrow_relation(data).__enter__())
            return
        total = exp.select(exp.Sum(this=col("v")))
        with engine.arrow_relation(data) as relation:
            assert engine.fetch(total.from_(relation))[1] == [(4950,)]
        with pytest.raises(EngineError):
            engine.fetch(total.from_(relation))
        stream = pa.RecordBatchReader.from_batches(data.schema, data.to_batches(max_chunksize=10))
        with engine.arrow_relation(stream) as relation:
            assert engine.fetch(total.from_(relation))[1] == [(4950,)]

    def test_files_are_registered_as_tables(self, engine, tmp_path):
        path = tmp_path / "people.csv"
        path.write_text('name,city\n"O\'Brien; --","Zoë"\n"say ""hi""",Köln\n', encoding="utf-8")
        if not engine.capabilities.file_registration:
            self.refuses(engine, "file_registration",
                         lambda: engine.register_file("people", str(path), kind="csv"))
            return
        engine.register_file("people", str(path), kind="csv", options={"header": True})
        assert sorted(rows_of(engine, "people", "name", "city")) == [("O'Brien; --", "Zoë"),
                                                                     ('say "hi"', "Köln")]

    # -- Python in the engine ---------------------------------------------------------------------
    def test_a_function_runs_on_each_group_of_rows(self, engine):
        numbered(engine, "big")
        query = exp.select(col("id"), col("x"), alias(exp.Mod(this=col("id"), expression=lit(3)), "b")) \
            .from_(table("big"))

        def summary(data: pa.Table) -> pa.Table:  # one row per group: its key, size and sum
            import pyarrow as pa
            import pyarrow.compute as pc

            return pa.table({"b": data.column("b").slice(0, 1), "n": [data.num_rows],
                             "total": [pc.sum(data.column("x")).as_py()],
                             "first": [pc.min(data.column("id"))]})

        columns = [("b", "bigint"), ("n", "bigint"), ("total", "double"), ("first", "bigint")]
        if not engine.capabilities.grouped_arrow_map:
            self.refuses(engine, "grouped_arrow_map",
                         lambda: engine.map_arrow_groups("sums", query, ["b"], summary, columns))
            return
        engine.map_arrow_groups("sums", query, ["b"], summary, columns)
        expected = [(b, len(range(b, N, 3)), sum(i * 10.0 for i in range(b, N, 3)), b) for b in range(3)]
        assert sorted(rows_of(engine, "sums", "b", "n", "total", "first")) == expected
        engine.map_arrow_groups("kept", query, ["b"], summary, columns, temporary=False)
        assert sorted(rows_of(engine, "kept", "b", "n", "total", "first")) == expected
        assert engine.row_count("kept") == 3

        def failing(data: pa.Table) -> pa.Table:
            raise ValueError("no numbers in group")

        with pytest.raises(EngineError, match="failed: ValueError: no numbers in group$"):
            engine.map_arrow_groups("failed", query, ["b"], failing, columns)
        assert not engine.relation_exists("failed")
