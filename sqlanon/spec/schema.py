"""The specification as Python objects, validated on construction.

:mod:`sqlanon.spec.load` builds them from YAML; they can also be built directly::

    Spec(Source(table="adult"),
         [Attribute("age", "quasi_identifier", hierarchy=IntervalHierarchy((5, 10))),
          Attribute("disease", "sensitive")],
         privacy=(KAnonymity(5),),
         transformation=Transformation(levels={"age": 1}))

Every rule raises :class:`~sqlanon.errors.SpecError` whose path is the YAML key path of the value
(``attributes.age.role``), so both forms report mistakes the same way.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.domain.models.base import PrivacyModel
from sqlanon.spec.methods import METHODS

if TYPE_CHECKING:
    from sqlanon.methods.base import Method

ROLES = ("quasi_identifier", "sensitive", "identifier", "insensitive")
TYPES = ("string", "integer", "decimal", "date", "ordinal")
IDENTIFIER_ACTIONS = ("drop", "hash", "pseudonymize", "mask")
OUTPUT_MODES = ("table", "view", "in_place", "sql", "none")
SUPPRESSED_MODES = ("remove", "mask")
FILE_FORMATS = ("csv", "parquet")
HASHING_ACTIONS = ("hash", "pseudonymize")
SALT_MIN_LENGTH = 16
SALT_MIN_DISTINCT = 6
_SUFFIX_FORMATS = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet"}


def choose(value: Any, choices: Iterable[str], path: str, what: str = "value") -> str:
    """``value`` if it is one of ``choices``, else a SpecError with a did-you-mean."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise SpecError(f"unknown {what} {value!r}; use one of {', '.join(choices)}."
                        + did_you_mean(str(value), choices), path=path)
    return value


def number(value: Any, path: str, *, low: float | None = None, high: float | None = None) -> float:
    """``value`` as a float if it is a finite number within ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SpecError(f"must be a number, got {value!r}", path=path)
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"
        raise SpecError(f"must be in {bounds}, got {value!r}", path=path)
    return float(value)


def name(value: Any, path: str, what: str = "a name") -> str:
    """``value`` if it is non-empty text, else a SpecError showing what was found."""
    if not isinstance(value, str) or not value:
        raise SpecError(f"must be {what}, got {value!r}", path=path)
    return value


def check_salt(salt: Any, path: str) -> None:
    """A salt that resists guessing: at least 16 characters, at least 6 of them different.

    Whoever knows the salt reverses a hashed column by hashing candidate values (names, e-mail
    addresses, phone numbers), so the salt is the secret key of the hash: short or repetitive
    salts are guessed by brute force (16 characters from even a 26-letter alphabet give ~75 bits).
    """
    if not isinstance(salt, str):
        raise SpecError(f"must be text, got {salt!r}", path=path)
    why = ("whoever guesses the salt can hash candidate values and reverse the column; e.g. "
           "python -c 'import secrets; print(secrets.token_urlsafe(24))'")
    if len(salt) < SALT_MIN_LENGTH:
        raise SpecError(f"too short ({len(salt)} characters): use at least {SALT_MIN_LENGTH} random "
                        f"characters, since {why}", path=path)
    distinct = len(set(salt))
    if distinct < SALT_MIN_DISTINCT:
        raise SpecError(f"too little variety ({distinct} distinct character{'s' * (distinct != 1)}): use "
                        f"at least {SALT_MIN_DISTINCT} different characters, since {why}", path=path)


def check_metric_name(value: Any, path: str) -> str:
    """``value`` if it names a registered metric."""
    from sqlanon.domain.metrics import METRICS, load_all

    if not isinstance(value, str):
        raise SpecError(f"must be a metric name, got {value!r}", path=path)
    load_all()
    if value not in METRICS:
        raise SpecError(f"unknown metric {value!r}; known: {', '.join(sorted(METRICS))}."
                        + did_you_mean(value, METRICS), path=path)
    return value


@dataclass(frozen=True)
class Source:
    """Where the data is: a table of the connected database, or a CSV/Parquet file."""

    table: str | None = None
    file: str | None = None
    format: str | None = None
    """``csv`` or ``parquet``; guessed from the file's suffix when not given."""
    database: str | None = None
    """A DuckDB file path or a ``postgresql://`` URL; None = in-memory DuckDB (files only)."""
    schema: str | None = None
    delimiter: str | None = None
    """CSV only: the cell separator (default: detected)."""
    header: bool = True
    """CSV only: whether the first line names the columns."""
    all_text: bool = False
    """CSV only: read every column as text (keeps leading zeros of codes, as ARX reads data)."""

    def __post_init__(self) -> None:
        if bool(self.table) == bool(self.file):
            raise SpecError("give exactly one of `table` (a table of the database) or `file` (a CSV "
                            "or Parquet file)", path="source")
        for key in ("table", "file", "schema", "database"):
            if getattr(self, key) is not None and not isinstance(getattr(self, key), str):
                raise SpecError(f"must be text, got {getattr(self, key)!r}", path=f"source.{key}")
        if self.schema is not None:
            name(self.schema, "source.schema", "a schema name")
        for key in ("header", "all_text"):
            if not isinstance(getattr(self, key), bool):
                raise SpecError(f"must be true or false, got {getattr(self, key)!r}",
                                path=f"source.{key}")
        if self.file is None:
            for key in ("format", "delimiter"):
                if getattr(self, key) is not None:
                    raise SpecError("applies to file sources only", path=f"source.{key}")
            for key, default in (("header", True), ("all_text", False)):
                if getattr(self, key) != default:
                    raise SpecError("applies to file sources only", path=f"source.{key}")
            return
        fmt = self.format
        if fmt is None:
            fmt = _SUFFIX_FORMATS.get(Path(self.file).suffix.lower())
            if fmt is None:
                raise SpecError(f"cannot tell the format of {self.file!r} from its suffix; set "
                                "`format: csv` or `format: parquet`", path="source.format")
        object.__setattr__(self, "format", choose(fmt, FILE_FORMATS, "source.format", "format"))
        if self.delimiter is not None:
            if self.format != "csv":
                raise SpecError("applies to CSV files only", path="source.delimiter")
            if not isinstance(self.delimiter, str) or len(self.delimiter) != 1:
                raise SpecError(f"must be one character, got {self.delimiter!r}",
                                path="source.delimiter")
        if self.format != "csv" and (not self.header or self.all_text):
            raise SpecError("header and all_text apply to CSV files only", path="source")

    @property
    def relation_name(self) -> str:
        """The table name a file source is loaded under (its file name without suffix)."""
        if self.table:
            return self.table
        return Path(self.file or "data").stem


