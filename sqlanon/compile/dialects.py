"""What each SQL target can do, declared in one place.

sqlglot renders a function it does not know unchanged, so a dialect that lacks it would fail only at
the user's database. Every function node in a tree is therefore checked against the target's allow-list
before rendering; anything else is a :class:`~sqlanon.errors.UnsupportedError` at compile time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlanon.errors import UnsupportedError, did_you_mean

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
    create_or_replace_view: bool = True
    rename_table: bool = True

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


def _without(*names: str) -> frozenset[str]:
    return _PORTABLE_FUNCTIONS - set(names)


PROFILES: dict[str, DialectProfile] = {
    p.name: p
    for p in (
        DialectProfile("duckdb", "duckdb", anonymous_functions=frozenset({"hash", "md5_number"})),
        DialectProfile("postgres", "postgres", functions=_without("Median")),
        DialectProfile("spark", "spark", transactional_ddl=False, functions=_without("Median")),
        DialectProfile("snowflake", "snowflake", transactional_ddl=True),
        DialectProfile("bigquery", "bigquery", transactional_ddl=False, rename_table=True,
                       functions=_without("Median")),
        DialectProfile("trino", "trino", transactional_ddl=False, functions=_without("Median")),
    )
}


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
    return PROFILES[key]
