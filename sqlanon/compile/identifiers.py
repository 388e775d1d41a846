"""What an output does with a direct identifier: drop, hash, pseudonymize or mask.

Hashing and pseudonymizing are not anonymization: whoever can guess a value (a name, an e-mail
address) and knows the salt can recompute its hash. Both therefore refuse to run without a salt;
keep the salt secret (it is written into the SQL, and into a view's definition).
"""

from __future__ import annotations

from sqlglot import exp

from sqlanon.compile.hash_text import canonical_sql
from sqlanon.errors import SpecError
from sqlanon.spec.schema import Attribute
from sqlanon.sql.dialects import DialectProfile, sha256_hex
from sqlanon.sql.nodes import as_text, lit
from sqlanon.sql.secrets import secret

MASK_CHAR = "*"


def salted_hash(value: exp.Expression, salt: str, target: DialectProfile,
                data_type: exp.DataType | None = None) -> exp.Expression:
    """Hex SHA-256 of the salt followed by the value's canonical text (:mod:`.hash_text`):
    ``sha256(salt || text(value))``; NULL stays NULL.

    The same string on every target; in Python:
    ``hashlib.sha256((salt + canonical_text(value)).encode("utf-8")).hexdigest()``.
    """
    text = exp.Concat(expressions=[secret(salt), canonical_sql(value, data_type, target)], safe=False,
                      coalesce=False)
    return exp.Case().when(exp.Is(this=value.copy(), expression=exp.Null()), exp.Null()).else_(
        sha256_hex(text, target))


def pseudonym(value: exp.Expression, salt: str, target: DialectProfile,
              data_type: exp.DataType | None = None) -> exp.Expression:
    """A number per distinct value: the rank of its salted hash among the output's values (1, 2, ...).

    Equal values get equal numbers; the numbers follow the hashes' order, not the values' order, and
    carry no text of the value. NULL stays NULL.
    """
    digest = salted_hash(value, salt, target, data_type)
    rank = exp.Window(this=exp.DenseRank(), order=exp.Order(
        expressions=[exp.Ordered(this=digest, nulls_first=False)]))
    return exp.Case().when(exp.Is(this=value.copy(), expression=exp.Null()), exp.Null()).else_(rank)


def masked(value: exp.Expression) -> exp.Expression:
    """Every character replaced by ``*`` (the length stays); NULL stays NULL."""
    # LPAD('', n, '*') rather than REPEAT: Trino's REPEAT builds an array, not a string
    length = exp.cast(exp.Length(this=as_text(value)), exp.DataType.build("int"))
    return exp.Pad(this=lit(""), expression=length, fill_pattern=lit(MASK_CHAR), is_left=True)


def identifier_expression(attribute: Attribute, value: exp.Expression, target: DialectProfile,
                          source: str | None = None, data_type: exp.DataType | None = None
                          ) -> exp.Expression | None:
    """The output expression of an identifier column (of ``data_type``, text when unknown), or None
    when it is dropped."""
    action = attribute.action
    if action == "drop":
        return None
    if action == "mask":
        return masked(value)
    if not attribute.salt:
        raise SpecError(
            f"action {action!r} needs a salt: an unsalted hash of names or e-mail addresses is reversed "
            "by hashing a list of candidates. Set a long random secret as `salt`, or use action drop "
            "or mask", path=f"attributes.{attribute.name}.salt", source=source)
    if action == "hash":
        return salted_hash(value, attribute.salt, target, data_type)
    return pseudonym(value, attribute.salt, target, data_type)
