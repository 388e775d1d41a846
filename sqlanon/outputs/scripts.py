"""Multi-statement SQL skeletons: Jinja templates in ``sql_templates/``, dispatched per dialect.

``<dialect>__<name>.sql.j2`` is used when it exists, else ``default__<name>.sql.j2`` (as dbt dispatches
macros). Templates receive only SQL text that sqlglot rendered (quoted identifiers, whole queries) and
booleans; user text never reaches a template directly.

Each statement of a template is one ``{% filter statement %}…{% endfilter %};`` block: the filter
records the statement as it is rendered (and writes it unchanged), so a rendered skeleton yields
its printed text and its list of statements at once, and no rendered text is ever split again (a
statement may be megabytes of inline VALUES, copied as few times as the rendering needs).

The templates are also kept compiled (``sql_templates/compiled.json``, written by
:mod:`sqlanon.outputs.template_compiler`): per template and value of its booleans, the pieces of
its text and of each statement, literal text and the names of the parts that go between. Rendering
from them joins the pieces, which gives what Jinja renders without importing it (an import that
costs more than the rest of writing a small table). They are used only while they were compiled from
the templates as they are (a digest of the template files says so) and when every part a template
reads is given; otherwise Jinja renders the template, and reports what is missing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from sqlanon.errors import InternalError
from sqlanon.sql.dialects import DialectProfile

if TYPE_CHECKING:
    from importlib.abc import Traversable

    from jinja2 import Environment

STATEMENTS = "sqlanon_statements"
"""The context variable the ``statement`` filter appends each rendered statement to."""
COMPILED = "compiled.json"
"""The compiled templates' file, beside the templates."""
PART = "\0"
"""Starts a piece of a compiled template that names a part (the rest of the piece is its name)."""


@dataclass(frozen=True)
class Script:
    """A rendered skeleton: its text (as printed) and its statements (as run), in order."""

    text: str
    statements: tuple[str, ...]


def templates_folder() -> Traversable:
    # sql_templates/ at the top of the repository, shipped inside the package (sqlanon/sql_templates)
    return resources.files("sqlanon") / "sql_templates"


def template_files(folder: Traversable) -> list[Traversable]:
    return sorted((f for f in folder.iterdir() if f.name.endswith(".sql.j2")), key=lambda f: f.name)


def templates_digest(folder: Traversable) -> str:
    """A digest of every template's name and text: what the compiled templates were compiled from."""
    h = hashlib.sha256()
    for f in template_files(folder):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def make_environment(statement: Callable[[Any, str], str]) -> Environment:
    """The Jinja environment of the templates, with ``statement`` as the filter of that name
    (called with the render context and the block's text)."""
    # jinja2 is imported here, not with the module: rendering from the compiled templates does not need it
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, pass_context

    env = Environment(loader=FileSystemLoader(str(templates_folder())), undefined=StrictUndefined,
                      autoescape=False, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["statement"] = pass_context(statement)
    return env


def _record_statement(context: Any, body: str) -> str:
    statement = body.strip()  # the same string when the block has no surrounding whitespace
    if statement:
        context[STATEMENTS].append(statement)
    return body


@lru_cache(maxsize=1)
def environment() -> Environment:
    return make_environment(_record_statement)


@lru_cache(maxsize=1)
def compiled() -> Mapping[str, Any] | None:
    """The compiled templates by file name, or None when they are missing or were compiled from other
    templates than those in the folder."""
    folder = templates_folder()
    try:
        data = json.loads((folder / COMPILED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("digest") != templates_digest(folder):
        return None
    templates: Mapping[str, Any] = data["templates"]
    return templates


def template_name(name: str, target: DialectProfile) -> str:
    """The template that renders ``name`` for ``target`` (its own variant, else the default)."""
    candidates = [f"{target.name}__{name}.sql.j2", f"default__{name}.sql.j2"]
    known = compiled()
    if known is not None:
        found = next((c for c in candidates if c in known), None)
        if found is None:
            raise InternalError(f"no SQL template default__{name}.sql.j2")
        return found
    from jinja2 import TemplateNotFound

    try:
        return environment().select_template(candidates).name or ""
    except TemplateNotFound:
        raise InternalError(f"no SQL template default__{name}.sql.j2") from None


def joined(pieces: Iterable[str], parts: Mapping[str, str | bool]) -> str:
    """A compiled template's pieces with each part's text in its place."""
    return "".join(str(parts[p[1:]]) if p[:1] == PART else p for p in pieces)


def render_statements(name: str, target: DialectProfile, **parts: str | bool) -> Script:
    """Render the skeleton ``name`` for ``target`` with already-rendered SQL ``parts``."""
    for key, value in parts.items():
        if not isinstance(value, (str, bool)):
            raise InternalError(f"template {name}: {key} must be rendered SQL text or a boolean")
    template = template_name(name, target)
    entry = (compiled() or {}).get(template)
    if entry is not None and all(p in parts for p in (*entry["booleans"], *entry["parts"])):
        variant = entry["variants"]["".join("1" if parts[b] else "0" for b in entry["booleans"])]
        bodies = (joined(body, parts).strip() for body in variant["statements"])
        return Script(joined(variant["text"], parts), tuple(s for s in bodies if s))
    statements: list[str] = []
    context: dict[str, Any] = {**parts, STATEMENTS: statements}
    text = environment().get_template(template).render(**context)
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
