"""``method: m_invariance``: a table published again and again, each release m-unique and every
person's signature unchanged across releases (docs/republishing.md).

``check`` groups the rows and reports; ``apply`` records the release in the state (:mod:`.state`)
and writes it (a table), so the next ``apply`` keeps the signatures. With ``publishing.mode:
independent`` each release is m-unique on its own (and open to the intersection attack, which
``sqlanon check --against`` finds); a ``state`` then only records the releases, for that check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.methods.base import Method, Plan, Sink, register

if TYPE_CHECKING:
    from sqlanon.methods.dataset import Dataset
    from sqlanon.methods.republication.result import MInvarianceReport
    from sqlanon.spec.schema import Spec


@register
class MInvariance(Method):
    name = "m_invariance"
    needs_hierarchies = False
    output_modes = ("table", "none")
    refused_modes = ("method m_invariance writes each release as a table made with its state, with "
                     "counterfeits drawn at release time; output.mode {mode} cannot hold them: use "
                     "mode table")

    def settings(self, spec: Spec) -> Any:
        from sqlanon.methods.republication.settings import m_invariance_settings

        return m_invariance_settings(spec)

    def check_spec(self, spec: Spec) -> None:
        self.settings(spec)
        self.check_output_mode(spec)

    def check_privacy_unit(self, spec: Spec) -> None:
        """A person is one record of each release, built by the unit's rules (read_rows)."""
        return None

    def refuse(self, plan: Plan) -> None:
        if plan.verb in ("anonymize", "compile"):
            raise UnsupportedError(f"{plan.verb} is not possible with method m_invariance: its groups "
                                   "depend on the rows and the earlier releases, not on levels or SQL "
                                   "alone; run `apply` (or `check`)")

    def run(self, plan: Plan, ds: Dataset, sink: Sink) -> Any:
        with ds.engine.purpose(f"m-invariance ({plan.verb})"):
            return _run(plan, ds, sink)


def _run(plan: Plan, ds: Dataset, sink: Sink) -> MInvarianceReport:
    from sqlanon.methods.republication.algorithm import ChangedValue, NotEnoughValues, m_invariant
    from sqlanon.methods.republication.release import MInvarianceRelease, read_rows, release_table
    from sqlanon.methods.republication.result import MInvarianceReport
    from sqlanon.methods.republication.state import State

    spec = plan.spec
    s = spec.settings
    qis = spec.quasi_identifiers
    for column in (s.group_column, s.counterfeit_column):
        if column in ds.column_names:
            raise SpecError(f"the source has a column {column!r}; choose another name",
                            path="publishing.group_column" if column == s.group_column
                            else "publishing.counterfeit_column", source=spec.path)
    state = State(s.state, ds.schema) if s.state is not None else None
    earlier = state.signatures(ds.engine) if state is not None and s.invariant else {}
    rows = read_rows(ds, s, qis, spec)
    try:
        partition = m_invariant(rows.keys, rows.values, rows.scaled, s.m, earlier)
    except ChangedValue as e:
        raise SpecError(f"{e.persons} persons hold a value of {s.sensitive!r} outside the signature of "
                        "their earlier releases: m-invariance assumes a person's sensitive value does "
                        "not change (publish them under a new key)", path="publishing.mode",
                        source=spec.path) from None
    except NotEnoughValues as e:
        raise SpecError(f"{s.sensitive!r} has {e.values} distinct values, fewer than m = {e.m}",
                        path="publishing.m", source=spec.path) from None
    release_number = state.last_release(ds.engine) + 1 if state is not None else None
    report = MInvarianceReport(
        s.summary(), release_number, rows.count, len(partition.groups), partition.counterfeits,
        partition.kept, partition.new,
        m_unique=all(len(set(g.signature)) == len(g.signature) >= s.m for g in partition.groups),
        invariant=all(partition.signatures[k] == earlier[k] for k in partition.signatures if k in earlier))
    unpublished = [c for c in ds.column_names if c not in (*qis, s.sensitive, s.key)]
    if spec.privacy_unit is not None:
        report.warnings.append(f"one row per person: each person's record built by the privacy unit's "
                               f"rules from its rows ({spec.privacy_unit.column})")
    if unpublished:
        report.warnings.append(f"not published: {', '.join(unpublished)} (a release holds the group, the "
                               "quasi-identifiers, the sensitive attribute and the counterfeit count)")
    if not plan.writes:
        return report
    sink.before_write(report)
    release = MInvarianceRelease(release_table(rows, partition, s, qis), s, qis)
    record = state is not None and plan.verb == "apply" and plan.option("against") is None \
        and spec.output.mode != "none"
    if record:
        assert state is not None and release_number is not None
        state.append(ds.engine, release_number, rows.keys, rows.values, partition, earlier,
                     signatures=s.invariant)
    try:
        report.outputs = sink.write(ds, release)
    except BaseException:
        if record:
            assert state is not None and release_number is not None
            state.remove(ds.engine, release_number)
        raise
    finally:
        release.close(ds)
    if record:
        assert state is not None
        report.outputs["state"] = {"tables": [state.name(p) for p in ("__signatures", "__releases",
                                                                        "__counterfeits")]}
    return report
