"""The publishing section's one-line errors, the refusals of method m_invariance, and a release whose
output cannot be written leaving the state as it was."""

from __future__ import annotations

import numpy as np
import pytest

from sqlanon import api
from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.methods.republication.algorithm import m_invariant
from sqlanon.methods.republication.state import State
from sqlanon.spec import spec_from_dict


def spec(**publishing) -> dict:
    return {"source": {"table": "p"},
            "attributes": {"id": "identifier", "age": "quasi_identifier", "d": "sensitive"},
            "publishing": {"mode": "m_invariance", "m": 2, "key": "id", "state": "s", **publishing},
            "output": {"mode": "table", "name": "r"}}


@pytest.mark.parametrize(("change", "message"), [
    ({"m": 1}, r"publishing\.m: must be an integer >= 2, got 1"),
    ({"state": None}, r"publishing\.state: mode m_invariance needs `state`"),
    ({"key": "idd"}, r"publishing\.key: unknown attribute 'idd'\. Did you mean 'id'\?"),
    ({"key": "age"}, r"publishing\.key: the key 'age' names persons"),
    ({"mode": "invariant"}, r"publishing\.mode: unknown mode 'invariant'"),
    ({"group_column": "age"}, r"publishing\.group_column: 'age' is an attribute"),
    ({"stat": "x"}, r"publishing\.stat: unknown key 'stat'; use mode, m, key, state"),
])
def test_publishing_errors_name_the_key(change, message):
    with pytest.raises(SpecError, match=message):
        spec_from_dict(spec(**change))


def test_refused_modes_and_verbs(duck):
    with pytest.raises(SpecError, match=r"output\.mode: .*mode view cannot hold them: use mode table"):
        spec_from_dict({**spec(), "output": {"mode": "view", "name": "r"}})
    with pytest.raises(SpecError, match=r"privacy: method m_invariance makes every group m-unique"):
        spec_from_dict({**spec(), "privacy": [{"k_anonymity": {"k": 2}}]})
    duck.con.execute("CREATE TABLE p AS SELECT i AS id, i AS age, 'x' AS d FROM range(4) t(i)")
    for verb in (api.compile_sql, api.anonymize):
        with pytest.raises(UnsupportedError, match="not possible with method m_invariance"):
            verb(spec(), engine=duck)
    with pytest.raises(SpecError, match=r"publishing\.m: 'd' has 1 distinct values, fewer than m = 2"):
        api.check(spec(), engine=duck)


def test_one_row_per_person_and_values_that_do_not_change(duck):
    duck.con.execute("CREATE TABLE p AS SELECT i % 3 AS id, i AS age, ['a', 'b'][1 + i % 2] AS d "
                     "FROM range(6) t(i)")
    with pytest.raises(SpecError, match=r"publishing\.key: .* has several rows"):
        api.check(spec(), engine=duck)
    duck.con.execute("CREATE OR REPLACE TABLE p AS SELECT i AS id, i AS age, ['a', 'b'][1 + i % 2] AS d "
                     "FROM range(6) t(i)")
    api.apply(spec(), engine=duck)
    duck.con.execute("UPDATE p SET d = 'c' WHERE id = 0")
    with pytest.raises(SpecError, match="1 persons hold a value of 'd' outside the signature"):
        api.apply({**spec(), "output": {"mode": "table", "name": "r2"}}, engine=duck)


def test_an_output_that_cannot_be_written_leaves_the_state_as_it_was(duck):
    """Refused before anything is read; and a release recorded, then undone (as when its output fails
    to be written), leaves every state table as it was."""

    duck.con.execute("CREATE TABLE p AS SELECT i AS id, i AS age, ['a', 'b'][1 + i % 2] AS d "
                     "FROM range(6) t(i)")
    api.apply(spec(), engine=duck)
    before = duck.con.execute("SELECT count(*), max(release) FROM s__releases").fetchone()
    duck.con.execute("CREATE TABLE taken (x INTEGER)")
    with pytest.raises(SpecError, match="taken"):  # exists, and replace is false
        api.apply({**spec(), "output": {"mode": "table", "name": "taken"}}, engine=duck)
    assert duck.con.execute("SELECT count(*), max(release) FROM s__releases").fetchone() == before
    state = State("s")
    tables = ("s__signatures", "s__releases", "s__counterfeits")
    saved = [sorted(duck.con.execute(f"SELECT * FROM {t}").fetchall()) for t in tables]
    earlier = state.signatures(duck)
    keys, values = ["0", "1", "9"], ["a", "b", "a"]
    partition = m_invariant(keys, values, np.zeros((3, 1)), 2, earlier)
    state.append(duck, 2, keys, values, partition, earlier)
    assert duck.con.execute("SELECT count(*) FROM s__releases WHERE release = 2").fetchone() == (3,)
    assert duck.con.execute("SELECT count(*) FROM s__signatures WHERE release = 2").fetchone() == (2,)
    state.remove(duck, 2)
    assert [sorted(duck.con.execute(f"SELECT * FROM {t}").fetchall()) for t in tables] == saved
