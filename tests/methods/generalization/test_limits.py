"""Time limits and progress: an interrupted search returns the best node it checked, never a wrong one."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.errors import InfeasibleError
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import lattice_of
from sqlanon.methods.generalization.search.fast import FastNodeEvaluator
from sqlanon.methods.generalization.search.limits import search_within
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table
from tests.conftest import ADULT_QIS, adult_spec_dict

ARX_OPTIMUM = 0.5731509655590044  # Adult, k = 5, 0 %, Loss (peer-semantics §6.1)


@pytest.mark.parametrize("stop_after", [1, 5, 30, 60])
def test_stopped_search_returns_the_best_checked_anonymous_node(adult_engine, adult_hierarchies,
                                                                stop_after):
    problem = Problem(adult_engine, table("adult"), ADULT_QIS, adult_hierarchies, [], [KAnonymity(5)])
    seen: list[tuple[int, tuple | None, float | None]] = []

    def progress(checked, node, value):
        seen.append((checked, node, value))

    with Evaluator(problem) as ev:
        result = search_within(lattice_of(problem), FastNodeEvaluator(ev, 0.0, "loss"), "optimal",
                               progress=progress, max_checks=stop_after)
        assert result.complete is False
        assert result.checked == stop_after
        assert [c for c, _, _ in seen] == list(range(1, stop_after + 1))
        values = [v for _, _, v in seen if v is not None]
        assert values == sorted(values, reverse=True)  # the best so far only improves
        if result.node is not None:
            check = ev.check(dict(zip(ADULT_QIS, result.node)))
            assert check.anonymous and check.min_class_size >= 5
            assert result.metric >= ARX_OPTIMUM


def test_time_limit_before_any_anonymous_node_is_an_error(adult_engine, adult_dir):
    spec = spec_from_dict(adult_spec_dict(adult_dir))
    with pytest.raises(InfeasibleError, match="time limit of 1e-09 s passed"):
        api.anonymize(spec, engine=adult_engine, dry_run=True, time_limit=1e-9)


def test_generous_time_limit_changes_nothing(adult_engine, adult_dir):
    spec = spec_from_dict(adult_spec_dict(adult_dir))
    found = api.anonymize(spec, engine=adult_engine, dry_run=True, time_limit=600).as_dict()["search"]
    assert found["complete"] is True and found["optimal"] is True
    assert found["value"] == ARX_OPTIMUM


def test_time_limit_must_be_positive(adult_engine, adult_dir):
    d = adult_spec_dict(adult_dir)
    d["transformation"]["time_limit"] = -1
    with pytest.raises(Exception, match=r"transformation\.time_limit: must be a number of seconds > 0"):
        api.anonymize(spec_from_dict(d), engine=adult_engine, dry_run=True)


def test_terminal_progress_line(capsys):
    from sqlanon.methods.generalization.search.limits import TerminalProgress

    bar = TerminalProgress("loss", attributes=["sex", "age", "race"], total=60, after=0.0)
    bar.enabled = True  # as on a terminal
    bar(1, None, None)
    bar(25, (0, 4, 1), 0.573150965559)
    bar.close()
    err = capsys.readouterr().err
    assert "searching: 1 of 60 nodes checked, best: none yet" in err
    assert "searching: 25 of 60 nodes checked, best: sex=0, age=4, race=1 (loss 0.573151)" in err
    assert err.endswith("\n")
