"""A small DuckDB file and a way to run the command line in-process, as a user would from a shell."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from sqlanon.cli.main import main

SALT = "S3cretSalt!-7d41e09b"
SPEC = f"""\
source: {{table: medical, database: med.duckdb}}
attributes:
  age: {{role: quasi_identifier, type: integer, hierarchy: {{intervals: {{widths: [10, 50]}}}}}}
  zip: {{role: quasi_identifier, hierarchy: {{mask: {{levels: 5}}}}}}
  condition: {{role: sensitive}}
  pid: {{role: identifier, action: pseudonymize, salt: {SALT}}}
privacy:
  - k_anonymity: {{k: 2}}
transformation: {{levels: {{age: 2, zip: 5}}, suppression_limit: 0.1}}
output: {{mode: table, name: medical_anon}}
"""


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture()
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``med.duckdb`` with ``medical`` (30 rows, a name column holding 'Alice') and ``empty``."""
    con = duckdb.connect(str(tmp_path / "med.duckdb"))
    con.execute("CREATE TABLE medical (age INTEGER, zip VARCHAR, condition VARCHAR, name VARCHAR, "
                "pid INTEGER)")
    con.executemany("INSERT INTO medical VALUES (?, ?, ?, ?, ?)",
                    [(21 + i, f"2305{i % 10}", f"c{i % 3}", "Alice", i) for i in range(30)])
    con.execute("CREATE TABLE empty AS SELECT * FROM medical LIMIT 0")
    con.close()
    (tmp_path / "spec.yml").write_text(SPEC)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture()
def cli(capsys: pytest.CaptureFixture[str]):
    """Run ``sqlanon ARGS`` in this process; a traceback escaping ``main`` fails the test."""

    def run(*args: str) -> Result:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def one_line_error(r: Result) -> str:
    """The single line a user sees on standard error for exit code 2."""
    assert r.code == 2, (r.code, r.out, r.err)
    assert "Traceback" not in r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert lines[0].startswith("sqlanon: error: "), lines[0]
    return lines[0]
