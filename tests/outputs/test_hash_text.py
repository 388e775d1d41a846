"""A salted hash is one string per value on every engine, and the recipe in docs/outputs.md gives it.

Defect guarded: the hash digested the engine's own cast to text, so a DOUBLE 3.0 hashed ``3.0`` on
DuckDB and ``3`` on PostgreSQL, and a BOOLEAN hashed ``true`` where the documented Python recipe
(``str(value)``) gave ``True``.
"""

from __future__ import annotations

import datetime
import decimal
import math
import random
import re
import struct
import uuid
from pathlib import Path

import numpy
import pytest
from sqlglot import exp

from sqlanon.compile import hash_text
from sqlanon.compile.identifiers import salted_hash
from sqlanon.sql.dialects import profile
from sqlanon.sql.nodes import col, ident, lit, table

DOCS = Path(__file__).resolve().parents[2] / "docs" / "outputs.md"
SALT = "tëst-salt'\""


def documented_recipe() -> dict:
    """The Python block of docs/outputs.md that defines ``canonical_text``, executed as written."""
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), flags=re.S)
    recipe = [b for b in blocks if "def canonical_text" in b]
    assert len(recipe) == 1, "docs/outputs.md must show the canonical-text recipe once"
    namespace: dict = {}
    exec(compile(recipe[0], str(DOCS), "exec"), namespace)  # noqa: S102 - the documented code itself
    return namespace


def random_doubles(count: int) -> list[float]:
    """Doubles from random bit patterns (every exponent) and from every decade, finite."""
    rng = random.Random(12)
    out = []
    while len(out) < count:
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(x):
            out.append(x)
    out += [rng.uniform(-1, 1) * 10.0 ** e for e in range(-12, 22) for _ in range(3)]
    out += [float(rng.randrange(1, 2**53)) for _ in range(10)] + [rng.randrange(1, 2**40) + 0.5]
    return out


DOUBLES = [3.0, 0.1, 1e20, -0.0, 0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
           -1.7976931348623157e308, 1e-5, 1e-4, 1.5e-7, 1e15, 1e16, 1e15 + 0.5, 123456789012345.67,
           -2.5, 1 / 3, 9007199254740993.0, math.nan, math.inf, -math.inf, *random_doubles(200)]
TEXTS = ["Zoë 🙂", "O'Brien; --", 'a"b', "", "  padded  ", "日本語", "\\backslash", "line\nbreak"]
VALUES: dict[str, tuple[str, list]] = {
    "integer": ("BIGINT", [0, 7, -42, 2**63 - 1, -(2**63)]),
    "smallint": ("SMALLINT", [0, -5, 32767]),
    "decimal": ("DECIMAL(20,6)", [decimal.Decimal(v) for v in
                                  ("3.5", "3.000000", "-0.000100", "0", "123456789.123456", "10000000000000",
                                   "-7.250000")]),
    "double": ("DOUBLE PRECISION", DOUBLES),
    "real": ("REAL", [3.0, 0.1, 1e20, -2.5, 16777217.0]),
    "boolean": ("BOOLEAN", [True, False]),
    "date": ("DATE", [datetime.date(2024, 1, 2), datetime.date(1970, 1, 1), datetime.date(2000, 2, 29)]),
    "timestamp": ("TIMESTAMP", [datetime.datetime(2024, 1, 2, 3, 4, 5),
                                datetime.datetime(2024, 1, 2, 3, 4, 5, 123456),
                                datetime.datetime(1999, 12, 31, 23, 59, 59, 500000)]),
    "timestamptz": ("TIMESTAMP WITH TIME ZONE", [
        datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
        datetime.datetime(2024, 7, 1, 23, 30, 0, 250, tzinfo=datetime.timezone.utc)]),
    "text": ("VARCHAR", TEXTS),
    "uuid": ("UUID", [uuid.UUID("550E8400-E29B-41D4-A716-446655440000"), uuid.UUID(int=1)]),
}


def literal(value, sql_type: str) -> exp.Expression:
    if isinstance(value, float) and not math.isfinite(value):
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return exp.cast(lit(text), exp.DataType.build(sql_type))
    if isinstance(value, float):
        return exp.cast(lit(repr(value)), exp.DataType.build(sql_type))
    if isinstance(value, (datetime.date, uuid.UUID, decimal.Decimal)):
        return exp.cast(lit(str(value)), exp.DataType.build(sql_type))
    return exp.cast(lit(value), exp.DataType.build(sql_type))


def hashes_on(engine, kind: str) -> list[tuple[object, str | None]]:
    """(value as the driver returns it, hash computed by the engine) for every value of ``kind``,
    plus a NULL."""
    sql_type, values = VALUES[kind]
    name = f"h_{kind}"
    engine.execute(exp.Create(this=exp.Schema(this=table(name), expressions=[
        exp.ColumnDef(this=ident("i"), kind=exp.DataType.build("int")),
        exp.ColumnDef(this=ident("v"), kind=exp.DataType.build(sql_type))]), kind="TABLE"))
    rows = [(lit(i), literal(v, sql_type)) for i, v in enumerate(values)]
    rows.append((lit(len(values)), exp.cast(exp.Null(), exp.DataType.build(sql_type))))
    engine.execute(exp.insert(exp.values(rows), table(name)))
    column_type = hash_text.parse_types(engine.columns(name), engine.dialect.sqlglot)["v"]
    query = exp.select(col("v"), salted_hash(col("v"), SALT, engine.dialect, column_type)) \
        .from_(table(name)).order_by(col("i"))
    return engine.fetch(query)[1]


