"""Nothing outside a crowd's own package names the crowd (docs/architecture.md, "How to add a crowd").

A crowd's knowledge lives in the package of its backend's class (``crowds/mturk/``, ``crowds/prolific/``,
the toy panel's ``tests/crowds/toy/``); the rest of the product asks it through ``crowds.interface``.
Everywhere else in the product's modules (annotation, schemes, hits, crowds, review, analysis,
crowdlex) no identifier may contain a crowd's name or its class's name (``mturk_client``, ``MTURK``,
``MTurkBackend``, ``crowds.mturk`` in an import), and no string literal may equal a crowd's name
(``"mturk"``), case aside. The registration list (``crowdlex/settings.py``: ``CROWD_BACKENDS``, each
crowd's own settings) and migrations (history) are not read; comments and prose are not code. The
crowd whose workers claim from the local queue is the platform's own, and its name is a plain word.

The same holds for the shared pages and scripts (``templates/``, ``static/``): a crowd's own pages sit in its
package (``crowds/mturk/templates/crowds/mturk/``), and the shared ones ask the batch's crowd for its label.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PRODUCT = ["annotation", "schemes", "hits", "crowds", "review", "analysis", "crowdlex"]
REGISTRATION = {Path("crowdlex/settings.py")}


def crowds() -> dict[str, tuple[str, Path]]:
    """Each paid crowd's name -> (its class's name, the folder of its package)."""
    from crowds.interface import backends, queue_backend_names

    found: dict[str, tuple[str, Path]] = {}
    for backend in backends():
        if backend.name in queue_backend_names():
            continue
        cls = type(backend)
        module = cls.__module__.split(".")
        found[backend.name] = (cls.__name__, Path(*module[:2]))
    return found


def offences(source: str, *, name: str, class_name: str) -> list[str]:
    """Where ``source`` names the crowd: identifiers holding its name or class name, strings equal to its name."""
    words = re.compile("|".join(re.escape(word) for word in (name, class_name)), re.IGNORECASE)
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NAME and words.search(token.string):
            found.append(f"{token.start[0]}: {token.string}")
        elif token.type == tokenize.STRING:
            body = re.sub(r"^[rbfuRBFU]*", "", token.string).strip("\"'")
            if body.lower() == name.lower():
                found.append(f"{token.start[0]}: {token.string}")
    return found


def test_no_module_outside_a_crowds_package_names_it() -> None:
    found = crowds()
    assert {"mturk", "prolific"} <= set(found)
    named: dict[str, list[str]] = {}
    for app in PRODUCT:
        for path in sorted((ROOT / app).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if "migrations" in relative.parts or relative in REGISTRATION:
                continue
            source = path.read_text(encoding="utf-8")
            for name, (class_name, package) in found.items():
                if relative.is_relative_to(package):
                    continue
                hits = offences(source, name=name, class_name=class_name)
                if hits:
                    named[f"{relative} names {name}"] = hits
    assert named == {}


def page_offences(text: str, *, words: list[str]) -> list[str]:
    """Lines of a template or script holding one of the crowd's words (its name, labels, class), case aside."""
    pattern = re.compile(r"\b(" + "|".join(re.escape(word) for word in words if word) + r")\b", re.IGNORECASE)
    return [f"{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1) if pattern.search(line)]


def crowd_words() -> dict[str, list[str]]:
    """Each paid crowd's name -> the words that name it on a page."""
    from crowds.interface import get_backend

    found = {}
    for name, (class_name, _package) in crowds().items():
        backend = get_backend(name)
        found[name] = [name, class_name, backend.label, backend.short_label]
    return found


def test_no_shared_template_or_script_names_a_crowd() -> None:
    words = crowd_words()
    pages = sorted((ROOT / "templates").rglob("*.html")) + sorted((ROOT / "static").rglob("*.js"))
    assert len(pages) > 50
    named: dict[str, list[str]] = {}
    for path in pages:
        text = path.read_text(encoding="utf-8")
        for name, crowd in words.items():
            hits = page_offences(text, words=crowd)
            if hits:
                named[f"{path.relative_to(ROOT)} names {name}"] = hits
    assert named == {}


def test_a_crowds_own_pages_sit_in_its_package_and_name_it() -> None:
    words = crowd_words()
    built_in = {name: place for name, place in crowds().items() if place[1].parts[0] == "crowds"}
    assert {"mturk", "prolific"} <= set(built_in)
    for name, (_class_name, package) in built_in.items():
        own = sorted((ROOT / package / "templates" / "crowds" / name).glob("*.html"))
        assert own, f"{package} has no pages of its own"
        assert any(page_offences(path.read_text(encoding="utf-8"), words=words[name]) for path in own)


def test_the_page_check_sees_a_crowds_words_but_not_words_holding_them() -> None:
    words = ["mturk", "MTurkBackend", "Amazon Mechanical Turk", "MTurk"]
    assert page_offences("<p>Fees come with the MTurk backend.</p>", words=words) == [
        "1: <p>Fees come with the MTurk backend.</p>"
    ]
    assert page_offences('x\n<section id="mturk">', words=words) == ['2: <section id="mturk">']
    assert page_offences("<p>on amazon mechanical turk</p>", words=words)
    assert not page_offences("<p>{{ crowd.short_label }}'s fees</p>", words=words)
    assert not page_offences("<p>MTurkish</p>", words=words)


def test_the_check_sees_each_way_of_naming_a_crowd() -> None:
    def named(source: str) -> list[str]:
        return offences(source, name="mturk", class_name="MTurkBackend")

    assert named('if batch.backend == "mturk":\n    pass\n')
    assert named("from crowds.mturk import Qualifications\n")
    assert named("kind = WorkerKind.MTURK\n")
    assert named("backend = MTurkBackend()\n")
    assert named("rate = settings.MTURK_FEE_RATE\n")
    assert not named("# MTurk frames the page\nx = 1\n")
    assert not named('label = "the crowd"\n')
    assert not named('"""Works on MTurk as on any crowd."""\n')
