"""A hierarchy file large enough to be read as Arrow columns checks, searches and reports what the same
hierarchy given row by row (as a map) does, and names the values it lacks in the same words."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.domain.hierarchy.arrow_table import ArrowHierarchyTable
from sqlanon.domain.hierarchy.table import COLUMNS_READ_MIN_CHARS
from sqlanon.errors import HierarchyError
from sqlanon.spec import spec_from_dict

LEAVES = 20_000


def levels_of(i: int) -> list[str]:
    z = f"{i:06d}"
    return [z[:5] + "*", z[:4] + "**", z[:3] + "***", "*"]


def big_file(tmp_path):
    p = tmp_path / "zip.csv"
    p.write_text("".join(";".join([f"{i:06d}", *levels_of(i)]) + "\n" for i in range(LEAVES)),
                 encoding="utf-8")
    assert p.stat().st_size >= COLUMNS_READ_MIN_CHARS
    return p


def as_map() -> dict[str, list[str]]:
    return {f"{i:06d}": levels_of(i) for i in range(LEAVES)}


def people(duck, zips: list[str | None]):
    duck.con.execute("CREATE TABLE people (zip VARCHAR, sex VARCHAR)")
    duck.con.executemany("INSERT INTO people VALUES (?, ?)",
                         [[z, "FM"[i % 2]] for i, z in enumerate(zips)])
    return duck


MASK = {"mask": {"levels": 1}}
MAP = {"map": {"F": ["*"], "M": ["*"]}}


def spec(zip_hierarchy, levels=None, sex_hierarchy=MASK):
    return spec_from_dict({
        "source": {"table": "people"},
        "attributes": {"zip": {"role": "quasi_identifier", "hierarchy": zip_hierarchy},
                       "sex": {"role": "quasi_identifier", "hierarchy": sex_hierarchy}},
        "privacy": [{"k_anonymity": {"k": 3}}],
        "transformation": {"levels": levels or {}, "suppression_limit": 0.05},
        "output": {"mode": "table", "name": "people_anon"}}, source="spec.yaml")


def zips(n: int = 3_000) -> list[str | None]:
    return [f"{(i * 7919) % LEAVES:06d}" for i in range(n)]


@pytest.mark.parametrize("sex", [MASK, MAP])  # with a map, every hierarchy is a table: leaf codes
def test_the_file_and_the_map_check_and_search_alike(tmp_path, duck, sex):
    from_file = spec({"csv": str(big_file(tmp_path))}, {"zip": 2}, sex)
    assert isinstance(from_file.attributes["zip"].hierarchy.table(), ArrowHierarchyTable)
    from_map = spec({"map": as_map()}, {"zip": 2}, sex)
    people(duck, zips())
    for verb in (api.check, lambda s, engine: api.anonymize(s, engine=engine, dry_run=True)):
        file_report, map_report = (verb(s, engine=duck).as_dict() for s in (from_file, from_map))
        for report in (file_report, map_report):
            report.get("search", {}).pop("seconds", None)
        assert file_report == map_report


def test_values_missing_from_the_file_are_named_as_for_the_map(tmp_path, duck):
    p = big_file(tmp_path)
    people(duck, [*zips(50), "999999", "abc", None])
    messages = []
    for hierarchy in ({"csv": str(p)}, {"map": as_map()}):
        with pytest.raises(HierarchyError) as e:
            api.check(spec(hierarchy, {"zip": 1}), engine=duck)
        message = str(e.value)  # its source names the file or the map
        messages.append(message[message.index("3 value(s)"):])
    assert messages[0] == messages[1]
    assert messages[0].startswith("3 value(s) of attribute 'zip' are missing from the hierarchy: "
                                  "'999999', 'abc', NULL")



def written(duck, zip_hierarchy, k: int) -> tuple[list[tuple], list[str], dict]:
    """The table ``anonymize`` writes (rows sorted), the SQL it sent, and its chosen levels."""
    s = spec_from_dict({
        "source": {"table": "people"},
        "attributes": {"zip": {"role": "quasi_identifier", "hierarchy": zip_hierarchy},
                       "sex": {"role": "quasi_identifier", "hierarchy": MASK}},
        "privacy": [{"k_anonymity": {"k": k}}], "transformation": {"suppression_limit": 0.05},
        "output": {"mode": "table", "name": "people_anon", "replace": True}}, source="spec.yaml")
    sent: list[str] = []
    execute = duck._execute

    def recording(sql: str) -> None:
        sent.append(sql)
        execute(sql)

    duck._execute = recording
    try:
        levels = api.anonymize(s, engine=duck).as_dict()["transformation"]["levels"]
    finally:
        duck._execute = execute
    return duck.con.execute("SELECT * FROM people_anon ORDER BY ALL").fetchall(), sent, levels


@pytest.mark.parametrize("null", [None, "000001"])
def test_a_level_of_one_label_is_written_as_the_label_without_a_join(tmp_path, duck, null):
    """At the root of a large file hierarchy every leaf has the same label: after a search (which
    read every value as a leaf), the node's scan and the output write it (NULL as its leaf, with
    ``null``) instead of joining the look-up table; the rows are those of the same hierarchy given
    as a map (a CASE over every leaf)."""
    values = [*zips(300), *([None] * 4 if null else [])]
    people(duck, values)
    extra = {"null": null} if null else {}
    from_file, from_map = {"csv": str(big_file(tmp_path)), **extra}, {"map": as_map(), **extra}
    by_file, sent, levels = written(duck, from_file, 100)  # 20 prefixes of ~15 rows: the root
    assert levels["zip"] == 4
    assert by_file == written(duck, from_map, 100)[0]
    assert {r[0] for r in by_file} == {"*"} and len(by_file) == len(values)
    assert not [s for s in sent if "lookup" in s], "the root is written without the look-up table"
    by_file, sent, levels = written(duck, from_file, 3)  # a level of several labels: joined
    assert 0 < levels["zip"] < 4
    assert by_file == written(duck, from_map, 3)[0]
    assert [s for s in sent if "lookup" in s]
