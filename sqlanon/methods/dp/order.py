"""Data-independent total orders and fixed-size groups for DP microaggregation, as SQL.

Domingo-Ferrer, Sánchez, Soria-Comas, *Database Anonymization*, 2016:

- **insensitive microaggregation** (§9.1-9.2, Prop. 9.3-9.4, Algorithm 7): records are ordered by
  their distance to the reference corner R = (a_b^1, ..., a_b^m) of the public domain, the
  normalized distance of eq. 9.7 (each attribute divided by its public width), ties broken
  lexicographically on the (clamped) values; the first k records form group 0, the next k group 1,
  and so on; the n mod k records left over join the last group (k..2k-1 records). The order is a
  fixed function of the record alone, so replacing one record moves every other record by at most
  one position, and each group changes by at most one record (Def. 9.1);
- **individual ranking** (§10.2, Algorithm 10): every attribute is ordered and grouped on its own
  the same way (a numeric attribute by its value, a nominal one by δ(value, a_b), then its label).

Values are clamped to the public bounds first. The squared distance is used (same order as the
distance). Only the single reference corner of insensitive MDAV is implemented, not the sequence of
corners of §9.3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlglot import exp

from sqlanon.methods.dp.bounds import Bounds
from sqlanon.methods.dp.taxonomy import NominalDomain
from sqlanon.sql.nodes import alias, as_text, col, internal, lit, table

METHODS = ("insensitive", "individual_ranking")
_RANKED = internal("ranked")


def value_column(i: int) -> str:
    """The clamped value of the i-th numeric attribute."""
    return internal(f"x{i}")


def label_column(j: int) -> str:
    """The text label of the j-th nominal attribute."""
    return internal(f"c{j}")


def group_column(name: str | None = None) -> str:
    """The group of a row: one for all attributes (insensitive), or per attribute column."""
    return internal("g") if name is None else internal(f"g_{name}")


def _position(domain: NominalDomain, label: exp.Expression) -> exp.Expression:
    """δ(label, a_b) / δ(a_b, a_t) as a CASE over the domain's leaves."""
    return exp.Case(ifs=[exp.If(this=exp.EQ(this=label.copy(), expression=lit(leaf)),
                                true=lit(float(key)))
                         for leaf, key in domain.order_key().items()])


def _group_of(rank: exp.Expression, total: exp.Expression, k: int) -> exp.Expression:
    """0-based first rank of the row's group: ``LEAST(r - MOD(r, k), n - MOD(n, k) - k)``, r = rank-1."""
    r0 = exp.Paren(this=exp.Sub(this=rank, expression=lit(1)))
    start = exp.Sub(this=r0, expression=exp.Mod(this=r0.copy(), expression=lit(k)))
    last = exp.Sub(this=exp.Sub(this=total, expression=exp.Mod(this=total.copy(), expression=lit(k))),
                   expression=lit(k))
    return exp.Least(this=start, expressions=[last])


def _window(order: list[exp.Expression]) -> exp.Expression:
    return exp.Window(this=exp.RowNumber(),
                      order=exp.Order(expressions=[exp.Ordered(this=o) for o in order]))


def grouped_rows(relation: str, numeric: Mapping[str, Bounds], nominal: Mapping[str, NominalDomain],
                 k: int, *, method: str, keep: Sequence[str] = (), schema: str | None = None
                 ) -> exp.Select:
    """Rows of ``relation`` with clamped values, labels and their groups.

    Columns: ``keep`` (as is), :func:`value_column` (i), :func:`label_column` (j), and
    :func:`group_column` — ``__sa_g`` for ``insensitive``, ``__sa_g_x<i>`` / ``__sa_g_c<j>`` per
    attribute for ``individual_ranking``. A group is named by its first 0-based rank.
    """
    values = [(value_column(i), b.clamp(col(a))) for i, (a, b) in enumerate(numeric.items())]
    labels = [(label_column(j), as_text(col(c))) for j, c in enumerate(nominal)]
    positions = [_position(d, col(label_column(j))) for j, d in enumerate(nominal.values())]
    inner = exp.select(*[alias(col(c), c) for c in keep],
                       *[alias(e, n) for n, e in values], *[alias(e, n) for n, e in labels]
                       ).from_(table(relation, schema))

    x = [col(n) for n, _ in values]
    c = [col(n) for n, _ in labels]
    total = exp.Window(this=exp.Count(this=exp.Star()))
    ranks: list[tuple[str, exp.Expression]] = []
    if method == "insensitive":
        terms: list[exp.Expression] = []
        for xi, b in zip(x, numeric.values()):
            shifted = exp.Paren(this=exp.Sub(this=xi.copy(), expression=lit(b.lower)))
            z = exp.Paren(this=exp.Div(this=shifted, expression=lit(b.width)))
            terms.append(exp.Mul(this=z, expression=z.copy()))
        for p in positions:
            terms.append(exp.Mul(this=exp.Paren(this=p), expression=exp.Paren(this=p.copy())))
        distance = terms[0]
        for t in terms[1:]:
            distance = exp.Add(this=distance, expression=t)
        ties = [*x, *[p.copy() for p in positions], *c]
        ranks.append((group_column(), _window([distance, *[t.copy() for t in ties]])))
    else:
        for i, xi in enumerate(x):
            others = [e.copy() for e in x if e is not xi] + [e.copy() for e in c]
            ranks.append((group_column(value_column(i)), _window([xi.copy(), *others])))
        for j, cj in enumerate(c):
            others = [e.copy() for e in x] + [e.copy() for e in c if e is not cj]
            ranks.append((group_column(label_column(j)),
                          _window([positions[j].copy(), cj.copy(), *others])))

    ranked = exp.select(exp.Star(), *[alias(w, f"{n}_rank") for n, w in ranks],
                        alias(total, internal("n"))
                        ).from_(exp.alias_(exp.Subquery(this=inner), internal("clamped"), quoted=True))
    n = col(internal("n"))
    out: list[exp.Expression] = [col(c) for c in keep]
    out += [col(name) for name, _ in values] + [col(name) for name, _ in labels]
    out += [alias(_group_of(col(f"{name}_rank"), n.copy(), k), name) for name, _ in ranks]
    return exp.select(*out).from_(exp.alias_(exp.Subquery(this=ranked), _RANKED, quoted=True))
