"""The text sections of an m-invariance release and of ``check --against``."""

from __future__ import annotations

from typing import Any

from sqlanon.report.base import SECTIONS
from sqlanon.report.text import output_lines


@SECTIONS.register("m_invariance")
def format_release(r: dict[str, Any]) -> str:
    t = r["transformation"]
    alone = "each release m-unique on its own" if t["mode"] == "independent" else "m-invariant"
    recorded = "recorded in" if "state" in r["outputs"] else "(not recorded) of"
    mode = f"{alone}, release {r['release']} {recorded} state {t['state']!r}" if t.get("state") \
        else f"{alone}, nothing recorded"
    lines = [f"transformation: m_invariance, m = {t['m']}, key {t['key']!r}, sensitive attribute "
             f"{t['sensitive']!r}: {mode}",
             f"rows: {r['rows']}   groups: {r['groups']}   counterfeits: {r['counterfeits']}   persons of "
             f"earlier releases: {r['persons_kept']}   new persons: {r['persons_new']}",
             "every group m-unique: " + ("yes" if r["m_unique"] else "NO")
             + "   every person's signature unchanged: " + ("yes" if r["invariant"] else "NO")]
    outputs = {k: v for k, v in r["outputs"].items() if k != "state"}
    lines += output_lines("output", outputs)
    if "state" in r["outputs"]:
        lines.append("state: " + ", ".join(r["outputs"]["state"]["tables"]))
    lines += [f"warning: {w}" for w in r["warnings"]]
    return "\n".join(lines) + "\n"


@SECTIONS.register("intersection")
def format_intersection(r: dict[str, Any]) -> str:
    k = f"k = {r['k']}, " if r["k"] is not None else ""
    lines = [f"intersection with the previous release {r['transformation']['against']!r} ({k}l = {r['l']}, "
             f"sensitive attribute {r['sensitive']!r})",
             f"persons in both releases: {r['persons_in_both']}   class pairs: {r['class_pairs']}",
             (f"pairs below k persons: {r['shrunk_pairs']}   " if r["k"] is not None else "")
             + f"pairs below l candidate values: {r['reduced_pairs']}   persons pinned down to one "
             f"value: {r['pinned_persons']}",
             "the intersection reveals nothing beyond the releases' own guarantees: "
             + ("yes" if r["anonymous"] else "NO")]
    for f in r["flagged"]:
        lines.append(f"  previous class ({f['previous_class']}) with current class ({f['current_class']}): "
                     f"{f['persons']} persons, fewest candidate values {f['fewest_candidate_values']}")
    lines += [f"warning: {w}" for w in r["warnings"]]
    return "\n".join(lines) + "\n"
