"""What each SQL target can do, declared in one place.

sqlglot renders a function it does not know unchanged, so a dialect that lacks it would fail only at
the user's database. Every function node in a tree is therefore checked against the target's allow-list
before rendering; anything else is a :class:`~sqlanon.errors.UnsupportedError` at compile time.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

from sqlglot import exp

from sqlanon.errors import UnsupportedError, did_you_mean
from sqlanon.registry import Registry
from sqlanon.sql.nodes import as_expression

# sqlglot function node classes that every supported target renders correctly (golden-tested).
_PORTABLE_FUNCTIONS = frozenset(
    {
        "Abs", "Avg", "Case", "Cast", "Ceil", "Coalesce", "Concat", "Count", "Exp", "Floor", "Greatest",
        "If", "Least", "Length", "Ln", "Lower", "Max", "Min", "Mod", "Nullif", "Pow", "Round",
        "RowNumber", "Sqrt", "Substring", "Sum", "Trim", "Upper", "Stddev", "StddevPop",
        "StddevSamp", "Variance", "VariancePop", "Sign", "Left", "Right", "Extract", "DateTrunc",
        "Rank", "DenseRank", "Lag", "Lead", "FirstValue", "LastValue", "Anonymous", "Median",
        "PercentileCont", "Corr", "CovarPop", "CovarSamp", "Log", "Div", "TimestampTrunc",
        "Year", "Month", "Day", "Trunc", "TsOrDsToDate", "StrPosition", "Repeat", "Pad", "MD5",
        "SHA2", "SHA", "Hex", "Unhex", "ToChar", "TimeToStr", "StrToDate", "Sequence",
    }
)


@dataclass(frozen=True)
class DialectProfile:
    """Capabilities of one SQL target."""

    name: str
    """Our name for the target, as used in the spec (``output.dialect``)."""
    sqlglot: str
    """The sqlglot dialect that renders it."""
    functions: frozenset[str] = _PORTABLE_FUNCTIONS
    """sqlglot function classes this target supports."""
    anonymous_functions: frozenset[str] = frozenset()
    """Names of functions sqlglot passes through as ``Anonymous`` that this target really has."""
    transactional_ddl: bool = True
    nullsafe_hash_join: bool = True
    """False when a join on ``IS NOT DISTINCT FROM`` cannot be a hash join (PostgreSQL falls back to a
    nested loop): :func:`adapt` then adds a hashable equality of the values' hashes."""
    create_or_replace_view: bool = True
    rename_table: bool = True
    unquoted_case: str | None = None
    """``upper`` when the target stores names written without quotes in upper case and compares
    quoted names exactly (Snowflake): :func:`stored_case` then writes case-less names that way."""
    max_name_bytes: int | None = None
    """The longest table name in UTF-8 bytes (None: no limit the target documents)."""
    max_name_chars: int | None = None
    """The longest table name in characters (None: no limit the target documents)."""
    case_insensitive_names: bool = False
    """Whether quoted names differing only in ASCII case name the same relation."""
    double_text_is_repr: bool = False
    """Whether casting a DOUBLE to text already writes Python's ``repr`` of it (DuckDB)."""
    temporal_formatters: tuple[tuple[str, str, str], ...] = ()
    """``(kind, function, pattern)`` formatting a date, timestamp or timestamptz as text with the
    target's own function, where sqlglot's ``TimeToStr`` would pick the wrong one (BigQuery)."""
    timestamps_in_session_zone: bool = False
    """Whether a timestamp with time zone is shown in the session's zone and is brought to UTC
    with ``TO_UTC_TIMESTAMP(value, CURRENT_TIMEZONE())`` rather than ``AT TIME ZONE`` (Spark)."""
    sha256_bytes_of_text: tuple[str, ...] = ()
    """The function (and its extra text arguments) that turns text into the UTF-8 bytes SHA-256
    reads, for targets whose SHA-256 does not take text (``("CONVERT_TO", "UTF8")``)."""
    sha256_returns_bytes: bool = False
    """Whether the target's SHA-256 returns bytes, which still need hex encoding."""
    equality_hash: str | None = None
    """A 64-bit hash function of one or more values that gives values comparing equal the same hash
    (DuckDB ``HASH``): lets a large grouping run on integer codes instead of the values."""
    renders_in_place: bool = False
    """Whether sqlglot's generator for the target leaves alone every tree sqlanon builds (DuckDB's
    rewrites touch only ``CONNECT BY`` and ``SEQ``): an engine then renders its statements without
    the defensive copy of the whole tree."""
    scan_order: str | None = None
    """The function numbering rows in scan order, for targets whose ``ROW_NUMBER()`` needs an
    ``ORDER BY`` (Spark: ``MONOTONICALLY_INCREASING_ID``): :func:`adapt` orders by it."""

    def temporal_formatter(self, kind: str) -> tuple[str, str] | None:
        """The target's own ``(function, pattern)`` formatting ``kind`` as text, if it needs one."""
        return next(((f, p) for k, f, p in self.temporal_formatters if k == kind), None)

    def name_too_long(self, name: str) -> str | None:
        """Why ``name`` is longer than the target allows, or None when it fits."""
        size = len(name.encode("utf-8"))
        if self.max_name_bytes is not None and size > self.max_name_bytes:
            return f"{size} bytes, but {self.name} keeps at most {self.max_name_bytes} bytes of a name"
        if self.max_name_chars is not None and len(name) > self.max_name_chars:
            return (f"{len(name)} characters, but {self.name} allows at most {self.max_name_chars} "
                    "characters in a name")
        return None

    def fold(self, name: str) -> str:
        """The form under which the target compares a name as the spec writes it (after
        :func:`stored_case`, so Snowflake's ``adult`` and ``ADULT`` are one relation)."""
        name = stored_case(name, self)
        return name.translate(_ASCII_LOWER) if self.case_insensitive_names else name

    def check_function(self, func_class: str, func_name: str | None = None) -> None:
        if func_class == "Anonymous":
            if func_name and func_name.lower() in self.anonymous_functions:
                return
            raise UnsupportedError(
                f"Function {func_name!r} is not known to be available on {self.name}; "
                f"sqlanon refuses to emit it rather than fail at your database."
            )
        if func_class not in self.functions:
            raise UnsupportedError(
                f"{func_class} is not supported on {self.name} (it would fail or change meaning there)."
            )


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _without(*names: str) -> frozenset[str]:
    return _PORTABLE_FUNCTIONS - set(names)


