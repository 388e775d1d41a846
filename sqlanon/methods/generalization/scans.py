"""The one read of the source: the frequency table of the raw values, or one node's generalized scan."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlglot import exp

from sqlanon.compile import checks
from sqlanon.compile.generalize import one_label
from sqlanon.domain.hierarchy.table import TableHierarchy
from sqlanon.errors import InternalError
from sqlanon.methods.generalization.hierarchy_tables import HierarchyTables
from sqlanon.methods.generalization.temporaries import Temporaries, attribute_part
from sqlanon.sql.nodes import alias, as_expression, col, internal, lit

SOURCE = internal("src")
"""The source's alias in a node's scan."""
ROW_KEYS = internal("row_keys")
"""A row-keyed scan's list of each class's row keys (:meth:`SourceScans.scan_node`)."""
FLAGGED = internal("flagged")
"""A scan without class keys: 1 when a class has a value no leaf of its table hierarchy (a NULL code)
or a value a guarded class key does not tell apart
(:meth:`~sqlanon.domain.hierarchy.base.Hierarchy.guarded_class_key`). One flag for both, since
either is rare and what follows a flag tells them apart (one aggregate and column fewer)."""


class SourceScans:
    """Reads the source into a frequency table (raw or at one node's levels), built on first use.

    Args:
        source: the table checked.
        qis: the quasi-identifiers.
        sensitive: the sensitive columns the checks read (kept raw, with the row count ``__sa_n``).
        hierarchies: the quasi-identifiers' hierarchies in the database.
        temporaries: where the scans are materialized.
        covered: every value of the quasi-identifiers is known to be a leaf of its hierarchy (a
            search read them all), so a node's scan is not checked again.
    """

    def __init__(self, source: exp.Expression, qis: Sequence[str], sensitive: Sequence[str],
                 hierarchies: HierarchyTables, temporaries: Temporaries, *, weighted: bool = False,
                 extra: Sequence[str] = (), covered: bool = False) -> None:
        self.source = source
        self.covered = covered
        self.extra = list(extra)
        """More columns of the source grouped on in :attr:`freq` (persons' fit levels)."""
        self.weighted = weighted
        """The source carries a person weight (:data:`~sqlanon.compile.checks.WEIGHT`)."""
        self.qis = list(qis)
        self.sensitive = list(sensitive)
        self.hierarchies = hierarchies
        self.temporaries = temporaries
        self.raw: exp.Table | None = None
        """The frequency table of the raw values, once built (:attr:`freq`)."""
        self.node_scan: exp.Table | None = None
        """The scan generalized to one node's levels (:meth:`scan_node`), if one was made."""
        self.row_keyed = False
        """The node's scan lists each class's row keys in :data:`ROW_KEYS` (:meth:`scan_node`)."""
        self.class_keys = True
        """The node's scan holds its classes' keys (or labels), not only their counts (:meth:`scan_node`)."""

    @property
    def freq(self) -> exp.Table:
        """The frequency table of the raw QIs and sensitive attributes (built on first use)."""
        if self.raw is None:
            self.raw = self.temporaries.lasting(
                "freq", checks.frequency_query(self.source, self.qis, self.sensitive,
                                                weighted=self.weighted, extra=self.extra))
            if not self.covered:
                self.hierarchies.validate_coverage(self.raw, self.qis)
        return self.raw

    def scan_node(self, levels: Mapping[str, int], *, labels: bool = True,
                  row_key: exp.Expression | None = None, class_keys: bool = True) -> exp.Table:
        """One GROUP BY of the source at the node's levels; table hierarchies go through integer codes.

        ``labels``: each generalized QI holds its label; else a value equal exactly when the labels are
        (a code, an interval's index: :meth:`~sqlanon.domain.hierarchy.base.Hierarchy.class_key`),
        enough for checks that count classes and cheaper to build and group by.
        ``row_key``: the source's row key (qualified by :data:`SOURCE`); each class then also lists
        its rows' keys in :data:`ROW_KEYS`, so that a written output picks its rows by key instead of
        generalizing every row again to join it to the classes.
        ``class_keys``: False when nothing reads a class but its counts (and row keys): the scan
        still groups by the class keys but does not write them, which costs about as much as the
        grouping itself on a table of many small classes; needs ``labels`` False and no sensitive
        attribute or weight."""
        if not class_keys and (labels or self.sensitive or self.weighted or self.extra):
            raise InternalError("a scan without class keys groups on class keys alone")
        self.node_scan = self._node_scan(levels, labels, row_key, class_keys)
        self.row_keyed = row_key is not None
        self.class_keys = class_keys
        return self.node_scan

    def _node_scan(self, levels: Mapping[str, int], labels: bool,
                   row_key: exp.Expression | None = None, class_keys: bool = True,
                   exact: bool = False) -> exp.Table:
        hierarchies = self.hierarchies.hierarchies
        temps = self.temporaries
        src = SOURCE
        projections: list[exp.Expression] = []
        joins: list[tuple[exp.Expression, exp.Expression]] = []
        decode: dict[str, exp.Expression] = {}
        coded: list[str] = []  # an integer code in the scan, NULL for a value no leaf
        guards: list[exp.Expression] = []  # values a guarded class key does not tell apart
        small = self._small_codes(levels) if labels else {}
        # a value no leaf would get the label too: only when every value is known to be one
        fixed = self.hierarchies.single_labels(levels) if self.covered else {}
        for i, a in enumerate(self.qis):
            h, level = hierarchies[a], int(levels.get(a, 0))
            if level == 0:
                projections.append(alias(col(a, src), a))
            elif a in fixed:  # one label at this level: no join with the look-up table
                projections.append(alias(one_label(h, col(a, src), fixed[a]), a))
            elif isinstance(h, TableHierarchy):
                coded.append(a)
                lk: exp.Expression
                if not labels and not h.needs_lookup():  # a CASE numbering the labels: no join
                    projections.append(alias(h.class_key(col(a, src), level), a))
                    continue
                if h.needs_lookup():
                    lk, decoded = self.hierarchies.codes_from_lookup(a, i, level, decode=labels)
                    if decoded is not None:
                        decode[a] = decoded
                else:
                    lk, decode[a] = small[a]
                alias_ = f"k{i}"
                joins.append((as_expression(exp.alias_(lk, alias_, table=True, quoted=True, copy=False)),
                              exp.EQ(this=col("leaf", alias_), expression=h.key(col(a, src)))))
                projections.append(alias(col("code", alias_), a))
            else:
                guarded = None if class_keys or exact else h.guarded_class_key(col(a, src), level)
                if guarded is not None:
                    value, guard = guarded
                    guards.append(guard)
                else:
                    value = h.expression(col(a, src), level) if labels else h.class_key(col(a, src), level)
                projections.append(alias(value, a))
        sensitive = self.sensitive
        weight = [alias(col(checks.WEIGHT, src), checks.WEIGHT)] if self.weighted else []
        if row_key is not None:
            weight.append(alias(row_key, ROW_KEYS))
        raw_leaves = self._raw_leaf_codes(levels, src) if not class_keys and not self.covered else []
        # a row whose value kept raw is no leaf (for the coverage check), or whose guarded key may meet
        # another value's
        row_flags = [*[exp.Is(this=c, expression=exp.Null()) for c in raw_leaves], *guards]
        if row_flags:
            weight.append(alias(exp.Case().when(as_expression(exp.or_(*row_flags, copy=False)), lit(1),
                                                copy=False).else_(lit(0), copy=False), FLAGGED))
        rows = exp.select(*projections, *[alias(col(s_, src), s_) for s_ in sensitive], *weight).from_(
            exp.alias_(self.source.copy(), src, table=True, quoted=True, copy=False), copy=False)
        for rel, on in joins:
            rows = rows.join(rel, on=on, join_type="left", copy=False)
        # grouped by name over the generalized rows: each expression is built and rendered once
        counts = [alias(exp.Sum(this=col(checks.WEIGHT)), checks.N),
                  alias(exp.Count(this=exp.Star()), checks.PAIRS)] if self.weighted else \
            [alias(exp.Count(this=exp.Star()), checks.N)]
        if row_key is not None:
            counts.append(alias(exp.ArrayAgg(this=col(ROW_KEYS)), ROW_KEYS))
        keys = [*self.qis, *sensitive]
        # what the coverage check (a code no leaf) and the guards read instead of the keys
        null_codes: list[exp.Expression] = [exp.Is(this=col(a), expression=exp.Null()) for a in coded] \
            if not class_keys and not self.covered else []
        if null_codes:
            if row_flags:
                null_codes.append(exp.EQ(this=col(FLAGGED), expression=lit(1)))
            flag = exp.Case().when(as_expression(exp.or_(*null_codes, copy=False)), lit(1), copy=False)
            counts.append(alias(exp.Max(this=flag.else_(lit(0), copy=False)), FLAGGED))
        elif row_flags:
            counts.append(alias(exp.Max(this=col(FLAGGED)), FLAGGED))
        q = exp.select(*(map(col, keys) if class_keys else ()), *counts).from_(
            exp.alias_(exp.Subquery(this=rows), internal("g"), quoted=True, copy=False), copy=False
        ).group_by(*map(col, keys), copy=False)
        if decode and labels:  # integer codes decoded on the grouped rows, in the same statement
            q = self._decoded(q, decode)
        scan = temps.lasting("nodescan", q)
        if not class_keys:
            flagged = bool(null_codes or row_flags) and self._flagged(scan)
            if flagged and guards:  # a value the cheaper keys may merge with others (or one no leaf,
                temps.discard(scan)  # which the scan on exact keys flags alone): group by the exact keys
                return self._node_scan(levels, labels, row_key, class_keys, exact=True)
            if not self.covered:
                self._check_coverage_by_flag(levels, coded, flagged)
            return scan
        if self.covered:
            return scan
        if coded:  # a NULL label or code: a value (or NULL) the hierarchy lacks; one query for all
            nulls = temps.engine.fetch(exp.select(*[
                exp.alias_(exp.Count(this=exp.Case().when(exp.Is(this=col(a), expression=exp.Null()),
                                                          lit(1))), f"n{i}", quoted=True)
                for i, a in enumerate(coded)]).from_(scan.copy()))[1][0]
            for a, bad in zip(coded, nulls):
                if bad:
                    self.hierarchies.validate_coverage(temps.lasting(
                        f"uncovered{self.qis.index(a)}",
                        exp.select(col(a)).distinct().from_(self.source.copy())), [a])
        self.hierarchies.validate_coverage(scan, [a for a in self.qis if int(levels.get(a, 0)) == 0])
        return scan

    def _raw_leaf_codes(self, levels: Mapping[str, int], src: str) -> list[exp.Expression]:
        """Per quasi-identifier kept raw whose file hierarchy is small, 1 when a row's value is a
        leaf of it, else NULL (over the source's rows aliased ``src``)."""
        out: list[exp.Expression] = []
        for a in self.qis:
            if int(levels.get(a, 0)) == 0 and (leaves := self._small_leaves(a)):
                key = self.hierarchies.hierarchies[a].key(col(a, src))
                out.append(exp.Case(this=key, ifs=[exp.If(this=lit(leaf), true=lit(1)) for leaf in leaves]))
        return out

    def _small_leaves(self, attribute: str) -> list[str]:
        """The leaves of the attribute's hierarchy when it is a small table (else none)."""
        h = self.hierarchies.hierarchies[attribute]
        if not isinstance(h, TableHierarchy) or h.needs_lookup():
            return []
        return [leaf for leaf in h.table().mapping if leaf is not None]

    def _flagged(self, scan: exp.Table) -> bool:
        """Whether a class of a scan without class keys carries :data:`FLAGGED`."""
        row = self.temporaries.engine.fetch(exp.select(
            exp.alias_(exp.Max(this=col(FLAGGED)), FLAGGED, quoted=True)).from_(scan.copy()))[1][0]
        return bool(row[0])

    def _check_coverage_by_flag(self, levels: Mapping[str, int], coded: Sequence[str],
                                flagged: bool) -> None:
        """The coverage check of a scan without class keys. Its classes flag a value no leaf of a
        coded or small raw attribute's hierarchy: when one does (``flagged``), those attributes
        are checked on the source (in the order the scan with keys checks them); other attributes
        kept raw with a table hierarchy (a large one) are always."""
        raw = [a for a in self.qis if int(levels.get(a, 0)) == 0]
        checked = [*coded, *raw] if flagged else [a for a in raw if not self._small_leaves(a)]
        self.hierarchies.validate_coverage(self.source, checked)

    def _small_codes(self, levels: Mapping[str, int]) -> dict[str, tuple[exp.Expression, exp.Expression]]:
        """Per generalized QI whose file hierarchy is small, relations (``leaf``, ``code``) and
        (``code``, ``label``) numbering its labels at the node's level: parts of one code table and
        one decode table for them all (two statements, not two per attribute)."""
        wanted = {a: h for a in self.qis if int(levels.get(a, 0))
                  and isinstance(h := self.hierarchies.hierarchies[a], TableHierarchy)
                  and not h.needs_lookup()}
        if not wanted:
            return {}
        codes: list[tuple[int, str | None, int]] = []
        labels_of: list[tuple[int, int, str | None]] = []
        for a, h in wanted.items():
            i, level = self.qis.index(a), int(levels[a])
            rows = h.lookup_rows()
            labels = list(dict.fromkeys(r[level] for r in rows))
            code = {label: j for j, label in enumerate(labels)}
            codes += [(i, r[0], code[r[level]]) for r in rows]
            labels_of += [(i, j, label) for j, label in enumerate(labels)]
        temps = self.temporaries
        code_table = temps.rows("code", [("attribute", "int"), ("leaf", "varchar"), ("code", "int")], codes)
        decode_table = temps.rows("decode", [("attribute", "int"), ("code", "int"), ("label", "varchar")],
                                  labels_of)
        return {a: (attribute_part(code_table, ("leaf", "code"), i),
                    attribute_part(decode_table, ("code", "label"), i))
                for a in wanted for i in [self.qis.index(a)]}

    def _decoded(self, grouped: exp.Select, decode: Mapping[str, exp.Expression]) -> exp.Select:
        """``grouped`` (codes for the attributes in ``decode``) with each code replaced by its label."""
        out = []
        for a in self.qis:
            if a in decode:
                out.append(alias(col("label", f"d{self.qis.index(a)}"), a))
            else:
                out.append(alias(col(a, "s"), a))
        counts = [col(checks.N, "s"), *([col(checks.PAIRS, "s")] if self.weighted else [])]
        g = exp.select(*out, *[col(s_, "s") for s_ in self.sensitive], *counts).from_(
            exp.alias_(exp.Subquery(this=grouped), "s", quoted=True, copy=False), copy=False)
        for a, d in decode.items():
            name = f"d{self.qis.index(a)}"
            g = g.join(exp.alias_(d.copy(), name, table=True, quoted=True, copy=False),
                       on=exp.EQ(this=col("code", name), expression=col(a, "s")), join_type="left",
                       copy=False)
        return g
