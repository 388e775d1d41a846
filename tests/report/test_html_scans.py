"""The HTML report reads the released node from the run's own evaluator: a run with the report scans
the source at the node's levels (or builds the raw frequency table) exactly as often as the same run
without it."""

from __future__ import annotations

import logging
import re

import pytest

from sqlanon import api
from sqlanon.spec.load import spec_from_dict
from tests.report import people

SCAN = re.compile(r"CREATE\s+TEMPORARY\s+TABLE\s+\S*?(nodescan|freq)\b", re.IGNORECASE)


@pytest.fixture()
def engine(duck):
    people.create(duck)
    return duck


def _scans(caplog, run) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="sqlanon"):
        run()
    return [m.group(1) for r in caplog.records if (m := SCAN.search(r.getMessage()))]


@pytest.mark.parametrize("verb", ["check", "anonymize"])
def test_the_report_adds_no_scan_of_the_released_node(engine, caplog, verb):
    if verb == "check":
        spec = spec_from_dict(people.generalization(levels={"age": 3, "zip": 1, "sex": 0},
                                                    suppression_limit=1.0))
        plain = _scans(caplog, lambda: api.check(spec, engine=engine))
        reported = _scans(caplog, lambda: api.check(spec, engine=engine, html=True))
    else:
        spec = spec_from_dict(people.generalization(search="exhaustive", suppression_limit=0.05))
        plain = _scans(caplog, lambda: api.anonymize(spec, engine=engine, dry_run=True))
        reported = _scans(caplog, lambda: api.anonymize(spec, engine=engine, dry_run=True, html=True))
    assert plain and reported == plain
