"""PostgreSQL errors reach the user as one line naming the attribute or the step, never a value."""

from __future__ import annotations

import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.compile.identifiers import salted_hash
from sqlanon.errors import EngineError, SpecError
from sqlanon.spec import spec_from_dict
from sqlanon.sql.dialects import profile
from sqlanon.sql.nodes import col, table

SALT = "S3cretSalt!pg-7d41e09b"


@pytest.fixture()
def who(pg):
    pg.execute_script("CREATE TABLE who (age text, name text, pid integer)")
    pg.execute_script("INSERT INTO who VALUES ('31', 'Alice', 1), ('32', 'Bob', 2), ('33', 'Carol', 3)")
    return pg


def _spec(hierarchy: dict) -> dict:
    return {"source": {"table": "who"},
            "attributes": {"age": {"role": "quasi_identifier", "hierarchy": {"intervals": {"widths": [10]}}},
                           "name": {"role": "quasi_identifier", "hierarchy": hierarchy},
                           "pid": {"role": "identifier", "action": "hash", "salt": SALT}},
            "privacy": [{"k_anonymity": {"k": 1}}],
            "transformation": {"levels": {"age": 1, "name": 1}}}


@pytest.mark.parametrize("hierarchy,kind", [({"intervals": {"widths": [10]}}, "intervals"),
                                            ({"date": ["year"]}, "date")])
def test_casting_hierarchy_on_text_names_the_attribute(who, hierarchy, kind):
    """A text column holding numbers passes; one holding names is an error naming its hierarchy."""
    with pytest.raises(SpecError, match=rf"attributes\.name\.hierarchy: the {kind} hierarchy") as info:
        api.check(spec_from_dict(_spec(hierarchy)), engine=who)
    assert "Alice" not in str(info.value)


def test_failing_statement_names_the_step_and_redacts_the_salt(who):
    """The message has the step and PostgreSQL's first line; the salt is not in the statement kept
    for --debug either."""
    query = exp.select(exp.alias_(salted_hash(col("pid"), SALT, profile("postgres")), "h")).from_(
        table("missing"))
    with pytest.raises(EngineError) as info, who.purpose("write the output"):
        who.fetch(query)
    assert str(info.value) == ('postgres: write the output failed: relation "missing" does not exist')
    assert SALT not in (info.value.sql or "x") and "<redacted salt>" in (info.value.sql or "")
