"""The distractor pool and the rules that keep a distractor away from its target (docs/design.md §3)."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import wordfreq
from django.test import override_settings
from hypothesis import given, settings
from hypothesis import strategies as st
from lemminflect import getAllInflections, getAllLemmas

from schemes.swords.distractors import (
    BLOCKED,
    NoDistractorError,
    _forms,
    build_pool,
    dictionary_words,
    distractor_pool,
    excluded_for,
    pick_distractor,
    pool_cache_path,
    words_of,
)

POOL = distractor_pool()


def test_the_pool_is_large_and_holds_common_lower_case_words_only() -> None:
    assert len(POOL) > 5000
    for word in POOL.words:
        assert word.isascii() and word.isalpha() and word.islower() and len(word) >= 3
        assert 3.0 <= wordfreq.zipf_frequency(word, "en") <= 5.0 + 1e-9


def test_the_pool_holds_neither_names_nor_inflected_forms_nor_blocked_words() -> None:
    for word in ["john", "paris", "london", "december", "houses", "went", "better", "stayed", "running"]:
        assert word not in POOL.members, word
    assert not BLOCKED & POOL.members
    for word in POOL.words[:2000]:
        assert all(word in lemmas for lemmas in getAllLemmas(word).values()), word


def test_it_excludes_the_inflected_forms_and_lemmas_of_the_target_and_candidates() -> None:
    assert {"mourn", "saddle", "prove", "marvel"} <= excluded_for(["mourned", "saddles", "proven", "marvelling"])
    # Multi-word candidates count word by word.
    assert {"saddle", "mourn"} <= excluded_for(["saddle up", "Mourn Deeply"])
    # Compounds count joined up whether spelled open or hyphenated.
    assert "offset" in excluded_for(["off set"])
    assert "offset" in excluded_for(["off-setting"])
    assert "login" in excluded_for(["logged in"])


def test_lemmas_and_inflections_read_from_lemminflects_tables_are_what_it_returns() -> None:
    # The pool reads lemminflect's tables itself (no deep copy per word): the same dictionaries as
    # its functions give, for words of its dictionary, wordfreq's words and capitalised spellings.
    words = [*dictionary_words()[::25], *wordfreq.top_n_list("en", 3000), "Paris", "NASA", "iPhone", "Went", "RAN"]
    for word in words:
        assert _forms(word, inflections=False) == getAllLemmas(word), word
        assert _forms(word, inflections=True) == getAllInflections(word), word


def test_a_plain_word_excludes_what_its_words_exclude() -> None:
    # Plain words skip the split into words: the same exclusions as the split gives, for every word
    # of wordfreq's list (names, forms and all) and for words that only look plain.
    words = [*wordfreq.top_n_list("en", 40_000), "\ufb01ne", "stra\u00dfe", "Caf\u00e9", "K", "\u0130stanbul"]
    for word in words:
        split = set().union(*(POOL.related_to(part) for part in words_of(word)))
        assert excluded_for([word]) == split, word


@settings(max_examples=200, deadline=None)
@given(index=st.integers(min_value=0, max_value=len(POOL) - 1), seed=st.integers(min_value=0, max_value=2**32))
def test_a_distractor_is_never_the_target_or_an_inflection_of_it(index: int, seed: int) -> None:
    lemma = POOL.words[index]
    for forms in [[lemma], *[[form] for by_tag in getAllInflections(lemma).values() for form in by_tag]]:
        excluded = excluded_for(forms)
        assert lemma in excluded
        rng = np.random.default_rng(seed)
        for _ in range(5):
            assert pick_distractor(rng=rng, excluded=excluded) != lemma


def test_it_falls_back_to_the_one_word_left_and_fails_when_none_is() -> None:
    pool = build_pool(["stone", "river", "garden"])
    rng = np.random.default_rng(0)
    assert pick_distractor(rng=rng, excluded=frozenset({"stone", "river"}), pool=pool) == "garden"
    with pytest.raises(NoDistractorError):
        pick_distractor(rng=rng, excluded=pool.members, pool=pool)


def test_the_same_generator_state_gives_the_same_distractor() -> None:
    first = [pick_distractor(rng=np.random.default_rng(7), excluded=frozenset()) for _ in range(3)]
    assert len(set(first)) == 1


def test_the_pool_is_built_once_per_host_and_read_back_whole(tmp_path: Path) -> None:
    """Processes after the first read the pool from the cache file instead of building it."""
    distractor_pool.cache_clear()
    try:
        with override_settings(DERIVED_CACHE_DIR=tmp_path):
            built = distractor_pool()
            [cached] = tmp_path.glob("distractor-pool-*.json")
            distractor_pool.cache_clear()
            with mock.patch("schemes.swords.distractors._build_from_wordfreq") as build:
                read = distractor_pool()
        build.assert_not_called()
        assert read == built == POOL
        assert cached == pool_cache_path(tmp_path)
    finally:
        distractor_pool.cache_clear()


def test_a_damaged_cache_file_is_rebuilt_and_an_unwritable_place_only_costs_time(tmp_path: Path) -> None:
    pool_cache_path(tmp_path).write_text('{"words": ["half a fi', encoding="utf-8")
    (tmp_path / "file-not-dir").write_text("in the way", encoding="utf-8")
    distractor_pool.cache_clear()
    try:
        with override_settings(DERIVED_CACHE_DIR=tmp_path):
            assert distractor_pool() == POOL
        distractor_pool.cache_clear()
        with override_settings(DERIVED_CACHE_DIR=tmp_path / "file-not-dir"):
            assert distractor_pool() == POOL
    finally:
        distractor_pool.cache_clear()
