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
below hits, and the backends and the crowd services built on hits sit above it.

Inside an app no modules import each other in a circle (below: what counts as an import), and only
``crowdlex/dialect.py`` branches on the database (PostgreSQL or the embedded SQLite).
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["annotation", "schemes", "crowds.interface", "hits", "crowds", "review", "analysis"]
INTERFACE = "crowds.interface"
# The apps' folders (the crowds app holds two rooms).
APPS = ["annotation", "schemes", "hits", "crowds", "review", "analysis"]


def _room_of_module(module: str) -> str:
    return INTERFACE if module == INTERFACE or module.startswith(INTERFACE + ".") else module.split(".")[0]


def imported_apps(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
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
        if app == "crowds" and room == INTERFACE:
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

    assert set(APPS) <= set(settings.INSTALLED_APPS)


def test_the_crowds_interface_is_a_room_below_hits_and_the_backends_one_above() -> None:
    assert room_of(ROOT / "crowds/interface/base.py") == INTERFACE
    assert room_of(ROOT / "crowds/mturk/backend.py") == "crowds"
    assert LAYERS.index(INTERFACE) < LAYERS.index("hits") < LAYERS.index("crowds")
    assert INTERFACE in imported_apps(ROOT / "hits/budget.py")
    assert "crowds" not in imported_apps(ROOT / "hits/budget.py")


# A write of the counter: an ORM update's keyword (``assignments_active=F(...)``) or an SQL SET
# (``assignments_active = h.assignments_active + 1``); not a comparison, not the field's declaration.
COUNTER_WRITE = re.compile(r"\bassignments_active\s*=(?!=)(?!\s*models\.)")


def test_only_hits_slots_writes_the_hit_slot_counter() -> None:
    writers = sorted(
        str(path.relative_to(ROOT))
        for app in APPS
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


# ---- import circles --------------------------------------------------------------------------


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, modules: set[str], root: Path = ROOT) -> set[str]:
    """The modules of ``modules`` that ``path`` imports anywhere in its text (see above)."""
    name = module_name(path, root)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            named = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
            named = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for module in named:
            while module and module not in modules:
                module = module.rpartition(".")[0]
            if module and module != name:
                found.add(module)
    return found


def import_circles(folder: Path, root: Path = ROOT) -> list[set[str]]:
    """The circles among the modules under ``folder`` (the strongly connected components of their
    import arrows that hold more than one module), by Tarjan's algorithm."""
    paths = {module_name(path, root): path for path in folder.rglob("*.py") if "migrations" not in path.parts}
    arrows = {name: imported_modules(path, set(paths), root) for name, path in paths.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[set[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for target in sorted(arrows[module]):
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(component)

    for module in sorted(arrows):
        if module not in order:
            visit(module)
    return circles


@pytest.mark.parametrize("app", [*APPS, "crowdlex"])
def test_no_import_circle_inside_an_app(app: str) -> None:
    """A circle is two or more modules of one app that reach each other through imports.

    Every import statement draws an arrow, wherever it stands: at module level, inside a function
    (a lazy import only hides the circle until the function runs) or under ``if TYPE_CHECKING:``
    (the types still tie the two modules together). An arrow goes to the module an import names
    (``from a.b import c``: to ``a.b.c`` when that is a module, else to ``a.b``); a package's
    ``__init__`` is a module of its own, and the packages an import passes through on the way
    (``a`` for ``a.b``) are not counted. A Celery task imports its service inside its function,
    so the service names the task by its registered name (``app.tasks[...]``) rather than
    importing it."""
    assert import_circles(ROOT / app) == []


def test_a_circle_is_found_wherever_its_imports_stand(tmp_path: Path) -> None:
    app = tmp_path / "app"
    (app / "sub").mkdir(parents=True)
    for name in ("__init__.py", "sub/__init__.py", "alone.py"):
        (app / name).write_text("")
    # Module level one way, inside a function the other.
    (app / "tasks.py").write_text("def run():\n    from app.services import work\n")
    (app / "services.py").write_text("from app.tasks import run\n")
    # Under TYPE_CHECKING one way, a relative import the other.
    (app / "sub" / "kinds.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .rules import Rule\n"
    )
    (app / "sub" / "rules.py").write_text("from app.sub import kinds\nimport app.alone\n")
    circles = import_circles(app, root=tmp_path)
    assert sorted(map(sorted, circles)) == [["app.services", "app.tasks"], ["app.sub.kinds", "app.sub.rules"]]
    # A task that names its service's task by its registered name draws no arrow back.
    (app / "services.py").write_text("from crowdlex.celery import app\nTASK = 'app.tasks.run'\n")
    assert sorted(map(sorted, import_circles(app, root=tmp_path))) == [["app.sub.kinds", "app.sub.rules"]]


# ---- the database dialect --------------------------------------------------------------------
#
# What differs between PostgreSQL and the embedded SQLite lives in crowdlex/dialect.py: a branch
# on the database's vendor, a feature flag of Django's connection, an expression written per
# vendor (``as_sqlite``), or a statement only PostgreSQL runs (COPY through the driver, advisory
# locks, transaction ids) anywhere else fails here. Migrations are history and stay as written;
# the settings choose the database and so name it.
VENDOR_BRANCH = re.compile(
    r"\.vendor\b|\bfeatures\.has_|def as_(sqlite|postgresql|mysql|oracle)\b|copy_expert|pg_(try_)?advisory|txid_"
)


def test_only_the_dialect_module_branches_on_the_database() -> None:
    branches = sorted(
        f"{path.relative_to(ROOT)}:{number}"
        for app in [*APPS, "crowdlex"]
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts and path.relative_to(ROOT).as_posix() != "crowdlex/dialect.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if VENDOR_BRANCH.search(line)
    )
    assert branches == []


def test_the_vendor_pattern_sees_each_kind_of_branch() -> None:
    assert VENDOR_BRANCH.search('if connection.vendor == "postgresql":')
    assert VENDOR_BRANCH.search("lock = ' FOR UPDATE' if connection.features.has_select_for_update else ''")
    assert VENDOR_BRANCH.search("    def as_sqlite(self, compiler, connection, **extra):")
    assert VENDOR_BRANCH.search('cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [space, key])')
    assert not VENDOR_BRANCH.search("dialect().advisory_lock(LOCK_SPACE, benchmark_id)")
    assert not VENDOR_BRANCH.search("vendors = ['mturk']")
