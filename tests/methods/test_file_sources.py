"""A file source is only read: outputs go where the user says, and the raw rows are never stored."""

from __future__ import annotations

import duckdb
import pytest

from sqlanon import api
from sqlanon.errors import SpecError

SPEC = """\
source: {{file: people.csv, delimiter: ';'}}
attributes:
  sex: {{role: quasi_identifier, hierarchy: {{csv: sex.csv}}}}
  age: {{role: insensitive}}
privacy:
  - k_anonymity: {{k: 2}}
output: {{mode: {mode}{extra}}}
"""


@pytest.fixture()
def folder(tmp_path):
    (tmp_path / "people.csv").write_text("sex;age\nF;30\nF;31\nM;30\nM;35\n", encoding="utf-8")
    (tmp_path / "sex.csv").write_text("F;*\nM;*\n", encoding="utf-8")
    return tmp_path


def test_table_output_of_a_file_source_needs_a_database(folder):
    (folder / "spec.yml").write_text(SPEC.format(mode="table", extra=""), encoding="utf-8")
    before = sorted(p.name for p in folder.iterdir())
    with pytest.raises(SpecError, match=r"spec.yml: output.database: the source is a file"):
        api.apply(str(folder / "spec.yml"))
    assert sorted(p.name for p in folder.iterdir()) == before


def test_view_over_a_file_source_is_refused(folder):
    (folder / "spec.yml").write_text(SPEC.format(mode="view", extra=", database: out.duckdb"),
                                     encoding="utf-8")
    with pytest.raises(SpecError, match=r"output.mode: a view over a file source"):
        api.apply(str(folder / "spec.yml"))


def test_output_database_receives_only_the_anonymized_table(folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("out") / "out.duckdb"
    (folder / "spec.yml").write_text(SPEC.format(mode="table", extra=f", database: '{out}'"),
                                     encoding="utf-8")
    api.apply(str(folder / "spec.yml"))
    con = duckdb.connect(str(out))
    assert [r[0] for r in con.execute("SHOW TABLES").fetchall()] == ["people_anon"]
    assert sorted(con.execute("SELECT sex, age FROM people_anon").fetchall()) == [
        ("F", 30), ("F", 31), ("M", 30), ("M", 35)]
