"""The generalization problem of a spec's source: quasi-identifiers in data column order, models,
hierarchies checked against the columns' types."""

from __future__ import annotations

import functools

from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.errors import InternalError
from sqlanon.methods.dataset import Dataset
from sqlanon.methods.generalization.evaluator import Problem
from sqlanon.methods.generalization.value_types import check_value_types
from sqlanon.methods.persons import check_persons, persons_of
from sqlanon.spec.schema import Spec


def qi_hierarchies(spec: Spec, qis: list[str]) -> dict[str, Hierarchy]:
    """The hierarchy of each quasi-identifier of a generalization: the spec refuses one without."""
    hierarchies = {}
    for a in qis:
        h = spec.attributes[a].hierarchy
        if h is None:
            raise InternalError(f"quasi-identifier {a!r} reached the generalization without a hierarchy")
        hierarchies[a] = h
    return hierarchies


def problem_for(spec: Spec, ds: Dataset) -> Problem:
    """The check problem: QIs in data column order (ARX's order), models, hierarchies."""
    order = ds.column_names
    qis = sorted(spec.quasi_identifiers, key=order.index)
    hierarchies = qi_hierarchies(spec, qis)
    check_value_types(ds.engine, ds.relation, dict(ds.columns), hierarchies, spec.path)
    sensitive = sorted(spec.sensitive, key=order.index)
    value_order = {a: list(x.order) for a in sensitive if (x := spec.attributes[a]).order}
    sens_h = {a: x.hierarchy for a in sensitive if (x := spec.attributes[a]).hierarchy}
    types = {a: x.type for a, x in spec.attributes.items() if x.type}
    persons = persons_of(spec, order, qis)
    checked = None if persons is None else functools.partial(check_persons, spec, ds.engine, persons, qis,
                                                              ds.relation)
    return Problem(ds.engine, ds.relation, qis, hierarchies, sensitive, list(spec.privacy), value_order,
                   sens_h, column_types=dict(ds.columns), attribute_types=types, persons=persons,
                   check_persons=checked)
