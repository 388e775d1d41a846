"""Privacy models, registered by their spec key. Adding a model touches its own module only."""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlanon.domain.models.base import MODELS, Monotonicity, PrivacyModel, register
from sqlanon.errors import InternalError, SpecError, did_you_mean

_TEXT_PARAMETERS = {"attribute": "an attribute name (text)",
                    "subset": "a table name or a CSV/Parquet file path"}
"""How messages name the text parameters of models (every ``str`` field is checked)."""


def build_model(key: str, params: Any, path: str, source: str | None = None) -> PrivacyModel:
    """Construct a model from its spec entry, with errors that name the key path."""
    try:
        cls = MODELS.get(key)
    except SpecError as e:
        raise SpecError(e.rule, path=path, source=source) from None
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise SpecError(f"the parameters of {key} must be a mapping, got {type(params).__name__}",
                        path=path, source=source)
    if not dataclasses.is_dataclass(cls):  # its fields are the spec's parameters
        raise InternalError(f"privacy model {key!r} is not a dataclass")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for p in params:
        if p not in fields:
            raise SpecError(f"unknown parameter {p!r} for {key}; parameters: {', '.join(fields)}."
                            + did_you_mean(p, fields), path=f"{path}.{p}", source=source)
    for name, f in fields.items():
        if name not in params and f.default is dataclasses.MISSING \
                and f.default_factory is dataclasses.MISSING:
            raise SpecError(f"{key} needs parameter {name!r}", path=path, source=source)
        if f.type == "str" and name in params and (not isinstance(params[name], str) or not params[name]):
            what = _TEXT_PARAMETERS.get(name, "text")
            raise SpecError(f"must be {what}, got {params[name]!r}", path=f"{path}.{name}", source=source)
    try:
        return cls(**params)
    except SpecError as e:
        sub = f"{path}.{e.path}" if e.path else path
        raise SpecError(e.rule, path=sub, source=source) from None
    except TypeError as e:
        raise SpecError(f"bad parameters for {key}: {e}", path=path, source=source) from None


__all__ = ["MODELS", "Monotonicity", "PrivacyModel", "build_model", "register"]
