"""Privacy models, registered by their spec key. Adding a model touches its own module only."""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.domain.models.base import Monotonicity, PrivacyModel

_MODULES = (
    "sqlanon.domain.models.k_anonymity",
    "sqlanon.domain.models.l_diversity",
    "sqlanon.domain.models.t_closeness",
    "sqlanon.domain.models.disclosure",
    "sqlanon.domain.models.presence",
    "sqlanon.domain.models.numeric_sensitive",
    "sqlanon.domain.models.average_risk",
)


def registry() -> dict[str, type[PrivacyModel]]:
    """Spec key -> model class, for every model module present."""
    out: dict[str, type[PrivacyModel]] = {}
    for name in _MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
            continue
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, PrivacyModel) and "name" in vars(obj) \
                    and obj.__module__ == name:
                out[obj.name] = obj
    return out


_TEXT_PARAMETERS = {"attribute": "an attribute name (text)",
                    "subset": "a table name or a CSV/Parquet file path"}
"""How messages name the text parameters of models (every ``str`` field is checked)."""


def build_model(key: str, params: Any, path: str, source: str | None = None) -> PrivacyModel:
    """Construct a model from its spec entry, with errors that name the key path."""
    models = registry()
    if key not in models:
        raise SpecError(f"unknown privacy model {key!r}; known: {', '.join(sorted(models))}."
                        + did_you_mean(key, models), path=path, source=source)
    cls = models[key]
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise SpecError(f"the parameters of {key} must be a mapping, got {type(params).__name__}",
                        path=path, source=source)
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


__all__ = ["Monotonicity", "PrivacyModel", "build_model", "registry"]
