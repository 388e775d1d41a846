"""The salt of a hashed or pseudonymized identifier must be a secret of reasonable strength.

Salts such as ' ' or 'a' were accepted: whoever guesses the salt can hash a list of candidate
names or e-mail addresses and reverse the column.
"""

from __future__ import annotations

import re

import pytest

from sqlanon.errors import SpecError
from sqlanon.spec import Attribute, load_spec

STRONG = "q7Vt-2mXe9LpR4sZ"


def spec_text(salt: str, action: str = "hash") -> str:
    return ("source: {table: people}\n"
            "attributes:\n"
            "  age: {role: quasi_identifier, hierarchy: {intervals: {widths: [5]}}}\n"
            f"  name: {{role: identifier, action: {action}, salt: {salt!r}}}\n")


@pytest.mark.parametrize("salt", [" ", "a", "s3cret", "golden-salt", "k3y" * 3])
def test_short_salt_is_refused(tmp_path, salt):
    p = tmp_path / "spec.yaml"
    p.write_text(spec_text(salt))
    with pytest.raises(SpecError, match="^" + re.escape(f"{p}: attributes.name.salt: ") +
                       r"too short \(\d+ characters\): use at least 16 random characters"):
        load_spec(p)


@pytest.mark.parametrize("salt", ["a" * 40, " " * 16, "abababababababab", "0000000011111111"])
def test_low_variety_salt_is_refused(tmp_path, salt):
    p = tmp_path / "spec.yaml"
    p.write_text(spec_text(salt, "pseudonymize"))
    with pytest.raises(SpecError, match=re.escape("attributes.name.salt: ") +
                       r"too little variety \(\d distinct characters?\)"):
        load_spec(p)


def test_missing_salt_is_refused_at_load_not_at_write(tmp_path):
    p = tmp_path / "spec.yaml"
    p.write_text(spec_text(STRONG).replace(f", salt: {STRONG!r}", ""))
    with pytest.raises(SpecError, match=re.escape("attributes.name.salt: action 'hash' needs a salt")):
        load_spec(p)


def test_salt_without_a_hashing_action_is_refused(tmp_path):
    """A salt on a dropped or masked identifier is a forgotten ``action: hash``."""
    p = tmp_path / "spec.yaml"
    p.write_text(spec_text(STRONG, "mask"))
    with pytest.raises(SpecError, match=re.escape("attributes.name.salt: applies to action hash or "
                                                  "pseudonymize, not mask")):
        load_spec(p)


def test_strong_salts_are_accepted():
    for salt in (STRONG, "5f0c9a3e1b7d42e8a6c1f09b3d5e7a21", "correct horse battery staple"):
        assert Attribute("name", "identifier", action="hash", salt=salt).salt == salt


def test_the_python_form_checks_the_salt_too():
    with pytest.raises(SpecError, match=r"attributes\.name\.salt: too short"):
        Attribute("name", "identifier", action="hash", salt="a")