@dataclass(frozen=True)
class Attribute:
    """One column of the data and what it is to the privacy models."""

    name: str
    role: str
    """quasi_identifier, sensitive, identifier or insensitive."""
    type: str | None = None
    hierarchy: Hierarchy | None = None
    """Required for quasi-identifiers; optional for sensitive attributes (hierarchical distance)."""
    weight: float = 1.0
    """The attribute's weight in the quality metrics (ARX's attribute weights)."""
    action: str = "drop"
    """What happens to an identifier: drop, hash (salted), pseudonymize, mask."""
    salt: str | None = None
    order: tuple[Any, ...] | None = None
    """For ordinal attributes: the values from lowest to highest (ordered EMD ranks)."""

    def __post_init__(self) -> None:
        path = f"attributes.{self.name}"
        if not isinstance(self.name, str) or not self.name:
            raise SpecError(f"an attribute name must be non-empty text, got {self.name!r}",
                            path="attributes")
        if self.name.startswith("__sa_"):
            raise SpecError("names starting with __sa_ are reserved for sqlanon's own columns",
                            path=path)
        choose(self.role, ROLES, f"{path}.role", "role")
        if self.type is not None:
            choose(self.type, TYPES, f"{path}.type", "type")
        if self.hierarchy is not None and not isinstance(self.hierarchy, Hierarchy):
            raise SpecError(f"must be a Hierarchy, got {type(self.hierarchy).__name__}",
                            path=f"{path}.hierarchy")
        object.__setattr__(self, "weight", number(self.weight, f"{path}.weight", low=0))
        choose(self.action, IDENTIFIER_ACTIONS, f"{path}.action", "action")
        if self.action != "drop" and self.role != "identifier":
            raise SpecError(f"only identifiers take an action; {self.name!r} is a {self.role}",
                            path=f"{path}.action")
        self._check_salt(path)
        if self.order is not None:
            self._check_order(path)

    def _check_salt(self, path: str) -> None:
        if self.action in HASHING_ACTIONS:
            if self.salt is None:
                raise SpecError(
                    f"action {self.action!r} needs a salt: an unsalted hash of names or e-mail addresses "
                    "is reversed by hashing a list of candidates. Set a long random secret as `salt`, "
                    "or use action drop or mask", path=f"{path}.salt")
            check_salt(self.salt, f"{path}.salt")
        elif self.salt is not None:
            raise SpecError(f"applies to action hash or pseudonymize, not {self.action}",
                            path=f"{path}.salt")

    def _check_order(self, path: str) -> None:
        if isinstance(self.order, (str, bytes, Mapping)) or not isinstance(self.order, Iterable):
            raise SpecError("must be a list of the values, lowest first", path=f"{path}.order")
        order = tuple(self.order)
        labels = [str(v) for v in order]
        if not order or len(set(labels)) != len(labels):
            dup = next((v for v in labels if labels.count(v) > 1), None)
            raise SpecError("must be a non-empty list of distinct values, lowest first"
                            + (f"; {dup!r} is listed twice" if dup else ""), path=f"{path}.order")
        if self.type not in (None, "ordinal"):
            raise SpecError(f"an order applies to ordinal attributes; {self.name!r} has type "
                            f"{self.type}", path=f"{path}.order")
        object.__setattr__(self, "order", order)


