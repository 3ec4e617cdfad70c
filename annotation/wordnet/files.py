"""WordNet's files read directly: the lemmas and synonyms the platform asks for, in milliseconds.

NLTK's reader (``annotation.wordnet.wordnet``) parses every index file into memory when it is
made, which takes a second or two after the seconds NLTK itself takes to import (it loads SciPy
and scikit-learn). Batch generation asks for the synonyms of a thousand lemmas, and the importer
for lemmas: this module answers both from the files as WordNet's own library does, by binary
search in the sorted index files and a seek into the data files, and gives what NLTK gives
(``tests/annotation/test_wordnet_files.py`` compares the two).

Morphology follows NLTK's ``_morphy`` (WordNet's exception lists, then one round of its detachment
rules, keeping the forms the index holds for the part of speech).
"""

from __future__ import annotations

import mmap
import re
from functools import cache
from pathlib import Path

#: The file suffix of each of WordNet's parts of speech (satellite adjectives live with adjectives).
SUFFIXES = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}

# WordNet's detachment rules, as NLTK's WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS lists them.
SUBSTITUTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (
        ("s", ""),
        ("ses", "s"),
        ("ves", "f"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ),
    "v": (
        ("s", ""),
        ("ies", "y"),
        ("es", "e"),
        ("es", ""),
        ("ed", "e"),
        ("ed", ""),
        ("ing", "e"),
        ("ing", ""),
    ),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}
SUBSTITUTIONS["s"] = SUBSTITUTIONS["a"]

# A lemma in a data file may carry a syntactic marker for adjectives: "long(a)", "elect(p)".
_MARKER = re.compile(r"\([^()]*\)$")


class WordNetFiles:
    """Read-only access to one WordNet 3.0 directory; files are opened when first needed and kept."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._indexes: dict[str, mmap.mmap] = {}
        self._data: dict[str, mmap.mmap] = {}
        self._exceptions: dict[str, dict[str, list[str]]] = {}

    def _mapped(self, name: str) -> mmap.mmap:
        with (self.directory / name).open("rb") as file:
            return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)

    def _index(self, pos: str) -> mmap.mmap:
        suffix = SUFFIXES[pos]
        if suffix not in self._indexes:
            self._indexes[suffix] = self._mapped(f"index.{suffix}")
        return self._indexes[suffix]

    def _data_file(self, pos: str) -> mmap.mmap:
        suffix = SUFFIXES[pos]
        if suffix not in self._data:
            self._data[suffix] = self._mapped(f"data.{suffix}")
        return self._data[suffix]

    def exceptions(self, pos: str) -> dict[str, list[str]]:
        """The exception list of a part of speech: irregular form -> its base forms."""
        suffix = SUFFIXES[pos]
        if suffix not in self._exceptions:
            found: dict[str, list[str]] = {}
            with (self.directory / f"{suffix}.exc").open(encoding="utf-8") as file:
                for line in file:
                    terms = line.split()
                    if terms:
                        found[terms[0]] = terms[1:]  # a later line wins, as in NLTK
            self._exceptions[suffix] = found
        return self._exceptions[suffix]

    def offsets(self, lemma: str, pos: str) -> list[int] | None:
        """The offsets of the lemma's synsets in the data file of ``pos``, from its line of the index
        (found by binary search: the index files are sorted bytewise and their licence lines, which
        start with a space, sort first); None when the index does not hold the lemma."""
        key = lemma.encode("utf-8")
        if not key or b" " in key or b"\n" in key:
            return None
        index = self._index(pos)
        low, high = 0, len(index)
        while low < high:
            middle = (low + high) // 2
            start = index.rfind(b"\n", 0, middle) + 1
            end = index.find(b"\n", start)
            if end == -1:
                end = len(index)
            space = index.find(b" ", start, end)
            line_key = index[start : space if space != -1 else end]
            if line_key < key:
                low = end + 1
            elif line_key > key:
                high = start
            else:
                return _index_offsets(index[start:end])
        return None

    def morphy(self, form: str, pos: str) -> list[str]:
        """The base forms of ``form`` the index holds for ``pos``, as NLTK's ``_morphy`` finds them:
        the form itself, then what the exception list gives or else one round of the rules."""
        exceptions = self.exceptions(pos)
        if form in exceptions:
            forms = exceptions[form]
        else:
            forms = [form[: -len(old)] + new for old, new in SUBSTITUTIONS[pos] if form.endswith(old)]
        result: list[str] = []
        for candidate in [form, *forms]:
            if candidate not in result and self.offsets(candidate, pos) is not None:
                result.append(candidate)
        return result

    def synset(self, pos: str, offset: int) -> tuple[list[str], list[tuple[str, int]]]:
        """The lemma names of the synset at ``offset`` (markers removed, underscores kept) and its
        "similar to" pointers as (part of speech, offset), in the data file's order."""
        data = self._data_file(pos)
        end = data.find(b"\n", offset)
        line = data[offset : end if end != -1 else len(data)].decode("utf-8")
        # A synset's line starts with its own offset in eight digits (NLTK checks the same).
        if offset < 0 or line[:8] != f"{offset:08d}":
            raise ValueError(f"no WordNet synset at offset {offset} of data.{SUFFIXES[pos]}")
        fields = line.split("|", 1)[0].split()
        count = int(fields[3], 16)
        names = [_MARKER.sub("", fields[4 + 2 * i]) for i in range(count)]
        at = 4 + 2 * count
        pointers = int(fields[at])
        similar: list[tuple[str, int]] = []
        for i in range(pointers):
            symbol, target, target_pos, _ = fields[at + 1 + 4 * i : at + 5 + 4 * i]
            if symbol == "&" and (target_pos, int(target)) not in similar:
                similar.append((target_pos, int(target)))
        return names, similar

    def synsets(self, lemma: str, pos: str) -> list[tuple[str, int]]:
        """The synsets of ``lemma`` (lower-cased, then reduced by ``morphy``) as (part of speech,
        offset), in the order of NLTK's ``synsets``."""
        found: list[tuple[str, int]] = []
        for form in self.morphy(lemma.lower(), pos):
            found.extend((pos, offset) for offset in self.offsets(form, pos) or ())
        return found


def _index_offsets(line: bytes) -> list[int]:
    """The synset offsets at the end of an index line (lemma pos synset_cnt p_cnt [ptr...] sense_cnt
    tagsense_cnt offset...)."""
    fields = line.split()
    count = int(fields[2])
    return [int(offset) for offset in fields[len(fields) - count :]]


@cache
def wordnet_files(directory: Path) -> WordNetFiles:
    """One reader per directory and process."""
    return WordNetFiles(directory)
