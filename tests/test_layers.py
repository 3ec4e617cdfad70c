"""Imports run one way (docs/architecture.md): annotation <- schemes <- hits <- review <- analysis.

Every module of an app may import only the apps below it, never one above; a lazy import inside
a function counts as well. The project package ``crowdlex`` (settings, URLs, the Celery app, auth)
wires the apps together and is open to all of them; tests and benchmarks sit outside the layers.

A scheme's plug-in of a higher room (``schemes.PLUGINS``: ``schemes/<name>/figures.py`` or the
package ``schemes/<name>/exports/``..., in the package of the scheme's module, nested in another
scheme's package or not) belongs to the room it plugs into: it may import that room and the rooms
below it. Everything else in ``schemes/`` stays in the schemes room.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["annotation", "schemes", "hits", "review", "analysis"]


def imported_apps(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
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
    for path in sorted((ROOT / app).rglob("*.py")):
        room = room_of(path)
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

    assert set(LAYERS) <= set(settings.INSTALLED_APPS)


# A write of the counter: an ORM update's keyword (``assignments_active=F(...)``) or an SQL SET
# (``assignments_active = h.assignments_active + 1``); not a comparison, not the field's declaration.
COUNTER_WRITE = re.compile(r"\bassignments_active\s*=(?!=)(?!\s*models\.)")


def test_only_hits_slots_writes_the_hit_slot_counter() -> None:
    writers = sorted(
        str(path.relative_to(ROOT))
        for app in LAYERS
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
