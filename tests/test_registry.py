"""The one registry helper: names to parts, loaded from their modules on first lookup."""

from __future__ import annotations

import sys

import pytest

from sqlanon.errors import SpecError
from sqlanon.registry import Registry


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """A package ``plugins_pkg`` of two modules that register into ``plugins_pkg.REG``, and a module
    outside it."""
    pkg = tmp_path / "plugins_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from sqlanon.registry import Registry\n"
        "REG = Registry('part', packages=('plugins_pkg',), modules=('plugins_extra',), sort=False)\n")
    (pkg / "zeta.py").write_text("from plugins_pkg import REG\nREG.add('zeta', 26, letter=True)\n")
    (pkg / "alpha.py").write_text("from plugins_pkg import REG\nREG.add('alpha', 1, letter=True)\n")
    (tmp_path / "plugins_extra.py").write_text("from plugins_pkg import REG\nREG.add('extra', 0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in [m for m in sys.modules if m.startswith("plugins_")]:
        del sys.modules[name]


def test_modules_and_every_module_of_a_package_are_imported_on_first_lookup(plugins):
    import plugins_pkg

    assert "plugins_pkg.alpha" not in sys.modules
    assert plugins_pkg.REG.get("zeta") == 26
    assert {"plugins_pkg.alpha", "plugins_pkg.zeta", "plugins_extra"} <= set(sys.modules)
    assert plugins_pkg.REG.traits("alpha") == {"letter": True}
    # listed modules first, then the package's modules by name: the registration order
    assert plugins_pkg.REG.names() == ["extra", "alpha", "zeta"]
    assert [name for name, _ in plugins_pkg.REG.items()] == ["extra", "alpha", "zeta"]


def test_a_sorted_registry_imports_only_the_module_named_after_the_entry(tmp_path, monkeypatch):
    """A lookup finds ``<package>.<name>`` alone; a name of no module loads every module."""
    pkg = tmp_path / "named_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from sqlanon.registry import Registry\nREG = Registry('part', packages=('named_pkg',))\n")
    (pkg / "zeta.py").write_text("from named_pkg import REG\nREG.add('zeta', 26)\n")
    (pkg / "alpha.py").write_text("from named_pkg import REG\nREG.add('alpha', 1)\nREG.add('beta', 2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        import named_pkg

        assert named_pkg.REG.get("zeta") == 26
        assert "named_pkg.zeta" in sys.modules and "named_pkg.alpha" not in sys.modules
        assert named_pkg.REG.get("beta") == 2  # in a module of another name: every module is loaded
        assert named_pkg.REG.names() == ["alpha", "beta", "zeta"]
        with pytest.raises(SpecError, match="unknown part '_init'"):
            named_pkg.REG.get("_init")
    finally:
        for name in [m for m in sys.modules if m.startswith("named_pkg")]:
            del sys.modules[name]


def test_names_are_sorted_unless_asked_for_registration_order():
    sorted_reg, ordered = Registry("shape"), Registry("shape", sort=False)
    for reg in (sorted_reg, ordered):
        reg.add("square", 4)
        reg.add("circle", 0)
    assert sorted_reg.names() == ["circle", "square"]
    assert ordered.names() == ["square", "circle"]
    assert list(ordered) == ["square", "circle"] and len(ordered) == 2 and "circle" in ordered


def test_unknown_name_default_message_and_custom_hook():
    reg = Registry("shape")
    reg.add("square", 4)
    with pytest.raises(SpecError, match=r"^unknown shape 'sqare'\. Did you mean 'square'\? Known: square$"):
        reg.get("sqare")
    with pytest.raises(SpecError, match=r"^unknown shape \['x'\]\. Known: square$"):
        reg.get(["x"])  # unhashable: the same error, not a TypeError
    assert ["x"] not in reg

    def hook(kind, name, known):
        return KeyError(f"no {kind} {name}; use one of {'/'.join(known)}")

    custom = Registry("shape", unknown=hook)
    custom.add("square", 4)
    custom.add("circle", 0)
    with pytest.raises(KeyError, match="no shape hexagon; use one of circle/square"):
        custom.traits("hexagon")


def test_one_name_takes_one_object_and_can_be_removed():
    reg = Registry("shape")
    obj = object()
    reg.add("square", obj)
    reg.add("square", obj)  # the same object again (a module imported twice) is harmless
    with pytest.raises(ValueError, match="two shapes registered as 'square'"):
        reg.add("square", object())
    reg.remove("square")
    assert "square" not in reg and reg.names() == []
    reg.add("square", object())
