"""The figures of a perturbative release (microaggregation, noise): each transformed attribute's
distribution and the attributes' correlations, before (the source) and after (the written output, or
the released rows held in a temporary table when nothing is written),
and for a DP release charged to a ledger, the ledger's spends over time."""

from __future__ import annotations

import uuid
from typing import Any

from sqlglot import exp

from sqlanon.methods.dataset import Dataset
from sqlanon.report.html import sql
from sqlanon.spec.schema import Spec
from sqlanon.sql.nodes import internal, table

ATTRIBUTES_SHOWN = 8
NUMERIC = ("INT", "DOUBLE", "FLOAT", "DECIMAL", "NUMERIC", "REAL", "BIGINT", "SMALLINT", "TINYINT",
           "HUGEINT", "LONG", "SHORT", "BYTE")


def candidates(spec: Spec) -> list[str]:
    """The attributes the transformation names, else the quasi-identifiers (microaggregation's default)."""
    named = spec.transformation.options.get("attributes")
    names = [str(a) for a in named] if isinstance(named, (list, tuple)) else list(spec.quasi_identifiers)
    return names[:ATTRIBUTES_SHOWN]


def numeric_attributes(ds: Dataset, attributes: list[str]) -> list[str]:
    types = {name: str(t).upper() for name, t in ds.columns}
    return [a for a in attributes if any(t in types.get(a, "") for t in NUMERIC)]


def describe(ds: Dataset, relation: exp.Expression, attributes: list[str],
             bounds: dict[str, tuple[float, float]] | None = None) -> dict[str, Any]:
    """Histograms (on ``bounds``, else the relation's own ranges), value counts of the other
    attributes, and the numeric attributes' correlations."""
    numeric = numeric_attributes(ds, attributes)
    with ds.engine.purpose("report figures"):
        ranges = bounds if bounds is not None else sql.ranges(ds.engine, relation, numeric)
        return {
            "ranges": ranges,
            "histograms": {a: sql.histogram(ds.engine, relation, a, *ranges[a])
                           for a in numeric if a in ranges},
            "categories": {a: sql.value_counts(ds.engine, relation, a, limit=15)
                           for a in attributes if a not in numeric},
            "correlations": sql.correlations(ds.engine, relation, numeric),
        }


def before(spec: Spec, ds: Dataset) -> dict[str, Any]:
    attributes = [a for a in candidates(spec) if a in ds.column_names]
    return {"numeric_before": describe(ds, ds.relation, attributes)}


def unwritten(spec: Spec, ds: Dataset, released: exp.Expression, found: dict[str, Any]) -> dict[str, Any]:
    """The figures after a release that is not written (``check``, ``report``): its rows
    (``released``, a SELECT) are stored in a temporary table for the few aggregates, on the source's
    bins, and dropped."""
    attributes = [a for a in candidates(spec) if a in ds.column_names]
    name = internal(f"report_{uuid.uuid4().hex[:12]}")
    with ds.engine.purpose("report figures: the released rows, not written"):
        ds.engine.create_table_as(name, released, temporary=True)
    try:
        return {"numeric_after": describe(ds, table(name), attributes,
                                          bounds=(found.get("numeric_before") or {}).get("ranges"))}
    finally:
        ds.engine.drop(name)


def after(spec: Spec, ds: Dataset, report: Any, found: dict[str, Any]) -> dict[str, Any]:
    """The written output's figures (nothing to read for printed SQL or a dry run), on the source's
    bins; the ledger of a DP release."""
    figures: dict[str, Any] = {}
    data = report.as_dict()
    attributes = list((data.get("transformation") or {}).get("attributes") or candidates(spec))
    relation_name = (data.get("outputs") or {}).get("relation")
    before_ = found.get("numeric_before") or {}
    if relation_name:
        relation = table(relation_name, ds.schema)
        figures["numeric_after"] = describe(ds, relation, [a for a in attributes if a in ds.column_names],
                                            bounds=before_.get("ranges"))
    ledger = ((data.get("guarantee") or {}).get("ledger") or {})
    if ledger.get("dataset") and spec.transformation.options.get("ledger") is None:
        from sqlanon.methods.dp.budget import PrivacyLedger

        with ds.engine.purpose("report figures"):
            books = PrivacyLedger(ds.engine)
            entries = books.entries(ledger["dataset"])
        total = (ledger.get("total") or {}).get("epsilon")
        cumulative = 0.0
        rows = []
        for i, e in enumerate(entries, start=1):
            cumulative += float(e["epsilon_charged"])
            rows.append({"step": i, "epsilon": float(e["epsilon_charged"]), "cumulative": cumulative,
                         "description": str(e.get("description") or ""), "spent_at": str(e["spent_at"]),
                         "total": total})
        figures["ledger"] = {"dataset": ledger["dataset"], "total": total, "entries": rows}
    return figures
