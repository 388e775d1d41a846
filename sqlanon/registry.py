"""One way to name pluggable parts: privacy models, metrics, strategies, mechanisms, algorithms,
hierarchy builders, output modes, engines and transformation methods.

A :class:`Registry` maps a name (the one users write in a spec or on the command line) to an object,
with optional traits (small facts the caller reads before using the object). Built-in entries live in
modules the registry imports on first lookup (``modules``, or every module of ``packages``), so a new
entry is one decorated definition in its own module, plus that module's name in the registry's list
when it is a new module outside the registry's packages. Looking up a name that is also the name of
a module of ``packages`` imports that module alone (in a registry whose names are sorted): a spec
naming ``k_anonymity`` does not import every privacy model.

The registry is reached by name, not by importing the modules behind it: a lower layer (the spec)
checks a name whose entry lives in a higher one (a method) without importing that method.

>>> shapes = Registry("shape")
>>> @shapes.register("square", corners=4)
... def square(side):
...     return side * side
>>> shapes.get("square")(3), shapes.traits("square")["corners"], shapes.names()
(9, 4, ['square'])
>>> shapes.get("sqare")
Traceback (most recent call last):
...
sqlanon.errors.SpecError: unknown shape 'sqare'. Did you mean 'square'? Known: square
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar

from sqlanon.errors import SpecError, did_you_mean

T = TypeVar("T")


def unknown_name(kind: str, name: str, known: Sequence[str]) -> Exception:
    """The default error for a name no entry has: it names the kind, suggests, and lists."""
    return SpecError(f"unknown {kind} {name!r}.{did_you_mean(name, known)} Known: {', '.join(known)}")


class Registry(Generic[T]):
    """Named entries of one kind, with traits, loaded from their modules on first use."""

    def __init__(self, kind: str, *, modules: Sequence[str] = (), packages: Sequence[str] = (),
                 unknown: Callable[[str, str, Sequence[str]], Exception] = unknown_name,
                 sort: bool = True) -> None:
        """``kind`` names the entries in messages; ``modules`` and every module of ``packages`` are
        imported on first lookup; ``unknown`` makes the error for a name without entry; ``sort``
        lists names sorted, or else in the order they were registered."""
        self.kind = kind
        self._modules = tuple(modules)
        self._packages = tuple(packages)
        self._unknown = unknown
        self._sort = sort
        self._entries: dict[str, T] = {}
        self._traits: dict[str, dict[str, Any]] = {}
        self._loaded = not (self._modules or self._packages)

    def register(self, name: str, **traits: Any) -> Callable[[T], T]:
        """Decorator: register the decorated object under ``name`` with ``traits``."""
        def add(obj: T) -> T:
            self.add(name, obj, **traits)
            return obj
        return add

    def add(self, name: str, obj: T, **traits: Any) -> None:
        """Register ``obj`` under ``name``; a second, different object for one name is a bug."""
        if name in self._entries and self._entries[name] is not obj:
            raise ValueError(f"two {self.kind}s registered as {name!r}")
        self._entries[name] = obj
        self._traits[name] = dict(traits)

    def remove(self, name: str) -> None:
        """Forget ``name`` (an entry registered for a while, as a test does)."""
        self._entries.pop(name, None)
        self._traits.pop(name, None)

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        modules = list(self._modules)
        for package in self._packages:
            path = importlib.import_module(package).__path__
            modules += sorted(f"{package}.{m.name}" for m in pkgutil.iter_modules(path))
        for module in modules:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as e:  # an optional built-in whose module is absent
                if e.name != module:
                    raise

    def _load_named(self, name: str) -> None:
        """Import only the module of ``packages`` named after ``name`` (``<package>.<name>``), when
        there is one: a lookup of such an entry does not import every module of the packages. The
        names are sorted, so the order in which entries are registered does not show."""
        if not self._sort or not name.isidentifier() or name.startswith("_"):
            return
        for package in self._packages:
            module = f"{package}.{name}"
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as e:
                if e.name != module:
                    raise

    def get(self, name: str) -> T:
        """The entry named ``name``, or the registry's error naming the known ones."""
        known = isinstance(name, str) and name in self._entries
        if not known and not self._loaded and isinstance(name, str):
            self._load_named(name)
            known = name in self._entries
        if not known:
            self._load()
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise self._unknown(self.kind, name, self.names()) from None

    def traits(self, name: str) -> Mapping[str, Any]:
        """The traits ``name`` was registered with."""
        self.get(name)
        return self._traits[name]

    def names(self) -> list[str]:
        """Every registered name, sorted (or in registration order)."""
        self._load()
        return sorted(self._entries) if self._sort else list(self._entries)

    def items(self) -> list[tuple[str, T]]:
        """``(name, entry)`` pairs, in the order of :meth:`names`."""
        return [(name, self._entries[name]) for name in self.names()]

    def __contains__(self, name: object) -> bool:
        self._load()
        try:
            return name in self._entries
        except TypeError:  # unhashable: no entry has it
            return False

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self._load()
        return len(self._entries)
