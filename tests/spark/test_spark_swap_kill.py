"""``output.mode: in_place`` on Spark survives SIGKILL: the command line, a Spark Connect client,
is killed between the swap's two renames (the table's name holds nothing) and after them (the
commit point), while the server (the tests' Spark, serving Connect on a free port) keeps the
catalog. After each kill the original and the complete result are readable under the swap's names;
the next run restores the original and anonymizes it, or completes the swap. (A swap interrupted
before its renames leaves the original untouched: the conformance suite recovers that state.)"""

from __future__ import annotations

import json

import pytest

from sqlanon import api
from sqlanon.engines.swap import PAUSE, PREFIX, recover
from sqlanon.spec import spec_from_dict
from tests.outputs.people import KEPT, ROWS, canon, load_people, people_spec, sorted_rows
from tests.ports import free_port
from tests.processes import kill_command_when_marked

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def server(spark_session):
    """A Spark Connect address served by the tests' own Spark: its clients share the catalog."""
    port = free_port()
    context = spark_session._jsc.sc()
    context.conf().set("spark.connect.grpc.binding.port", str(port))
    service = spark_session._jvm.org.apache.spark.sql.connect.service.SparkConnectService
    service.start(context)
    yield f"sc://127.0.0.1:{port}"
    stop = service.stop
    stop(getattr(service, "stop$default$1")(), getattr(service, "stop$default$2")())


@pytest.fixture()
def people(spark, tmp_path):
    """The people table in a fresh database, and the in-place spec for it."""
    load_people(spark)
    spec = people_spec(output={"mode": "in_place"})
    spec["source"]["schema"] = spark.session.catalog.currentDatabase()
    path = tmp_path / "spec.yml"
    path.write_text(json.dumps(spec), encoding="utf-8")  # JSON is YAML
    return spark, spec["source"]["schema"], path


def swap_tables(spark) -> dict[str, str]:
    """``new``/``old`` -> the name of the swap's staged result and moved original."""
    return {name.rsplit("_", 1)[1]: name for name in spark.tables_named(PREFIX)}


@pytest.mark.parametrize("step", ["moved", "swapped"])
def test_after_a_kill_the_original_or_the_result_is_readable_and_recovered(server, people, tmp_path,
                                                                          step):
    spark, schema, spec = people
    marker = tmp_path / "reached"
    kill_command_when_marked(["-m", "sqlanon", "apply", str(spec), "--database", server], marker,
                             env={PAUSE: f"{step}={marker}"}, timeout=180)
    assert marker.read_text() == step
    swap = swap_tables(spark)
    if step == "moved":  # between the renames: both, under the swap's names
        assert not spark.relation_exists("people")
        assert sorted_rows(spark, swap["old"]) == canon(ROWS)
        assert sorted_rows(spark, swap["new"]) == canon(KEPT)
    else:  # renamed into place: the result, and the original's copy not dropped yet
        assert sorted_rows(spark, "people") == canon(KEPT)
        assert sorted_rows(spark, swap["old"]) == canon(ROWS) and "new" not in swap

    if step == "moved":  # the next run restores the original, then anonymizes it
        report = api.apply(spec_from_dict(json.loads(spec.read_text())), engine=spark)
        assert report.outputs["rows"] == len(KEPT)
        [done] = report.outputs["swaps_recovered"]
        assert done == (f"undid the interrupted replacement of '{schema}.people': restored the "
                        f"original of '{schema}.people' from '{swap['old']}'; its unfinished result "
                        f"'{swap['new']}' was dropped")
    else:  # what every run does first when it opens the table
        [done] = recover(spark, "people", schema=schema)
        assert done.startswith(f"completed the interrupted replacement of '{schema}.people'")
    assert sorted_rows(spark, "people") == canon(KEPT)
    assert swap_tables(spark) == {} and spark.marks("people") == {}
