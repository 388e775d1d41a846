"""The paths every generalization command takes stay clear of pandas: pyarrow imports it when it
converts Python values (over half a second of start-up), and DuckDB and numpy do not need it. And a
command imports what it runs, not the other verbs' modules or estimators it never calls."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


@pytest.fixture(scope="module")
def fresh_process() -> list[str]:
    """What one new interpreter imports: after factorizing text and inserting rows (whether pandas
    and pyarrow are loaded), then after parsing anonymize's arguments and loading the metric and
    model registries (the modules of other verbs and the risk estimators it holds). One interpreter
    for both checks: each start costs a third of a second."""
    code = textwrap.dedent("""
        import sys
        from sqlanon.domain.factorize import factorize
        from sqlanon.engines.duckdb import DuckDBEngine

        codes, values = factorize(["b", None, "a", "b", None])
        assert codes.tolist() == [0, 1, 2, 0, 1] and values.tolist() == ["b", None, "a"]
        engine = DuckDBEngine()
        engine.con.execute("CREATE TABLE t (leaf VARCHAR, code INTEGER)")
        engine.insert_rows("t", [("x", 1), (None, 2), ("ü", -3)])
        assert engine.con.execute("SELECT * FROM t").fetchall() == [("x", 1), (None, 2), ("ü", -3)]
        print("pandas" in sys.modules, "pyarrow" in sys.modules)

        from sqlanon.cli.main import build_parser
        from sqlanon.domain.metrics import METRICS
        from sqlanon.domain.models.base import MODELS

        build_parser().parse_args(["anonymize", "spec.yaml", "--json"])
        METRICS.names(), MODELS.names()
        print(sorted(m for m in sys.modules if m.startswith(("sqlanon.cli.", "sqlanon.domain.risk"))))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def test_factorizing_text_and_inserting_rows_do_not_import_pandas(fresh_process):
    assert fresh_process[0].split() == ["False", "False"]


def test_anonymize_loads_no_other_verb_and_no_risk_estimators(fresh_process):
    """The command line adds only the running verb's arguments, and the metric and model registries
    (which import every module of their packages) leave the risk estimators to the runs that use them."""
    assert fresh_process[1] == "['sqlanon.cli.main', 'sqlanon.cli.report', 'sqlanon.cli.verbs']"


def test_other_values_still_go_through_arrow():
    """Floats and mixed types keep Arrow's conversion (and its types) when rows are inserted."""
    from sqlanon.engines.duckdb import DuckDBEngine

    with DuckDBEngine() as engine:
        engine.con.execute("CREATE TABLE t (a VARCHAR, b DOUBLE)")
        engine.insert_rows("t", [("x", 1.5), (None, None), ("y", 2.0)])
        assert engine.con.execute("SELECT * FROM t").fetchall() == [("x", 1.5), (None, None), ("y", 2.0)]

