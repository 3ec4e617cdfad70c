"""Imports run one way (docs/architecture.md): annotation <- schemes <- hits <- review <- analysis.

Every module of an app may import only the apps below it, never one above; a lazy import inside
a function counts as well. The project package ``crowdlex`` (settings, URLs, the Celery app, auth)
wires the apps together and is open to all of them; tests and benchmarks sit outside the layers.
"""

import ast
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


@pytest.mark.parametrize("app", LAYERS)
def test_an_app_imports_only_the_apps_below_it(app: str) -> None:
    above = set(LAYERS[LAYERS.index(app) + 1 :])
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_apps(path) & above)
        for path in sorted((ROOT / app).rglob("*.py"))
        if imported_apps(path) & above
    }
    assert offenders == {}


def test_the_settings_name_every_app_of_the_layers() -> None:
    from django.conf import settings

    assert set(LAYERS) <= set(settings.INSTALLED_APPS)


def test_only_hits_slots_writes_the_hit_slot_counter() -> None:
    writers = sorted(
        str(path.relative_to(ROOT))
        for app in LAYERS
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts and "assignments_active=" in path.read_text(encoding="utf-8")
    )
    assert writers == ["hits/slots.py"]
