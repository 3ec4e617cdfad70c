"""The adaptive stop's count table is kept between refreshes and recounts only what changed
(docs/design.md §13), yet always equals a recount of the whole benchmark."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from annotation.changes import benchmark_changed
from annotation.models import Benchmark, Candidate, CandidateStage, Context, Label, Target
from schemes.swords import progress
from schemes.swords.progress import count_table_refreshed, source_count_table, stopping_rule
from schemes.swords.settings import settings_of
from schemes.swords.stopping import estimate_mixture

pytestmark = pytest.mark.django_db

# The statement itself, kept before a test puts its spy in its place.
COUNT_TABLES = progress._target_count_tables


def _benchmark() -> tuple[Benchmark, list[Target]]:
    benchmark = Benchmark.objects.create(name="count-table", scheme_settings={"stopping_policy": "adaptive"})
    targets = []
    for index, word in enumerate(["calm", "quiet", "still"]):
        text = f"The river was {word} after storm {index}."
        context = Context.objects.create(benchmark=benchmark, text=text)
        target = context.targets.create(benchmark=benchmark, word=word, offset=text.index(word), pos="adj")
        targets.append(target)
        for number in range(12):
            source = "roget" if number % 3 else "coinco"
            candidate = Candidate.objects.create(target=target, text=f"{word}{number}", sources=[source])
            values = ["accept"] * (number % 4) + ["reject"] * (3 - number % 4 if number % 4 < 3 else 1)
            Label.objects.bulk_create(
                Label(candidate=candidate, value=value, position=position, origin="release.json")
                for position, value in enumerate(values)
            )
    return benchmark, targets


def _recounted(benchmark: Benchmark) -> dict[str, Counter[tuple[int, int]]]:
    """The table read from every label, as the store must equal."""
    tables = COUNT_TABLES(benchmark=benchmark, target_ids=None)
    return {source: table for source, table in progress._by_source(tables.values()).items() if +table}


def _kept(table: dict[str, Counter[tuple[int, int]]]) -> dict[str, Counter[tuple[int, int]]]:
    return {source: counter for source, counter in table.items() if +counter}


@pytest.fixture
def recounts(monkeypatch: pytest.MonkeyPatch) -> list[Sequence[int] | None]:
    """The targets each count statement read (None: the whole benchmark)."""
    seen: list[Sequence[int] | None] = []
    original = progress._target_count_tables

    def spy(*, benchmark: Benchmark, target_ids: Sequence[int] | None) -> Any:
        seen.append(None if target_ids is None else list(target_ids))
        return original(benchmark=benchmark, target_ids=target_ids)

    monkeypatch.setattr(progress, "_target_count_tables", spy)
    # Pages of one label: the new labels are read page by page, all of them.
    monkeypatch.setattr(progress, "NEW_LABELS_PAGE", 1)
    progress._COUNT_STORES.clear()
    return seen


def _add(candidate: Candidate, *values: str) -> None:
    start = candidate.labels.count()
    Label.objects.bulk_create(
        Label(candidate=candidate, value=value, position=start + offset, origin="more.json")
        for offset, value in enumerate(values)
    )


@pytest.mark.production_database(
    "the table is kept between refreshes where a counter never takes a value twice; SQLite recounts each time"
)
def test_the_table_recounts_only_the_touched_targets_and_new_labels_and_equals_a_full_count(
    recounts: list[Sequence[int] | None],
) -> None:
    benchmark, (first, second, third) = _benchmark()
    # A refresh's advancement: nothing kept yet, the whole benchmark is counted.
    assert _kept(source_count_table(benchmark=benchmark, touched=[first.pk], refreshing=True)) == _recounted(benchmark)
    assert recounts.pop(0) is None
    count_table_refreshed(benchmark=benchmark)
    # The same refresh's generation, and a page after it: nothing new, nothing read.
    assert _kept(source_count_table(benchmark=benchmark)) == _recounted(benchmark)
    assert recounts == []

    # Submits add labels to the second target: only it is read again.
    _add(Candidate.objects.filter(target=second).order_by("pk")[0], "accept", "accept")
    _add(Candidate.objects.filter(target=second).order_by("pk")[5], "reject")
    recounts.clear()
    table = source_count_table(benchmark=benchmark, touched=[first.pk], refreshing=True)
    assert recounts == [sorted([first.pk, second.pk])]
    assert _kept(table) == _recounted(benchmark)
    count_table_refreshed(benchmark=benchmark)

    # A label on a target no refresh would look at (it is done) is counted too.
    _add(Candidate.objects.filter(target=third).order_by("pk")[2], "accept")
    recounts.clear()
    assert _kept(source_count_table(benchmark=benchmark, touched=[])) == _recounted(benchmark)
    assert recounts == [[third.pk]]

    # Anything else that changes the benchmark moves its counter: the whole benchmark is read again.
    Candidate.objects.filter(pk=first.candidates.order_by("pk")[0].pk).update(stage=CandidateStage.EXCLUDED)
    benchmark_changed(benchmark_id=benchmark.pk)
    recounts.clear()
    assert _kept(source_count_table(benchmark=benchmark, touched=[second.pk])) == _recounted(benchmark)
    assert recounts == [None]


def test_a_refresh_that_did_not_count_drops_the_table(recounts: list[Sequence[int] | None]) -> None:
    benchmark, (first, *_) = _benchmark()
    source_count_table(benchmark=benchmark, touched=None, refreshing=True)
    count_table_refreshed(benchmark=benchmark)
    # A refresh that advanced nothing (so counted nothing) may still have flipped filtering: the next
    # reading counts everything.
    benchmark_changed(benchmark_id=benchmark.pk)
    count_table_refreshed(benchmark=benchmark)
    assert benchmark.pk not in progress._COUNT_STORES
    recounts.clear()
    source_count_table(benchmark=benchmark, touched=[first.pk], refreshing=True)
    assert recounts == [None]


@pytest.mark.production_database(
    "the table is kept between refreshes where a counter never takes a value twice; SQLite recounts each time"
)
def test_the_priors_are_those_of_a_full_count_through_the_refreshes(recounts: list[Sequence[int] | None]) -> None:
    benchmark, (first, second, _) = _benchmark()
    settings = settings_of(benchmark)
    stopping_rule(benchmark=benchmark, settings=settings, touched=[first.pk], refreshing=True)
    count_table_refreshed(benchmark=benchmark)
    for candidate in Candidate.objects.filter(target=second).order_by("pk")[:6]:
        _add(candidate, "accept", "reject", "accept")
    rule = stopping_rule(benchmark=benchmark, settings=settings, touched=[second.pk], refreshing=True)
    assert rule is not None
    full = _recounted(benchmark)
    assert rule.priors == {source: estimate_mixture(table) for source, table in full.items()}
    assert None not in recounts[1:]
