"""The specification: YAML file or Python objects."""

from __future__ import annotations

from sqlanon.spec.load import load_spec, spec_from_dict
from sqlanon.spec.schema import Attribute, Output, Source, Spec, Transformation

__all__ = ["Attribute", "Output", "Source", "Spec", "Transformation", "load_spec", "spec_from_dict"]
