"""The evaluation's gold reads each target's SWORDS id and its word together (docs/design.md §10): a
target whose file spelled its word otherwise than the platform keeps it is judged by the file's
spelling, whether every target is read or a submit's few."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from analysis.target_ids import swords_target_ids
from annotation.models import Target
from schemes.swords.evaluation.gold import BenchmarkGold
from tests.analysis.labelled import labelled_benchmark

pytestmark = pytest.mark.django_db


def test_the_gold_lemma_of_a_target_is_its_files_spelling_where_the_file_spelled_it() -> None:
    cache.clear()
    benchmark = labelled_benchmark(
        "gold-spelling",
        [("Geese", "noun", [("birds", ["human"], "AAR")]), ("ran", "verb", [("sprinted", ["human"], "AAA")])],
    )
    benchmark.scheme = "swords"
    benchmark.save()
    spelled, plain = Target.objects.filter(benchmark=benchmark).order_by("pk")
    spelled.extra = {"swords": {"target": "goose", "pos": "NOUN"}}
    spelled.save()
    ids = dict(swords_target_ids(benchmark))
    for target_ids in (None, [spelled.pk, plain.pk], [spelled.pk]):
        gold = BenchmarkGold(benchmark, target_ids=target_ids)
        assert gold.lemmas[ids[spelled.pk]] == "goose"
        assert gold.pks[ids[spelled.pk]] == spelled.pk
        if target_ids != [spelled.pk]:
            assert gold.lemmas[ids[plain.pk]] == "run"
        assert set(gold.targets) == {ids[pk] for pk in target_ids or (spelled.pk, plain.pk)}
