"""sdcMicro's SUDA2 search (src/Suda2.h: ``Suda2`` and ``FindMsu``) re-run step by step in plain
Python, for the tests: items, their correlations (items of equal record sets), the recursion into
the records of each item, and the MSU counts per record with the correlated items' multiplicities.
Lists keep the C++ order (``CList::Add`` prepends). Only the counts are ported, not the
contributions."""

from __future__ import annotations

from dataclasses import dataclass, field

MISSING = -999


@dataclass
class Item:
    var: int
    value: int
    entries: list[int]
    nb: int
    from_item: int
    crc: int
    to_item: int = 0


@dataclass
class Corr:
    a: int
    b: int
    out: list[int] = field(default_factory=list)


@dataclass
class Msu:
    entry: int
    vars: list[int]


class Search:
    def __init__(self, values: list[list[int]], nb_entry: int, max_k: int) -> None:
        self.values = values
        self.nb_entry = nb_entry
        self.g_max_k = max_k
        self.nb_msu = [[0] * max_k for _ in values]

    @staticmethod
    def correlate(items: list[Item], corrs: list[Corr], entries: list[int], crc: int, from_item: int
                  ) -> Corr | None:
        for item in items:
            if item.nb == len(entries) and item.crc == crc and item.entries[:item.nb] == entries:
                corr = Corr(item.from_item, from_item)
                corrs.insert(0, corr)
                return corr
        return None

    def add_correlated(self, msu: Msu, msus: list[Msu], corrs: list[Corr], first: int = 0) -> None:
        for k in range(first, len(msu.vars)):
            for corr in corrs:
                if msu.vars[k] == corr.a:
                    clone = Msu(msu.entry, list(msu.vars))
                    clone.vars[k] = corr.b
                    msus.insert(0, clone)
                    self.add_correlated(clone, msus, corrs, k + 1)

    def find(self, msus: list[Msu], corrs: list[Corr], items: list[Item], max_k: int) -> None:
        for _ in range(len(items) - 1):
            swapped = False
            for j in range(1, len(items)):
                if items[j - 1].nb > items[j].nb:
                    items[j - 1], items[j] = items[j], items[j - 1]
                    swapped = True
            if not swapped:
                break
        for i, item_i in enumerate(items):
            items_i: list[Item] = []
            corrs_i: list[Corr] = []
            msus_i: list[Msu] = []
            ie = item_i.entries[:item_i.nb]
            for j in range(i + 1, len(items)):
                item_j = items[j]
                if item_j.var == item_i.var:
                    continue
                je = item_j.entries[:item_j.nb]
                if je[-1] < ie[0] or je[0] > ie[-1]:
                    continue
                same: list[int] = []
                out: list[int] = []
                crc = at = 0
                stop = False
                for k in range(len(ie)):
                    while ie[k] > je[at]:
                        out.append(je[at])
                        at += 1
                        if at == len(je):
                            stop = True
                            break
                    if stop:
                        break
                    if ie[k] == je[at]:
                        same.append(ie[k])
                        crc += ie[k]
                        at += 1
                        if at == len(je):
                            break
                if not same or len(same) >= len(ie):
                    continue
                if len(same) == 1:
                    if max_k < self.g_max_k:
                        msu = Msu(same[0], [item_i.from_item, item_j.from_item])
                        msus.insert(0, msu)
                        if corrs:
                            self.add_correlated(msu, msus, corrs)
                    else:
                        m = n = 1
                        for corr in corrs:
                            if corr.a == item_j.from_item:
                                m += 1
                            elif corr.a == item_i.from_item:
                                n += 1
                        self.nb_msu[same[0]][1] += m * n
                elif max_k >= 3:
                    rest = out + je[at:]
                    corr = self.correlate(items_i, corrs_i, same, crc, j)
                    if corr is None:
                        items_i.insert(0, Item(item_j.var, item_j.value, same + rest, len(same), j, crc))
                    else:
                        corr.out = rest
            index = list(items_i)
            if index:
                self.find(msus_i, corrs_i, index, max_k - 1)
            if not msus_i:
                continue
            for j, it in enumerate(index):
                items[it.from_item].to_item = j
            for j, c in enumerate(corrs_i):
                items[c.b].to_item = -2 - j

            def out_of(ref: int, index: list[Item] = index, corrs_i: list[Corr] = corrs_i) -> list[int]:
                to = items[ref].to_item
                return index[to].entries[index[to].nb:] if to >= 0 else corrs_i[-to - 2].out

            for msu in msus_i:
                if len(msu.vars) > 2:
                    best = min(range(len(msu.vars)), key=lambda v: (len(out_of(msu.vars[v])), v))
                    msu.vars[0], msu.vars[best] = msu.vars[best], msu.vars[0]
                others = [items[v] for v in msu.vars[1:]]
                new = any(all(self.values[e][it.var] == it.value for it in others)
                          for e in out_of(msu.vars[0]))
                if not new:
                    continue
                if max_k < self.g_max_k:
                    grown = Msu(msu.entry, [item_i.from_item] + [items[v].from_item for v in msu.vars])
                    msus.insert(0, grown)
                    if corrs:
                        self.add_correlated(grown, msus, corrs)
                else:
                    m = 1
                    for k in range(len(msu.vars) + 1):
                        fi = item_i.from_item if k == len(msu.vars) else items[msu.vars[k]].from_item
                        m *= 1 + sum(1 for c in corrs if c.a == fi)
                    self.nb_msu[msu.entry][len(msu.vars)] += m


def sdcmicro_msu_counts(coded: list[list[int]]) -> list[list[int]]:
    """Per record, its MSUs counted by size (index = size − 1), as sdcMicro's C++ counts them, for
    records coded as integers (missing: -999), at least three columns."""
    n, a = len(coded), len(coded[0])
    keep: dict[tuple[int, ...], int] = {}
    ignored = [False] * n
    for i, c in enumerate(coded):  # a combination's third and later records are left out
        seen = keep.get(tuple(c), 0)
        ignored[i] = seen >= 2
        keep[tuple(c)] = seen + 1
    search = Search(coded, n, a)
    items: list[Item] = []
    cor_items: list[Item] = []
    corrs: list[Corr] = []
    for var in range(a):
        values: list[list] = []  # [value, records in reverse order]
        for i in range(n):
            if ignored[i]:
                continue
            found = next((v for v in values if v[0] == coded[i][var]), None)
            if found is None:
                found = [coded[i][var], []]
                values.insert(0, found)
            found[1].insert(0, i)
        for value, chain in values:
            if value == MISSING:
                continue
            if len(chain) == 1:
                search.nb_msu[chain[0]][0] += 1
            elif len(chain) != n:
                entries = sorted(chain)
                item = Item(var, value, entries, len(entries), -len(items) - 1, sum(entries))
                if search.correlate(items, corrs, entries, item.crc, -1) is not None:
                    cor_items.insert(0, item)
                else:
                    items.insert(0, item)
    search.find([], corrs, list(items), a)
    return search.nb_msu
