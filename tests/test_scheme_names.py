"""Nothing outside a scheme's own package names the scheme (docs/architecture.md, "How to add a scheme").

A scheme's knowledge lives in its package ``schemes/<package>/`` (its plug-ins included), its
templates in ``templates/schemes/<name>/`` and its scripts in ``static/schemes/``. A scheme's
package is the top package of its class's module, read from the registry: a scheme nested in
another's package (the generation task, ``schemes/swords/proposals/``) is that package's own, and
the two may name each other there. Everywhere else in the product (annotation, schemes, hits, crowds,
review, analysis, crowdlex) a module may not import ``schemes.<package>``, nor hold a string literal
that equals a scheme's name (case-insensitive), names ``schemes.<package>`` / ``schemes/<package>/``,
or holds, as a word standing alone, the name or title (up to its parenthesis) of a scheme a
benchmark may take ("Imports SWORDS JSON"); a template or script may not contain a scheme's name or
title (Django ``{# #}`` comments aside). Docstrings (the first string of a module, class or
function) are prose and migrations are history: neither is read.

``REMAINING`` lists the offenders still to be fixed, one reason each (none today); the test fails
when an entry no longer offends, so the list only shrinks.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ["annotation", "schemes", "hits", "crowds", "review", "analysis", "crowdlex"]

# "<path>: <what>" -> why it is still there.
REMAINING: dict[str, str] = {}


def scheme_words() -> dict[str, set[str]]:
    """Each registered scheme's name -> the words that name it: its name, and its title up to "(".

    ``"Smart Word Suggestions (spans and suggestions)"`` names SWS by its first three words.
    """
    from schemes import registered

    return {
        scheme.name.lower(): {scheme.name.lower(), scheme.title.split("(")[0].strip().lower()}
        for scheme in registered()
    }


def scheme_packages() -> dict[str, str]:
    """Each registered scheme's name -> the package of ``schemes/`` that holds it: the top package of
    its module (the generation task, ``schemes.swords.proposals``, is SWORDS's own: ``swords``)."""
    from schemes import registered

    found: dict[str, str] = {}
    for scheme in registered():
        module = type(scheme).__module__.split(".")
        if module[0] == "schemes" and len(module) > 1:
            found[scheme.name.lower()] = module[1]
    return found


def sharing(package: str | None) -> set[str]:
    """The schemes whose knowledge lives in ``schemes/<package>/``."""
    return {name for name, top in scheme_packages().items() if top == package} if package else set()


def owners(relative: tuple[str, ...]) -> set[str]:
    """The schemes whose package holds the file at ``relative`` (``schemes/<package>/...``), if any."""
    return sharing(relative[1]) if len(relative) > 2 and relative[0] == "schemes" else set()


def docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def word_pattern(word: str) -> str:
    """``word`` standing alone (no letter or digit either side); a title's spaces match any spacing."""
    return r"(?<![a-z0-9])" + r"\s+".join(re.escape(part) for part in word.split()) + r"(?![a-z0-9])"


def named_words() -> dict[str, set[str]]:
    """The words a string literal may not hold, standing alone, outside the scheme's package: those
    of each scheme a benchmark may take. A scheme that only runs another's step (the generation
    task) is named in strings by its name alone, not as a word: "generation" is also what ``hits``
    calls making a batch's HITs."""
    from schemes import benchmark_schemes

    words = scheme_words()
    return {scheme.name.lower(): words[scheme.name.lower()] for scheme in benchmark_schemes()}


# A word followed by "library" names the library of that name (the swords library: Lee et al.'s
# code, whose ids and result format every benchmark is split and evaluated by), not the scheme.
LIBRARY = r"(?!\s+library)"


def names_a_scheme(text: str, *, name: str, words: set[str], package: str) -> bool:
    """Whether ``text`` is the scheme's name, names its package, or holds one of ``words`` standing
    alone (not as the name of a library)."""
    lowered = text.lower()
    if lowered == name or f"schemes.{package}" in lowered or f"schemes/{package}/" in lowered:
        return True
    return any(re.search(word_pattern(word) + LIBRARY, lowered) for word in words)


def python_offences(
    relative: tuple[str, ...], source: str, words: dict[str, set[str]], packages: dict[str, str]
) -> list[tuple[int, str]]:
    """What a module at ``relative`` holds that names a scheme other than its package's own: an
    import of the scheme's package, a string literal (docstrings aside) that names it
    (``names_a_scheme``, with the words of ``words``)."""
    others = sorted(set(packages) - owners(relative))
    tree = ast.parse(source, filename="/".join(relative))
    prose = docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        for package in sorted({packages[name] for name in others} - {relative[1]}):
            if any(module == f"schemes.{package}" or module.startswith(f"schemes.{package}.") for module in modules):
                assert isinstance(node, ast.Import | ast.ImportFrom)
                found.append((node.lineno, f"import schemes.{package}"))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            for name in others:
                if names_a_scheme(node.value, name=name, words=words.get(name, set()), package=packages[name]):
                    found.append((node.lineno, f"literal {node.value!r}"[:80]))
                    break
    return found


def page_offences(relative: tuple[str, ...], text: str, words: dict[str, set[str]]) -> list[tuple[int, str]]:
    """The words of a template or script at ``relative`` that name a scheme other than the one whose
    folder (``templates/schemes/<name>/``) holds it, or those sharing its package."""
    if relative[:2] == ("static", "schemes"):
        return []
    allowed: set[str] = set()
    if relative[:2] == ("templates", "schemes") and len(relative) > 3:
        allowed = {relative[2]} | sharing(scheme_packages().get(relative[2]))
    if relative[-1].endswith(".html"):
        text = re.sub(r"\{#.*?#\}", lambda match: "\n" * match.group(0).count("\n"), text, flags=re.S)
    found: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for name, named_by in sorted(words.items()):
            if name in allowed:
                continue
            for word in sorted(named_by):
                if re.search(word_pattern(word), line, flags=re.I):
                    found.append((number, f"word {word!r}"))
    return found


def offences() -> dict[str, list[int]]:
    """``"<path>: <what>"`` -> the lines where it occurs, over the whole product."""
    words = scheme_words()
    in_literals = named_words()
    packages = scheme_packages()
    found: dict[str, list[int]] = {}
    for app in PRODUCT:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            relative = path.relative_to(ROOT).parts
            for line, what in python_offences(relative, path.read_text(encoding="utf-8"), in_literals, packages):
                found.setdefault(f"{path.relative_to(ROOT)}: {what}", []).append(line)
    pages = sorted((ROOT / "templates").rglob("*.html")) + sorted((ROOT / "static").rglob("*.js"))
    for path in pages:
        relative = path.relative_to(ROOT).parts
        for line, what in page_offences(relative, path.read_text(encoding="utf-8"), words):
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


def test_a_nested_scheme_belongs_to_the_package_that_holds_it() -> None:
    packages = scheme_packages()
    # The generation task sits in SWORDS's package: each may name the other there, nowhere else.
    assert packages["generation"] == packages["swords"] == "swords"
    assert owners(("schemes", "swords", "proposals", "figures.py")) == {"swords", "generation"}
    assert owners(("schemes", "prolex", "figures.py")) == {"prolex"}
    assert owners(("schemes", "planning.py")) == set()


def test_a_literal_naming_a_scheme_as_a_word_offends_outside_its_package() -> None:
    words, packages = named_words(), scheme_packages()
    source = '''"""A docstring may name SWORDS and ProLex: it is prose."""

HELP = "auto tells JSONL, CSV and SWORDS JSON apart"
OTHER = "e.g. prolex"
TITLE = "a Smart  Word Suggestions sentence"
LIBRARY = "the swords library's result JSON"
PLAIN = "sword fights and sworded words"


def f() -> str:
    """ProLex in a function's docstring is prose too."""
    return "schemes/sws/answer.html"
'''
    found = python_offences(("hits", "example.py"), source, words, packages)
    assert sorted(line for line, _ in found) == [3, 4, 5, 12]
    # In a scheme's own package, its own name is no offence; another's still is.
    found = python_offences(("schemes", "swords", "example.py"), source, words, packages)
    assert sorted(line for line, _ in found) == [4, 5, 12]


def test_an_import_of_another_schemes_package_offends() -> None:
    words, packages = named_words(), scheme_packages()
    source = "from schemes.swords.settings import SwordsSettings\nimport schemes.sws.tokens\nfrom schemes import base\n"
    found = python_offences(("schemes", "prolex", "x.py"), source, words, packages)
    assert found == [(1, "import schemes.swords"), (2, "import schemes.sws")]
    # The generation task's package is SWORDS's: importing SWORDS's settings there is its own.
    found = python_offences(("schemes", "swords", "proposals", "x.py"), source, words, packages)
    assert found == [(2, "import schemes.sws")]


def test_a_template_of_a_nested_scheme_may_name_the_package_it_shares() -> None:
    words = scheme_words()
    text = "{# SWORDS in a comment #}\nSWORDS's step 1\nthe generation task\nProLex\n"
    assert page_offences(("templates", "schemes", "generation", "x.html"), text, words) == [(4, "word 'prolex'")]
    assert page_offences(("templates", "hits", "x.html"), text, words) == [
        (2, "word 'swords'"),
        (3, "word 'generation'"),
        (4, "word 'prolex'"),
    ]
