"""The verbs the documentation calls exist where it says: ``sqlanon.<verb>``.

Defect guarded: docs/search.md called ``sqlanon.anonymize``, which did not exist (only
``sqlanon.api.anonymize`` did), and a module of the same name would have replaced the function on the
package after its first call.
"""

from __future__ import annotations

import sqlanon
from sqlanon import api
from tests.outputs.people import load_people, people_spec


def test_every_verb_is_exported_at_the_top_level():
    for verb in ("check", "apply", "anonymize", "compile_sql", "connect", "load_spec", "spec_from_dict",
                 "dp_query", "dp_microaggregate"):
        assert callable(getattr(sqlanon, verb)), verb
        assert verb in sqlanon.__all__
    assert sqlanon.anonymize is api.anonymize


def test_anonymize_stays_the_function_after_a_search(duck):
    load_people(duck)
    spec = people_spec(output={"mode": "none"})
    spec["transformation"] = {"search": "optimal", "suppression_limit": 0.3}
    report = sqlanon.anonymize(sqlanon.spec_from_dict(spec), engine=duck)
    assert report.anonymous
    assert sqlanon.anonymize is api.anonymize
