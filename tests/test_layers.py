"""Imports run one way (docs/architecture.md):
annotation <- schemes <- crowds.interface <- hits <- crowds <- review <- analysis.

Every module of an app may import only the apps below it, never one above; a lazy import inside
a function counts as well. The project package ``crowdlex`` (settings, URLs, the Celery app, auth)
wires the apps together and is open to all of them; tests and benchmarks sit outside the layers.

A scheme's plug-in of a higher room (``schemes.PLUGINS``: ``schemes/<name>/figures.py`` or the
package ``schemes/<name>/exports/``..., in the package of the scheme's module, nested in another
scheme's package or not) belongs to the room it plugs into: it may import that room and the rooms
below it. Everything else in ``schemes/`` stays in the schemes room.

The crowds app is two rooms: what the rest of the code asks of a crowd (``crowds/interface/``: the
backend interface, the cost rule and the registry, which finds the backends by their settings) sits
below hits, and the backends and the crowd services built on hits sit above it. An import only type
checkers read (under ``if TYPE_CHECKING:``) runs nothing and draws no arrow.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["annotation", "schemes", "crowds.interface", "hits", "crowds", "review", "analysis"]
INTERFACE = "crowds.interface"


def _room_of_module(module: str) -> str:
    return INTERFACE if module == INTERFACE or module.startswith(INTERFACE + ".") else module.split(".")[0]


def _type_checking_only(tree: ast.AST) -> set[ast.AST]:
    """The import statements under ``if TYPE_CHECKING:``."""
    found: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                found.update(inner for inner in ast.walk(statement) if isinstance(inner, ast.Import | ast.ImportFrom))
    return found


def imported_apps(path: Path) -> set[str]:
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skipped = _type_checking_only(tree)
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "crowds":
                found.update(INTERFACE if alias.name == "interface" else "crowds" for alias in node.names)
            else:
                found.add(_room_of_module(node.module))
        elif isinstance(node, ast.Import):
            found.update(_room_of_module(alias.name) for alias in node.names)
    return found & set(LAYERS)


def scheme_folders() -> list[tuple[str, ...]]:
    """The folders of the registered schemes' packages (``schemes.scheme_package``), deepest first:
    ``schemes/swords`` and, nested in it, ``schemes/swords/proposals`` (the generation task)."""
    from schemes import registered, scheme_package

    packages = {scheme_package(scheme) for scheme in registered()}
    folders = {tuple(package.split(".")) for package in packages if package and package.startswith("schemes.")}
    return sorted(folders, key=len, reverse=True)


def room_of(path: Path) -> str:
    """The room a module of the layers belongs to: its app's, or for a scheme's plug-in the room
    it plugs into (``schemes.PLUGINS``), found in the package of the scheme, nested or not."""
    from schemes import PLUGINS

    parts = path.relative_to(ROOT).parts
    if parts[:2] == ("crowds", "interface"):
        return INTERFACE
    for folder in scheme_folders():
        if parts[: len(folder)] != folder or len(parts) <= len(folder):
            continue
        name = parts[len(folder)]
        plugin = name.removesuffix(".py")
        if plugin in PLUGINS and (len(parts) > len(folder) + 1 or name.endswith(".py")):
            return PLUGINS[plugin]
        break
    return parts[0]


@pytest.mark.parametrize("app", LAYERS)
def test_an_app_imports_only_the_apps_below_it(app: str) -> None:
    offenders = {}
    for path in sorted((ROOT / app.replace(".", "/")).rglob("*.py")):
        room = room_of(path)
        if room != app and app == "crowds" and room == INTERFACE:
            continue
        above = set(LAYERS[LAYERS.index(room) + 1 :])
        if imported_apps(path) & above:
            offenders[str(path.relative_to(ROOT))] = sorted(imported_apps(path) & above)
    assert offenders == {}


def test_a_plugin_belongs_to_the_room_it_plugs_into() -> None:
    from schemes import PLUGINS

    assert set(PLUGINS.values()) <= set(LAYERS)
    assert room_of(ROOT / "schemes/swords/figures.py") == PLUGINS["figures"]
    assert room_of(ROOT / "schemes/swords/exports/dataset.py") == PLUGINS["exports"]
    assert room_of(ROOT / "schemes/swords/planning.py") == "schemes"
    # A scheme nested in another's package keeps its plug-ins in its own package.
    assert room_of(ROOT / "schemes/swords/proposals/figures.py") == PLUGINS["figures"]
    assert room_of(ROOT / "schemes/swords/proposals/rules.py") == "schemes"
    assert room_of(ROOT / "schemes/swords/proposals/__init__.py") == "schemes"
    # A module of the schemes room that only shares a plug-in's name in another place stays there.
    assert room_of(ROOT / "schemes/figures.py") == "schemes"


def test_the_settings_name_every_app_of_the_layers() -> None:
    from django.conf import settings

    assert {layer.split(".")[0] for layer in LAYERS} <= set(settings.INSTALLED_APPS)


def test_the_crowds_interface_is_a_room_below_hits_and_the_backends_one_above() -> None:
    assert room_of(ROOT / "crowds/interface/base.py") == INTERFACE
    assert room_of(ROOT / "crowds/mturk/backend.py") == "crowds"
    assert LAYERS.index(INTERFACE) < LAYERS.index("hits") < LAYERS.index("crowds")
    assert imported_apps(ROOT / "hits/budget.py") >= {INTERFACE}
    assert "crowds" not in imported_apps(ROOT / "hits/budget.py")


# A write of the counter: an ORM update's keyword (``assignments_active=F(...)``) or an SQL SET
# (``assignments_active = h.assignments_active + 1``); not a comparison, not the field's declaration.
COUNTER_WRITE = re.compile(r"\bassignments_active\s*=(?!=)(?!\s*models\.)")


def test_only_hits_slots_writes_the_hit_slot_counter() -> None:
    writers = sorted(
        str(path.relative_to(ROOT))
        for app in {layer.split(".")[0] for layer in LAYERS}
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts and COUNTER_WRITE.search(path.read_text(encoding="utf-8"))
    )
    assert writers == ["hits/slots.py"]


def test_the_counter_write_pattern_sees_both_spellings() -> None:
    assert COUNTER_WRITE.search('HIT.objects.update(assignments_active=F("assignments_active") + 1)')
    assert COUNTER_WRITE.search("UPDATE hit h SET assignments_active = h.assignments_active + 1 FROM pick")
    assert not COUNTER_WRITE.search("WHERE h.assignments_active < h.assignments_required")
    assert not COUNTER_WRITE.search("if hit.assignments_active == 0:")
    assert not COUNTER_WRITE.search("    assignments_active = models.PositiveSmallIntegerField(default=0)")
