"""The counts per target an evaluation's version and the benchmark page read
(``annotation.selectors._target_counts``) read the labels by the benchmark each label keeps: on
random benchmarks they equal the counts read through each label's candidate's target, labels of
filtered assignments included (docs/design.md §7, "Labels by benchmark")."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.db.models import Count, Max
from django.utils import timezone

from annotation.models import Benchmark, Candidate, Context, Label, Target, Worker, WorkerKind
from annotation.selectors import _target_counts
from hits.models import HIT, Assignment, AssignmentStatus, Batch

pytestmark = pytest.mark.django_db


def _through_targets(benchmark: Benchmark, target_ids: list[int] | None) -> dict[int, tuple[int, int, int, int]]:
    """Per target with a candidate: candidates, labels, highest candidate id, highest label id (0
    without labels), read through each label's candidate's target."""
    candidates = Candidate.objects.filter(target__benchmark=benchmark)
    labels = Label.objects.filter(candidate__target__benchmark=benchmark)
    if target_ids is not None:
        candidates = candidates.filter(target_id__in=target_ids)
        labels = labels.filter(candidate__target_id__in=target_ids)
    by_target = {
        target_id: (n, top)
        for target_id, n, top in labels.values("candidate__target_id")
        .annotate(n=Count("pk"), top=Max("pk"))
        .values_list("candidate__target_id", "n", "top")
        .order_by()
    }
    return {
        target_id: (n, by_target.get(target_id, (0, 0))[0], top, by_target.get(target_id, (0, 0))[1])
        for target_id, n, top in candidates.values("target_id")
        .annotate(n=Count("pk"), top=Max("pk"))
        .values_list("target_id", "n", "top")
        .order_by()
    }


def _assignment(target: Target, worker: Worker, *, filtered: bool) -> Assignment:
    batch = Batch.objects.create(benchmark=target.benchmark, step=2)
    hit = HIT.objects.create(batch=batch, target=target, part=0, assignments_required=1)
    now = timezone.now()
    return Assignment.objects.create(
        hit=hit,
        worker=worker,
        status=AssignmentStatus.SUBMITTED,
        filtered=filtered,
        claimed_at=now,
        deadline=now + timedelta(hours=1),
        submitted_at=now,
    )


def _random_benchmark(rng: random.Random, name: str) -> Benchmark:
    benchmark = Benchmark.objects.create(name=name)
    worker = Worker.objects.get_or_create(kind=WorkerKind.SIMULATED, external_id=f"w-{name}")[0]
    for index in range(rng.randint(3, 6)):
        text = f"The river was calm after storm {index}."
        context = Context.objects.create(benchmark=benchmark, text=text)
        target = context.targets.create(benchmark=benchmark, word="calm", offset=text.index("calm"), pos="adj")
        # The first target has a filtered assignment's labels: counted here, not by the tallies.
        first = index == 0
        assignment = (
            _assignment(target, worker, filtered=first or rng.random() < 0.5) if first or rng.random() < 0.7 else None
        )
        for number in range(rng.randint(1 if first else 0, 6)):
            candidate = Candidate.objects.create(target=target, text=f"calm{number}", sources=["coinco"])
            labels = [
                Label(
                    candidate=candidate,
                    benchmark=benchmark,
                    value=rng.choice(["accept", "reject", "abstain"]),
                    origin="import.json",
                    position=position,
                )
                for position in range(rng.randint(0, 5))
            ]
            if assignment is not None and (first or rng.random() < 0.6):
                labels.append(
                    Label(
                        candidate=candidate,
                        benchmark=benchmark,
                        value=rng.choice(["accept", "reject", "abstain"]),
                        assignment=assignment,
                        worker=worker,
                    )
                )
            Label.objects.bulk_create(labels)
    return benchmark


@pytest.mark.parametrize("seed", range(4))
def test_target_counts_equal_the_counts_through_each_labels_target(seed: int) -> None:
    rng = random.Random(seed)
    benchmark = _random_benchmark(rng, f"counts-{seed}")
    _random_benchmark(rng, f"other-{seed}")
    assert Label.objects.filter(benchmark=benchmark, assignment__filtered=True).exists()
    target_ids = list(benchmark.targets.values_list("pk", flat=True))

    assert _target_counts(benchmark, None) == _through_targets(benchmark, None)
    chosen = rng.sample(target_ids, 2)
    assert _target_counts(benchmark, chosen) == _through_targets(benchmark, chosen)
