"""``method: noise``: noise, swapping, PRAM, condensation and DP microdata drawn for a table and
stored (docs/noise.md); ``apply`` only: nothing to measure before the draw, no SQL to print."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlanon.methods.base import Method, Plan, Sink, refusal, register

if TYPE_CHECKING:
    from sqlanon.methods.dataset import Dataset
    from sqlanon.spec.schema import Spec


@register
class Noise(Method):
    name = "noise"
    needs_hierarchies = False
    perturbs_any_attribute = True
    requires_rows = False
    # the drawn values meet their rows again, or are drawn where the rows are read
    requires = (("positional_join", "stable_row_key", "row_stream_map"),)
    output_modes = ("table", "in_place")
    refused_modes = ("noise is drawn by sqlanon and must be stored: use mode table or in_place, not {mode} "
                     "(SQL text or a view would have to draw it with the engine's random(), which is "
                     "neither cryptographically seeded nor seedable)")

    def transformation_keys(self) -> tuple[str, ...]:
        from sqlanon.methods.perturbation.options import NOISE_KEYS  # imports scipy: only when asked

        return NOISE_KEYS

    def settings(self, spec: Spec) -> Any:
        from sqlanon.methods.perturbation.options import parse

        return parse(spec.transformation.options)

    def check_spec(self, spec: Spec) -> None:
        self.settings(spec)

    def check_privacy_unit(self, spec: Spec) -> None:
        options = spec.transformation.options
        if options.get("mechanism") == "dp_microaggregation":
            unit = spec.privacy_unit
            if unit is not None and (unit.attributes or unit.order_by or unit.varying != "constant"):
                raise refusal(spec, "DP microdata builds each person's record by its own rule (the "
                              "mean of the clamped values; nominal values constant per person): give "
                              "privacy_unit as the column only", "privacy_unit")
            return
        raise refusal(spec, f"mechanism {options.get('mechanism')!r} treats each row as the unit: "
                      "bounding a person's contribution over many rows is not available for it, so "
                      "the guarantee would not hold per person; use mechanism dp_microaggregation "
                      "(one record per person), DP queries (sqlanon query --privacy-unit), or "
                      "method generalization or microaggregation", "privacy_unit")

    def refuse(self, plan: Plan) -> None:
        spec = plan.spec
        if plan.verb == "check" and plan.option("observer") is not None:  # an HTML report
            from sqlanon.methods.perturbation.options import CHARGEABLE

            if spec.transformation.options.get("mechanism") in CHARGEABLE:
                raise refusal(spec, "a DP release's report shows the draw that is released; a draw made "
                                    "only for the report would spend privacy budget on nothing published: "
                                    "run apply --html", "transformation.mechanism")
            return
        if plan.verb == "check":
            raise refusal(spec, "check has nothing to measure before the noise is drawn: run apply, whose "
                                "report gives the utility and risk of the noisy table (apply --dry-run only "
                                "validates); an HTML report (check --html, sqlanon report) draws it into a "
                                "scratch table and drops it")
        if plan.verb == "compile":
            raise refusal(spec, "compile prints the SQL of a fixed transformation; noise is drawn when the "
                                "output is written, so there is no SQL to print: run apply")
        if plan.verb == "anonymize":
            raise refusal(spec, "anonymize searches generalization levels; a noise spec has none to search: "
                                "run apply")
        from sqlanon.methods.perturbation.apply import options_of
        from sqlanon.methods.perturbation.options import DP_MICRODATA

        opts = options_of(spec)
        self.check_output_mode(spec)
        if opts.mechanism == DP_MICRODATA and spec.output.mode != "table":
            raise refusal(spec, "dp_microaggregation writes only the released attributes (any other column "
                                "would be released unprotected), so it cannot replace the source: use mode "
                                "table", "output.mode")
        if spec.output.mode == "in_place" and spec.source.file:
            raise refusal(spec, "in_place replaces a database table; a file source is never written. Use "
                                "mode table (with output.database)", "output.mode")

    def run(self, plan: Plan, ds: Dataset, sink: Sink) -> Any:
        from sqlanon.methods.perturbation.apply import run_noise

        if plan.verb == "check":
            from sqlanon.methods.perturbation.unwritten import drawn_for_report

            return drawn_for_report(plan, ds, sink)

        return run_noise(plan.spec, ds, sink, dry_run=not plan.writes,
                         quality=plan.option("metrics") != ())
