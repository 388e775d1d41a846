"""Bad input gives one line naming the file, key path, attribute or value, and exit code 2: never a
traceback, never a SQL dump. An unexpected exception is reported as a bug, with its own exit code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sqlanon.cli.main import EXIT_BUG, main
from tests.cli.conftest import SPEC, one_line_error


@pytest.mark.parametrize("verb", ["check", "apply", "compile", "anonymize"])
def test_empty_source_table_is_a_one_line_error_naming_the_table(workdir: Path, cli, verb: str):
    """An empty source crashed check/apply/compile (TypeError on NoneType) and anonymize
    (ZeroDivisionError)."""
    (workdir / "empty.yml").write_text(SPEC.replace("table: medical,", "table: empty,"))
    line = one_line_error(cli(verb, "empty.yml"))
    assert "'empty'" in line and "no rows" in line
    assert "source.table" in line


def test_database_locked_by_another_process_names_the_path(workdir: Path, cli):
    """A DuckDB file locked by another process gave a traceback (IOException: Could not set lock)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys; c = duckdb.connect('med.duckdb'); "
         "print('held', flush=True); sys.stdin.read()"],
        cwd=workdir, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        line = one_line_error(cli("check", "spec.yml"))
    finally:
        holder.communicate("")
    assert "med.duckdb" in line and "locked by another process" in line
    assert "PID" not in line


def test_directory_as_database_names_the_path(workdir: Path, cli):
    """A directory as ``database`` gave a traceback (IOException: Is a directory)."""
    (workdir / "adir").mkdir()
    line = one_line_error(cli("check", "spec.yml", "--database", "adir"))
    assert "'adir'" in line and "directory" in line


def test_unsupported_url_scheme_names_the_scheme(workdir: Path, cli):
    line = one_line_error(cli("check", "spec.yml", "--database", "mysql://h/db"))
    assert "'mysql'" in line


@pytest.mark.parametrize("key", ["source.database", "source.connection"])
def test_unsupported_url_scheme_in_the_spec_names_the_scheme_and_key(workdir: Path, cli, key: str):
    """``database: mysql://h/db`` in a spec was read as a relative file path ('mysql:/h/db'), and the
    error said that DuckDB file does not exist instead of naming the unsupported scheme."""
    (workdir / "my.yml").write_text(SPEC.replace("database: med.duckdb",
                                                 f"{key.split('.')[1]}: 'mysql://h/db'"))
    line = one_line_error(cli("check", "my.yml"))
    assert "'mysql'" in line and key in line and "does not exist" not in line


def test_mistyped_database_path_is_an_error_and_creates_no_file(workdir: Path, cli):
    """``--database nothere.duckdb`` silently created an empty file, and the error that followed
    ("no table named 'medical'") did not name the path."""
    line = one_line_error(cli("check", "spec.yml", "--database", "nothere.duckdb"))
    assert "nothere.duckdb" in line and "does not exist" in line
    assert not (workdir / "nothere.duckdb").exists()
    assert not (workdir / "nothere.duckdb.wal").exists()


def test_missing_database_in_spec_names_the_path_for_dp_query(workdir: Path, cli):
    """``sqlanon query`` reads a database too: a missing one is not created."""
    line = one_line_error(cli("query", "--database", "nothere.duckdb", "--table", "medical",
                              "--count", "--epsilon", "0.1", "--budget-epsilon", "1"))
    assert "nothere.duckdb" in line
    assert not (workdir / "nothere.duckdb").exists()


@pytest.mark.parametrize("option,value", [
    ("--epsilon", "1e300"), ("--budget-epsilon", "1e300"), ("--epsilon", "nan"),
    ("--epsilon", "inf"), ("--epsilon", "-1"), ("--budget-epsilon", "-inf"), ("--epsilon", "x")])
def test_dp_query_amounts_out_of_range_are_one_line_errors(workdir: Path, cli, option: str,
                                                           value: str):
    """``--epsilon 1e300`` and ``--budget-epsilon 1e300`` crashed with decimal.InvalidOperation."""
    args = {"--epsilon": "0.1", "--budget-epsilon": "1"}
    args[option] = value
    line = one_line_error(cli("query", "--database", "med.duckdb", "--table", "medical", "--count",
                              *[f"{k}={v}" for k, v in args.items()]))
    assert option in line or option.lstrip("-").replace("-", "_") in line
    assert value in line


def test_compile_of_a_noise_spec_is_a_one_line_error(workdir: Path, cli):
    """``compile`` of a noise spec whose quasi-identifier has no hierarchy crashed with
    AttributeError ('NoneType' object has no attribute 'height')."""
    (workdir / "noise.yml").write_text("""\
source: {table: medical, database: med.duckdb}
attributes:
  age: {role: quasi_identifier}
  zip: {role: quasi_identifier}
transformation:
  method: noise
  mechanism: laplace
  attributes: [age]
  epsilon: 0.5
  sensitivity: {age: 1}
  bounds: {age: [0, 120]}
output: {mode: table, name: o}
""")
    line = one_line_error(cli("compile", "noise.yml"))
    assert "noise.yml" in line and "transformation.method" in line


