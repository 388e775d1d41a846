"""Paths in a spec are relative to the spec file, whatever the working directory."""

from __future__ import annotations

import os

from sqlanon import api


def test_research_subset_file_is_relative_to_the_spec(tmp_path, monkeypatch):
    (tmp_path / "people.csv").write_text("sex;age\nF;30\nF;31\nM;30\nM;35\n", encoding="utf-8")
    (tmp_path / "subset.csv").write_text("sex;age\nF;30\nM;35\n", encoding="utf-8")
    (tmp_path / "sex.csv").write_text("F;*\nM;*\n", encoding="utf-8")
    (tmp_path / "spec.yml").write_text(
        "source: {file: people.csv, delimiter: ';'}\n"
        "attributes:\n"
        "  sex: {role: quasi_identifier, hierarchy: {csv: sex.csv}}\n"
        "  age: {role: insensitive}\n"
        "privacy:\n"
        "  - delta_presence: {subset: subset.csv, delta_min: 0.5, delta_max: 0.5}\n", encoding="utf-8")
    monkeypatch.chdir(os.path.dirname(tmp_path))
    report = api.check(str(tmp_path / "spec.yml"), metrics=()).as_dict()
    # each sex class holds 2 rows of which exactly 1 is in the subset: share 1/2 in [0.5, 0.5]
    assert report["privacy"]["delta_presence"]["holds"] is True
    assert report["classes"] == 2
