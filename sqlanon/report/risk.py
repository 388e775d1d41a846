"""``sqlanon risk``: the re-identification risk of a spec's table, before and after its transformation.

The original table is analysed with every quasi-identifier at level 0; when the spec fixes levels
(generalization), the release of that node is analysed too: its kept classes only, as the records a
suppression removes are not published. Both analyses read one histogram each from the engine
(:func:`~sqlanon.domain.metrics.risk_analysis.analyze`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlanon.domain.metrics.population_risk import population_model
from sqlanon.domain.metrics.risk_analysis import analyze, class_histogram
from sqlanon.domain.risk.analysis import DEFAULT_THRESHOLD, RiskAnalysis, of_histogram
from sqlanon.domain.risk.population import PopulationModel
from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.methods.dataset import open_dataset
from sqlanon.report.risk_sdc import SdcMeasures, SdcSettings, measure

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine
    from sqlanon.spec.schema import Spec


@dataclass
class RiskReport:
    """The risk analysis of the original table and, when the spec fixes levels, of its release."""

    qis: list[str]
    original: RiskAnalysis
    release: RiskAnalysis | None = None
    levels: dict[str, int] | None = None
    suppressed_rows: int = 0
    sdc_original: SdcMeasures | None = None
    sdc_release: SdcMeasures | None = None
    """sdcMicro's measures (:mod:`sqlanon.report.risk_sdc`) of the original table and the release."""
    outputs: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"quasi_identifiers": list(self.qis), "original": self.original.as_dict()}
        if self.sdc_original is not None:
            out["original"]["sdcmicro"] = self.sdc_original.as_dict()
        if self.release is not None:
            out["release"] = {"levels": dict(self.levels or {}), "suppressed_rows": self.suppressed_rows,
                              **self.release.as_dict()}
            if self.sdc_release is not None:
                out["release"]["sdcmicro"] = self.sdc_release.as_dict()
        out["warnings"] = list(self.warnings)
        return out

    def text(self) -> str:
        lines = ["risk of the original table (every quasi-identifier at level 0):",
                 *("  " + line for line in self.original.lines()),
                 *("  " + line for line in (self.sdc_original.lines() if self.sdc_original else []))]
        if self.release is not None:
            levels = ", ".join(f"{a}={v}" for a, v in (self.levels or {}).items())
            lines += [f"risk of the release ({levels}; {self.suppressed_rows} rows suppressed):",
                      *("  " + line for line in self.release.lines()),
                      *("  " + line for line in (self.sdc_release.lines() if self.sdc_release else []))]
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.text()


def risk_report(spec: Spec, *, engine: Engine | None = None, database: str | None = None,
                population: int | str | None = None, sampling_fraction: float | None = None,
                threshold: float | None = None, release: bool = False,
                sdc: SdcSettings | None = None) -> RiskReport:
    """Analyse the spec's source; the arguments override ``metrics.options`` (population_size,
    sampling_fraction, risk_threshold, sampling_weight). ``release``: analyse the spec's node even
    at level 0. ``sdc``: measure sdcMicro's individual and global risk too (and SUDA2 if it asks)."""
    t = threshold if threshold is not None else spec.metric_options.get("risk_threshold", DEFAULT_THRESHOLD)
    if isinstance(t, bool) or not isinstance(t, int | float) or not 0 <= t <= 1:
        raise SpecError(f"the risk threshold must be a number in [0, 1], got {t!r}", path="risk_threshold")
    qis = list(spec.quasi_identifiers)
    if not qis:
        raise SpecError("the risk analysis needs quasi-identifiers", path="attributes")
    ds = open_dataset(spec, engine, database=database)
    try:
        relation = _records(spec, ds, qis)
        with ds.engine.purpose("risk analysis"):
            histogram = class_histogram(ds.engine, _aliased(relation), qis)
        # N = round(n/f) with n the table's rows, which level 0's classes hold
        model = _population(spec, histogram.records, population, sampling_fraction)
        size = model.size if model else None
        report = RiskReport(qis, of_histogram(histogram, population=size, threshold=float(t)))
        settings = None
        if sdc is not None:
            weight = sdc.weight or spec.metric_options.get("sampling_weight")
            fraction = histogram.records / size if size and histogram.records < size else None
            settings = dataclasses.replace(sdc, weight=weight, dis_fraction=sdc.dis_fraction or fraction)
            if weight and spec.privacy_unit is not None:
                raise UnsupportedError("a sampling weight describes rows; with a privacy unit sdcMicro's "
                                       "measures count persons: leave out the weight")
            with ds.engine.purpose("risk analysis"):
                report.sdc_original = measure(ds.engine, relation, qis, settings)
        if release or any(spec.transformation.levels.values()):
            _add_release(report, spec, ds, size, float(t), settings)
        return report
    finally:
        ds.close()


