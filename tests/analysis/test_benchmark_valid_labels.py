"""The valid labels the results report and agreement read (``analysis.selectors.benchmark_valid_labels``)
are, read by the label's own benchmark, those of the old reading through each label's candidate and
target: valid (imported, or of work spam filtering kept), of the benchmark's candidates not excluded,
of a split's targets when one is named; another benchmark's labels never among them."""

from __future__ import annotations

import random

import pytest

from analysis.selectors import benchmark_valid_labels, in_split
from analysis.services.splits import benchmark_split_seeded
from annotation.models import Benchmark, Candidate, CandidateStage, Label
from annotation.selectors import valid_labels
from annotation.tallies import tallies_benchmark_recount
from hits.models import Assignment
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once

pytestmark = pytest.mark.django_db


def _through_candidates(benchmark: Benchmark, split: str | None) -> set[int]:
    """The reading before: through each label's candidate and target."""
    labels = (
        valid_labels().filter(candidate__target__benchmark=benchmark).exclude(candidate__stage=CandidateStage.EXCLUDED)
    )
    return set(in_split(labels, split, "candidate__target__").values_list("pk", flat=True))


def _labelled(rng: random.Random) -> Benchmark:
    benchmark = make_benchmark(targets=4, candidates=6)
    step2_batch(benchmark, seed=rng.randint(1, 100))
    for number in range(rng.randint(1, 4)):
        work_once(simulated(f"valid-{number}"), benchmark, honest({"perched": "accept"}))
    candidates = list(Candidate.objects.filter(target__benchmark=benchmark))
    for candidate in rng.sample(candidates, rng.randint(0, 6)):
        Label.objects.bulk_create(
            Label(candidate=candidate, value=rng.choice(["accept", "reject"]), origin="file.json", position=position)
            for position in range(rng.randint(1, 3))
        )
    tallies_benchmark_recount(benchmark_id=benchmark.pk)
    Candidate.objects.filter(pk__in=[c.pk for c in rng.sample(candidates, rng.randint(0, 5))]).update(
        stage=CandidateStage.EXCLUDED
    )
    collected = list(Assignment.objects.filter(hit__batch__benchmark=benchmark).values_list("pk", flat=True))
    Assignment.objects.filter(pk__in=rng.sample(collected, rng.randint(0, len(collected)))).update(filtered=True)
    return benchmark


@pytest.mark.parametrize("seed", range(4))
def test_the_valid_labels_read_by_their_benchmark_are_those_read_through_their_candidates(seed: int) -> None:
    rng = random.Random(seed)
    first, second = _labelled(rng), _labelled(rng)
    benchmark_split_seeded(benchmark=first, shares=[("dev", 0.5), ("test", 0.5)], seed=seed)
    for benchmark in (first, second):
        assert set(benchmark_valid_labels(benchmark=benchmark).values_list("pk", flat=True)) == _through_candidates(
            benchmark, None
        )
    for split in ("dev", "test"):
        found = set(benchmark_valid_labels(benchmark=first, split=split).values_list("pk", flat=True))
        assert found == _through_candidates(first, split)
    # The readings are not empty, and the excluded and filtered work is left out of both.
    assert _through_candidates(first, None) or _through_candidates(second, None)
