"""``anonymize --write-spec``: the search's choice handed on to ``apply`` and ``compile`` as a spec file.

Before, the chosen levels had to be copied by hand from the report into a spec.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml

from sqlanon import api
from sqlanon.errors import SpecError
from sqlanon.spec.load import load_spec
from tests.conftest import ADULT_QIS
from tests.outputs.people import canon

ARX_NODE = [0, 3, 0, 2, 2, 1, 1, 2, 0]  # ARX 3.9.2's optimum for k = 5, 2 % suppression


@pytest.fixture()
def project(tmp_path: Path, adult_dir: Path) -> Path:
    """Adult in a DuckDB file under db/, and a spec under project/ whose every path is relative."""
    (tmp_path / "db").mkdir()
    (tmp_path / "project").mkdir()
    con = duckdb.connect(str(tmp_path / "db" / "adult.duckdb"))
    con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, all_varchar=true)",
                [str(adult_dir / "adult.csv")])
    con.close()
    hierarchies = os.path.relpath(adult_dir, tmp_path / "project")
    text = "\n".join([
        "# the user's own comment",
        "source: {table: adult, database: ../db/adult.duckdb}",
        "attributes:",
        *[f"  {q}: {{role: quasi_identifier, hierarchy: {{csv: {hierarchies}/adult_hierarchy_{q}.csv}}}}"
          for q in ADULT_QIS],
        "privacy:",
        "  - k_anonymity: {k: 5}",
        "transformation: {method: generalization, search: optimal, metric: loss, suppression_limit: 0.02}",
        "output: {mode: table, name: adult_anon}",
        "metrics: [loss]",
        ""])
    (tmp_path / "project" / "spec.yml").write_text(text, encoding="utf-8")
    return tmp_path


def sqlanon(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sqlanon", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def table_rows(database: Path, query: str) -> list[tuple]:
    con = duckdb.connect(str(database), read_only=True)
    try:
        return canon(con.execute(query).fetchall())
    finally:
        con.close()


def test_written_spec_reproduces_anonymize_through_apply_and_compile(project):
    elsewhere = project / "elsewhere"
    elsewhere.mkdir()
    out = sqlanon("anonymize", "project/spec.yml", "--write-spec", "elsewhere/chosen.yml", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "chosen spec written to elsewhere/chosen.yml" in out.stdout
    chosen = elsewhere / "chosen.yml"
    text = chosen.read_text(encoding="utf-8")
    assert text.startswith("# Written by `sqlanon anonymize` from project/spec.yml")
    head = text[:text.index("\nsource:")]
    assert all(line.startswith("#") or not line for line in head.splitlines())
    assert "#   strategy: optimal" in head and "#   metric: loss" in head and "#   optimal: true" in head
    data = yaml.safe_load(text)
    assert data["transformation"] == {"method": "generalization",
                                      "levels": dict(zip(ADULT_QIS, ARX_NODE)), "suppression_limit": 0.02}
    assert data["source"]["database"] == "../db/adult.duckdb"  # rebased: elsewhere/ is a sibling

    # apply the written spec from another working directory, into another table
    spec = load_spec(str(chosen))
    spec = dataclasses.replace(spec, output=dataclasses.replace(spec.output, name="adult_again"))
    os.chdir(project / "db")
    try:
        report = api.apply(spec)
    finally:
        os.chdir(project)
    assert report.as_dict()["suppressed_rows"] == 506
    database = project / "db" / "adult.duckdb"
    anonymized = table_rows(database, "SELECT * FROM adult_anon")
    assert len(anonymized) == 30162 - 506
    assert table_rows(database, "SELECT * FROM adult_again") == anonymized

    # compile the written spec without a connection: its script, run on a copy of the database
    # without adult_anon, writes the same table
    out = sqlanon("compile", str(chosen), "--dialect", "duckdb", "--offline", cwd=project / "db")
    assert out.returncode == 0, out.stderr
    assert "CREATE TABLE \"adult_anon\"" in out.stdout
    copy = project / "copy.duckdb"
    shutil.copy(database, copy)
    con = duckdb.connect(str(copy))
    con.execute("DROP TABLE adult_anon")
    con.execute(out.stdout)
    con.close()
    assert table_rows(copy, "SELECT * FROM adult_anon") == anonymized


def test_written_spec_keeps_the_rest_and_rebases_relative_paths(tmp_path, project):
    """Python API: ``write_spec=`` on a dry run; the file loads from anywhere and reads the same files."""
    (project / "deeper" / "still").mkdir(parents=True)
    dest = project / "deeper" / "still" / "chosen.yml"
    report = api.anonymize(str(project / "project" / "spec.yml"), dry_run=True, write_spec=dest)
    assert report.written_spec == str(dest)
    original, written = load_spec(project / "project" / "spec.yml"), load_spec(dest)
    assert Path(written.source.database).resolve() == Path(original.source.database).resolve()
    for q in ADULT_QIS:
        h, g = written.attributes[q].hierarchy, original.attributes[q].hierarchy
        assert Path(h.source).resolve() == Path(g.source).resolve()
        assert h.lookup_rows() == g.lookup_rows()
    assert written.output == original.output and written.privacy == original.privacy
    assert written.transformation.levels == dict(zip(ADULT_QIS, ARX_NODE))
    assert "search" not in written.transformation.options
    assert api.check(written).anonymous


def test_a_bad_write_spec_path_is_refused_before_the_search(project):
    out = sqlanon("anonymize", "project/spec.yml", "--write-spec", "missing/chosen.yml", cwd=project)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "write_spec: the folder of" in out.stderr
    con = duckdb.connect(str(project / "db" / "adult.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'adult_anon'"
                       ).fetchone() == (0,)  # nothing was searched or written
    con.close()


def test_write_spec_does_not_overwrite_the_input_spec(project):
    spec = project / "project" / "spec.yml"
    before = spec.read_text(encoding="utf-8")
    with pytest.raises(SpecError, match="would overwrite the input spec"):
        api.anonymize(str(spec), dry_run=True, write_spec=spec)
    assert spec.read_text(encoding="utf-8") == before


def test_written_spec_keeps_the_output_name_given_on_the_command_line(project):
    """`anonymize --output released --write-spec chosen.yml` wrote the input's `output.name`
    (adult_anon) into chosen.yml, so `apply chosen.yml` wrote another table than anonymize did.
    The name is carried over; --replace is not (it stays a decision of each run)."""
    out = sqlanon("anonymize", "project/spec.yml", "--output", "released", "--replace", "--dry-run",
                  "--write-spec", "chosen.yml", cwd=project)
    assert out.returncode == 0, out.stderr
    written = yaml.safe_load((project / "chosen.yml").read_text(encoding="utf-8"))
    assert written["output"] == {"mode": "table", "name": "released"}
