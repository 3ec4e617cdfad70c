"""Nothing outside a scheme's own package names the scheme (docs/architecture.md, "How to add a scheme").

A scheme's knowledge lives in ``schemes/<name>/`` (its plug-ins included), its templates in
``templates/schemes/<name>/`` and its scripts in ``static/schemes/``. Everywhere else in the
product (annotation, schemes, hits, review, analysis, crowdlex) a module may not import
``schemes.<name>``, nor hold a string literal that equals a scheme's name (case-insensitive) or
names ``schemes.<name>`` / ``schemes/<name>/``; a template or script may not contain a scheme's
name or its title (up to its parenthesis) (Django ``{# #}`` comments aside). Docstrings are prose and
migrations are history: neither is read. The scheme names come from the registry.

``REMAINING`` lists the offenders still to be fixed, one reason each; the test fails when an entry
no longer offends, so the list only shrinks.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ["annotation", "schemes", "hits", "review", "analysis", "crowdlex"]

# "<path>: <what>" -> why it is still there.
REMAINING: dict[str, str] = {
    "schemes/generation/__init__.py: import schemes.swords": "generation runs SWORDS's step 1, with its settings",
    "schemes/prolex/__init__.py: import schemes.swords": "ProLex plans its HITs with SWORDS's per-target seeding",
    "schemes/swords/__init__.py: literal 'generation'": "SWORDS's step 1 names the scheme that runs it (Step.scheme)",
    "schemes/templatetags/sws_tags.py: import schemes.sws": "template tags live in the app's templatetags package",
    "static/hits/hit_page.js: word 'generation'": "a comment of the page shell names the generation task's page",
}


def scheme_words() -> dict[str, set[str]]:
    """Each registered scheme's name -> the words that name it: its name, and its title up to "(".

    ``"Smart Word Suggestions (spans and suggestions)"`` names SWS by its first three words.
    """
    from schemes import registered

    return {
        scheme.name.lower(): {scheme.name.lower(), scheme.title.split("(")[0].strip().lower()}
        for scheme in registered()
    }


def owner(path: Path, names: set[str]) -> str | None:
    """The scheme whose package holds ``path`` (``schemes/<name>/...``), if any."""
    parts = path.relative_to(ROOT).parts
    if len(parts) > 2 and parts[0] == "schemes" and parts[1] in names:
        return parts[1]
    return None


def docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def python_offences(path: Path, names: set[str]) -> list[tuple[int, str]]:
    mine = owner(path, names)
    others = names - {mine} if mine else names
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    prose = docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        for name in sorted(others):
            if any(module == f"schemes.{name}" or module.startswith(f"schemes.{name}.") for module in modules):
                assert isinstance(node, ast.Import | ast.ImportFrom)
                found.append((node.lineno, f"import schemes.{name}"))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            text = node.value.lower()
            for name in sorted(others):
                if text == name or f"schemes.{name}" in text or f"schemes/{name}/" in text:
                    found.append((node.lineno, f"literal {node.value!r}"[:80]))
    return found


def word_pattern(word: str) -> str:
    """``word`` standing alone (no letter or digit either side); a title's spaces match any spacing."""
    return r"(?<![a-z0-9])" + r"\s+".join(re.escape(part) for part in word.split()) + r"(?![a-z0-9])"


def page_offences(path: Path, words: dict[str, set[str]]) -> list[tuple[int, str]]:
    relative = path.relative_to(ROOT).parts
    if relative[:2] == ("static", "schemes"):
        return []
    allowed = relative[2] if relative[:2] == ("templates", "schemes") and len(relative) > 3 else None
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        text = re.sub(r"\{#.*?#\}", lambda match: "\n" * match.group(0).count("\n"), text, flags=re.S)
    found: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for name, named_by in sorted(words.items()):
            if name == allowed:
                continue
            for word in sorted(named_by):
                if re.search(word_pattern(word), line, flags=re.I):
                    found.append((number, f"word {word!r}"))
    return found


def offences() -> dict[str, list[int]]:
    """``"<path>: <what>"`` -> the lines where it occurs, over the whole product."""
    words = scheme_words()
    names = set(words)
    found: dict[str, list[int]] = {}
    for app in PRODUCT:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for line, what in python_offences(path, names):
                found.setdefault(f"{path.relative_to(ROOT)}: {what}", []).append(line)
    pages = sorted((ROOT / "templates").rglob("*.html")) + sorted((ROOT / "static").rglob("*.js"))
    for path in pages:
        for line, what in page_offences(path, words):
            found.setdefault(f"{path.relative_to(ROOT)}: {what}", []).append(line)
    return found


def test_the_registry_knows_the_built_in_schemes() -> None:
    # The test reads its names from the registry: an empty registry would make it pass vacuously.
    assert len(scheme_words()) >= 4


def test_nothing_outside_a_scheme_names_it() -> None:
    found = offences()
    unexpected = {key: lines for key, lines in found.items() if key not in REMAINING}
    assert unexpected == {}


def test_the_remaining_list_only_shrinks() -> None:
    found = offences()
    mended = sorted(key for key in REMAINING if key not in found)
    assert mended == [], "these no longer offend: take them out of REMAINING"
