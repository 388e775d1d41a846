"""SUDA2 and sdcMicro's individual risk against examples whose results are printed in publications.

The tables are written out from the publications cited in each test (a few rows each); the
expected figures are the ones the publications state."""

from __future__ import annotations

import pytest

from sqlanon.domain.risk.individual import individual_risk
from sqlanon.domain.risk.suda2 import suda2


def load(duck, names, rows, weights=None):
    duck.con.execute(f"CREATE TABLE t (rid INTEGER, {', '.join(n + ' VARCHAR' for n in names)}, w DOUBLE)")
    duck.con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * (len(names) + 2))})",
                         [(i, *r, 1.0 if weights is None else weights[i]) for i, r in enumerate(rows)])


def record_scores(duck, table="out"):
    return [r[0] for r in duck.con.execute(f"SELECT suda_score FROM {table} ORDER BY rid").fetchall()]


def test_suda2_templs_book_example(duck):
    """Templ, *Statistical Disclosure Control for Microdata: Methods and Applications in R*,
    Springer 2017, the SUDA example of chapter 3 (also sdcMicro's "book example"): eight records
    on age, gender, income and education; records 5 to 8 have SUDA scores 4, 2, 6 and 8.

    Record 8 (60s) is unique on age alone and record 7 on its education (middleschool): one MSU
    of size 1 each, weighing (4−1)·(4−2)·(4−3) = 6, and record 8 also on (male, university) at
    (4−2)·(4−3) = 2; record 5 has two MSUs of size 2, (20s, university) and (female, university),
    and record 6 one, (female, highschool)."""
    names = ["age", "gender", "income", "education"]
    rows = list(zip(["20s"] * 7 + ["60s"], ["male"] * 4 + ["female"] * 3 + ["male"],
                    ["50k+"] * 2 + ["50k-"] * 6,
                    ["highschool"] * 4 + ["university", "highschool", "middleschool", "university"]))
    load(duck, names, rows)
    r = suda2(duck, "t", names, output="out")
    assert record_scores(duck)[4:] == [4.0, 2.0, 6.0, 8.0]
    assert record_scores(duck)[:4] == [0.0] * 4  # records 1–4 are not sample unique
    assert r.msus_by_size == {1: 2, 2: 4, 3: 0, 4: 0}
    assert r.sample_uniques == 4


def test_suda2_sdc_practice_guide_example(duck):
    """Benschop, Machingauta & Welch, *Statistical Disclosure Control: A Practice Guide*
    (IHSN / World Bank, sdcpractice.readthedocs.io), the SUDA example of the section on measuring
    risk: ten records on residence, gender, education and labour status, with SUDA scores
    0, 0, 6, 0, 12, 0, 6, 10, 0, 0 (also sdcMicro's "sdc guideline" example)."""
    names = ["residence", "gender", "education", "labor"]
    rows = list(zip(
        ["Urban"] * 4 + ["Rural"] + ["Urban"] * 5,
        ["Female", "Female", "Female", "Male", "Female", "Male", "Female", "Male", "Female", "Female"],
        ["Secondary incomplete", "Secondary incomplete", "Primary incomplete", "Secondary complete",
         "Secondary complete", "Secondary complete", "Primary complete", "Post-secondary",
         "Secondary incomplete", "Secondary incomplete"],
        ["Employed", "Employed", "Non-LF", "Employed", "Unemployed", "Employed", "Non-LF", "Unemployed",
         "Non-LF", "Non-LF"]))
    load(duck, names, rows)
    r = suda2(duck, "t", names, output="out")
    assert record_scores(duck) == [0.0, 0.0, 6.0, 0.0, 12.0, 0.0, 6.0, 10.0, 0.0, 0.0]
    assert r.sample_uniques == 4 and r.records_with_msu == 4
    assert r.dis_intervals["== 0"] == 6


@pytest.mark.parametrize("order", [(0, 1, 2), (0, 2, 1), (2, 0, 1), (2, 1, 0)])
def test_suda2_attribute_contributions_of_sdcmicros_three_record_example(duck, order):
    """sdcMicro's ``suda2`` attribute contributions for the three records (a, b, c) = (2, 0, 0),
    (1, 3, 6), (1, 0, 0): a contributes 50 %, b and c 37.5 % each, whatever the column order."""
    columns = {"a": ["2", "1", "1"], "b": ["0", "3", "0"], "c": ["0", "6", "0"]}
    names = [list(columns)[j] for j in order]
    load(duck, names, list(zip(*(columns[n] for n in names))))
    r = suda2(duck, "t", names)
    assert r.attribute_contributions == {"a": 50.0, "b": 37.5, "c": 37.5}


# (fk, Fk, risk) of the ten combinations at highest risk printed by sdcMicro's sdcReport for the
# Sierra Leone 2015 census 1 % household sample (Statistics Sierra Leone, anonymization report,
# microdata.statistics.sl, catalog 16, "10 combinations of categories with highest risks")
SIERRA_LEONE = [(12, 1316.701, 0.0008278), (10, 2595.686, 0.0004279), (10, 2760.185, 0.0004024),
                (7, 5079.996, 0.0002296), (15, 5300.859, 0.0002021), (42, 5343.714, 0.0001917),
                (17, 5576.081, 0.0001905), (23, 10681.032, 0.0000979), (52, 12679.477, 0.0000804),
                (41, 15809.289, 0.0000648)]


def test_individual_risk_of_a_published_sdcmicro_report(duck):
    """The individual risks sdcMicro printed for ten combinations of a published anonymization
    report (:data:`SIERRA_LEONE`, household level, so its hierarchical risk is the individual
    risk, printed to 7 decimals): each combination is rebuilt as fk records whose sampling weights
    sum to the printed Fk, and the risk must round to the printed one."""
    rows, weights = [], []
    for k, (fk, Fk, _) in enumerate(SIERRA_LEONE):
        rows += [(f"combination {k}",)] * fk
        weights += [Fk / fk] * fk
    load(duck, ["key"], rows, weights)
    r = individual_risk(duck, "t", ["key"], "w", output="out")
    got = dict(duck.con.execute("SELECT DISTINCT key, individual_risk FROM out").fetchall())
    for k, (_, _, printed) in enumerate(SIERRA_LEONE):
        assert round(got[f"combination {k}"], 7) == pytest.approx(printed, abs=1e-12)
    assert r.highest_risk == pytest.approx(0.0008278, abs=5e-8)
