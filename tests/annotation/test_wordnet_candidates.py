"""WordNet 3.0, read offline from Debian's wordnet-base: lemmas, synonyms, candidates added to a
benchmark as an import under the origin ``wordnet``, and distractors that are no known synonym."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

import annotation.wordnet as wordnet_module
from annotation.models import Benchmark, Candidate, Context, Import, Target
from annotation.services import candidates_add, import_delete
from annotation.wordnet import inflect_like, lemmatize, synonyms
from schemes.base import CandidateRef, TargetRef
from schemes.swords import distractors, generation
from schemes.swords.items import ItemKind
from schemes.swords.settings import SwordsSettings
from tests.base import Cast


def test_lemmas_follow_morphy_for_the_part_of_speech_and_keep_capitals_and_phrases() -> None:
    assert lemmatize("dogs", pos="noun") == "dog"
    assert lemmatize("ran", pos="verb") == "run"
    assert lemmatize("better", pos="adj") == "good"
    assert lemmatize("Dogs", pos="noun") == "Dogs"
    assert lemmatize("sum totals", pos="noun") == "sum totals"
    # Another part of speech reads the word as a noun.
    assert lemmatize("geese", pos="other") == "goose"


def test_a_lemma_is_read_from_wordnet_once_per_word_and_part_of_speech(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    read: list[tuple[str, str]] = []
    real = wordnet_module._files()

    class Counting:
        def morphy(self, form: str, pos: str) -> list[str]:
            read.append((form, pos))
            return real.morphy(form, pos)

    monkeypatch.setattr(wordnet_module, "_files", Counting)
    monkeypatch.setattr(wordnet_module, "_LEMMAS", {})
    settings.WORDNET_LEMMA_CACHE_ENTRIES = 2
    assert [lemmatize("geese", pos="noun") for _ in range(3)] == ["goose"] * 3
    assert lemmatize("geese", pos="other") == "goose", "another part of speech read as a noun is the noun's"
    assert lemmatize("ran", pos="verb") == "run"
    assert read == [("geese", "n"), ("ran", "v")]
    # Full: a third word is looked up each time, and the first two stay remembered.
    assert [lemmatize("mice", pos="noun") for _ in range(2)] == ["mouse"] * 2
    assert [lemmatize("ran", pos="verb"), lemmatize("geese", pos="noun")] == ["run", "goose"]
    assert read == [("geese", "n"), ("ran", "v"), ("mice", "n"), ("mice", "n")]


def test_synonyms_come_from_the_lemmas_synsets_and_similar_adjectives_without_the_lemma() -> None:
    quick = synonyms("quick", pos="adj")

    assert {"fast", "speedy", "nimble"} <= set(quick)
    assert "quick" not in quick
    assert "run away" in synonyms("run", pos="verb")


def test_a_synonym_is_inflected_as_the_target_word_inflects_its_lemma() -> None:
    assert inflect_like("sprint", word="ran", lemma="run", pos="verb") == "sprinted"
    assert inflect_like("run away", word="running", lemma="run", pos="verb") == "running away"
    assert inflect_like("sum total", word="totals", lemma="total", pos="noun") == "sum totals"
    assert inflect_like("fast", word="quick", lemma="quick", pos="adj") == "fast"


def _benchmark(name: str = "wn", *, lemmatized: bool = True) -> Benchmark:
    benchmark = Benchmark.objects.create(name=name, extra={"swords": {"substitutes_lemmatized": lemmatized}})
    context = Context.objects.create(benchmark=benchmark, text="A quick reply, and he ran home.")
    quick = Target.objects.create(benchmark=benchmark, context=context, word="quick", offset=2, pos="adj")
    Target.objects.create(benchmark=benchmark, context=context, word="ran", offset=24, pos="verb")
    Candidate.objects.create(target=quick, text="fast", sources=["coinco"])
    return benchmark


@pytest.mark.django_db
def test_wordnet_adds_new_candidates_merges_known_ones_and_says_how_many_were_new() -> None:
    benchmark = _benchmark()

    report = candidates_add(benchmark=benchmark, source="wordnet", targets=["quick"])
    again = candidates_add(benchmark=benchmark, source="wordnet", targets=["quick"])

    quick = Target.objects.get(word="quick")
    added = {c.text: c.sources for c in quick.candidates.all()}
    assert report.candidates.created == len(added) - 1 == len(set(synonyms("quick", pos="adj"))) - 1
    assert (report.candidates.merged, report.updated) == (1, 1)
    assert added["fast"] == ["coinco", "wordnet"]
    assert added["speedy"] == ["wordnet"]
    assert not Target.objects.get(word="ran").candidates.exists()
    assert again.candidates.created == 0
    assert Import.objects.filter(benchmark=benchmark, origin="wordnet").exists()


@pytest.mark.django_db
def test_wordnet_candidates_are_inflected_when_the_benchmark_keeps_inflected_candidates() -> None:
    benchmark = _benchmark(lemmatized=False)

    candidates_add(benchmark=benchmark, source="wordnet", targets=["ran"])

    texts = set(Target.objects.get(word="ran").candidates.values_list("text", flat=True))
    assert "ran away" in texts and "run away" not in texts


@pytest.mark.django_db
def test_the_wordnet_import_can_be_removed_by_its_origin() -> None:
    benchmark = _benchmark()
    candidates_add(benchmark=benchmark, source="wordnet")

    import_delete(benchmark=benchmark, origin="wordnet")

    assert not Candidate.objects.filter(target__benchmark=benchmark, sources=["wordnet"]).exists()
    assert not Import.objects.filter(benchmark=benchmark, origin="wordnet").exists()


@pytest.mark.django_db
def test_the_command_reports_the_new_candidates_and_refuses_an_unknown_target() -> None:
    _benchmark()
    out = StringIO()

    call_command("candidates_add", "wn", "--source", "wordnet", "--targets", "ran", stdout=out)

    assert "candidates created" in out.getvalue()
    with pytest.raises(Exception, match="no target of wn"):
        call_command("candidates_add", "wn", "--source", "wordnet", "--targets", "nothing")


@pytest.mark.django_db
def test_a_researcher_adds_wordnet_candidates_from_the_benchmark_page(cast: Cast) -> None:
    _benchmark()
    client = Client()
    client.force_login(cast.researcher)

    page = client.get("/benchmarks/wn/").content.decode()
    response = client.post("/benchmarks/wn/candidates/", {"source": "wordnet", "targets": "quick"}, follow=True)

    assert 'action="/benchmarks/wn/candidates/"' in page
    assert "new candidates from wordnet" in response.content.decode()
    assert Candidate.objects.filter(target__word="quick", text="speedy").exists()


@pytest.mark.django_db
def test_a_distractor_is_never_a_wordnet_synonym_of_the_target(monkeypatch: pytest.MonkeyPatch) -> None:
    benchmark = _benchmark()
    quick = Target.objects.get(word="quick")
    pool = distractors.build_pool(["speedy", "nimble", "table"])
    monkeypatch.setattr(distractors, "distractor_pool", lambda: pool)
    ref = TargetRef(quick.pk, "quick", "", "adj", 2, quick.context.digest, quick.context.text)

    for seed in range(20):
        plan = generation.target_planner(
            benchmark=benchmark, settings=SwordsSettings(), step=2, seed=seed, target_ids=[quick.pk]
        )
        hits = plan(ref, [CandidateRef(1, "fast", "fast")])
        assert {item.text for hit in hits for item in hit.items if item.kind == ItemKind.CONTROL_DISTRACTOR} == {
            "table"
        }