@pytest.mark.parametrize("hierarchy,kind", [("{intervals: {widths: [10, 50]}}", "intervals"),
                                            ("{date: [month, year]}", "date")])
def test_hierarchy_needing_numbers_or_dates_on_a_text_column_names_the_attribute(
        workdir: Path, cli, hierarchy: str, kind: str):
    """An intervals or date hierarchy on a text column dumped a multi-line conversion error (with
    the statement and a data value)."""
    spec = SPEC.replace("  condition: {role: sensitive}",
                        f"  condition: {{role: sensitive}}\n  name: {{role: quasi_identifier, "
                        f"hierarchy: {hierarchy}}}").replace("zip: 5}", "zip: 5, name: 1}")
    (workdir / "text.yml").write_text(spec)
    for verb in ("check", "anonymize"):
        line = one_line_error(cli(verb, "text.yml", "--dry-run") if verb == "anonymize"
                              else cli(verb, "text.yml"))
        assert "text.yml: attributes.name.hierarchy" in line and kind in line
        assert "Alice" not in line


def test_non_csv_file_read_as_csv_names_the_file(workdir: Path, cli):
    """A binary file read as CSV dumped DuckDB's multi-line sniffer advice and the statement."""
    (workdir / "data.csv").write_bytes(b"\x00\x01\x02binary\xff\xfe\n\x00\x00" + bytes(range(256)) * 20)
    (workdir / "csv.yml").write_text("""\
source: {file: data.csv}
attributes:
  age: {role: quasi_identifier, type: integer, hierarchy: {intervals: {widths: [10, 50]}}}
privacy:
  - k_anonymity: {k: 2}
transformation: {levels: {age: 1}}
output: {mode: sql, path: out.sql}
""")
    line = one_line_error(cli("check", "csv.yml"))
    assert "data.csv" in line and "source.file" in line
    assert "READ_CSV" not in line.upper()


def test_unexpected_exception_is_one_line_naming_a_bug_with_its_own_exit_code(
        workdir: Path, cli, monkeypatch: pytest.MonkeyPatch):
    """An exception sqlanon did not raise on purpose is a bug: one line naming its type, exit code
    EXIT_BUG (not 2, so tests can tell bugs from errors), the traceback only with --debug."""
    import sqlanon.api

    def broken(*args, **kwargs):
        return 1 / 0

    monkeypatch.setattr(sqlanon.api, "check", broken)
    r = cli("check", "spec.yml")
    assert r.code == EXIT_BUG and EXIT_BUG not in (0, 1, 2, 130)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and "ZeroDivisionError" in lines[0] and "bug" in lines[0]
    assert "--debug" in lines[0]
    r = cli("--debug", "check", "spec.yml")
    assert r.code == EXIT_BUG and "Traceback" in r.err and "ZeroDivisionError" in r.err


def test_usage_errors_are_one_line_with_exit_code_2(workdir: Path, cli):
    r = cli("query", "--database", "med.duckdb")
    line = one_line_error(r)
    assert "--table" in line


def test_main_without_arguments_prints_usage_not_a_traceback(capsys):
    assert main([]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_warnings_are_one_line_without_source_lines(workdir: Path, cli):
    """A hierarchy warning printed Python's two-line form (file:line: SqlanonWarning, then the
    warn() call's source line)."""
    (workdir / "zip.csv").write_text("".join(f"2305{i};230**;*\n" for i in range(10))
                                     + "23050;230**;*\n")
    (workdir / "dup.yml").write_text(SPEC.replace("{mask: {levels: 5}}", "zip.csv")
                                     .replace("zip: 5}", "zip: 1}"))
    r = cli("check", "dup.yml")
    assert r.code in (0, 1), r.err
    warning_lines = [line for line in r.err.splitlines() if line]
    assert warning_lines and all(line.startswith("sqlanon: warning: ") for line in warning_lines)
    assert "listed twice" in r.err and "warnings.warn" not in r.err


def test_a_reader_closing_standard_output_ends_the_command_quietly(workdir: Path):
    """``sqlanon ... | head``: once the reader has gone, no traceback and no error line, exit 141."""
    import os

    from sqlanon.cli.main import EXIT_BROKEN_PIPE

    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        proc = subprocess.run([sys.executable, "-m", "sqlanon", "check", "spec.yml", "--json"],
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=300, cwd=workdir)
    finally:
        os.close(write)
    assert proc.returncode == EXIT_BROKEN_PIPE, proc.stderr
    assert proc.stderr == ""
