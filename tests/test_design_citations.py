"""The project's specification is its own: docs/design.md.

Every ``docs/design.md §n`` citation in the repository names a section that exists; no file cites
a specification or style guide that the repository does not hold; and the defaults docs/design.md
states for the settings are the code's.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DESIGN = ROOT / "docs" / "design.md"
THIS_FILE = Path(__file__).resolve()

# Files whose text may cite the specification: code, templates, scripts, docs and build files.
SUFFIXES = frozenset({".py", ".html", ".js", ".css", ".md", ".txt", ".toml", ".cfg", ".ini", ".yml", ".yaml", ".in"})
NAMES = frozenset({"Makefile", ".env.example"})
SKIPPED_DIRECTORIES = frozenset({".venv", "node_modules", ".git", "__pycache__", ".mypy_cache", ".ruff_cache"})

SECTION_HEADING = re.compile(r"^## (\d+)\. \S", re.MULTILINE)
SUBSECTION_HEADING = re.compile(r"^### (\d+\.\d+)\.? \S", re.MULTILINE)
# "docs/design.md §5", "docs/design.md §5, §6", "docs/design.md §3 to §7", "docs/design.md §2.1".
CITATION = re.compile(r"docs/design\.md((?:\s*(?:,|and|or|to)?\s*§\s*\d+(?:\.\d+)?)+)")
SECTION_NUMBER = re.compile(r"§\s*(\d+(?:\.\d+)?)")
# Citations of documents the repository does not hold (the specification and the style guide
# under other names): "DESIGN §3", "DESIGN.md", "STYLE: Tests", "STYLE.md", "STYLE §2".
FOREIGN_CITATION = re.compile(r"\bDESIGN\s*§|\bDESIGN\.md\b|\bSTYLE\.md\b|\bSTYLE(?::|\s*§)")


def repository_files() -> Iterator[Path]:
    for directory, subdirectories, files in os.walk(ROOT):
        subdirectories[:] = sorted(name for name in subdirectories if name not in SKIPPED_DIRECTORIES)
        for name in sorted(files):
            path = Path(directory) / name
            if (path.suffix in SUFFIXES or name in NAMES) and path.resolve() != THIS_FILE:
                yield path


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def where(path: Path, text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    return f"{path.relative_to(ROOT)}:{line}"


def design_sections() -> set[str]:
    text = read(DESIGN)
    return set(SECTION_HEADING.findall(text)) | set(SUBSECTION_HEADING.findall(text))


def cited_sections(text: str) -> Iterator[tuple[int, str]]:
    """(position, section number) of every section a ``docs/design.md §n`` citation names."""
    for citation in CITATION.finditer(text):
        for number in SECTION_NUMBER.finditer(citation.group(1)):
            yield citation.start(), number.group(1)


def test_the_sections_of_the_specification_are_numbered_one_by_one() -> None:
    numbers = [int(number) for number in SECTION_HEADING.findall(read(DESIGN))]
    assert numbers == list(range(1, len(numbers) + 1))
    # The numbers citations have used since before the file existed: roles to complete evaluation.
    assert len(numbers) >= 14


def test_the_citation_pattern_reads_every_form_a_citation_takes() -> None:
    text = "see docs/design.md §5, §6 and docs/design.md §3 to §7; docs/design.md §2.1 and §9."
    assert [number for _, number in cited_sections(text)] == ["5", "6", "3", "7", "2.1", "9"]
    assert FOREIGN_CITATION.search("(DESIGN §3)")
    assert FOREIGN_CITATION.search("as DESIGN.md says")
    assert FOREIGN_CITATION.search("(STYLE: Where logic lives)")
    assert not FOREIGN_CITATION.search("docs/design.md §3, a STYLE attribute, font-style: bold")


def test_every_citation_of_the_specification_names_a_section_it_has() -> None:
    sections = design_sections()
    cited: list[str] = []
    missing: list[str] = []
    for path in repository_files():
        text = read(path)
        for index, number in cited_sections(text):
            cited.append(number)
            if number not in sections:
                missing.append(f"{where(path, text, index)}: §{number}")
    assert missing == [], "citations of sections docs/design.md lacks:\n" + "\n".join(missing)
    # The check above ran over real citations, not over none.
    assert cited


def test_no_file_cites_a_specification_the_repository_does_not_hold() -> None:
    offenders = [
        f"{where(path, text, found.start())}: {found.group(0)}"
        for path in repository_files()
        for text in [read(path)]
        for found in FOREIGN_CITATION.finditer(text)
    ]
    assert offenders == [], "files citing documents the repository does not hold:\n" + "\n".join(offenders)


def test_the_defaults_the_specification_states_are_the_code_defaults() -> None:
    """Each "`setting` n" or "`setting` (n)" in docs/design.md, for a field of a scheme's settings or
    of the bot signals' thresholds, gives that field's default; every scheme setting is stated."""
    from review.signals import SignalSettings
    from schemes import registered

    settings_types = {
        scheme.settings_type for scheme in registered() if scheme.settings_type.__module__.startswith("schemes.")
    }
    scheme_defaults = {field.name: field.default for kind in settings_types for field in dataclasses.fields(kind)}
    defaults = {field.name: field.default for field in dataclasses.fields(SignalSettings)} | scheme_defaults
    text = read(DESIGN)
    stated: dict[str, list[object]] = {}
    for found in re.finditer(r"`(\w+)`\s*\(?(\d+(?:\.\d+)?)\b", text):
        if found.group(1) in defaults:
            stated.setdefault(found.group(1), []).append(float(found.group(2)))
    # A setting whose default is a word states it as "`setting` (`word`)".
    for found in re.finditer(r"`(\w+)`\s*\(`(\w+)`\)", text):
        if isinstance(defaults.get(found.group(1)), str):
            stated.setdefault(found.group(1), []).append(found.group(2))
    wrong = {name: values for name, values in stated.items() if any(value != defaults[name] for value in values)}
    assert wrong == {}
    assert sorted(set(scheme_defaults) - set(stated)) == []