def postgres_tie(engine, value) -> bool:
    """PostgreSQL's shortest-digit writer (Ryu) gives one digit more than Python's repr when the
    shorter decimal lies exactly half an ulp from the double (e.g. 4.300243235369214e+16): a
    documented exception."""
    if engine.name != "postgres" or not isinstance(value, float) or not math.isfinite(value):
        return False
    text = engine.fetch(exp.select(exp.cast(exp.cast(lit(repr(value)), exp.DataType.build("double")),
                                            exp.DataType.build("text"))))[1][0][0]
    def digits(t): return t.lower().split("e")[0].replace(".", "").replace("-", "").strip("0")
    return len(digits(text)) > len(digits(repr(value)))


def check_engine(engine) -> None:
    recipe = documented_recipe()
    for kind in VALUES:
        got = hashes_on(engine, kind)
        assert got[-1] == (None, None), f"{kind}: NULL must hash to NULL"
        for value, digest in got[:-1]:
            if kind == "real":  # psycopg returns a REAL as its shortest decimal: widen it as documented
                value = float(numpy.float32(value))
            if postgres_tie(engine, value):
                continue
            text = recipe["canonical_text"](value)
            assert text == hash_text.canonical_text(value)
            assert digest == recipe["salted_hash"](SALT, value), \
                f"{engine.name} {kind} {value!r}: canonical text {text!r}"


def test_documented_recipe_reproduces_duckdb_hashes(duck):
    duck.execute_script("SET TimeZone = 'America/New_York'")
    check_engine(duck)


def test_issue_examples_canonical_text():
    recipe = documented_recipe()
    assert recipe["canonical_text"](3.0) == "3.0"
    assert recipe["canonical_text"](True) == "true"
    assert recipe["canonical_text"](-0.0) == "0.0"
    assert recipe["canonical_text"](decimal.Decimal("-0.00")) == "0"


def shortest_digits(x: float) -> tuple[str, int]:
    """The shortest round-trip digits of |x| (no trailing zeros) and the exponent of the first."""
    d = decimal.Decimal(repr(abs(x)))
    return "".join(map(str, d.as_tuple().digits)).rstrip("0") or "0", d.adjusted()


def java_double_text(x: float) -> str:
    """Java's Double.toString (Spark, Trino): plain from 1e-3 to 1e7, else d.dddE±n."""
    sign = "-" if x < 0 else ""
    if 1e-3 <= abs(x) < 1e7:
        shortest = repr(abs(x))
        return sign + (shortest if "." in shortest else shortest + ".0")
    digits, e10 = shortest_digits(x)
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{e10}"


def c_double_text(x: float) -> str:
    """The %g-style shortest text of PostgreSQL, BigQuery and Snowflake: ``3``, ``1e+15``."""
    digits, e10 = shortest_digits(x)
    sign = "-" if x < 0 else ""
    if e10 < -4 or e10 >= 15:
        return f"{sign}{digits[0]}{'.' + digits[1:] if len(digits) > 1 else ''}e{e10:+03d}"
    shortest = repr(x)
    return shortest[:-2] if shortest.endswith(".0") else shortest


@pytest.mark.parametrize("style", [java_double_text, c_double_text])
def test_double_text_of_other_engines_is_rewritten_as_python_repr(duck, style):
    """The rewrite used on every engine but DuckDB, fed the texts other engines write (DuckDB reads
    each notation as a decimal, as they do)."""
    xs = [x for x in DOUBLES if math.isfinite(x) and x != 0]
    rows = exp.values([(lit(style(x)), exp.cast(lit(repr(x)), exp.DataType.build("double"))) for x in xs],
                      alias="t", columns=["s", "x"])
    query = exp.select(hash_text.repr_from_shortest(col("s"), col("x"))).from_(rows)
    got = [r[0] for r in duck.fetch(query)[1]]
    assert got == [repr(x) for x in xs]
    double = exp.DataType.build("double")
    specials = exp.select(*[hash_text.repr_from_shortest(lit(s), exp.cast(lit(v), double))
                            for s, v in (("NaN", "NaN"), ("Infinity", "inf"), ("-Infinity", "-inf"),
                                         ("inf", "inf"))])
    assert duck.fetch(specials)[1][0] == ("nan", "inf", "-inf", "inf")


@pytest.mark.parametrize("dialect", ["spark", "snowflake", "bigquery", "trino"])
def test_every_dialect_renders_the_canonical_text_of_each_type(dialect):
    """The transpiled renderings: each type gets its own text form (parsed back by sqlglot)."""
    import sqlglot

    target = profile(dialect)
    for kind, (sql_type, _) in VALUES.items():
        data_type = exp.DataType.build(sql_type)
        sql = salted_hash(col("v"), SALT, target, data_type).sql(target.sqlglot)
        assert sqlglot.parse_one(sql, read=target.sqlglot) is not None
        if kind in ("double", "real"):
            assert "'nan'" in sql and "'e'" in sql, sql
        if kind == "timestamptz":
            assert "UTC" in sql.upper(), sql
        if kind == "boolean":
            assert "'true'" in sql and "'false'" in sql, sql


def test_a_declared_type_decides_the_text_when_the_database_does_not_say():
    """`type: decimal` in the spec: a decimal's canonical text even without the column's type."""
    types = hash_text.declared_types({"a": "decimal", "b": "integer", "c": "ordinal"})
    assert hash_text.kind_of(types["a"]) == "decimal" and hash_text.kind_of(types["b"]) == "integer"
    assert "c" not in types
