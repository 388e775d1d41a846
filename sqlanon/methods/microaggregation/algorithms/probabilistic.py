"""Probabilistic k-anonymity through individual-ranking microaggregation, as one SQL query.

Domingo-Ferrer J, Sánchez D, Soria-Comas J. Database Anonymization. Morgan & Claypool 2016,
section 5.5 (Definition 5.12, Proposition 5.13): a data set is *probabilistically k-anonymous* with
respect to its quasi-identifiers when the probability of re-identifying a record from them is at
most 1/k. k-anonymity implies it; the converse does not hold, so methods with less information loss
qualify. The book (after Soria-Comas J, Domingo-Ferrer J. Probabilistic k-anonymity through
microaggregation and data swapping. FUZZ-IEEE 2012, whose second heuristic is "individual ranking
microaggregation on individual confidential attributes plus swapping") attains it by microaggregating
**each confidential attribute on its own** by individual ranking; the quasi-identifiers are released
unchanged.

Which attributes are ranked: the confidential ones, as the book's text and the FUZZ-IEEE heuristic
say. (The digest of the book flags the sentence as ambiguous, erratum E10, and suggests the
quasi-identifiers; the cited heuristic settles it for the confidential attributes. Passing
quasi-identifiers as ``confidential`` ranks those instead, for whoever wants that reading.) The
heuristic's swapping step changes nothing here: every value of a group is replaced by the same
centroid, so any permutation of the group releases the same table.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.errors import SpecError
from sqlanon.methods.microaggregation.algorithms.sql_ranking import individual_ranking


def probabilistic_k_anonymity(source: str | exp.Expression, columns: Sequence[str],
                              confidential: Sequence[str], k: int, *,
                              key: Sequence[str] | None = None,
                              statistic: str = "mean") -> exp.Select:
    """A SELECT releasing ``source`` probabilistically k-anonymous (Database Anonymization, 5.5).

    Every confidential attribute is microaggregated independently by individual ranking
    (:func:`sqlanon.methods.microaggregation.algorithms.sql_ranking.individual_ranking`): its values, sorted
    (ties broken by ``key``), form groups of ``k`` consecutive values, the last group taking the ``n mod k``
    left over (``k .. 2k-1`` values), and each value becomes its group's mean (or median). All other columns,
    the quasi-identifiers included, pass through unchanged.

    The guarantee. For each confidential attribute, every released value is shared by at least ``k``
    records, and those records' original values are ``k`` (to ``2k-1``) consecutive values of the
    attribute. An intruder who finds a target's record through its unchanged quasi-identifiers sees,
    for each confidential attribute, a value consistent with at least k original records (its group):
    linking the released value to the target's own original one succeeds with probability at most
    1/k, which is the probabilistic k-anonymity of Definition 5.12 for the confidential data. It is not
    k-anonymity: records stay unique on their quasi-identifiers. As with k-anonymity, the bound is on
    re-identification, not on attribute disclosure: what is learnt about a value is the range of its
    group, and a group whose original values are all equal (ties) gives the value away. The bound
    assumes the intruder does not already know the original values of the other group members.

    Args:
        source: a table name (one identifier), a sqlglot table, or a sqlglot query.
        columns: every column of ``source``, in the order the result should have them.
        confidential: the numeric confidential attributes to microaggregate (at least one).
        k: the minimum group size (>= 2).
        key: columns that break ties between equal values (a unique key gives one result on every
            engine); by default all other columns.
        statistic: ``"mean"`` or ``"median"``.

    Returns:
        The query; it renders for every supported dialect.

    Raises:
        SpecError: no confidential attribute, or an invalid ``k``, ``statistic`` or column name.

    Example:
        >>> import duckdb
        >>> from sqlanon.sql.render import render
        >>> con = duckdb.connect()
        >>> _ = con.execute("CREATE TABLE t AS SELECT range AS age, (range + 1) * 100 AS pay "
        ...                 "FROM range(7)")
        >>> q = probabilistic_k_anonymity("t", ["age", "pay"], ["pay"], 3, key=["age"])
        >>> sorted(con.execute(render(q, "duckdb")).fetchall())
        [(0, 200.0), (1, 200.0), (2, 200.0), (3, 550.0), (4, 550.0), (5, 550.0), (6, 550.0)]
    """
    if isinstance(confidential, str) or not confidential:
        raise SpecError("probabilistic k-anonymity needs at least one confidential attribute to "
                        "microaggregate (a list of column names)",
                        path="probabilistic_k_anonymity.confidential")
    return individual_ranking(source, columns, confidential, k, key=key, statistic=statistic)
