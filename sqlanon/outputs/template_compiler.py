"""Compile the SQL templates into pieces that :mod:`sqlanon.outputs.scripts` joins without Jinja.

``python -m sqlanon.outputs.template_compiler`` rewrites ``sql_templates/compiled.json`` after a
template changed (a test fails until it is rewritten; until then Jinja renders the templates).

Each template is rendered once per value of its booleans (the names its ``{% if %}`` tests read), with
every other name it reads replaced by a marker: the rendered text, and the text of each
``{% filter statement %}`` block before it is stripped, are cut at the markers into literal pieces and
the names between them. Jinja inserts a part's text unchanged (no escaping), so joining the pieces
with the parts' texts gives what it renders with them.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from sqlanon.errors import InternalError
from sqlanon.outputs.scripts import (
    COMPILED,
    PART,
    STATEMENTS,
    make_environment,
    template_files,
    templates_digest,
    templates_folder,
)

_MARKER = "\x01{}\x02"
_MARKED = re.compile("\x01([A-Za-z_][A-Za-z0-9_]*)\x02")


def _record_body(context: Any, body: str) -> str:
    context[STATEMENTS].append(body)  # as written; joined with the parts, then stripped
    return body


def pieces(rendered: str) -> list[str]:
    """``rendered`` cut at the markers: literal text, and each marked name after :data:`PART`."""
    out: list[str] = []
    for i, piece in enumerate(_MARKED.split(rendered)):
        if i % 2:
            out.append(PART + piece)
        elif piece:
            out.append(piece)
    return out


def compile_template(env: Any, name: str, source: str) -> dict[str, Any]:
    from jinja2 import meta, nodes

    tree = env.parse(source)
    names = meta.find_undeclared_variables(tree)
    tests = [branch.test for branch in tree.find_all(nodes.If)]
    booleans = sorted({n.name for t in tests for n in [t, *t.find_all(nodes.Name)]
                       if isinstance(n, nodes.Name)})
    texts = sorted(names - set(booleans))
    shown = {n.name for out in tree.find_all(nodes.Output) for n in out.find_all(nodes.Name)}
    if set(booleans) & shown:
        raise InternalError(f"template {name}: {', '.join(sorted(set(booleans) & shown))} is both "
                            "tested and written")
    template = env.get_template(name)
    variants = {}
    for values in itertools.product([False, True], repeat=len(booleans)):
        bodies: list[str] = []
        text = template.render(**{t: _MARKER.format(t) for t in texts}, **dict(zip(booleans, values)),
                               **{STATEMENTS: bodies})
        variants["".join("1" if v else "0" for v in values)] = {
            "text": pieces(text), "statements": [pieces(body) for body in bodies]}
    return {"booleans": booleans, "parts": texts, "variants": variants}


def compile_templates() -> dict[str, Any]:
    """Every template of ``sql_templates/`` compiled, with the digest of the files compiled."""
    folder = templates_folder()
    env = make_environment(_record_body)
    return {"digest": templates_digest(folder),
            "templates": {f.name: compile_template(env, f.name, f.read_text(encoding="utf-8"))
                          for f in template_files(folder)}}


def text(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def main() -> None:
    path = templates_folder() / COMPILED
    with open(str(path), "w", encoding="utf-8") as f:
        f.write(text(compile_templates()))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
