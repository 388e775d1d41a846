"""How a Spark Connect address (``sc://HOST:PORT``) is read and refused, without a server or a JVM."""

from __future__ import annotations

import pytest

from sqlanon.engines.connect import connect
from sqlanon.errors import EngineError
from sqlanon.spec.targets import target_kind
from tests.engines.test_spark_connect import check_without
from tests.ports import free_port


def test_a_connect_address_is_a_spark_database():
    assert target_kind("sc://127.0.0.1:15002") == "spark"
    assert target_kind("sc://spark.example.com:443/;use_ssl=true;token=abc") == "spark"


def test_no_server_at_the_address_is_a_one_line_error_naming_it():
    url = f"sc://127.0.0.1:{free_port()}"  # a port nothing listens on
    with pytest.raises(EngineError, match="no Spark Connect server answers at") as e:
        connect(url)
    assert url in str(e.value) and "\n" not in str(e.value)


def test_without_the_connect_client_the_error_names_the_extra(tmp_path):
    run = check_without(["grpc"], "sc://127.0.0.1:15002", tmp_path)
    assert run.returncode != 0
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert "Spark Connect" in lines[0] and "pip install 'sqlanon[spark]'" in lines[0], run.stderr


def test_a_connect_address_in_the_spec_is_kept_as_written():
    from sqlanon.spec import spec_from_dict

    d = {"source": {"table": "people", "database": "sc://127.0.0.1:15002"},
         "attributes": {"age": {"role": "quasi_identifier", "hierarchy": {"intervals": {"widths": [10]}}}},
         "privacy": [{"k_anonymity": {"k": 2}}]}
    assert spec_from_dict(d).source.database == "sc://127.0.0.1:15002"
