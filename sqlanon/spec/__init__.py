"""The specification: a YAML file (:func:`load_spec`) or Python objects (:class:`Spec`)."""

from __future__ import annotations

from sqlanon.spec.attribute import Attribute
from sqlanon.spec.hierarchies import hierarchy_from_dict
from sqlanon.spec.load import load_spec, spec_from_dict
from sqlanon.spec.output import Output
from sqlanon.spec.schema import Spec
from sqlanon.spec.source import Source
from sqlanon.spec.transformation import Transformation

__all__ = ["Attribute", "Output", "Source", "Spec", "Transformation", "hierarchy_from_dict", "load_spec",
           "spec_from_dict"]
