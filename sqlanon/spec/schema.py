"""The specification as Python objects, validated on construction: :class:`Spec` and its sections
(:mod:`~sqlanon.spec.source`, :mod:`~sqlanon.spec.attribute`, :mod:`~sqlanon.spec.transformation`,
:mod:`~sqlanon.spec.output`).

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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlanon.domain.models.base import PrivacyModel
from sqlanon.errors import SpecError, did_you_mean
from sqlanon.spec.attribute import Attribute
from sqlanon.spec.methods import METHODS
from sqlanon.spec.output import Output
from sqlanon.spec.privacy_unit import PrivacyUnit
from sqlanon.spec.publishing import Publishing
from sqlanon.spec.source import Source
from sqlanon.spec.tables import EventTable, check_tables, event_attribute
from sqlanon.spec.transformation import Transformation
from sqlanon.spec.values import check_metric_name

if TYPE_CHECKING:
    from sqlanon.methods.base import Method


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
    publishing: Publishing | None = None
    """How successive releases relate (:mod:`~sqlanon.spec.publishing`); None: each on its own."""
    privacy_unit: PrivacyUnit | None = None
    """The column identifying a person (``privacy_unit``): models count persons, not rows."""
    tables: tuple[EventTable, ...] = ()
    """Event tables joined to the person table (``tables``), released with it."""

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
        if self.publishing is not None:
            if not isinstance(self.publishing, Publishing):
                raise SpecError(f"must be a Publishing, got {type(self.publishing).__name__}",
                                path="publishing")
            self.publishing.check_attributes(attrs)
        method.check_spec(self)
        if self.privacy_unit is not None:
            self.privacy_unit.check_attributes(self.attributes)
            named = self.publishing.key if self.publishing is not None else None
            if named is not None and named != self.privacy_unit.column:
                raise SpecError(f"names {named!r} but the privacy unit is {self.privacy_unit.column!r}: a "
                                "person is one column (leave publishing.key out)", path="publishing.key")
            method.check_privacy_unit(self)
            if self.privacy_unit.one_class and (not method.fits_persons_to_classes or self.tables):
                where = f"method {method.name}" + (" with several tables" if self.tables else "")
                raise SpecError("rule one_class suppresses the persons whose rows fall in several "
                                f"classes, which {where} does not do: use constant, min, max or first",
                                path="privacy_unit")
        object.__setattr__(self, "tables", tuple(self.tables))
        if self.tables and not method.releases_several_tables:
            raise SpecError(f"method {method.name} releases one table; several tables are released by "
                            "method generalization", path="tables")
        check_tables(self.tables, attrs, self.privacy_unit is not None, self.output.name,
                     self.source.relation_name)
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
            a = self.attributes.get(name) or event_attribute(self.tables, name)
            if a is None:
                raise SpecError(f"unknown attribute {name!r}." + did_you_mean(str(name), self.attributes),
                                path=path)
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
