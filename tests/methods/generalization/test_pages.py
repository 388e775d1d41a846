"""The huge-page switch is scoped: node checks run on regular pages and restore numpy's setting."""

from __future__ import annotations

import pytest

from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import pages
from sqlanon.methods.generalization.search.fast import FastEvaluator
from sqlanon.sql.nodes import table
from tests.conftest import ADULT_QIS


def current() -> bool:
    setter = pages._SET_HUGEPAGE
    before = setter(True)
    setter(before)
    return before


needs_switch = pytest.mark.skipif(pages._SET_HUGEPAGE is None, reason="numpy has no huge-page switch")


@needs_switch
@pytest.mark.parametrize("outside", [True, False])
def test_regular_pages_restores_the_setting(outside):
    pages._SET_HUGEPAGE(outside)
    try:
        with pages.regular_pages():
            assert current() is False
            with pages.regular_pages():
                assert current() is False
            assert current() is False
        assert current() is outside
    finally:
        pages._SET_HUGEPAGE(True)


@needs_switch
def test_restored_after_an_error():
    pages._SET_HUGEPAGE(True)

    @pages.on_regular_pages
    def fails():
        assert current() is False
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fails()
    assert current() is True


@needs_switch
def test_node_checks_run_on_regular_pages(adult_engine, adult_hierarchies, monkeypatch):
    seen = []
    inner = FastEvaluator._classes

    def spy(self, node):
        seen.append(current())
        return inner(self, node)

    monkeypatch.setattr(FastEvaluator, "_classes", spy)
    pages._SET_HUGEPAGE(True)
    p = Problem(adult_engine, table("adult"), list(ADULT_QIS), dict(adult_hierarchies), [],
                [KAnonymity(5)])
    with Evaluator(p) as ev:
        fe = FastEvaluator(ev, [KAnonymity(5)], "loss", 0.0)
        assert current() is True
        assert fe.evaluate((0, 4, 1, 1, 3, 2, 2, 1, 0)).anonymous
    assert seen == [False]
    assert current() is True