def _population(spec: Spec, rows: int, population: int | str | None,
                sampling_fraction: float | None) -> PopulationModel | None:
    """The arguments' population model, else the spec's (``metrics.options``), else none."""
    if population is None and sampling_fraction is None:
        return population_model(spec.metric_options, rows)
    try:
        return PopulationModel.of(rows, population=population, sampling_fraction=sampling_fraction)
    except SpecError as e:
        raise SpecError(e.rule, path="population" if population is not None else "sampling_fraction"
                        ) from None


def _add_release(report: RiskReport, spec: Spec, ds: Any, population: int | None, threshold: float,
                 sdc: SdcSettings | None) -> None:
    from sqlanon.compile.persons import Persons, persons_query
    from sqlanon.methods.generalization.method import Generalization, NodeRelease, checked_node

    if not isinstance(spec.method, Generalization):
        raise UnsupportedError(f"the risk of a release is analysed for generalization; method "
                               f"{spec.transformation.method} releases no classes of fixed levels, so only "
                               "the original table is analysed (leave out --search)")

    with checked_node(spec, ds) as checked:
        node = checked.node
        with ds.engine.purpose("risk analysis"):
            report.release = analyze(ds.engine, node, population=population, threshold=threshold)
        report.levels = dict(node.levels)
        report.suppressed_rows = node.suppressed_rows if node.anonymous else 0
        if node.anonymous and sdc is not None:  # the rows as written: sdcMicro measures a released file
            oq = NodeRelease(spec, checked, portable=False).query(ds.engine.dialect)
            unit = spec.privacy_unit.column if spec.privacy_unit is not None else None
            if unit is not None and unit in oq.dropped:
                report.warnings.append(f"sdcMicro's measures of the release count persons, and the release "
                                       f"drops the person column {unit!r}: not measured")
            else:
                released = oq.query if unit is None else persons_query(oq.query, report.qis, [],
                                                                        Persons(unit))
                with ds.engine.purpose("risk analysis"):
                    report.sdc_release = measure(ds.engine, released, report.qis, sdc)
        if not node.anonymous:
            report.warnings.append("the transformation is not anonymous under the spec's privacy models "
                                   "(nothing is suppressed): the release's figures are of every class")


def _records(spec: Spec, ds: Any, qis: list[str]) -> Any:
    """The records whose classes carry the risk: the rows, or with a privacy unit one record per
    person (its quasi-identifiers by the unit's rules; docs/privacy-units.md), so that a class's
    size counts persons."""
    from sqlanon.methods.persons import check_persons, persons_of

    persons = persons_of(spec, ds.column_names, qis)
    if persons is None:
        return ds.relation
    from sqlanon.compile.persons import persons_query

    records = persons_query(ds.relation, qis, [], persons)
    with ds.engine.purpose("privacy unit"):
        check_persons(spec, ds.engine, persons, qis, ds.relation)
    return records


def _aliased(relation: Any) -> Any:
    """A query as a relation a FROM can name (a table stays as it is)."""
    from sqlglot import exp

    from sqlanon.sql.nodes import internal

    if isinstance(relation, exp.Select):
        return exp.alias_(exp.Subquery(this=relation), internal("persons"), quoted=True)
    return relation
