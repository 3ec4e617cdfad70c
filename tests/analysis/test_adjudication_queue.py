"""The disagreement queue read from the tallies and the figures kept per item (docs/design.md §17,
§7 "Tallies" and "Incremental figures") orders and counts items as a count over every label and
answer would, for every scheme, on random work: filtered submissions, imported labels, excluded
candidates, resolved items, and work submitted after the figures were kept."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.db.models import Count, Exists, F, FloatField, OuterRef, Q, QuerySet, Subquery, TextField
from django.db.models.functions import Abs, Cast, Coalesce, Concat

from analysis.adjudication import CONTESTED_MARGIN, disagreement_queue, disagreement_queue_page, selectors
from annotation import changes as kept_figures
from annotation.changes import benchmark_changed
from annotation.models import Benchmark, Candidate, CandidateStage, Label, LabelValue, Target, Worker
from annotation.tallies import tallies_targets_recount, tallies_validity_changed
from hits.models import Assignment, HITItem
from hits.services import assignment_claim_next, assignment_submit
from review.adjudication import item_resolve
from review.models import ItemResolution
from schemes import get_scheme
from schemes.scores import DEFAULT_THRESHOLDS
from tests import base
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_answer, scheme_benchmark

pytestmark = pytest.mark.django_db


def _counted_queue(benchmark: Benchmark, *, include_resolved: bool) -> list[tuple[int, int, bool]]:
    """The queue counted from every label and answer, as the page once read it on each request."""
    scheme = get_scheme(benchmark)
    targets = Target.objects.filter(benchmark=benchmark)
    if scheme.judges_candidates:
        valid = Label.objects.filter(candidate=OuterRef("pk")).filter(
            Q(assignment__isnull=True) | Q(assignment__filtered=False)
        )

        def counted(labels: QuerySet[Label]) -> Subquery:
            return Subquery(labels.order_by().values("candidate").annotate(n=Count("pk")).values("n"))

        scored = (
            Candidate.objects.filter(target=OuterRef("pk"))
            .exclude(stage=CandidateStage.EXCLUDED)
            .annotate(valid=counted(valid), accepts=Coalesce(counted(valid.filter(value=LabelValue.ACCEPT)), 0))
            .filter(valid__gt=0)
            .annotate(score=Cast(F("accepts"), FloatField()) / Cast(F("valid"), FloatField()))
            .annotate(distance=Abs(F("score") - DEFAULT_THRESHOLDS.acceptable))
            .filter(distance__lte=CONTESTED_MARGIN + 1e-9)
            .order_by()
            .values("target")
            .annotate(n=Count("pk"))
            .values("n")
        )
        targets = targets.annotate(contested=Coalesce(Subquery(scored), 0))
    else:
        targets = targets.annotate(
            contested=Count(
                Concat(
                    Cast("hits__items__answers__value", TextField()),
                    Cast("hits__items__answers__data", TextField()),
                ),
                distinct=True,
                filter=Q(hits__items__control=False, hits__items__answers__assignment__filtered=False),
            )
            - 1
        )
    resolved = ItemResolution.objects.filter(target=OuterRef("pk"))
    targets = targets.annotate(resolved=Exists(resolved)).filter(contested__gt=0)
    if not include_resolved:
        targets = targets.filter(resolved=False)
    return list(targets.order_by("-contested", "pk").values_list("pk", "contested", "resolved"))


def _kept_queue(benchmark: Benchmark, *, include_resolved: bool) -> list[tuple[int, int, bool]]:
    return [
        (entry.target_id, entry.contested, entry.resolved)
        for entry in disagreement_queue(benchmark=benchmark, include_resolved=include_resolved)
    ]


def _random_answer(scheme_name: str, item: HITItem, rng: random.Random) -> Any:
    scheme = get_scheme(scheme_name)
    if scheme.page.choices:
        return rng.choice(scheme.page.choices).value
    answer = scheme_answer(scheme_name, item)
    if scheme_name == "sws":
        for mark in answer["targets"]:
            mark["suggestions"] = rng.choice(["one", "two", "three"])
    elif scheme_name == "tsar":
        answer["substitute"] = rng.choice(["rested", "perched", "settled"])
    else:
        answer["substitutes"] = rng.sample(["rested", "perched", "settled", "lay"], 2)
    return answer


def _work(benchmark: Benchmark, cast: base.Cast, rng: random.Random, *, rounds: int) -> None:
    """Each annotator claims and submits up to ``rounds`` HITs, answering at random."""
    for user in (cast.alice, cast.bob, cast.carol, cast.spammer):
        worker = Worker.objects.get(user=user)
        for _ in range(rounds):
            assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
            if assignment is None:
                break
            items = HITItem.objects.filter(hit_id=assignment.hit_id)
            answers = {item.pk: _random_answer(benchmark.scheme, item, rng) for item in items}
            assignment_submit(assignment=assignment, answers=answers)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_the_queue_equals_a_count_of_every_label_and_answer(cast: base.Cast, scheme_name: str, seed: int) -> None:
    rng = random.Random(seed)
    sentences = tuple(f"The cat sat on mat number {index} all afternoon." for index in range(8))
    benchmark, _ = scheme_benchmark(
        scheme_name, cast, sentences=sentences, candidates=("perched", "rested", "squatted", "lounged")
    )
    _work(benchmark, cast, rng, rounds=3)
    # Imported labels, as an import writes them with their tallies.
    candidates = list(Candidate.objects.filter(target__benchmark=benchmark))
    for candidate in rng.sample(candidates, len(candidates) // 2):
        for position, value in enumerate(rng.choices(LabelValue.values, k=rng.randint(1, 4))):
            Label.objects.create(
                candidate=candidate,
                value=value,
                origin="file.json",
                position=position,
            )
    tallies_targets_recount(target_ids=[candidate.target_id for candidate in candidates])
    # Some submissions filtered as spam, some candidates excluded, each recorded as its service does.
    submitted = list(Assignment.objects.filter(hit__batch__benchmark=benchmark, submitted_at__isnull=False))
    filtered = [assignment.pk for assignment in rng.sample(submitted, len(submitted) // 3)]
    Assignment.objects.filter(pk__in=filtered).update(filtered=True)
    tallies_validity_changed(assignment_ids=filtered)
    for candidate in rng.sample(candidates, len(candidates) // 6):
        Candidate.objects.filter(pk=candidate.pk).update(stage=CandidateStage.EXCLUDED)
    benchmark_changed(benchmark_id=benchmark.pk)

    counted = _counted_queue(benchmark, include_resolved=True)
    assert counted, "the random work disagrees somewhere: the comparison is not of two empty queues"
    assert _kept_queue(benchmark, include_resolved=True) == counted
    item_resolve(target=Target.objects.get(pk=counted[0][0]))
    assert _kept_queue(benchmark, include_resolved=False) == _counted_queue(benchmark, include_resolved=False)
    assert _kept_queue(benchmark, include_resolved=True) == _counted_queue(benchmark, include_resolved=True)

    # Work submitted after the figures were kept: only the items it touched are counted again.
    _work(benchmark, cast, rng, rounds=2)
    assert _kept_queue(benchmark, include_resolved=True) == _counted_queue(benchmark, include_resolved=True)


def test_a_page_of_the_queue_reads_its_items_alone(cast: base.Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    sentences = tuple(f"The cat sat on mat number {index} all afternoon." for index in range(6))
    benchmark, _ = scheme_benchmark("swords", cast, sentences=sentences)
    for candidate in Candidate.objects.filter(target__benchmark=benchmark):
        for position, value in enumerate((LabelValue.ACCEPT, LabelValue.REJECT, rng.choice(LabelValue.values))):
            Label.objects.create(
                candidate=candidate,
                value=value,
                origin="file.json",
                position=position,
            )
    tallies_targets_recount(target_ids=list(Target.objects.filter(benchmark=benchmark).values_list("pk", flat=True)))
    counted = _counted_queue(benchmark, include_resolved=False)
    assert len(counted) > 2
    monkeypatch.setattr(selectors, "QUEUE_ITEMS_PER_PAGE", 2)
    second = disagreement_queue_page(benchmark=benchmark, number="2")
    last = disagreement_queue_page(benchmark=benchmark, number="999")
    assert [(target.pk, target.contested, target.resolved) for target in second] == counted[2:4]
    assert last.number == second.paginator.num_pages
    assert [target.pk for target in last] == [pk for pk, _, _ in counted][(last.number - 1) * 2 :]


@pytest.mark.parametrize("seed", range(20))
def test_the_kept_order_brought_up_to_date_by_difference_equals_a_fresh_order(seed: int) -> None:
    """The queue's order as a change keeps it (the changed targets taken out as kept, their new
    disagreement merged in) equals the order made afresh from every target, after random changes."""
    rng = random.Random(seed)
    figures = {target_id: rng.choice((0, 0, 1, 2, 3, 5)) for target_id in rng.sample(range(1, 500), 60)}
    buckets: dict[int, list[tuple[int, int]]] = {}
    for target_id, n in figures.items():
        buckets.setdefault(target_id // 64, []).append((target_id, n))
    order = selectors.queue_orders_merged(selectors.queue_order_of(bucket) for bucket in buckets.values())
    for _ in range(15):
        changed = rng.sample(range(1, 500), rng.randint(0, 12))
        taken = [(target_id, figures[target_id]) for target_id in changed if target_id in figures]
        for target_id in changed:
            if rng.random() < 0.2:
                figures.pop(target_id, None)  # removed, or no longer disagreeing
            else:
                figures[target_id] = rng.choice((0, 1, 2, 3, 4))
        added = [(target_id, figures[target_id]) for target_id in changed if target_id in figures]
        order = selectors.queue_orders_merged(
            [selectors.queue_order_taken(order, taken), selectors.queue_order_of(added)]
        )
        fresh = sorted(((-n, target_id) for target_id, n in figures.items() if n > 0))
        assert list(zip(order.target_ids.tolist(), order.contested.tolist(), strict=True)) == [
            (target_id, -n) for n, target_id in fresh
        ]


def test_a_page_of_the_queue_after_a_submit_reads_the_kept_order_and_the_touched_buckets_alone(
    cast: base.Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page reads the queue's kept order, not every target's kept figures: after a submit only the
    buckets of the targets it touched are read, and the page equals a fresh count."""
    rng = random.Random(5)
    sentences = tuple(f"The cat sat on mat number {index} all afternoon." for index in range(8))
    benchmark, _ = scheme_benchmark("swords", cast, sentences=sentences, candidates=("perched", "rested", "lounged"))
    _work(benchmark, cast, rng, rounds=2)
    disagreement_queue(benchmark=benchmark)  # as the warm task leaves it
    read: list[set[int]] = []
    buckets = kept_figures.KeptFigures._buckets

    def spied(self: kept_figures.KeptFigures[Any, Any], numbers: Any) -> Any:
        wanted = set(numbers)
        read.append(wanted)
        return buckets(self, wanted)

    monkeypatch.setattr(kept_figures.KeptFigures, "_buckets", spied)
    counted = _counted_queue(benchmark, include_resolved=False)
    page = disagreement_queue_page(benchmark=benchmark)
    assert [(target.pk, target.contested, target.resolved) for target in page] == counted[:50]
    assert read == [], "no change since the order was kept: no bucket is read"

    before = set(Assignment.objects.filter(hit__batch__benchmark=benchmark).values_list("pk", flat=True))
    _work(benchmark, cast, rng, rounds=1)
    touched = set(
        Assignment.objects.filter(hit__batch__benchmark=benchmark)
        .exclude(pk__in=before)
        .values_list("hit__target_id", flat=True)
    )
    assert touched, "the submit touched some target"
    page = disagreement_queue_page(benchmark=benchmark)
    assert [(target.pk, target.contested, target.resolved) for target in page] == _counted_queue(
        benchmark, include_resolved=False
    )[:50]
    assert set().union(*read) <= {target_id // kept_figures.BUCKET_TARGETS for target_id in touched}