@dataclass(frozen=True)
class Transformation:
    """How the data is transformed: generalization levels per quasi-identifier and suppression."""

    method: str = "generalization"
    levels: dict[str, int] = field(default_factory=dict)
    """quasi-identifier -> generalization level (0 = original; absent = 0)."""
    suppression_limit: float = 0.0
    """The share of rows that may be suppressed, in [0, 1]."""
    suppressed: str = "remove"
    """Rows of suppressed classes: ``remove`` them, or ``mask`` every quasi-identifier with ``*``."""
    options: dict[str, Any] = field(default_factory=dict)
    """Method-specific settings (search strategy, metric, ...) kept for the methods that read them."""

    def __post_init__(self) -> None:
        choose(self.method, METHODS.names(), "transformation.method", "method")
        if not isinstance(self.levels, Mapping):
            raise SpecError("must map quasi-identifiers to levels", path="transformation.levels")
        for name, level in self.levels.items():
            if isinstance(level, bool) or not isinstance(level, int) or level < 0:
                raise SpecError(f"a level must be an integer >= 0, got {level!r}",
                                path=f"transformation.levels.{name}")
        object.__setattr__(self, "levels", dict(self.levels))
        object.__setattr__(self, "suppression_limit", number(
            self.suppression_limit, "transformation.suppression_limit", low=0, high=1))
        choose(self.suppressed, SUPPRESSED_MODES, "transformation.suppressed", "mode")
        if not isinstance(self.options, Mapping):
            raise SpecError("must be a mapping of setting names to values", path="transformation")
        object.__setattr__(self, "options", dict(self.options))
        METHODS.get(self.method).check_transformation(self)


