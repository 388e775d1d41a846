"""The compiled SQL templates render what Jinja renders, are up to date, and spare Jinja's import."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from sqlanon.outputs import scripts
from sqlanon.outputs.template_compiler import compile_templates, text
from sqlanon.sql.dialects import profile

PARTS = [
    "SELECT 1",
    '  \n"a;b"\t-- x\n ',  # surrounding whitespace: a statement is stripped after the parts go in
    "SELECT '{{ select }}', '\x01select\x02', '\\0relation', 'é; ü' AS \"{% if %}\"\n",
    "",
]


def test_the_compiled_templates_are_those_of_the_template_files():
    on_disk = (scripts.templates_folder() / scripts.COMPILED).read_text(encoding="utf-8")
    assert on_disk == text(compile_templates()), (
        "sql_templates/ changed: run `python -m sqlanon.outputs.template_compiler`")
    assert scripts.compiled() is not None


@pytest.mark.parametrize("name", sorted(compile_templates()["templates"]))
def test_joining_the_pieces_gives_what_jinja_renders(name):
    entry = compile_templates()["templates"][name]
    template = scripts.environment().get_template(name)
    for flags, values in itertools.product(
            itertools.product([False, True], repeat=len(entry["booleans"])),
            itertools.permutations(PARTS, len(entry["parts"]))):
        parts = {**dict(zip(entry["parts"], values)), **dict(zip(entry["booleans"], flags))}
        statements: list[str] = []
        expected = template.render(**parts, **{scripts.STATEMENTS: statements})
        dialect, _, skeleton = name.removesuffix(".sql.j2").partition("__")
        target = profile("duckdb" if dialect == "default" else dialect)
        got = scripts.render_statements(skeleton, target, **parts)
        assert got == scripts.Script(expected, tuple(statements)), (name, parts)


def test_outdated_or_missing_compiled_templates_leave_the_rendering_to_jinja(monkeypatch):
    parts = {"relation": '"t"', "staging_relation": '"s"', "relation_name": '"t"', "select": "SELECT 1",
             "transaction": True}
    compiled = scripts.render_statements("replace_table", profile("postgres"), **parts)
    monkeypatch.setattr(scripts, "templates_digest", lambda folder: "another")
    scripts.compiled.cache_clear()
    try:
        assert scripts.compiled() is None
        assert scripts.render_statements("replace_table", profile("postgres"), **parts) == compiled
    finally:
        monkeypatch.undo()
        scripts.compiled.cache_clear()
    assert scripts.compiled() is not None


def test_writing_a_table_does_not_import_jinja(tmp_path):
    program = f"""
import sys
from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
engine = DuckDBEngine({str(tmp_path / "t.duckdb")!r})
engine.con.execute("CREATE TABLE t AS SELECT range % 7 AS a, range AS b FROM range(100)")
spec = {{"source": {{"table": "t"}},
         "attributes": {{"a": {{"role": "quasi_identifier", "hierarchy": {{"mask": {{"levels": 1}}}}}},
                        "b": "insensitive"}},
         "privacy": {{"k_anonymity": {{"k": 2}}}},
         "output": {{"mode": "table", "name": "t_anon"}}}}
api.anonymize(spec, engine=engine)
api.anonymize({{**spec, "output": {{"mode": "table", "name": "t_anon", "replace": True}}}}, engine=engine)
print(engine.con.execute("SELECT count(*) FROM t_anon").fetchone()[0], "jinja2" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["100", "False"]
