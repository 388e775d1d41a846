"""The transformation method interface: what every method (generalization, microaggregation, noise;
Mondrian, local suppression, Anatomy, person-level next) provides, and what it asks of the layers
around it.

A method is one module that registers one :class:`Method` with
:data:`~sqlanon.spec.methods.METHODS` under the name a spec gives as ``transformation.method``:

* its **traits** (class attributes): whether quasi-identifiers need hierarchies, whether it perturbs
  any attribute (no quasi-identifier needed), the output modes it can have and why it refuses the
  others, whether a source without rows is an error;
* its **settings**, parsed from the spec's ``transformation`` section when the spec is built
  (:meth:`Method.check_transformation`, :meth:`Method.check_spec`, :meth:`Method.settings`);
* the verbs it has nothing to do for, refused with the reason (:meth:`Method.refuse`);
* how it **runs** a :class:`Plan` on an opened source (:meth:`Method.run`), returning its result
  (the report's method section); a method that releases rows hands them to the writer as a
  :class:`Release` through the :class:`Sink` it is given, so methods never import the writer.

:func:`~sqlanon.methods.runner.run_plan` is the one runner: it opens the source, lets the sink check
the output before anything is scanned, and calls the method.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from sqlanon.errors import SpecError
from sqlanon.spec.output import OUTPUT_MODES

if TYPE_CHECKING:
    from sqlglot import exp

    from sqlanon.compile.released import OutputQuery
    from sqlanon.methods.dataset import Dataset
    from sqlanon.spec.schema import Spec, Transformation
    from sqlanon.sql.dialects import DialectProfile


VERBS = ("check", "apply", "compile", "anonymize")


@dataclass(frozen=True)
class Plan:
    """What one verb computes for one spec: the method, the verb and its options.

    ``writes`` says whether the verb writes (or, for ``compile``, prints) the output; ``dialect`` is
    the target of ``compile``; ``options`` are the verb's own settings (``metrics``, ``dry_run``,
    ``progress``, ``strategy``, ...).
    """

    method: Method
    verb: str
    spec: Spec
    writes: bool = False
    dialect: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def option(self, name: str, default: Any = None) -> Any:
        return self.options.get(name, default)

    @property
    def requires(self) -> tuple[tuple[str, ...], ...]:
        """The engine capabilities the plan needs (:class:`~sqlanon.engines.capabilities.Capabilities`
        field names; any one of each group will do), checked by the runner before the source is read."""
        return self.method.requires


class Release(abc.ABC):
    """A method's released rows, ready for the writer: one SELECT per target dialect.

    ``prepare`` computes what the SELECT reads (a microaggregation's group table), once, before
    ``query``; ``keep`` names a table to keep after the run (an output that reads it later).
    """

    suppression: ClassVar[bool] = True
    """Whether the output summary says what happened to suppressed rows (``output.suppressed``)."""

    def prepare(self, ds: Dataset, *, keep: str | None = None) -> None:  # noqa: B027 -- optional hook
        """Compute what the released rows read; nothing by default."""

    @abc.abstractmethod
    def query(self, target: DialectProfile) -> OutputQuery:
        """The released rows as one SELECT for ``target``."""

    def close(self, ds: Dataset) -> None:  # noqa: B027 -- optional hook
        """Drop what :meth:`prepare` created for this run only; nothing by default."""


class TableWriter(Protocol):
    """Creates a table from a query and moves a staging table into place (the writer's skeletons)."""

    def create(self, name: str, query: exp.Expression) -> None: ...

    def move_into_place(self, staging: str, name: str, *, replace: bool) -> None: ...

    @property
    def swaps_in_steps(self) -> bool:
        """Whether a replaced table is swapped in by :meth:`replace_in_steps` (no transaction)."""

    def replace_in_steps(self, name: str, query: exp.Expression) -> None: ...


class Sink(Protocol):
    """The output side of a run, given to :meth:`Method.run` by the caller (the writer behind it)."""

    def check(self, ds: Dataset) -> Any:
        """Check the output against the opened source before anything is scanned."""

    def write(self, ds: Dataset, release: Release) -> dict[str, Any]:
        """Write the release as the spec's output mode; what was written, for the report."""

    def compile(self, ds: Dataset, release: Release) -> str:
        """The SQL of the spec's output mode for the plan's dialect."""

    def destination(self) -> tuple[str, bool]:
        """The checked output relation and whether it exists (and is replaced)."""

    def tables(self, ds: Dataset) -> TableWriter:
        """A writer of tables in the source's schema, for rows drawn outside SQL."""

    def before_write(self, result: Any) -> None:
        """Called with the method's result once it is measured, before the output is written."""

    def beside(self, name: str) -> Sink:
        """A sink for a second relation released beside the output (Anatomy's sensitive table),
        named ``name``: the output's mode (a table when the output replaces the source in place),
        schema and dialect, checked by its own :meth:`check`."""


class Method(abc.ABC):
    """One transformation method. Subclasses set the traits and implement :meth:`run`."""

    name: ClassVar[str]
    needs_hierarchies: ClassVar[bool] = True
    """Every quasi-identifier needs a hierarchy (generalization); else hierarchies are optional."""
    perturbs_any_attribute: ClassVar[bool] = False
    """The method works on any attribute, so a spec without quasi-identifiers is valid."""
    releases_several_tables: ClassVar[bool] = False
    """Its release of persons can be applied to event tables (the spec's ``tables``)."""
    fits_persons_to_classes: ClassVar[bool] = False
    """It honours the privacy unit's rule ``one_class`` (it generalizes classes persons must fit)."""
    output_modes: ClassVar[tuple[str, ...]] = OUTPUT_MODES
    """The output modes the method can have."""
    refused_modes: ClassVar[str] = ""
    """Why the other modes are refused (``{mode}`` stands for the mode asked for)."""
    requires_rows: ClassVar[bool] = True
    """A source without rows is refused: there is nothing to release."""
    compiles_offline: ClassVar[bool] = False
    """``compile`` can build its SQL from the spec alone, without reading the data."""
    requires: ClassVar[tuple[tuple[str, ...], ...]] = ()
    """Engine capabilities the method cannot run without, in groups of which any one will do; an
    engine lacking a whole group is refused, naming the method and the capabilities, before anything
    is read."""

    # -- settings, when the spec is built -----------------------------------------------------------
    def check_transformation(self, transformation: Transformation) -> None:
        """Check the ``transformation`` keys when the :class:`Transformation` is built (by default
        there is nothing to check)."""
        return None

    def check_spec(self, spec: Spec) -> None:
        """Check the method's settings against the whole spec (attributes, privacy models); by
        default there is nothing to check."""
        return None

    def check_privacy_unit(self, spec: Spec) -> None:
        """Refuse a ``privacy_unit`` the method cannot honour (by default: every method that does not
        override this, so that no method counts rows where the spec asks for persons)."""
        raise SpecError(f"method {self.name} counts rows and cannot treat a person's rows together yet; "
                        "use method generalization or microaggregation with a privacy unit, or remove "
                        "privacy_unit", path="privacy_unit", source=spec.path)

    def transformation_keys(self) -> tuple[str, ...]:
        """The ``transformation`` keys the method reads besides ``method`` (for messages that say
        which method a misplaced key belongs to)."""
        return ()

    def settings(self, spec: Spec) -> Any:
        """The method's parsed settings."""
        return None

    def keeps_table(self, spec: Spec) -> bool:
        """Whether the spec's output reads a table the run creates and keeps (its name is then
        ``<output name>__groups``)."""
        return False

    def kept_table_reader(self, spec: Spec) -> str:
        """What reads the kept table, for messages (``algorithm mdav``, ``a local recoding``)."""
        return f"method {self.name}"

    # -- running ------------------------------------------------------------------------------------
    def check_output_mode(self, spec: Spec) -> None:
        """Refuse an output mode the method cannot have, with the method's reason."""
        if spec.output.mode not in self.output_modes:
            raise refusal(spec, self.refused_modes.format(mode=spec.output.mode), "output.mode")

    def refuse(self, plan: Plan) -> None:
        """Refuse, before anything is opened, a verb or output the method cannot do (with the reason);
        by default the method refuses nothing."""
        return None

    @abc.abstractmethod
    def run(self, plan: Plan, ds: Dataset, sink: Sink) -> Any:
        """Run the plan on the opened source; the method's result (its report)."""


KEPT_TABLE_SUFFIX = "__groups"
"""A view or printed SQL that reads a table the run keeps reads ``<output name>__groups``."""


def register(cls: type[Method]) -> type[Method]:
    """Class decorator: register one instance of the method under its ``name``, with its traits."""
    from sqlanon.spec.methods import METHODS

    METHODS.add(cls.name, cls(), needs_hierarchies=cls.needs_hierarchies,
                perturbs_any_attribute=cls.perturbs_any_attribute, output_modes=cls.output_modes,
                refused_modes=cls.refused_modes, requires_rows=cls.requires_rows,
                compiles_offline=cls.compiles_offline)
    return cls


def refusal(spec: Spec, rule: str, path: str = "transformation.method") -> SpecError:
    """A spec error at ``path``, naming the spec file."""
    return SpecError(rule, path=path, source=spec.path)
