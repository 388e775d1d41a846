"""The command line's own surface: --version, override flags, exit codes in --help, JSON errors,
plain human output, the search's progress line and where the demo writes its files."""

from __future__ import annotations

import io
import json
from pathlib import Path

import duckdb
import pytest

import sqlanon
from sqlanon.cli.main import EXIT_BUG, build_parser
from sqlanon.methods.generalization.search.limits import TerminalProgress
from sqlanon.report.text import format_report, plain


def test_version_flag_prints_the_installed_version(cli):
    with pytest.raises(SystemExit) as info:
        cli("--version")
    assert info.value.code == 0


def test_version_text(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--version"])
    assert capsys.readouterr().out.strip() == f"sqlanon {sqlanon.__version__}"


def test_help_documents_every_exit_code():
    text = build_parser().format_help()
    for code in ("0", "1", "2", "130", str(EXIT_BUG)):
        assert f"  {code} " in text, code


def test_output_flag_overrides_output_name(workdir: Path, cli):
    r = cli("apply", "spec.yml", "--output", "released")
    assert r.code == 0, r.err
    con = duckdb.connect(str(workdir / "med.duckdb"))
    names = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    con.close()
    assert "released" in names and "medical_anon" not in names


def test_replace_flag_overrides_output_replace(workdir: Path, cli):
    assert cli("apply", "spec.yml").code == 0
    r = cli("apply", "spec.yml")
    assert r.code == 2 and "already exists" in r.err
    assert cli("apply", "spec.yml", "--replace").code == 0
    assert cli("anonymize", "spec.yml", "--replace", "--output", "medical_anon").code == 0


def test_compile_output_flag_names_the_table_in_the_sql(workdir: Path, cli):
    r = cli("compile", "spec.yml", "--output", "released")
    assert r.code == 0, r.err
    assert '"released"' in r.out
    r = cli("compile", "spec.yml", "-o", "out.sql")
    assert r.code == 0 and (workdir / "out.sql").read_text().count("medical_anon") > 0


def test_compile_output_flag_given_a_file_name_says_to_use_sql_file(workdir: Path, cli):
    """``--output`` once meant the SQL file of compile; a .sql value is refused rather than taken as
    a table name."""
    r = cli("compile", "spec.yml", "--output", "anonymize.sql")
    assert r.code == 2 and "--sql-file" in r.err and not (workdir / "anonymize.sql").exists()


def test_json_errors_are_json_on_stdout(workdir: Path, cli):
    (workdir / "bad.yml").write_text((workdir / "spec.yml").read_text()
                                     .replace("k_anonymity", "k_anonimity"))
    r = cli("check", "bad.yml", "--json")
    assert r.code == 2 and r.err == ""
    error = json.loads(r.out)
    assert error["kind"] == "spec" and error["file"] == "bad.yml"
    assert error["path"].startswith("privacy[0]") and "k_anonymity" in error["error"]
    assert error["exit_code"] == 2


def test_json_engine_errors_are_json(workdir: Path, cli):
    r = cli("check", "spec.yml", "--json", "--database", "nothere.duckdb")
    assert r.code == 2
    error = json.loads(r.out)
    assert error["kind"] == "database" and "nothere.duckdb" in error["error"]


def test_human_report_has_no_python_reprs(workdir: Path, cli):
    """The report printed ``output warnings: ['columns ...']`` and noise bounds as ``(0.0, 120.0)``."""
    r = cli("apply", "spec.yml")
    assert r.code == 0, r.err
    assert "['" not in r.out and "[]" not in r.out and "{'" not in r.out
    assert "output warnings: columns not declared" in r.out


def test_plain_renders_lists_dicts_and_bounds():
    assert plain(["a", "b"]) == "a, b"
    assert plain({"age": 3, "zip": 0}) == "age=3, zip=0"
    assert plain({"age": (0.0, 120.0)}) == "age=[0, 120]"
    assert plain([{"age": 1}, {"age": 2}]) == "age=1; age=2"
    assert plain(0.1 + 0.2) == "0.3"


def test_noise_report_has_no_tuple_reprs():
    text = format_report({"transformation": {"method": "noise", "mechanism": "laplace",
                                             "attributes": ["age"],
                                             "parameters": {"bounds": {"age": (0.0, 120.0)}}},
                          "rows": 3, "guarantee": None, "metrics": {},
                          "outputs": {"dropped_columns": ["a", "b"]}})
    assert "(0.0" not in text and "['a'" not in text
    assert "age=[0, 120]" in text and "a, b" in text


def test_progress_line_shows_checked_of_total_best_node_and_time():
    """The progress line showed ``best [1, 0, 2]`` and no lattice size."""
    out = io.StringIO()
    bar = TerminalProgress("loss", attributes=["age", "zip"], total=2400, after=0.0, stream=out,
                           enabled=True)
    bar(3, None, None)
    bar(25, (2, 1), 0.25)
    bar.close()
    text = out.getvalue()
    assert "3 of 2,400 nodes checked" in text and "best: none yet" in text
    assert "25 of 2,400 nodes checked" in text
    assert "best: age=2, zip=1 (loss 0.25)" in text
    assert " s" in text and "[2, 1]" not in text and "(2, 1)" not in text


def test_demo_writes_its_spec_beside_its_database_not_in_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli):
    """``sqlanon demo`` left sqlanon_demo.spec.yml in the working directory."""
    monkeypatch.chdir(tmp_path)
    r = cli("demo", "--rows", "10000")
    assert r.code == 0, r.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sqlanon_demo"]
    spec = tmp_path / "sqlanon_demo" / "people.spec.yml"
    assert spec.exists() and (tmp_path / "sqlanon_demo" / "people.duckdb").exists()
    assert f"spec written to {Path('sqlanon_demo') / 'people.spec.yml'}" in r.out
    assert cli("check", str(spec)).code == 0  # the written spec runs from anywhere
