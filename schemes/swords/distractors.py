"""Distractor words for the "random dictionary word" control of each HIT (docs/design.md §3).

A distractor is a common English word that a careful worker rejects (or abstains on) for any
target. The pool comes from wordfreq's list shipped inside the package and lemminflect's
dictionary, so nothing is downloaded at run time:

- alphabetic, ASCII, lower-case, at least three letters;
- Zipf frequency from 3 to 5: known to everyone, but not a function word;
- known to lemminflect and its own lemma under every part of speech it has. lemminflect's
  dictionary has no proper names (wordfreq's list does: "john", "paris"), and the lemma rule
  drops inflected forms ("houses", "went", "better");
- not on a short list of offensive or sensitive words, which would be unkind to show to workers.

For a given target, a word is excluded if it is the target or one of its candidates (any
candidate of the target, whatever its stage, and any candidate proposed for the same word
elsewhere in the benchmark), one of WordNet's synonyms of the target (the known synonyms,
``schemes.swords.generation``), a lemma of one of them, or an inflection of one of them.
Multi-word phrases count word by word.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

import lemminflect
import numpy as np

MIN_ZIPF = 3.0
MAX_ZIPF = 5.0
# Zipf 3 sits near rank 29,000 of wordfreq's English list; 40,000 leaves room.
WORDFREQ_TOP_N = 40_000
MIN_LENGTH = 3
# Random probes before falling back to a scan in pool order; with ~11,800 words in the pool and a
# few dozen excluded per target, the first probe almost always succeeds.
MAX_PROBES = 64
# Bumped when the cached pool's content or layout changes in a way the rules above do not show.
POOL_FORMAT = 2

logger = logging.getLogger(__name__)

# Words a worker should never be shown as a distractor: slurs, sexual, violent or identity terms.
BLOCKED = frozenset(
    [
        "anal",
        "ass",
        "bastard",
        "bitch",
        "boob",
        "bugger",
        "cock",
        "coon",
        "crap",
        "cracker",
        "dyke",
        "erotic",
        "faggot",
        "fag",
        "fetish",
        "gay",
        "genocide",
        "hooker",
        "horny",
        "incest",
        "kinky",
        "lesbian",
        "masturbate",
        "murder",
        "naked",
        "nude",
        "orgasm",
        "penis",
        "pimp",
        "piss",
        "porn",
        "prick",
        "prostitute",
        "pussy",
        "rape",
        "retard",
        "semen",
        "sexy",
        "slave",
        "slut",
        "sperm",
        "stripper",
        "suicide",
        "terrorist",
        "tit",
        "vagina",
        "whore",
    ]
)

_WORD_SPLIT = re.compile(r"[^a-z]+")
_WORD = re.compile(r"[a-z]+")


class NoDistractorError(RuntimeError):
    """Every word in the pool is excluded for this target (never happens with real data)."""


@dataclass(frozen=True)
class DistractorPool:
    """Candidate distractors in wordfreq's frequency order, and how other words relate to them.

    `related` maps a word to the pool words it is, is an inflection of, or has as an inflection
    (both directions of lemminflect's tables, which are not always symmetric: "proven" has lemma
    "prove" but is not among prove's inflections). `indexed` holds every word whose relations
    are complete in `related`; other words are looked up in lemminflect when asked, unless the
    pool is `complete`: then `related` holds every lower-case word of lemminflect's dictionary
    that relates to the pool, so any other word relates to none (and lemminflect's dictionary,
    a second or so to load, is never read while generating).
    """

    words: tuple[str, ...]
    members: frozenset[str]
    related: Mapping[str, frozenset[str]]
    indexed: frozenset[str]
    complete: bool = False

    def __len__(self) -> int:
        return len(self.words)

    def related_to(self, word: str) -> frozenset[str]:
        if word in self.related:
            return self.related[word]
        if self.complete or word in self.indexed:
            return _NOTHING
        return lemmas_of(word) & self.members


_NOTHING: frozenset[str] = frozenset()


def _forms(word: str, *, inflections: bool) -> dict[str, Any]:
    """lemminflect's ``getAllLemmas(word)`` (or ``getAllInflections``), every part of speech: the
    same dictionary, read from its tables without the deep copies it makes of each entry (which
    took most of the time of building the pool: it looks up ~100,000 words).

    lemminflect looks the lower-cased word up in its table, lets its overrides replace parts of
    speech, and spells the result as the word is spelled; a word with a capital at its start or
    in capitals alone goes to lemminflect itself."""
    if word.isupper() or word[:1].isupper():
        return lemminflect.getAllInflections(word) if inflections else lemminflect.getAllLemmas(word)
    table, overrides = _lemminflect_tables(inflections)
    key = word.lower()
    found = {**table.get(key, {}), **overrides.get(key, {})}
    return {
        tag: tuple(form.lower() for form in forms) if isinstance(forms, (list, tuple)) else forms.lower()
        for tag, forms in found.items()
    }


@lru_cache(maxsize=2)
def _lemminflect_tables(inflections: bool) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    from lemminflect.core.Inflections import Inflections
    from lemminflect.core.Lemmatizer import Lemmatizer

    holder = Inflections() if inflections else Lemmatizer()
    if inflections:
        return holder._getInflDict(), holder._getOverridesDict()
    return holder._getLemmaDict(), holder._getOverridesDict()


def _is_own_lemma(word: str) -> bool:
    lemmas = _forms(word, inflections=False)
    return bool(lemmas) and all(word in by_pos for by_pos in lemmas.values())


def _inflections(lemma: str) -> set[str]:
    """The lemma's forms, and each compound form joined up as ``words_of`` joins it ("logged-in" ->
    "loggedin"), so a target written either way finds the pool word it inflects."""
    forms = {lemma}
    for by_tag in _forms(lemma, inflections=True).values():
        for form in by_tag:
            forms.add(form.lower())
            forms.add("".join(_WORD_SPLIT.split(form.lower())))
    forms.discard("")
    return forms


def build_pool(words: Iterable[str], *, index: Iterable[str] = (), complete: bool = False) -> DistractorPool:
    """A pool of the given words (already filtered), with relations for them, their inflections
    and the words of `index` (lemmas looked up once here rather than per generation); `complete`
    also relates every word of lemminflect's dictionary that ``words_of`` can give, as
    ``related_to`` would have looked it up."""
    words = tuple(words)
    in_pool = frozenset(words)
    related: dict[str, set[str]] = defaultdict(set)
    for word in words:
        for form in _inflections(word):
            related[form].add(word)
    indexed = set(related)
    for word in index:
        indexed.add(word)
        for lemma in lemmas_of(word):
            if lemma in in_pool:
                related[word].add(lemma)
    if complete:
        # What ``related_to`` would look up for each word left: the same answers, computed now.
        for word in dictionary_words():
            if word not in indexed and (found := lemmas_of(word) & in_pool):
                related[word] = set(found)
    return DistractorPool(
        words=words,
        members=in_pool,
        related={word: frozenset(pool_words) for word, pool_words in related.items()},
        indexed=frozenset() if complete else frozenset(indexed),
        complete=complete,
    )


def dictionary_words() -> list[str]:
    """The words of lemminflect's lemma dictionary (and its overrides) that ``words_of`` can
    give: lower-case ASCII letters only. ``getAllLemmas`` looks a word up in these alone (lower-
    cased; no rules for unknown words), so a word outside them has no lemma but itself."""
    from lemminflect.core.Lemmatizer import Lemmatizer

    lemmatizer = Lemmatizer()
    known = [*lemmatizer._getLemmaDict(), *lemmatizer._getOverridesDict()]
    return sorted({word for word in known if _WORD.fullmatch(word)})


def is_common_lemma(word: str, *, frequencies: Mapping[str, float]) -> bool:
    """The pool's rules for one word of wordfreq's list (see the module docstring)."""
    if len(word) < MIN_LENGTH or not (word.isascii() and word.isalpha() and word.islower()):
        return False
    if word in BLOCKED or word not in frequencies:
        return False
    # Same formula as wordfreq.zipf_frequency, without re-tokenising every word.
    zipf = math.log10(frequencies[word]) + 9
    return MIN_ZIPF <= zipf <= MAX_ZIPF and _is_own_lemma(word)


def _build_from_wordfreq() -> DistractorPool:
    # Imported here: wordfreq takes a fifth of a second to load, which every web and worker
    # process would otherwise pay at start-up whether or not it ever generates HITs.
    import wordfreq

    frequencies = wordfreq.get_frequency_dict("en")
    listed = wordfreq.top_n_list("en", WORDFREQ_TOP_N)
    return build_pool(
        (word for word in listed if is_common_lemma(word, frequencies=frequencies)), index=listed, complete=True
    )


def pool_cache_path(directory: Path) -> Path:
    """The cached pool's file: named by everything it is built from (the word lists' package
    versions and the rules), so a change to any of them builds a new one."""
    rules = [MIN_ZIPF, MAX_ZIPF, WORDFREQ_TOP_N, MIN_LENGTH, sorted(BLOCKED), POOL_FORMAT]
    key = json.dumps([version("wordfreq"), version("lemminflect"), rules])
    return directory / f"distractor-pool-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


def _read_cached(path: Path) -> DistractorPool | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return DistractorPool(
            words=tuple(data["words"]),
            members=frozenset(data["words"]),
            related={word: frozenset(pool_words) for word, pool_words in data["related"].items()},
            indexed=frozenset(data["indexed"]),
            complete=bool(data["complete"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing, or written by something else: built again


def _write_cached(path: Path, pool: DistractorPool) -> None:
    """Written to a temporary file and renamed, so a process reading at the same time sees a whole
    file or none; two processes building at once both write the same content."""
    data = {
        "words": list(pool.words),
        "related": {word: sorted(pool_words) for word, pool_words in pool.related.items()},
        "indexed": sorted(pool.indexed),
        "complete": pool.complete,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, encoding="utf-8", suffix=".tmp") as out:
            json.dump(data, out, separators=(",", ":"))
        os.replace(out.name, path)
    except OSError as error:  # a read-only checkout still works, building the pool per process
        logger.warning("could not cache the distractor pool at %s: %s", path, error)


@lru_cache(maxsize=1)
def distractor_pool() -> DistractorPool:
    """The pool from wordfreq's English list: built once per host (about a second) and kept in
    ``settings.DERIVED_CACHE_DIR``, then read by each process (a tenth of that) and kept in memory.
    The pool depends only on installed packages and this module, never on the database, so the
    copy in memory cannot go stale."""
    from django.conf import settings

    path = pool_cache_path(Path(settings.DERIVED_CACHE_DIR))
    pool = _read_cached(path)
    if pool is None:
        pool = _build_from_wordfreq()
        _write_cached(path, pool)
    return pool


def words_of(text: str) -> list[str]:
    """The lower-case alphabetic words of a target or candidate ("look after" -> look, after).

    A compound spelled open or hyphenated also counts joined up ("under-took" -> under, took,
    undertook; "off set" -> off, set, offset), since dictionaries spell many compounds all three
    ways and the joined form is the one with lemmas.
    """
    parts = [part for part in _WORD_SPLIT.split(text.lower()) if part]
    if len(parts) > 1:
        joined = "".join(parts)
        if joined not in parts:
            parts.append(joined)
    return parts


@lru_cache(maxsize=100_000)
def lemmas_of(word: str) -> frozenset[str]:
    """The word and all its lemmas under any part of speech."""
    found = {word}
    for by_pos in _forms(word, inflections=False).values():
        found.update(lemma.lower() for lemma in by_pos)
    return frozenset(found)


def excluded_for(texts: Iterable[str], *, pool: DistractorPool | None = None) -> frozenset[str]:
    """Pool words a target must not get: those related to any word of its word, lemma, candidates
    and known synonyms (each phrase word by word)."""
    pool = pool or distractor_pool()
    words: set[str] = set()
    for text in texts:
        # Most candidates are one plain word, which is its own only word (``words_of``).
        if text.isalpha() and text.isascii() and text.islower():
            words.add(text)
        else:
            words.update(_words_of(text))
    related_to = pool.related_to
    excluded: set[str] = set()
    for word in words:
        excluded.update(related_to(word))
    return frozenset(excluded)


@lru_cache(maxsize=200_000)
def _words_of(text: str) -> tuple[str, ...]:
    # A batch's targets share most candidate texts (each lemma's candidates, common words).
    return tuple(words_of(text))


def pick_distractor(*, rng: np.random.Generator, excluded: frozenset[str], pool: DistractorPool | None = None) -> str:
    """One distractor drawn with the seeded generator: the same generator state gives the same word."""
    pool = pool or distractor_pool()
    for _ in range(MAX_PROBES):
        word = pool.words[int(rng.integers(len(pool)))]
        if word not in excluded:
            return word
    for word in pool.words:
        if word not in excluded:
            return word
    raise NoDistractorError("every word of the distractor pool is excluded for this target")
