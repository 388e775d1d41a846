"""Releases of an Adult sample with inserts and deletes between them: the intersection attack pins
down persons' occupations when each release is m-unique on its own, and fails under m-invariance;
``check --against`` flags the first and passes the second."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from sqlanon import api
from tests.methods.republication.adult_releases import change, load_pool, spec

RELEASES = 3


def attack(con, state: str, outputs: list[str]) -> dict[str, set[str]]:
    """Critical absence: an adversary who knows a person's group in each release it is in (the worst
    case; the state records it) keeps only the occupations every one of those groups shows, the
    counterfeits included (the published table shows them as rows)."""
    shown: dict[tuple[int, int], set[str]] = defaultdict(set)
    for number, table in enumerate(outputs, start=1):
        for group, value in con.execute(f'SELECT group_id, occupation FROM "{table}"').fetchall():
            shown[number, group].add(value)
    found: dict[str, set[str]] = {}
    for number, key, group in con.execute(f'SELECT "release", "key", group_id FROM "{state}__releases"'
                                          ).fetchall():
        values = shown[number, group]
        found[key] = set(values) if key not in found else found[key] & values
    return found


@pytest.fixture()
def releases(adult_dir, duck):
    load_pool(duck.con, adult_dir)

    def publish(mode: str) -> tuple[list[str], list]:
        duck.con.execute("DROP TABLE people; CREATE TABLE people AS SELECT * FROM pool WHERE id <= 2000")
        rng = random.Random(18)
        outputs, checks = [], []
        for number in range(1, RELEASES + 1):
            output = f"{mode}_{number}"
            if number > 1:
                change(duck.con, rng)
                checks.append(api.check(spec(mode, output, mode), engine=duck, against=outputs[-1]))
            report = api.apply(spec(mode, output, mode), engine=duck)
            assert report.m_unique
            outputs.append(output)
        return outputs, checks
    return duck, publish


def test_the_attack_succeeds_on_releases_made_on_their_own(releases):
    duck, publish = releases
    outputs, checks = publish("independent")
    found = attack(duck.con, "independent", outputs)
    pinned = {k for k, v in found.items() if len(v) == 1}
    assert len(pinned) > 100  # many persons' occupations pinned down
    truth = dict(duck.con.execute("SELECT CAST(id AS VARCHAR), occupation FROM pool").fetchall())
    assert all(found[k] == {truth[k]} for k in pinned)  # and pinned down right
    assert all(not c.anonymous and c.pinned_persons > 0 and c.flagged for c in checks)


def test_the_attack_fails_under_m_invariance(releases):
    duck, publish = releases
    outputs, checks = publish("m_invariance")
    found = attack(duck.con, "m_invariance", outputs)
    assert min(len(v) for v in found.values()) >= 2
    assert all(c.anonymous and c.persons_in_both > 1000 and not c.flagged for c in checks)
    (fakes,) = duck.con.execute('SELECT count(*) FROM "m_invariance__counterfeits"').fetchone()
    shown = sum(r[0] for r in duck.con.execute(
        "SELECT max(counterfeits) FROM m_invariance_2 GROUP BY group_id UNION ALL "
        "SELECT max(counterfeits) FROM m_invariance_3 GROUP BY group_id").fetchall())
    assert fakes == shown > 0  # the release shows each group's number of counterfeits


def test_check_against_from_the_command_line(adult_dir, tmp_path, capsys):
    """Exit code 1 and the flagged classes (no person's value) for releases made on their own; 0 under
    m-invariance."""
    import json

    import duckdb
    import yaml

    from sqlanon.cli.main import main

    db = tmp_path / "people.duckdb"
    con = duckdb.connect(str(db))
    load_pool(con, adult_dir)
    con.close()
    codes = {}
    for mode in ("independent", "m_invariance"):
        first = tmp_path / f"{mode}.yml"
        first.write_text(yaml.safe_dump({**spec(mode, f"{mode}_1", mode),
                                         "source": {"table": "people", "database": str(db)}}))
        assert main(["apply", str(first)]) == 0
        capsys.readouterr()
        con = duckdb.connect(str(db))
        change(con, random.Random(5))
        con.close()
        codes[mode] = main(["check", str(first), "--against", f"{mode}_1", "--json"])
        report = json.loads(capsys.readouterr().out)
        occupations = {r[0] for r in duckdb.connect(str(db)).execute(
            "SELECT DISTINCT occupation FROM pool").fetchall()}
        for flagged in report["flagged"]:  # classes named as published, no person's value
            assert flagged["previous_class"].startswith("group_id=")
            assert not any(o in str(flagged) for o in occupations)
        assert bool(report["flagged"]) == (mode == "independent")
        main(["check", str(first), "--against", f"{mode}_1"])
        text = capsys.readouterr().out
        verdict = "NO" if mode == "independent" else "yes"
        assert f"reveals nothing beyond the releases' own guarantees: {verdict}" in text
        con = duckdb.connect(str(db))
        con.execute("DROP TABLE people; CREATE TABLE people AS SELECT * FROM pool WHERE id <= 2000")
        con.close()
    assert codes == {"independent": 1, "m_invariance": 0}


def test_the_previous_release_must_be_the_states_last(adult_dir, duck):
    """An m-invariance release leaves the key out: its persons come from the state's last release,
    which must be the release named (here the state already holds the release being checked)."""
    from sqlanon.errors import SpecError

    load_pool(duck.con, adult_dir)
    api.apply(spec("m_invariance", "first", "s"), engine=duck)
    change(duck.con, random.Random(1))
    api.apply(spec("m_invariance", "second", "s"), engine=duck)
    with pytest.raises(SpecError, match="'first' is not the state's last release"):
        api.check(spec("m_invariance", "third", "s"), engine=duck, against="first")
    assert api.check(spec("m_invariance", "third", "s"), engine=duck, against="second").anonymous