@dataclass(frozen=True)
class Output:
    """Where the result goes and in which SQL dialect."""

    mode: str = "table"
    name: str | None = None
    dialect: str = "duckdb"
    path: str | None = None
    database: str | None = None
    """Where outputs of a file source land (a DuckDB file); never the input's folder by default."""
    replace: bool = False
    """Overwrite an existing output table or view (modes ``table`` and ``view`` refuse otherwise)."""

    def __post_init__(self) -> None:
        from sqlanon.sql.dialects import PROFILES, profile
        from sqlanon.errors import UnsupportedError

        choose(self.mode, OUTPUT_MODES, "output.mode", "mode")
        try:
            object.__setattr__(self, "dialect", profile(str(self.dialect)).name)
        except UnsupportedError:
            raise SpecError(f"unknown dialect {self.dialect!r}; use one of {', '.join(PROFILES)}."
                            + did_you_mean(str(self.dialect), PROFILES), path="output.dialect") from None
        for name in ("name", "path", "database"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise SpecError(f"must be text, got {getattr(self, name)!r}", path=f"output.{name}")
        if self.name is not None and not self.name.strip():
            raise SpecError(f"must not be empty, got {self.name!r}; leave it out for the default "
                            "<source>_anon", path="output.name")
        if not isinstance(self.replace, bool):
            raise SpecError(f"must be true or false, got {self.replace!r}", path="output.replace")
        if self.path is not None and self.mode != "sql":
            raise SpecError(f"applies to mode sql (the file the SQL is written to), not {self.mode}",
                            path="output.path")
        if self.name is not None and self.mode == "in_place":
            import warnings

            warnings.warn(f"output.name: mode in_place replaces the source table itself, so the name "
                          f"{self.name!r} is not used: leave output.name out, or use mode table to "
                          "write a new table of that name", stacklevel=2)


@dataclass(frozen=True)
class Spec:
    """A whole specification. ``attributes`` may be given as a list of :class:`Attribute`."""

    source: Source
    attributes: dict[str, Attribute]
    privacy: tuple[PrivacyModel, ...] = ()
    transformation: Transformation = field(default_factory=Transformation)
    output: Output = field(default_factory=Output)
    metrics: tuple[str, ...] = ()
    path: str | None = None
    """The spec file, for messages."""
    metric_options: dict[str, Any] = field(default_factory=dict)
    """Settings some metrics read (``target``, ``population``, ...), from ``metrics.options``."""

    def __post_init__(self) -> None:
        try:
            self._validate()
        except SpecError as e:
            if e.source is not None or self.path is None:
                raise
            raise type(e)(e.rule, path=e.path, source=self.path) from None

    def _validate(self) -> None:
        for name, cls in (("source", Source), ("transformation", Transformation), ("output", Output)):
            if not isinstance(getattr(self, name), cls):
                raise SpecError(f"must be a {cls.__name__}, got {type(getattr(self, name)).__name__}",
                                path=name)
        attrs = self.attributes
        if not isinstance(attrs, Mapping):
            attrs = {a.name if isinstance(a, Attribute) else str(a): a for a in attrs}
        for key, a in attrs.items():
            if not isinstance(a, Attribute):
                raise SpecError(f"must be an Attribute, got {type(a).__name__}", path=f"attributes.{key}")
            if key != a.name:
                raise SpecError(f"is keyed {key!r} but named {a.name!r}", path=f"attributes.{key}")
        object.__setattr__(self, "attributes", dict(attrs))
        if not attrs:
            raise SpecError("declare at least one attribute", path="attributes")
        qis = [a for a in attrs.values() if a.role == "quasi_identifier"]
        method = self.method
        if not qis and not method.perturbs_any_attribute:
            raise SpecError("declare at least one quasi_identifier", path="attributes")
        if method.needs_hierarchies:
            for a in qis:
                if a.hierarchy is None:
                    raise SpecError("a quasi-identifier needs a hierarchy (csv, intervals, date, mask, "
                                    "ordered or map)", path=f"attributes.{a.name}.hierarchy")
        if qis and all(a.weight == 0 for a in qis):
            raise SpecError("at least one quasi-identifier needs a weight > 0 (weights are scaled "
                            "by the largest)", path=f"attributes.{qis[0].name}.weight")
        object.__setattr__(self, "privacy", tuple(self.privacy))
        object.__setattr__(self, "metrics", tuple(self.metrics))
        if not isinstance(self.metric_options, Mapping):
            raise SpecError("must be a mapping of option names to values", path="metrics.options")
        object.__setattr__(self, "metric_options", dict(self.metric_options))
        method.check_spec(self)
        self._check_levels()
        self._check_privacy()
        self._check_metrics()

    @property
    def method(self) -> Method:
        """The transformation method (:data:`~sqlanon.spec.methods.METHODS`): its traits and settings."""
        return METHODS.get(self.transformation.method)

    @property
    def settings(self) -> Any:
        """The method's validated settings, parsed from the ``transformation`` section."""
        return self.method.settings(self)

    @property
    def microaggregation(self) -> Any:
        """The validated ``method: microaggregation`` settings
        (:class:`~sqlanon.methods.microaggregation.settings.MicroaggregationSettings`)."""
        return self.settings

    def _check_levels(self) -> None:
        for name, level in self.transformation.levels.items():
            path = f"transformation.levels.{name}"
            if name not in self.attributes:
                raise SpecError(f"unknown attribute {name!r}." + did_you_mean(str(name), self.attributes),
                                path=path)
            a = self.attributes[name]
            if a.role != "quasi_identifier":
                raise SpecError(f"{name!r} is not a quasi_identifier (role {a.role})", path=path)
            assert a.hierarchy is not None
            if level > a.hierarchy.height:
                raise SpecError(f"level {level} is above the hierarchy's height {a.hierarchy.height}",
                                path=path)

    def _check_privacy(self) -> None:
        for i, model in enumerate(self.privacy):
            if not isinstance(model, PrivacyModel):
                raise SpecError(f"must be a privacy model, got {type(model).__name__}",
                                path=f"privacy[{i}]")
            path = f"privacy[{i}].{getattr(model, 'name', type(model).__name__)}"
            for a in model.sensitive_attributes():
                if a not in self.attributes:
                    raise SpecError(f"unknown attribute {a!r}." + did_you_mean(a, self.attributes),
                                    path=f"{path}.attribute")
                if self.attributes[a].role != "sensitive":
                    raise SpecError(f"{a!r} has role {self.attributes[a].role}; the model needs a "
                                    "sensitive attribute", path=f"{path}.attribute")
            model.validate_against(self.attributes, path)

    def _check_metrics(self) -> None:
        from sqlanon.spec.metric_options import check_metric_options

        check_metric_options(self.metric_options, self.attributes)
        for i, m in enumerate(self.metrics):
            check_metric_name(m, f"metrics[{i}]")

    def by_role(self, role: str) -> list[str]:
        """The attributes with ``role``, in declaration order."""
        return [a.name for a in self.attributes.values() if a.role == role]

    @property
    def quasi_identifiers(self) -> list[str]:
        return self.by_role("quasi_identifier")

    @property
    def sensitive(self) -> list[str]:
        return self.by_role("sensitive")
