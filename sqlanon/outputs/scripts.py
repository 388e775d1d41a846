"""Multi-statement SQL skeletons: Jinja templates in ``sql_templates/``, dispatched per dialect.

``<dialect>__<name>.sql.j2`` is used when it exists, else ``default__<name>.sql.j2`` (as dbt dispatches
macros). Templates receive only SQL text that sqlglot rendered (quoted identifiers, whole queries) and
booleans; user text never reaches a template directly.

Each statement of a template is one ``{% filter statement %}…{% endfilter %};`` block: the filter
records the statement as it is rendered (and writes it unchanged), so a rendered skeleton yields
its printed text and its list of statements at once, and no rendered text is ever split again (a
statement may be megabytes of inline VALUES, copied as few times as the rendering needs).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from sqlanon.errors import InternalError
from sqlanon.sql.dialects import DialectProfile

if TYPE_CHECKING:
    from jinja2 import Environment

_STATEMENTS = "sqlanon_statements"
"""The context variable the ``statement`` filter appends each rendered statement to."""


@dataclass(frozen=True)
class Script:
    """A rendered skeleton: its text (as printed) and its statements (as run), in order."""

    text: str
    statements: tuple[str, ...]


@lru_cache(maxsize=1)
def environment() -> Environment:
    # jinja2 is imported here, not with the module: a run that writes no script does not pay for it
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, pass_context
    from jinja2.runtime import Context

    @pass_context
    def _statement(context: Context, body: str) -> str:
        statement = body.strip()  # the same string when the block has no surrounding whitespace
        if statement:
            context[_STATEMENTS].append(statement)
        return body

    # sql_templates/ at the top of the repository, shipped inside the package (sqlanon/sql_templates)
    folder = resources.files("sqlanon") / "sql_templates"
    env = Environment(loader=FileSystemLoader(str(folder)), undefined=StrictUndefined, autoescape=False,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["statement"] = _statement
    return env


def template_name(name: str, target: DialectProfile) -> str:
    """The template that renders ``name`` for ``target`` (its own variant, else the default)."""
    from jinja2 import TemplateNotFound

    try:
        return environment().select_template(
            [f"{target.name}__{name}.sql.j2", f"default__{name}.sql.j2"]).name or ""
    except TemplateNotFound:
        raise InternalError(f"no SQL template default__{name}.sql.j2") from None


def render_statements(name: str, target: DialectProfile, **parts: str | bool) -> Script:
    """Render the skeleton ``name`` for ``target`` with already-rendered SQL ``parts``."""
    for key, value in parts.items():
        if not isinstance(value, (str, bool)):
            raise InternalError(f"template {name}: {key} must be rendered SQL text or a boolean")
    statements: list[str] = []
    context: dict[str, Any] = {**parts, _STATEMENTS: statements}
    text = environment().get_template(template_name(name, target)).render(**context)
    return Script(text, tuple(statements))


def render_script(name: str, target: DialectProfile, **parts: str | bool) -> str:
    """The text of the skeleton ``name`` rendered for ``target`` (:func:`render_statements`)."""
    return render_statements(name, target, **parts).text


def split_statements(script: str, target: DialectProfile) -> list[str]:
    """The statements of a printed script, split at semicolons that sqlglot's tokenizer sees as
    separators: for reading back SQL written elsewhere (the outputs never split their own).

    Semicolons inside quoted identifiers, string literals and comments do not split. Statements that
    are only comments are dropped.
    """
    tokens = Dialect.get_or_raise(target.sqlglot).tokenize(script)
    out: list[str] = []
    start, pending = 0, False
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            if pending:
                out.append(script[start:token.start].strip())
            start, pending = token.end + 1, False
        else:
            pending = True
    if pending:
        out.append(script[start:].strip())
    return out
