"""WordNet's files read directly give what NLTK's reader gives: the lemmas (morphy) and the synonyms
(synsets and, for adjectives, the synsets similar to them) of words of every part of speech."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.wordnet import WORDNET_DIR, WordNetMissing, lemmatize, synonyms, wordnet, wordnet_pos
from annotation.wordnet.files import WordNetFiles

POS = {"noun": "noun", "verb": "verb", "adj": "adj", "adv": "adv"}
ENDINGS = ("s", "es", "ed", "ing", "er", "est", "ies", "men")


def _index_lemmas(suffix: str, every: int) -> list[str]:
    with (WORDNET_DIR / f"index.{suffix}").open(encoding="utf-8") as file:
        lemmas = [line.split(" ", 1)[0] for line in file if not line.startswith(" ")]
    return lemmas[::every]


def _exception_forms(suffix: str, every: int) -> list[str]:
    with (WORDNET_DIR / f"{suffix}.exc").open(encoding="utf-8") as file:
        return [line.split()[0] for line in file][::every]


def _nltk_synonyms(lemma: str, pos: str) -> set[str]:
    own = lemma.strip().casefold()
    found: set[str] = set()
    for synset in wordnet().synsets(own.replace(" ", "_"), wordnet_pos(pos)):
        for related in (synset, *synset.similar_tos()):
            found.update(name.replace("_", " ") for name in related.lemma_names())
    return {text for text in found if text.casefold() != own}


def _words(suffix: str) -> list[str]:
    lemmas = _index_lemmas(suffix, 41)
    inflected = [lemma + ending for lemma in lemmas[::5] for ending in ENDINGS]
    odd = ["", "Dog", "New York", "a b", "x" * 40, "geese", "better", "ran", "zzzz", "'hood", "a.m."]
    return [*lemmas, *inflected, *_exception_forms(suffix, 7), *odd]


@pytest.mark.parametrize("pos", POS)
def test_lemmas_are_nltks_for_words_of_the_index_their_inflections_and_the_exceptions(pos: str) -> None:
    reader = wordnet()
    files = WordNetFiles(WORDNET_DIR)
    words = _words(POS[pos])
    assert len(words) > 250
    differ = [word for word in words if files.morphy(word, wordnet_pos(pos)) != reader._morphy(word, wordnet_pos(pos))]
    assert differ == []
    assert [lemmatize(word, pos=pos) for word in words[:50]] == [
        min(reader._morphy(word, wordnet_pos(pos)), key=len, default=word) for word in words[:50]
    ]


@pytest.mark.parametrize("pos", POS)
def test_synonyms_are_nltks_for_words_of_the_index_their_inflections_and_the_exceptions(pos: str) -> None:
    words = [word.replace("_", " ") for word in _words(POS[pos])]
    differ = [word for word in words if set(synonyms(word, pos=pos)) != _nltk_synonyms(word, pos)]
    assert differ == []
    # Many of them have synonyms at all: the comparison is not vacuous.
    assert sum(1 for word in words if synonyms(word, pos=pos)) > 50


def test_similar_adjectives_come_after_the_synsets_own_lemmas_in_the_files_order() -> None:
    quick = synonyms("quick", pos="adj")
    assert quick.index("speedy") < quick.index("fast")  # speedy shares quick's synset; fast is similar to it
    assert synonyms("quick", pos="adj") == quick


def test_an_offset_that_is_no_synset_is_an_error_not_a_wrong_answer() -> None:
    files = WordNetFiles(WORDNET_DIR)
    with pytest.raises(ValueError, match="no WordNet synset at offset 5"):
        files.synset("n", 5)


def test_a_missing_wordnet_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("annotation.wordnet.WORDNET_DIR", tmp_path)
    # Not a lemma an earlier test of the process left in the memo.
    monkeypatch.setattr("annotation.wordnet._LEMMAS", {})
    with pytest.raises(WordNetMissing, match="make wordnet"):
        lemmatize("dogs", pos="noun")