# Name limits: PostgreSQL truncates names to NAMEDATALEN - 1 = 63 bytes; DuckDB documents none and
# folds ASCII case even in quoted names; Snowflake allows 255 characters (quoted names keep their
# case); BigQuery 1,024 bytes of a table name (case-sensitive by default); Spark and Trino fold case,
# and their tables usually live in a Hive metastore, which keeps 128 characters.
PROFILES: Registry[DialectProfile] = Registry("SQL dialect", sort=False)
"""Our name of a target dialect -> its profile, in the order messages list them."""
for _profile in (
    DialectProfile("duckdb", "duckdb", functions=_PORTABLE_FUNCTIONS | {"ArrayAgg", "Unnest"},
                   anonymous_functions=frozenset({"hash", "md5_number"}),
                   case_insensitive_names=True, double_text_is_repr=True, equality_hash="HASH",
                   renders_in_place=True),
    DialectProfile("postgres", "postgres", functions=_without("Median"),
                   anonymous_functions=frozenset({"convert_to", "hash_record", "row"}),
                   nullsafe_hash_join=False, max_name_bytes=63,
                   sha256_bytes_of_text=("CONVERT_TO", "UTF8")),
    DialectProfile("spark", "spark", transactional_ddl=False, functions=_without("Median"),
                   anonymous_functions=frozenset(
                       {"raise_error", "to_utc_timestamp", "current_timezone",
                        "monotonically_increasing_id"}),
                   max_name_chars=128, case_insensitive_names=True,
                   timestamps_in_session_zone=True, scan_order="MONOTONICALLY_INCREASING_ID"),
    DialectProfile("snowflake", "snowflake", transactional_ddl=True, unquoted_case="upper",
                   max_name_chars=255),
    DialectProfile("bigquery", "bigquery", transactional_ddl=False, rename_table=True,
                   functions=_without("Median"), anonymous_functions=frozenset(
                       {"to_hex", "format_date", "format_datetime", "format_timestamp"}),
                   max_name_bytes=1024, sha256_returns_bytes=True, temporal_formatters=(
                       ("date", "FORMAT_DATE", "%Y-%m-%d"),
                       ("timestamp", "FORMAT_DATETIME", "%Y-%m-%d %H:%M:%E6S"),
                       ("timestamptz", "FORMAT_TIMESTAMP", "%Y-%m-%d %H:%M:%E6S"))),
    DialectProfile("trino", "trino", transactional_ddl=False, functions=_without("Median", "Repeat"),
                   anonymous_functions=frozenset({"to_utf8"}), max_name_chars=128,
                   case_insensitive_names=True, sha256_bytes_of_text=("TO_UTF8",)),
):
    PROFILES.add(_profile.name, _profile)


def sha256_hex(text: exp.Expression, target: DialectProfile) -> exp.Expression:
    """Lower-case hexadecimal SHA-256 of ``text``'s UTF-8 bytes: the same string on every target.

    >>> from sqlanon.sql.nodes import col
    >>> print(sha256_hex(col("x"), profile("postgres")).sql("postgres"))
    ENCODE(SHA256(CONVERT_TO("x", 'UTF8')), 'hex')
    """
    if target.sha256_bytes_of_text:
        function, *extra = target.sha256_bytes_of_text
        text = exp.Anonymous(this=function, expressions=[text, *map(exp.Literal.string, extra)])
    digest = exp.SHA2(this=text, length=exp.Literal.number(256))
    if target.sha256_returns_bytes:
        return exp.Anonymous(this="TO_HEX", expressions=[digest])
    return digest


