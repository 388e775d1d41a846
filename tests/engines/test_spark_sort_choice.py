"""Spark's default choice between sorting each attribute of individual ranking in one task and
numbering the rows across tasks (no JVM needed: a rule on the table's rows and the session's cores)."""

from __future__ import annotations

import pytest

from sqlanon.engines.spark_numbering import SPREAD_CORES, SPREAD_ROWS, sorts_in_one_task


def unasked() -> int:
    raise AssertionError("the session's cores were asked for a table sorted in one task anyway")


@pytest.mark.parametrize("rows", [0, 1_000_000, SPREAD_ROWS])
def test_a_table_of_up_to_the_line_is_sorted_in_one_task_without_asking_the_session(rows):
    assert sorts_in_one_task(rows, unasked)


@pytest.mark.parametrize("cores, one_task", [(1, True), (2, True), (SPREAD_CORES - 1, True),
                                             (SPREAD_CORES, False), (64, False)])
def test_a_larger_table_is_numbered_across_tasks_on_a_session_of_enough_cores(cores, one_task):
    assert sorts_in_one_task(SPREAD_ROWS + 1, lambda: cores) is one_task
    assert sorts_in_one_task(1_000_000_000, lambda: cores) is one_task
