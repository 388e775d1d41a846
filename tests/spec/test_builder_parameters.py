"""Builder parameters of extreme size are one-line errors naming the key, found by the spec fuzzer.

``intervals: {widths: [10, 1e300]}`` crashed with ``decimal.InvalidOperation`` (DivisionImpossible).
"""

from __future__ import annotations

import re

import pytest

from sqlanon.errors import HierarchyError
from sqlanon.spec import load_spec


@pytest.mark.parametrize("body,key", [
    ("{widths: [10, 1.0e+300]}", r"widths\[1\]"),
    ("{widths: [1.0e+20]}", r"widths\[0\]"),
    ("{widths: [10], origin: -1.0e+300}", "origin"),
    ("{widths: [10], top: 1.0e+16}", "top"),
])
def test_huge_interval_parameters_are_refused(tmp_path, body, key):
    p = tmp_path / "spec.yml"
    p.write_text("source: {table: people}\n"
                 f"attributes:\n  age: {{role: quasi_identifier, hierarchy: {{intervals: {body}}}}}\n")
    with pytest.raises(HierarchyError, match="^" + re.escape(str(p)) + r": attributes\.age\.hierarchy\."
                       rf"intervals\.{key}: must be at most 1e\+15 in absolute value"):
        load_spec(p)


def test_unreadable_hierarchy_file_name(tmp_path):
    """A hierarchy file name longer than the file system allows crashed with OSError (Errno 36)."""
    p = tmp_path / "spec.yml"
    name = "x" * 300 + ".csv"
    p.write_text("source: {table: people}\nattributes:\n"
                 f"  zip: {{role: quasi_identifier, hierarchy: {name}}}\n")
    message = r"attributes\.zip\.hierarchy\.csv: .*: cannot read the hierarchy file \(File name too long\)$"
    with pytest.raises(HierarchyError, match=message):
        load_spec(p)


def test_unreadable_spec_file_name(tmp_path):
    from sqlanon.errors import SpecError

    with pytest.raises(SpecError, match=r"cannot read the spec file \(File name too long\)$"):
        load_spec(tmp_path / ("y" * 300 + ".yml"))