def fail(message: exp.Expression, target: DialectProfile) -> exp.Expression:
    """A boolean expression that stops the statement with an error containing ``message`` (text).

    Standard SQL has no RAISE in a query; a cast of the message to an integer fails on every target
    whose casts are strict, with the message in the engine's error. Spark's casts return NULL unless
    ANSI mode is on, so it gets its own ``raise_error``. Used only in a branch that is not taken
    while the data satisfies the condition, so the cast is never evaluated then.
    """
    if target.name == "spark":
        return exp.Is(this=exp.Anonymous(this="RAISE_ERROR", expressions=[message]), expression=exp.Null())
    return exp.EQ(this=exp.cast(message, exp.DataType.build("int")), expression=exp.Literal.number(0))


_CASELESS_NAME = re.compile(r"[a-z_][a-z0-9_$]*\Z")
"""A name that would be a valid unquoted identifier and has no upper-case letter."""


def stored_case(name: str, target: DialectProfile) -> str:
    """The name a target stores for ``name`` as the user wrote it (docs/outputs.md, "Names").

    Every name is emitted quoted (sqlglot escapes quotes in it). On Snowflake a quoted name must match
    the stored case exactly, while a table created without quotes is stored in upper case, so a name
    written in lower case (``adult``) is emitted as Snowflake's own tools resolve it: ``"ADULT"``.
    Names with an upper-case letter, or characters that need quotes, are kept exactly as written.
    Elsewhere the name is kept: PostgreSQL compares quoted names exactly (and the user writes what
    the catalog holds), DuckDB, BigQuery, Spark and Trino resolve them without regard to case.

    >>> stored_case("adult", profile("snowflake")), stored_case("Adult", profile("snowflake"))
    ('ADULT', 'Adult')
    >>> stored_case("adult", profile("postgres"))
    'adult'
    """
    if target.unquoted_case == "upper" and _CASELESS_NAME.match(name):
        return name.upper()
    return name


def stored_names(tree: exp.Expression, target: DialectProfile) -> exp.Expression:
    """``tree`` with every identifier in the case the target stores it (:func:`stored_case`)."""
    if target.unquoted_case is None:
        return tree

    def rewrite(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Identifier):
            stored = stored_case(node.name, target)
            if stored != node.name:
                return exp.Identifier(this=stored, quoted=True)
        return node

    return tree.transform(rewrite)


def hashable_null_safe_equality(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    """``a IS NOT DISTINCT FROM b`` with an equality PostgreSQL can hash- or merge-join on.

    ``hash_record(ROW(x))`` hashes with the type's own hash function (so ``1.0`` and ``1.00`` agree,
    NULL hashes to 0); the exact ``NOT (a IS DISTINCT FROM b)`` then filters hash collisions.
    PostgreSQL 14 or later.
    """

    def key(x: exp.Expression) -> exp.Expression:
        return exp.Anonymous(this="HASH_RECORD", expressions=[
            exp.Anonymous(this="ROW", expressions=[x.copy()])])

    return as_expression(exp.and_(exp.EQ(this=key(a), expression=key(b)),
                                  exp.Not(this=exp.Paren(this=exp.NullSafeNEQ(this=a.copy(),
                                                                              expression=b.copy())))))


def adapt(tree: exp.Expression, target: DialectProfile) -> exp.Expression:
    """``tree`` rewritten for the target's declared quirks (a copy; the input is not changed).

    >>> import sqlglot
    >>> print(adapt(sqlglot.parse_one("SELECT ROW_NUMBER() OVER () FROM t"), profile("spark")).sql("spark"))
    SELECT ROW_NUMBER() OVER (ORDER BY MONOTONICALLY_INCREASING_ID() NULLS LAST) FROM t
    """
    if target.nullsafe_hash_join and target.scan_order is None:
        return tree

    def rewrite(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.NullSafeEQ) and not target.nullsafe_hash_join:
            return exp.Paren(this=hashable_null_safe_equality(node.this, node.expression))
        if (target.scan_order and isinstance(node, exp.Window) and isinstance(node.this, exp.RowNumber)
                and not node.args.get("order")):
            scan = exp.Anonymous(this=target.scan_order, expressions=[])
            return exp.Window(this=node.this.copy(), partition_by=[p.copy() for p in node.args.get(
                "partition_by") or []] or None, order=exp.Order(expressions=[exp.Ordered(this=scan)]))
        return node

    return tree.transform(rewrite)


def profile(name: str) -> DialectProfile:
    """The profile of a target, by our name; a clear error with a suggestion otherwise."""
    key = name.lower().strip()
    aliases = {"postgresql": "postgres", "sparksql": "spark", "spark_sql": "spark", "presto": "trino"}
    key = aliases.get(key, key)
    if key not in PROFILES:
        raise UnsupportedError(
            f"Unknown SQL dialect {name!r}; supported: {', '.join(sorted(PROFILES))}."
            + did_you_mean(key, PROFILES)
        )
    return PROFILES.get(key)
